/* engines.c: the table of known engines' metric names and what they mean.
 *
 * The table is the whole module; the functions only search it. Where each
 * name was confirmed (engine docs, engine source, our llama.cpp fixture,
 * or only third-party scrapers) is written down in docs/server-metrics.md;
 * rows with confirmed = 0 are names I could not confirm at the source. */
#include "metrics/engines.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define ROW(e, m, n, t, conf) {e, m, n, NULL, NULL, t, 1.0, conf}
#define ROWL(e, m, n, ln, lv, t, conf) {e, m, n, ln, lv, t, 1.0, conf}
#define ROWS(e, m, n, t, scale, conf)                                                              \
    {                                                                                              \
        e, m, n, NULL, NULL, t, scale, conf                                                        \
    }

/* In preference order within an engine and meaning: newer names first. */
static const struct engine_metric engine_table[] = {
    /* vLLM (V1 engine names; gpu_cache_usage_perc is the V0 name). Both
     * KV gauges are fractions despite "perc": 1 means 100 percent. */
    ROW(ENGINE_VLLM, ENGINE_M_WAITING, "vllm:num_requests_waiting", PROM_GAUGE, 1),
    ROW(ENGINE_VLLM, ENGINE_M_RUNNING, "vllm:num_requests_running", PROM_GAUGE, 1),
    ROW(ENGINE_VLLM, ENGINE_M_KV_USAGE, "vllm:kv_cache_usage_perc", PROM_GAUGE, 1),
    ROW(ENGINE_VLLM, ENGINE_M_KV_USAGE, "vllm:gpu_cache_usage_perc", PROM_GAUGE, 1),
    ROW(ENGINE_VLLM, ENGINE_M_PREEMPTIONS, "vllm:num_preemptions_total", PROM_COUNTER, 1),
    ROW(ENGINE_VLLM, ENGINE_M_TTFT, "vllm:time_to_first_token_seconds", PROM_HISTOGRAM, 1),
    ROW(ENGINE_VLLM, ENGINE_M_PROMPT_TOKENS, "vllm:prompt_tokens_total", PROM_COUNTER, 1),
    ROW(ENGINE_VLLM, ENGINE_M_GENERATION_TOKENS, "vllm:generation_tokens_total", PROM_COUNTER, 1),
    ROW(ENGINE_VLLM, ENGINE_M_REQUEST_SUCCESS, "vllm:request_success_total", PROM_COUNTER, 1),

    /* SGLang. token_usage is a fraction of the KV pool. Preemptions are
     * "retractions"; the counter name is from third-party scrapers only
     * (sglang:num_retracted_reqs is a per-batch gauge, not a counter). */
    ROW(ENGINE_SGLANG, ENGINE_M_WAITING, "sglang:num_queue_reqs", PROM_GAUGE, 1),
    ROW(ENGINE_SGLANG, ENGINE_M_RUNNING, "sglang:num_running_reqs", PROM_GAUGE, 1),
    ROW(ENGINE_SGLANG, ENGINE_M_KV_USAGE, "sglang:token_usage", PROM_GAUGE, 1),
    ROW(ENGINE_SGLANG, ENGINE_M_PREEMPTIONS, "sglang:num_retracted_requests_total", PROM_COUNTER,
        0),
    ROW(ENGINE_SGLANG, ENGINE_M_TTFT, "sglang:time_to_first_token_seconds", PROM_HISTOGRAM, 1),
    ROW(ENGINE_SGLANG, ENGINE_M_PROMPT_TOKENS, "sglang:prompt_tokens_total", PROM_COUNTER, 1),
    ROW(ENGINE_SGLANG, ENGINE_M_GENERATION_TOKENS, "sglang:generation_tokens_total", PROM_COUNTER,
        1),
    ROW(ENGINE_SGLANG, ENGINE_M_REQUEST_SUCCESS, "sglang:num_requests_total", PROM_COUNTER, 0),

    /* TGI: no TTFT histogram, no KV gauge, no preemption counter. Token
     * totals are the _sum of the per-request length histograms. */
    ROW(ENGINE_TGI, ENGINE_M_WAITING, "tgi_queue_size", PROM_GAUGE, 1),
    ROW(ENGINE_TGI, ENGINE_M_RUNNING, "tgi_batch_current_size", PROM_GAUGE, 1),
    ROW(ENGINE_TGI, ENGINE_M_PROMPT_TOKENS, "tgi_request_input_length_sum", PROM_HISTOGRAM, 1),
    ROW(ENGINE_TGI, ENGINE_M_GENERATION_TOKENS, "tgi_request_generated_tokens_sum", PROM_HISTOGRAM,
        1),
    ROW(ENGINE_TGI, ENGINE_M_REQUEST_SUCCESS, "tgi_request_success", PROM_COUNTER, 1),

    /* llama.cpp server. kv_cache_usage_ratio (a fraction) is in older
     * builds' docs; the 2026-05 build of our fixture no longer sends it. */
    ROW(ENGINE_LLAMACPP, ENGINE_M_WAITING, "llamacpp:requests_deferred", PROM_GAUGE, 1),
    ROW(ENGINE_LLAMACPP, ENGINE_M_RUNNING, "llamacpp:requests_processing", PROM_GAUGE, 1),
    ROW(ENGINE_LLAMACPP, ENGINE_M_KV_USAGE, "llamacpp:kv_cache_usage_ratio", PROM_GAUGE, 1),
    ROW(ENGINE_LLAMACPP, ENGINE_M_PROMPT_TOKENS, "llamacpp:prompt_tokens_total", PROM_COUNTER, 1),
    ROW(ENGINE_LLAMACPP, ENGINE_M_GENERATION_TOKENS, "llamacpp:tokens_predicted_total",
        PROM_COUNTER, 1),

    /* Triton. With the TensorRT-LLM backend the in-flight batcher holds the
     * queue, so its gauges come first; Triton's own pending count is the
     * fallback for other backends. */
    ROWL(ENGINE_TRITON, ENGINE_M_WAITING, "nv_trt_llm_request_metrics", "request_type", "waiting",
         PROM_GAUGE, 1),
    ROW(ENGINE_TRITON, ENGINE_M_WAITING, "nv_inference_pending_request_count", PROM_GAUGE, 0),
    ROWL(ENGINE_TRITON, ENGINE_M_RUNNING, "nv_trt_llm_request_metrics", "request_type", "scheduled",
         PROM_GAUGE, 1),
    ROWL(ENGINE_TRITON, ENGINE_M_KV_USAGE, "nv_trt_llm_kv_cache_block_metrics",
         "kv_cache_block_type", "fraction", PROM_GAUGE, 0),
    /* One series per model: an ensemble's four models each count the same
     * requests. The value here sums them; the join counts the run's
     * model's, else the ensemble's (engines_default_model). */
    ROW(ENGINE_TRITON, ENGINE_M_REQUEST_SUCCESS, "nv_inference_request_success", PROM_COUNTER, 1),

    /* trtllm-serve (TensorRT-LLM's OpenAI server) with return_perf_metrics:
     * its MetricsCollector (tensorrt_llm/metrics/collector.py) names these
     * on /prometheus/metrics (its /metrics is JSON iteration stats). The
     * running and waiting gauges are iteration stats, set only when they
     * are enabled. trtllm_kv_cache_utilization is left out: its unit is
     * not stated at the source. */
    ROW(ENGINE_TRTLLM, ENGINE_M_WAITING, "trtllm_num_requests_waiting", PROM_GAUGE, 1),
    ROW(ENGINE_TRTLLM, ENGINE_M_RUNNING, "trtllm_num_requests_running", PROM_GAUGE, 1),
    ROW(ENGINE_TRTLLM, ENGINE_M_TTFT, "trtllm_time_to_first_token_seconds", PROM_HISTOGRAM, 1),
    ROW(ENGINE_TRTLLM, ENGINE_M_PROMPT_TOKENS, "trtllm_prompt_tokens_total", PROM_COUNTER, 1),
    ROW(ENGINE_TRTLLM, ENGINE_M_GENERATION_TOKENS, "trtllm_generation_tokens_total", PROM_COUNTER,
        1),
    ROW(ENGINE_TRTLLM, ENGINE_M_REQUEST_SUCCESS, "trtllm_request_success_total", PROM_COUNTER, 1),

    /* NVIDIA's DCGM exporter (default-counters.csv): one sample per GPU.
     * The energy counter is in mJ; the profiling field is 0..1. */
    ROW(ENGINE_DCGM, ENGINE_M_GPU_POWER, "DCGM_FI_DEV_POWER_USAGE", PROM_GAUGE, 1),
    ROWS(ENGINE_DCGM, ENGINE_M_GPU_ENERGY, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", PROM_COUNTER,
         0.001, 1),
    ROW(ENGINE_DCGM, ENGINE_M_GPU_UTIL, "DCGM_FI_DEV_GPU_UTIL", PROM_GAUGE, 1),
    ROW(ENGINE_DCGM, ENGINE_M_GPU_MEM_USED, "DCGM_FI_DEV_FB_USED", PROM_GAUGE, 1),
    ROW(ENGINE_DCGM, ENGINE_M_GPU_SM_CLOCK, "DCGM_FI_DEV_SM_CLOCK", PROM_GAUGE, 1),
    ROW(ENGINE_DCGM, ENGINE_M_GPU_GR_ACTIVE, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", PROM_GAUGE, 1),
};

static const struct {
    enum engine_kind kind;
    const char *prefix;
} engine_prefix[] = {
    {ENGINE_VLLM, "vllm:"},         {ENGINE_SGLANG, "sglang:"}, {ENGINE_TGI, "tgi_"},
    {ENGINE_LLAMACPP, "llamacpp:"}, {ENGINE_TRITON, "nv_"},     {ENGINE_TRTLLM, "trtllm_"},
};

const struct engine_metric *engines_table(size_t *n)
{
    if (n != NULL)
        *n = LL_ARRAY_LEN(engine_table);
    return engine_table;
}

const char *engines_kind_name(enum engine_kind k)
{
    static const char *const names[] = {
        [ENGINE_UNKNOWN] = "unknown", [ENGINE_VLLM] = "vllm",         [ENGINE_SGLANG] = "sglang",
        [ENGINE_TGI] = "tgi",         [ENGINE_LLAMACPP] = "llamacpp", [ENGINE_TRITON] = "triton",
        [ENGINE_TRTLLM] = "trtllm",   [ENGINE_DCGM] = "dcgm",
    };
    _Static_assert(LL_ARRAY_LEN(names) == ENGINE_KIND_COUNT, "a name for each engine");
    return (unsigned)k < ENGINE_KIND_COUNT ? names[k] : "unknown";
}

const char *engines_meaning_name(enum engine_meaning m)
{
    static const char *const names[] = {
        [ENGINE_M_NONE] = "none",
        [ENGINE_M_WAITING] = "waiting",
        [ENGINE_M_RUNNING] = "running",
        [ENGINE_M_KV_USAGE] = "kv_usage",
        [ENGINE_M_PREEMPTIONS] = "preemptions",
        [ENGINE_M_TTFT] = "ttft",
        [ENGINE_M_PROMPT_TOKENS] = "prompt_tokens",
        [ENGINE_M_GENERATION_TOKENS] = "generation_tokens",
        [ENGINE_M_REQUEST_SUCCESS] = "request_success",
        [ENGINE_M_GPU_POWER] = "gpu_power",
        [ENGINE_M_GPU_ENERGY] = "gpu_energy",
        [ENGINE_M_GPU_UTIL] = "gpu_util",
        [ENGINE_M_GPU_MEM_USED] = "gpu_mem_used",
        [ENGINE_M_GPU_SM_CLOCK] = "gpu_sm_clock",
        [ENGINE_M_GPU_GR_ACTIVE] = "gpu_gr_active",
    };
    _Static_assert(LL_ARRAY_LEN(names) == ENGINE_MEANING_COUNT, "a name for each meaning");
    return (unsigned)m < ENGINE_MEANING_COUNT ? names[m] : "none";
}

int engines_meaning_is_mean(enum engine_meaning m)
{
    return m == ENGINE_M_GPU_UTIL || m == ENGINE_M_GPU_SM_CLOCK || m == ENGINE_M_GPU_GR_ACTIVE;
}

int engines_meaning_is_gpu(enum engine_meaning m)
{
    return m >= ENGINE_M_GPU_POWER && m <= ENGINE_M_GPU_GR_ACTIVE;
}

int engines_meaning_is_counter(enum engine_meaning m)
{
    return m == ENGINE_M_PREEMPTIONS || m == ENGINE_M_PROMPT_TOKENS ||
           m == ENGINE_M_GENERATION_TOKENS || m == ENGINE_M_REQUEST_SUCCESS;
}

const char *engines_model_label(enum engine_kind k)
{
    /* vLLM's model_name is the served model name (--served-model-name,
     * the name a request asks for); SGLang's the same; Triton labels
     * every per-model metric model="..." and version="...". trtllm-serve
     * labels its model_name "undefined" (openai_server.py), so it has none. */
    if (k == ENGINE_VLLM || k == ENGINE_SGLANG)
        return "model_name";
    return k == ENGINE_TRITON ? "model" : NULL;
}

const char *engines_default_model(enum engine_kind k)
{
    return k == ENGINE_TRITON ? "ensemble" : NULL;
}

int engines_prompt_excludes_cached(enum engine_kind k)
{
    /* llama.cpp adds n_prompt_tokens_processed, the tokens it evaluated
     * after reusing the slot's cached prefix; measured against a real
     * llama-server: server 21986 = client 29989 - cached 8003. vLLM adds
     * each request's whole prompt length at its first token (V1
     * IterationStats.update_from_output); SGLang keeps a separate
     * sglang:cached_tokens_total beside its prompt counter; TGI's input
     * length histogram is the request's length. */
    return k == ENGINE_LLAMACPP;
}

/* Does sample s belong to row r? Histogram rows match the family's three
 * parts by name; other rows match the exact name, and the label if any. */
static int row_matches(const struct engine_metric *r,
                       const struct prom_sample *s)
{
    if (r->type == PROM_HISTOGRAM && r->meaning == ENGINE_M_TTFT) {
        size_t n = strlen(r->name);
        if (strncmp(s->name, r->name, n) != 0)
            return 0;
        const char *rest = s->name + n;
        return strcmp(rest, "_bucket") == 0 || strcmp(rest, "_sum") == 0 ||
               strcmp(rest, "_count") == 0;
    }
    if (strcmp(s->name, r->name) != 0)
        return 0;
    if (r->label_name == NULL)
        return 1;
    for (size_t i = 0; i < s->n_labels; i++)
        if (strcmp(s->labels[i].name, r->label_name) == 0)
            return strcmp(s->labels[i].value, r->label_value) == 0;
    return 0;
}

const struct engine_metric *engines_lookup(const struct prom_sample *s)
{
    if (s == NULL)
        return NULL;
    for (size_t i = 0; i < LL_ARRAY_LEN(engine_table); i++)
        if (row_matches(&engine_table[i], s))
            return &engine_table[i];
    return NULL;
}

enum engine_kind engines_detect(const struct prom_scrape *s)
{
    size_t votes[ENGINE_KIND_COUNT] = {0};
    enum engine_kind best = ENGINE_UNKNOWN;

    if (s == NULL)
        return ENGINE_UNKNOWN;
    for (size_t i = 0; i < s->n_samples; i++) {
        const char *name = s->samples[i].name;
        for (size_t j = 0; j < LL_ARRAY_LEN(engine_prefix); j++) {
            size_t n = strlen(engine_prefix[j].prefix);
            if (strncmp(name, engine_prefix[j].prefix, n) == 0) {
                votes[engine_prefix[j].kind]++;
                break;
            }
        }
    }
    for (int k = ENGINE_UNKNOWN + 1; k < ENGINE_KIND_COUNT; k++)
        if (votes[k] > votes[best])
            best = (enum engine_kind)k;
    return best;
}

int engines_extract(enum engine_kind k, const struct prom_scrape *s,
                    struct engine_values *out)
{
    if (out == NULL)
        return LL_E_INVAL;
    memset(out, 0, sizeof *out);
    if (s == NULL || k <= ENGINE_UNKNOWN || k >= ENGINE_KIND_COUNT)
        return LL_E_INVAL;
    for (size_t r = 0; r < LL_ARRAY_LEN(engine_table); r++) {
        const struct engine_metric *row = &engine_table[r];
        if (row->engine != k || row->meaning == ENGINE_M_TTFT ||
            out->present[row->meaning])
            continue;
        double v = row->meaning == ENGINE_M_KV_USAGE ? -INFINITY : 0.0;
        size_t n = 0;
        for (size_t i = 0; i < s->n_samples; i++) {
            const struct prom_sample *smp = &s->samples[i];
            if (!row_matches(row, smp))
                continue;
            double x = smp->value * row->scale;
            if (isnan(x) &&
                (row->meaning == ENGINE_M_KV_USAGE || engines_meaning_is_gpu(row->meaning)))
                continue; /* a NaN gauge (a GPU that fell off the bus) says nothing */
            if (row->meaning == ENGINE_M_KV_USAGE) {
                v = x > v ? x : v;
            } else {
                v += x;
            }
            n++;
        }
        if (n == 0)
            continue;
        if (engines_meaning_is_mean(row->meaning))
            v /= (double)n;
        out->value[row->meaning] = v;
        out->present[row->meaning] = 1;
        out->n[row->meaning] = n;
        out->source[row->meaning] = row;
    }
    return 0;
}

int engines_ttft_histogram(enum engine_kind k, const struct prom_scrape *s,
                           struct prom_histogram *out)
{
    if (s == NULL || out == NULL)
        return LL_E_INVAL;
    for (size_t r = 0; r < LL_ARRAY_LEN(engine_table); r++) {
        const struct engine_metric *row = &engine_table[r];
        if (row->engine == k && row->meaning == ENGINE_M_TTFT)
            return prom_scrape_histogram(s, row->name, NULL, 0, out);
    }
    return LL_E_NOTFOUND;
}

/* The value of label name of sample smp as a positive number, or NAN. */
static double label_number(const struct prom_sample *smp, const char *name)
{
    const char *text = prom_sample_label(smp, name);
    if (!text)
        return NAN;
    char *end;
    double v = strtod(text, &end);
    return end != text && *end == '\0' && v > 0 && isfinite(v) ? v : NAN;
}

double engines_kv_capacity_tokens(enum engine_kind k, const struct prom_scrape *s)
{
    if (s == NULL || k != ENGINE_VLLM)
        return NAN;
    for (size_t i = 0; prom_scrape_find(s, "vllm:cache_config_info", NULL, 0, &i) == 0; i++) {
        const struct prom_sample *smp = &s->samples[i];
        double blocks = label_number(smp, "num_gpu_blocks");
        double size = label_number(smp, "block_size");
        if (!isnan(blocks) && !isnan(size))
            return blocks * size;
    }
    return NAN;
}
