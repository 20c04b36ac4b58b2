/* metrics.c: Prometheus text exposition of the sim's state. */
#include "sim/metrics.h"

#include <string.h>

static const double ttft_le_s[METRICS_TTFT_BUCKETS] = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
};

void metrics_init(struct metrics *m)
{
    memset(m, 0, sizeof(*m));
}

double metrics_ttft_bucket_le_s(int i)
{
    return ttft_le_s[i];
}

void metrics_observe_ttft(struct metrics *m, uint64_t ttft_ns)
{
    double s = (double)ttft_ns / 1e9;
    int i = 0;
    while (i < METRICS_TTFT_BUCKETS && s > ttft_le_s[i])
        i++;
    m->ttft_bucket_count[i]++;
    m->ttft_count++;
    m->ttft_sum_s += s;
}

/* Write model_name="..." (no braces); label values escape backslash,
 * double quote and newline. */
static void put_label(struct http_buf *out, const char *model)
{
    http_buf_puts(out, "model_name=\"");
    for (const char *c = model; *c; c++) {
        if (*c == '\\')
            http_buf_puts(out, "\\\\");
        else if (*c == '"')
            http_buf_puts(out, "\\\"");
        else if (*c == '\n')
            http_buf_puts(out, "\\n");
        else
            http_buf_append(out, c, 1);
    }
    http_buf_puts(out, "\"");
}

static void head(struct http_buf *out, const char *name, const char *type, const char *help)
{
    http_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample_u64(struct http_buf *out, const char *name, const char *model, uint64_t v)
{
    http_buf_puts(out, name);
    http_buf_puts(out, "{");
    put_label(out, model);
    http_buf_puts(out, "} ");
    http_buf_u64(out, v);
    http_buf_puts(out, "\n");
}

/* "name value" with HELP and TYPE, no labels (llama.cpp's style). */
static void plain_u64(struct http_buf *out, const char *name, const char *type, const char *help,
                      uint64_t v)
{
    head(out, name, type, help);
    http_buf_puts(out, name);
    http_buf_puts(out, " ");
    http_buf_u64(out, v);
    http_buf_puts(out, "\n");
}

/* llama.cpp's server counts the prompt tokens it evaluated, after the
 * slot's cached prefix: the tokens the cache served are not in it. */
static void render_llamacpp(const struct metrics *m, const struct engine_stats *st,
                            struct http_buf *out)
{
    plain_u64(out, "llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.",
              m->prompt_tokens_total - m->cached_tokens_total);
    plain_u64(out, "llamacpp:tokens_predicted_total", "counter",
              "Number of generation tokens processed.", m->generation_tokens_total);
    plain_u64(out, "llamacpp:requests_processing", "gauge", "Number of requests processing.",
              st->running);
    plain_u64(out, "llamacpp:requests_deferred", "gauge", "Number of requests deferred.",
              st->waiting);
}

void metrics_render(const struct metrics *m, const struct engine_stats *st,
                    const char *model_name, struct http_buf *out)
{
    if (m->prompt_excludes_cached) {
        render_llamacpp(m, st, out);
        return;
    }
    head(out, "vllm:num_requests_running", "gauge",
         "Number of requests in model execution batches.");
    sample_u64(out, "vllm:num_requests_running", model_name, st->running);
    head(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
    sample_u64(out, "vllm:num_requests_waiting", model_name, st->waiting);
    head(out, "vllm:kv_cache_usage_perc", "gauge",
         "KV-cache usage. 1 means 100 percent usage.");
    http_buf_puts(out, "vllm:kv_cache_usage_perc{");
    put_label(out, model_name);
    http_buf_printf(out, "} %.6g\n", st->kv_usage_frac);
    head(out, "vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.");
    sample_u64(out, "vllm:num_preemptions_total", model_name, st->preemptions_total);
    head(out, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
    sample_u64(out, "vllm:prompt_tokens_total", model_name, m->prompt_tokens_total);
    head(out, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
    sample_u64(out, "vllm:generation_tokens_total", model_name, m->generation_tokens_total);

    head(out, "vllm:request_success_total", "counter",
         "Count of successfully processed requests.");
    static const char *const reasons[2] = {"length", "stop"};
    const uint64_t counts[2] = {m->success_length_total, m->success_stop_total};
    for (int i = 0; i < 2; i++) {
        http_buf_puts(out, "vllm:request_success_total{finished_reason=\"");
        http_buf_puts(out, reasons[i]);
        http_buf_puts(out, "\",");
        put_label(out, model_name);
        http_buf_puts(out, "} ");
        http_buf_u64(out, counts[i]);
        http_buf_puts(out, "\n");
    }

    /* vLLM's info gauge of its CacheConfig: every field a label, value 1.
     * num_gpu_blocks x block_size is the KV cache's capacity in tokens. */
    head(out, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    http_buf_printf(out,
                    "vllm:cache_config_info{block_size=\"%u\",cache_dtype=\"auto\","
                    "enable_prefix_caching=\"%s\",num_cpu_blocks=\"0\","
                    "num_gpu_blocks=\"%llu\"} 1.0\n",
                    m->block_tokens, m->prefix_cache ? "True" : "False",
                    (unsigned long long)m->kv_blocks);

    const char *h = "vllm:time_to_first_token_seconds";
    head(out, h, "histogram", "Histogram of time to first token in seconds.");
    uint64_t cum = 0;
    for (int i = 0; i <= METRICS_TTFT_BUCKETS; i++) {
        cum += m->ttft_bucket_count[i];
        http_buf_printf(out, "%s_bucket{", h);
        put_label(out, model_name);
        if (i < METRICS_TTFT_BUCKETS)
            http_buf_printf(out, ",le=\"%g\"} ", ttft_le_s[i]);
        else
            http_buf_puts(out, ",le=\"+Inf\"} ");
        http_buf_u64(out, cum);
        http_buf_puts(out, "\n");
    }
    http_buf_printf(out, "%s_sum{", h);
    put_label(out, model_name);
    http_buf_printf(out, "} %.9g\n", m->ttft_sum_s);
    sample_u64(out, "vllm:time_to_first_token_seconds_count", model_name, m->ttft_count);
}
