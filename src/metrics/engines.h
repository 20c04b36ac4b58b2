/* engines.h: what known inference engines' /metrics names mean.
 *
 * Each engine names the same few things differently: how many requests
 * wait, how many run, how full the KV cache is, preemptions, server-side
 * TTFT, token and request counters. This module maps a parsed scrape's
 * samples to those common meanings, detects which engine a scrape came
 * from, and extracts one value per meaning. Metrics it does not know stay
 * raw in the scrape; nothing is dropped. The table, with where each name
 * was confirmed, is in docs/server-metrics.md. */
#ifndef LL_ENGINES_H
#define LL_ENGINES_H

#include <stddef.h>

#include "metrics/prom.h"

enum engine_kind {
    ENGINE_UNKNOWN = 0,
    ENGINE_VLLM,
    ENGINE_SGLANG,
    ENGINE_TGI,
    ENGINE_LLAMACPP,
    ENGINE_TRITON, /* Triton, with or without the TensorRT-LLM backend */
    ENGINE_TRTLLM, /* trtllm-serve's Prometheus page (/prometheus/metrics) */
    ENGINE_DCGM,   /* NVIDIA's DCGM exporter (GPU telemetry, --gpu-metrics): never
                          * detected, only asked for (a server's /metrics may carry
                          * DCGM_FI_* beside its own, as llmload sim --gpu-metrics does) */
    ENGINE_KIND_COUNT,
};

enum engine_meaning {
    ENGINE_M_NONE = 0,          /* not a metric this module knows */
    ENGINE_M_WAITING,           /* gauge: requests queued, not yet running */
    ENGINE_M_RUNNING,           /* gauge: requests in the running batch */
    ENGINE_M_KV_USAGE,          /* gauge: KV-cache use as a fraction 0..1 */
    ENGINE_M_PREEMPTIONS,       /* counter: preemptions (SGLang: retractions) */
    ENGINE_M_TTFT,              /* histogram: server-side TTFT, seconds */
    ENGINE_M_PROMPT_TOKENS,     /* counter: prompt (prefill) tokens */
    ENGINE_M_GENERATION_TOKENS, /* counter: generated tokens */
    ENGINE_M_REQUEST_SUCCESS,   /* counter: requests finished */
    /* GPU telemetry (ENGINE_DCGM), one sample per GPU in a scrape: */
    ENGINE_M_GPU_POWER,     /* gauge: power draw, W, summed over GPUs */
    ENGINE_M_GPU_ENERGY,    /* counter: energy since boot, J, summed over GPUs */
    ENGINE_M_GPU_UTIL,      /* gauge: utilisation, %, mean over GPUs */
    ENGINE_M_GPU_MEM_USED,  /* gauge: framebuffer used, MiB, summed over GPUs */
    ENGINE_M_GPU_SM_CLOCK,  /* gauge: SM clock, MHz, mean over GPUs */
    ENGINE_M_GPU_GR_ACTIVE, /* gauge: graphics engine active, 0..1, mean over GPUs */
    ENGINE_MEANING_COUNT,
};

/* One row of the map. For a TTFT row, name is the histogram family and a
 * sample matches when it is name_bucket / name_sum / name_count; for any
 * other row, name is the exact sample name (TGI's token totals are the
 * _sum samples of its length histograms). When label_name is not NULL
 * the sample must also carry label_name="label_value" (Triton's
 * TensorRT-LLM gauges put the meaning in a label). */
struct engine_metric {
    enum engine_kind engine;
    enum engine_meaning meaning;
    const char *name;
    const char *label_name;
    const char *label_value;
    enum prom_type type;        /* the type the engine declares */
    double scale;               /* multiply a value by this to get the
                                 * meaning's unit (fraction 0..1, seconds,
                                 * counts) */
    int confirmed;              /* 1: seen in the engine's docs or source,
                                 * or in our fixture; 0: not confirmed */
};

/* The whole table, in preference order: for an engine and a meaning the
 * first row whose metric is present in a scrape is the one used (newer
 * names before older ones). Static; *n gets its length. */
const struct engine_metric *engines_table(size_t *n);

/* Static names: "vllm", "sglang", "tgi", "llamacpp", "triton", "trtllm",
 * "unknown";
 * "waiting", "running", "kv_usage", ... "none". */
const char *engines_kind_name(enum engine_kind k);
const char *engines_meaning_name(enum engine_meaning m);

/* The row a sample matches, or NULL when the sample's metric is unknown
 * (keep it raw). Borrowed from the static table. */
const struct engine_metric *engines_lookup(const struct prom_sample *s);

/* 1 when engine k's prompt-token counter leaves out the prompt tokens its
 * prefix cache served (llama.cpp's llamacpp:prompt_tokens_total counts
 * only the tokens it had to process), 0 when it counts every prompt
 * token, cached or not (vLLM, SGLang, TGI) or the engine has no prompt
 * counter. The join compares such a counter with the client's prompt
 * tokens less the cached tokens its usage reported. */
int engines_prompt_excludes_cached(enum engine_kind k);

/* Which engine a scrape came from: the engine whose metric-name prefix
 * ("vllm:", "sglang:", "tgi_", "llamacpp:", "nv_", "trtllm_") the most
 * samples carry.
 * ENGINE_UNKNOWN when none does (or s is NULL). */
enum engine_kind engines_detect(const struct prom_scrape *s);

/* One value per meaning from one scrape. present[m] is 1 when the engine
 * exposes meaning m in this scrape. Counts and counters are summed over
 * label sets (several models, ranks, finish reasons, GPUs); KV usage is
 * the maximum over them; GPU utilisation, SM clock and engine activity
 * are the mean over GPUs (engines_meaning_is_mean). Histograms (TTFT)
 * are not values: see engines_ttft_histogram. */
struct engine_values {
    double value[ENGINE_MEANING_COUNT];
    int present[ENGINE_MEANING_COUNT];
    size_t n[ENGINE_MEANING_COUNT]; /* samples that made each value (GPUs, for DCGM) */
    const struct engine_metric *source[ENGINE_MEANING_COUNT]; /* the row
                                                 * used, or NULL */
};

/* Fill *out from scrape s for engine k. Returns 0, or LL_E_INVAL for NULL
 * arguments or an unknown engine (out is then all zeros). */
int engines_extract(enum engine_kind k, const struct prom_scrape *s,
                    struct engine_values *out);

/* 1 for a meaning whose value over several label sets is their mean. */
int engines_meaning_is_mean(enum engine_meaning m);

/* 1 for the GPU telemetry meanings (ENGINE_M_GPU_*). */
int engines_meaning_is_gpu(enum engine_meaning m);

/* 1 for an engine's own counters (preemptions, prompt and generation
 * tokens, requests finished), whose label sets the scraper keeps apart
 * so that the join can take each one's increase and pick the run's
 * model's; 0 for the rest (gauges, the TTFT histogram, the GPUs'). */
int engines_meaning_is_counter(enum engine_meaning m);

/* The label that names the model of engine k's samples: "model_name"
 * (vLLM, SGLang), "model" (Triton); NULL for an engine whose samples
 * carry none (TGI, llama.cpp serve one model). Static. */
const char *engines_model_label(enum engine_kind k);

/* The model whose counters stand for a request of engine k when no
 * series is the run's own model's: "ensemble" for Triton, whose
 * nv_inference_request_success has one series per model of an ensemble
 * (ensemble, preprocessing, tensorrt_llm, postprocessing), each counting
 * the same requests. NULL for the others (their series are summed). */
const char *engines_default_model(enum engine_kind k);

/* The KV cache's capacity in tokens, where engine k exports it: vLLM's
 * info gauge vllm:cache_config_info carries num_gpu_blocks and block_size
 * as labels, and their product is the capacity. NAN when the engine does
 * not export it or the scrape lacks it (or its labels are not positive
 * numbers). llama.cpp's slot count is in its /props, not its /metrics. */
double engines_kv_capacity_tokens(enum engine_kind k, const struct prom_scrape *s);

/* Gather engine k's server-side TTFT histogram from s (all label sets
 * summed by le), in seconds. Returns what prom_scrape_histogram returns,
 * or LL_E_NOTFOUND when the engine has no TTFT histogram or the scrape
 * lacks it. */
int engines_ttft_histogram(enum engine_kind k, const struct prom_scrape *s,
                           struct prom_histogram *out);

#endif
