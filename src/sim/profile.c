/* profile.c: the built-in sim profiles and their analytic capacity. */
#include "sim/profile.h"

#include <math.h>
#include <string.h>

#include "util/util.h"

static const struct sim_profile profiles[] = {
    {
        .name = "default",
        .description = "a small GPU-like server: 64 sequences, 22k-token KV-cache, "
                       "knee near 33 req/s for 256-in/128-out",
        .engine = {
            .max_num_seqs = 64,
            .kv_tokens = 22528,
            .block_tokens = 16,
            .prefill_chunk_tokens = 512,
            .step_base_ns = 4 * LL_NS_PER_MS,
            .step_prefill_token_ns = 10 * LL_NS_PER_US,
            .step_seq_ns = 150 * LL_NS_PER_US,
            .queue_limit = 1000,
            .natural_len_median_tokens = 128,
            .natural_len_sigma = 0.6,
            .prefix_cache = 1,
            .seed = 1,
        },
        .workload_prompt_tokens = 256,
        .workload_output_tokens = 128,
    },
    {
        .name = "instant",
        .description = "no cost at all and huge limits: tests the client, not the server",
        .engine = {
            .max_num_seqs = 1000000,
            .kv_tokens = (uint64_t)1 << 24,
            .block_tokens = 16,
            .prefill_chunk_tokens = UINT32_MAX,
            .step_base_ns = 0,
            .step_prefill_token_ns = 0,
            .step_seq_ns = 0,
            .queue_limit = 0,
            .natural_len_median_tokens = 16,
            .natural_len_sigma = 0.5,
            .prefix_cache = 1,
            .seed = 1,
        },
        .workload_prompt_tokens = 256,
        .workload_output_tokens = 128,
    },
};

int sim_profile_get(const char *name, struct sim_profile *out)
{
    for (size_t i = 0; i < LL_ARRAY_LEN(profiles); i++) {
        if (strcmp(profiles[i].name, name) == 0) {
            *out = profiles[i];
            return 0;
        }
    }
    return LL_E_NOTFOUND;
}

uint32_t sim_profile_count(void)
{
    return (uint32_t)LL_ARRAY_LEN(profiles);
}

const char *sim_profile_name(uint32_t i)
{
    return i < LL_ARRAY_LEN(profiles) ? profiles[i].name : NULL;
}

static double blocks_for(double tokens, uint32_t block_tokens)
{
    return ceil(tokens / (double)block_tokens);
}

/* The derivation is in docs/sim-engine.md ("Capacity"). In short: at
 * capacity every slot is refilled in the step after its request finishes,
 * so a request holds a slot for R = c + L - 1 steps (c prefill steps, then
 * one step per token after the first). With N sequences running, N / R
 * requests start and finish per step on average, and the mean step is
 *     T = base + (N / R) * P * prefill_token + N * (L - 1) / R * seq,
 * so the rate is (N / R) / T. N is the smallest of max_num_seqs, the KV
 * capacity over the mean blocks a sequence holds over its residence, and
 * the count whose prefill fills prefill_chunk_tokens every step. */
int sim_profile_capacity(const struct engine_config *cfg, uint32_t prompt_tokens,
                         uint32_t output_tokens, struct sim_capacity *out)
{
    const double P = prompt_tokens, L = output_tokens;
    double chunk, c, R, block_sum = 0, n_seqs, n_kv, n_prefill, n, a, step_ns;
    double kv_blocks;
    enum sim_capacity_limit limit = SIM_LIMIT_SEQS;

    if (engine_config_check(cfg, NULL, 0) != 0 || prompt_tokens < 1 || output_tokens < 1)
        return LL_E_INVAL;
    kv_blocks = floor((double)cfg->kv_tokens / cfg->block_tokens);
    if (blocks_for(P + L - 1, cfg->block_tokens) > kv_blocks)
        return LL_E_RANGE;

    chunk = cfg->prefill_chunk_tokens;
    c = ceil(P / chunk);
    R = c + L - 1;
    for (double j = 1; j <= c; j++)
        block_sum += blocks_for(fmin(j * chunk, P), cfg->block_tokens);
    for (double g = 1; g <= L - 1; g++)
        block_sum += blocks_for(P + g, cfg->block_tokens);

    memset(out, 0, sizeof(*out));
    out->residence_steps = R;
    out->kv_blocks_per_seq = block_sum / R;

    n_seqs = cfg->max_num_seqs;
    n_kv = kv_blocks / out->kv_blocks_per_seq;
    n_prefill = chunk * R / P;
    n = n_seqs;
    if (n_kv < n) {
        n = n_kv;
        limit = SIM_LIMIT_KV;
    }
    if (n_prefill < n) {
        n = n_prefill;
        limit = SIM_LIMIT_PREFILL;
    }
    a = n / R;
    step_ns = (double)cfg->step_base_ns + a * P * (double)cfg->step_prefill_token_ns +
              n * (L - 1) / R * (double)cfg->step_seq_ns;
    out->batch_seqs = n;
    out->step_ns = step_ns;
    out->limit = limit;
    if (step_ns <= 0) {
        out->limit = SIM_LIMIT_INSTANT;
        out->rps = INFINITY;
        out->output_tokens_per_s = INFINITY;
        return 0;
    }
    out->rps = a / step_ns * 1e9;
    out->output_tokens_per_s = out->rps * L;
    return 0;
}

double sim_profile_capacity_rps(const struct engine_config *cfg, uint32_t prompt_tokens,
                                uint32_t output_tokens)
{
    struct sim_capacity cap;

    if (sim_profile_capacity(cfg, prompt_tokens, output_tokens, &cap) != 0)
        return 0;
    return cap.rps;
}

static const char *limit_name(enum sim_capacity_limit l)
{
    switch (l) {
    case SIM_LIMIT_SEQS: return "max_num_seqs";
    case SIM_LIMIT_KV: return "KV-cache capacity";
    case SIM_LIMIT_PREFILL: return "prefill_chunk_tokens";
    case SIM_LIMIT_INSTANT: return "none (every cost is 0)";
    }
    return "?";
}

void sim_profile_explain(const struct sim_profile *p, FILE *f)
{
    const struct engine_config *c = &p->engine;
    struct sim_capacity cap;
    char qlim[64];
    double ttft_ms, tpot_ms;

    if (c->queue_limit == 0)
        snprintf(qlim, sizeof(qlim), "unbounded (never 429)");
    else
        snprintf(qlim, sizeof(qlim), "%u requests waiting (429 beyond)", c->queue_limit);
    fprintf(f, "profile %s: %s\n", p->name, p->description);
    fprintf(f, "  max_num_seqs           %u sequences in the running batch\n", c->max_num_seqs);
    fprintf(f, "  kv_tokens              %llu tokens of KV-cache (%llu blocks)\n",
            (unsigned long long)c->kv_tokens,
            (unsigned long long)(c->kv_tokens / (c->block_tokens ? c->block_tokens : 1)));
    fprintf(f, "  block_tokens           %u tokens per KV block\n", c->block_tokens);
    fprintf(f, "  prefill_chunk_tokens   %u prompt tokens per step at most\n",
            c->prefill_chunk_tokens);
    fprintf(f, "  step_base              %.3f ms per step\n", (double)c->step_base_ns / 1e6);
    fprintf(f, "  step_prefill_token     %.3f us per prefilled token\n",
            (double)c->step_prefill_token_ns / 1e3);
    fprintf(f, "  step_seq               %.3f us per decoding sequence\n",
            (double)c->step_seq_ns / 1e3);
    fprintf(f, "  queue_limit            %s\n", qlim);
    fprintf(f, "  natural output length  lognormal, median %.0f tokens, sigma %.2f\n",
            c->natural_len_median_tokens, c->natural_len_sigma);
    fprintf(f, "  prefix_cache           %s\n", c->prefix_cache ? "on" : "off");
    fprintf(f, "  cold_first             %.3f ms more for the first step after start or reset\n",
            (double)c->cold_first_ns / 1e6);
    fprintf(f, "  seed                   %llu\n", (unsigned long long)c->seed);
    fprintf(f, "default workload: prompt %u tokens, output %u tokens (ignore_eos)\n",
            p->workload_prompt_tokens, p->workload_output_tokens);
    if (sim_profile_capacity(c, p->workload_prompt_tokens, p->workload_output_tokens,
                             &cap) != 0) {
        fprintf(f, "capacity: the default workload does not fit this configuration\n");
        return;
    }
    if (cap.limit == SIM_LIMIT_INSTANT) {
        fprintf(f, "capacity: unbounded (every cost is 0); limited only by the client "
                   "and the HTTP server\n");
        return;
    }
    /* Alone: ceil(P / chunk) prefill steps, then one decode step per token. */
    ttft_ms = (ceil((double)p->workload_prompt_tokens / c->prefill_chunk_tokens) *
                   (double)c->step_base_ns +
               (double)p->workload_prompt_tokens * (double)c->step_prefill_token_ns) / 1e6;
    tpot_ms = (double)(c->step_base_ns + c->step_seq_ns) / 1e6;
    fprintf(f, "alone: first token after %.2f ms, then one every %.2f ms, %.0f ms in all\n",
            ttft_ms, tpot_ms, ttft_ms + (p->workload_output_tokens - 1) * tpot_ms);
    fprintf(f, "capacity: %.1f req/s, %.0f output tokens/s, batch %.1f sequences, "
               "mean step %.2f ms, limited by %s\n",
            cap.rps, cap.output_tokens_per_s, cap.batch_seqs, cap.step_ns / 1e6,
            limit_name(cap.limit));
    fprintf(f, "at capacity: KV-cache %.0f%% used, a token every %.2f ms per request\n",
            100.0 * cap.batch_seqs * cap.kv_blocks_per_seq * c->block_tokens /
                (double)c->kv_tokens,
            cap.step_ns / 1e6);
}
