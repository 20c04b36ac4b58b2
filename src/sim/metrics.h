/* metrics.h: the counters `llmload sim` exposes on GET /metrics, rendered
 * in the Prometheus text format 0.0.4 with vLLM's metric names (so a
 * scraper written for vLLM reads the sim unchanged). */
#ifndef LL_SIM_METRICS_H
#define LL_SIM_METRICS_H

#include <stdint.h>

#include "sim/engine.h"
#include "sim/http.h"

/* TTFT histogram bucket upper bounds, seconds (vLLM's). */
#define METRICS_TTFT_BUCKETS 22

/* What the server counts itself; the gauges come from engine_stats. */
struct metrics {
    /* 1: serve llama.cpp's names instead of vLLM's, with a prompt counter
     * that leaves out the tokens the prefix cache served, as llama.cpp's
     * does (llmload sim --prompt-counter-excludes-cached). Set after
     * metrics_init. */
    int prompt_excludes_cached;
    /* The KV cache's shape, exported as vLLM exports it
     * (vllm:cache_config_info); set after metrics_init. */
    uint64_t kv_blocks;               /* blocks in the KV cache (kv_tokens / block_tokens) */
    uint32_t block_tokens;            /* tokens per block */
    int prefix_cache;                 /* 1: the prefix cache is on */
    uint64_t prompt_tokens_total;     /* prompt tokens of requests that got a first token */
    uint64_t cached_tokens_total;     /* of those, the ones the prefix cache served */
    uint64_t generation_tokens_total; /* output tokens sent (or generated for non-streams) */
    uint64_t success_length_total;    /* requests finished at max_tokens */
    uint64_t success_stop_total;      /* requests finished by a natural stop */
    uint64_t ttft_bucket_count[METRICS_TTFT_BUCKETS + 1]; /* per bucket, last is +Inf */
    uint64_t ttft_count;
    double ttft_sum_s;                /* seconds */
};

void metrics_init(struct metrics *m);

/* Count one time to first token (arrival to first token, ns). */
void metrics_observe_ttft(struct metrics *m, uint64_t ttft_ns);

/* The upper bound of bucket i (0 <= i < METRICS_TTFT_BUCKETS), seconds. */
double metrics_ttft_bucket_le_s(int i);

/* Append the whole exposition to out. With m->prompt_excludes_cached,
 * llama.cpp's names and nothing else: llamacpp:prompt_tokens_total
 * (prompt tokens less cached ones), llamacpp:tokens_predicted_total,
 * llamacpp:requests_processing and llamacpp:requests_deferred, without
 * labels. Otherwise vLLM's: vllm:num_requests_running,
 * vllm:num_requests_waiting, vllm:kv_cache_usage_perc (0..1),
 * vllm:num_preemptions_total, vllm:prompt_tokens_total,
 * vllm:generation_tokens_total, vllm:request_success_total (by
 * finished_reason) and vllm:time_to_first_token_seconds (histogram), each
 * with HELP and TYPE lines and a model_name label (escaped), and
 * vllm:cache_config_info (value 1, the cache's shape in labels:
 * block_size, num_gpu_blocks, ...; no model_name, as vLLM writes it). */
void metrics_render(const struct metrics *m, const struct engine_stats *st,
                    const char *model_name, struct http_buf *out);

#endif
