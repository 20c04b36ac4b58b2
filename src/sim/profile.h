/* profile.h: named engine configurations for `llmload sim`, and the
 * analytic capacity of a configuration for a fixed workload.
 *
 * "default" is a small GPU-like server with a clear saturation knee near
 * 30 requests/s for its default workload (prompt 256, output 128 tokens,
 * ignore_eos); "instant" costs nothing and has huge limits, for testing
 * the client at rates no real server reaches. docs/sim-engine.md derives
 * the capacity formula. */
#ifndef LL_SIM_PROFILE_H
#define LL_SIM_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "sim/engine.h"

struct sim_profile {
    const char *name;               /* static string */
    const char *description;        /* static string, one line */
    struct engine_config engine;
    uint32_t workload_prompt_tokens; /* the profile's default workload */
    uint32_t workload_output_tokens; /* ... with ignore_eos */
};

/* Fill *out with the named profile ("default" or "instant"). Returns 0, or
 * LL_E_NOTFOUND for any other name (out untouched). */
int sim_profile_get(const char *name, struct sim_profile *out);

/* Number of built-in profiles, and the name of profile i (0 <= i < count;
 * NULL otherwise), for help text. Names are static strings. */
uint32_t sim_profile_count(void);
const char *sim_profile_name(uint32_t i);

/* Which limit sets the batch size at capacity. */
enum sim_capacity_limit {
    SIM_LIMIT_SEQS,      /* max_num_seqs */
    SIM_LIMIT_KV,        /* KV-cache capacity */
    SIM_LIMIT_PREFILL,   /* prefill_chunk_tokens per step */
    SIM_LIMIT_INSTANT,   /* every cost is 0: no finite capacity */
};

/* The steady state at capacity (see docs/sim-engine.md, "Capacity"). */
struct sim_capacity {
    double rps;                     /* requests completed per second */
    double output_tokens_per_s;     /* rps * output tokens */
    double batch_seqs;              /* mean running sequences */
    double step_ns;                 /* mean step duration */
    double residence_steps;         /* steps one request holds a slot */
    double kv_blocks_per_seq;       /* mean KV blocks a running sequence holds */
    enum sim_capacity_limit limit;
};

/* The steady state of cfg at its maximum sustained throughput for a fixed
 * workload: every request has prompt_tokens (>= 1) and generates exactly
 * output_tokens (>= 1, ignore_eos), and the waiting queue never empties.
 * Returns 0, or LL_E_INVAL for an invalid cfg or a zero length, LL_E_RANGE
 * when one request alone cannot fit the KV-cache. With all costs 0, rps is
 * INFINITY and limit SIM_LIMIT_INSTANT. */
int sim_profile_capacity(const struct engine_config *cfg, uint32_t prompt_tokens,
                         uint32_t output_tokens, struct sim_capacity *out);

/* Just the request rate of sim_profile_capacity; 0 on any error. */
double sim_profile_capacity_rps(const struct engine_config *cfg, uint32_t prompt_tokens,
                                uint32_t output_tokens);

/* Describe p to people: every parameter with its unit, the default
 * workload, and the capacity (req/s, output tokens/s, batch size, step
 * time, which limit binds). Writes to f; no trailing state. */
void sim_profile_explain(const struct sim_profile *p, FILE *f);

#endif
