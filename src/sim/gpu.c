/* gpu.c: the sim's power model and its DCGM-named /metrics series. */
#include "sim/gpu.h"

#include <math.h>

/* Memory a GPU of the sim holds, MiB: the weights' share, and the KV
 * cache's when full (80 GiB cards). */
#define GPU_FB_TOTAL_MIB 81559.0
#define GPU_FB_WEIGHTS_MIB 16000.0
#define GPU_FB_KV_MIB 60000.0
#define GPU_SM_CLOCK_BUSY_MHZ 1980.0
#define GPU_SM_CLOCK_IDLE_MHZ 345.0

/* 1 when a step is running at now_ns (started, not ended). */
static int in_step(const struct engine_stats *st, uint64_t now_ns)
{
    return st->step_end_ns != UINT64_MAX && st->step_start_ns <= now_ns && now_ns < st->step_end_ns;
}

static double step_work_j(const struct gpu_model *m, const struct engine_stats *st)
{
    return m->decode_seq_j * (double)st->step_decode_seqs +
           m->prefill_token_j * (double)st->step_prefill_tokens;
}

double gpu_energy_j(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns)
{
    double idle_s = now_ns > m->start_ns ? (double)(now_ns - m->start_ns) / 1e9 : 0;
    double e = (double)m->gpus * m->idle_w * idle_s +
               m->decode_seq_j * (double)st->decode_seqs_stepped_total +
               m->prefill_token_j * (double)st->prefill_tokens_stepped_total;
    if (in_step(st, now_ns)) {
        double frac =
            (double)(now_ns - st->step_start_ns) / (double)(st->step_end_ns - st->step_start_ns);
        e += step_work_j(m, st) * frac;
    }
    return e;
}

double gpu_power_w(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns)
{
    double p = (double)m->gpus * m->idle_w;
    if (in_step(st, now_ns))
        p += step_work_j(m, st) / ((double)(st->step_end_ns - st->step_start_ns) / 1e9);
    return p;
}

static void head(struct http_buf *out, const char *name, const char *type, const char *help)
{
    http_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per GPU: name{gpu="i",UUID=...} value, with digits decimals. */
static void per_gpu(struct http_buf *out, const struct gpu_model *m, const char *name, int digits,
                    double v)
{
    for (uint32_t i = 0; i < m->gpus; i++) {
        http_buf_printf(out,
                        "%s{gpu=\"%u\",UUID=\"GPU-11111111-2222-3333-4444-%012u\","
                        "device=\"nvidia%u\",modelName=\"llmload sim GPU\","
                        "Hostname=\"llmload-sim\"} ",
                        name, i, i, i);
        http_buf_printf(out, "%.*f", digits, v);
        http_buf_puts(out, "\n");
    }
}

void gpu_render(const struct gpu_model *m, const struct engine_stats *st, uint64_t now_ns,
                struct http_buf *out)
{
    double n = (double)m->gpus;
    int busy = in_step(st, now_ns);
    head(out, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).");
    per_gpu(out, m, "DCGM_FI_DEV_SM_CLOCK", 0,
            busy ? GPU_SM_CLOCK_BUSY_MHZ : GPU_SM_CLOCK_IDLE_MHZ);
    head(out, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).");
    per_gpu(out, m, "DCGM_FI_DEV_POWER_USAGE", 3, gpu_power_w(m, st, now_ns) / n);
    /* mJ, whole: the exporter's counter is an integer. */
    head(out, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
         "Total energy consumption since boot (in mJ).");
    per_gpu(out, m, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 0,
            floor(gpu_energy_j(m, st, now_ns) * 1000.0 / n));
    head(out, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).");
    per_gpu(out, m, "DCGM_FI_DEV_GPU_UTIL", 0, busy ? 100.0 : 0.0);
    head(out, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).");
    per_gpu(out, m, "DCGM_FI_DEV_FB_USED", 0,
            GPU_FB_WEIGHTS_MIB + GPU_FB_KV_MIB * st->kv_usage_frac);
    head(out, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).");
    per_gpu(out, m, "DCGM_FI_DEV_FB_FREE", 0,
            GPU_FB_TOTAL_MIB - GPU_FB_WEIGHTS_MIB - GPU_FB_KV_MIB * st->kv_usage_frac);
    head(out, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
         "Ratio of time the graphics engine is active.");
    per_gpu(out, m, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 6, busy ? 1.0 : 0.0);
}
