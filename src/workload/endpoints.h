/* endpoints.h: which of several endpoints (--url given more than once)
 * carries each request, a pure function of the request and the plan.
 *
 * Requests are spread by key: the request's schedule index, or its
 * session index when it belongs to a session (so every turn of a session
 * goes to the one endpoint and a prefix cache there sees its history).
 * Without weights, key k goes to endpoint k mod n. With weights
 * (--url-weights 3,1), the plan is one period of a smooth weighted
 * round-robin (nginx's: each round every endpoint's credit grows by its
 * weight, the one with the most credit, the lowest index among equals,
 * is picked and pays the weights' sum), and key k goes to the period's
 * entry k mod sum: over every sum consecutive keys each endpoint gets
 * exactly its weight, interleaved (3,1 gives 0,0,1,0). A shard or a
 * worker thread computes the same endpoint for the same key, so a
 * sharded run spreads its requests as one process would. */
#ifndef LL_ENDPOINTS_H
#define LL_ENDPOINTS_H

#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

#define ENDPOINTS_MAX 32         /* --url at most this many times */
#define ENDPOINTS_WEIGHT_MAX 100 /* a --url-weights weight is 1 to this */

struct endpoints {
    uint32_t n;                                        /* endpoints; 0 or 1 = one (no spreading) */
    const char *url[ENDPOINTS_MAX];                    /* API base of each (borrowed) */
    uint32_t weight[ENDPOINTS_MAX];                    /* 1 each without --url-weights */
    int weighted;                                      /* 1: --url-weights was given */
    uint32_t period;                                   /* entries of seq: the weights' sum */
    uint8_t seq[ENDPOINTS_MAX * ENDPOINTS_WEIGHT_MAX]; /* endpoint of key k: seq[k % period] */
};

/* Parse --url-weights' value s ("3,1": whole numbers 1 to
 * ENDPOINTS_WEIGHT_MAX, comma-separated) into w (room for max), their
 * count into *n. Returns 0, or LL_E_INVAL with a one-line reason naming
 * --url-weights and the weight at fault in err (errlen bytes). */
int endpoints_parse_weights(const char *s, uint32_t *w, size_t max, size_t *n, char *err,
                            size_t errlen);

/* Make e the plan for n endpoints (1 <= n <= ENDPOINTS_MAX) of weights w
 * (each 1 to ENDPOINTS_WEIGHT_MAX; NULL = all 1) and the borrowed urls.
 * Returns 0, or LL_E_INVAL when n or a weight is out of range. */
int endpoints_plan(struct endpoints *e, const char *const *urls, const uint32_t *w, size_t n);

/* The endpoint of key (0 with one endpoint). */
uint32_t endpoints_pick(const struct endpoints *e, uint64_t key);

/* The endpoint of spec: by its session when it has one, else by its
 * schedule index. */
uint32_t endpoints_for_spec(const struct endpoints *e, const struct req_spec *spec);

#endif
