/* workload.h: what each scheduled request asks for, as a pure function of
 * the seed and the request's schedule index, so any worker thread (or any
 * machine of a sharded run) builds the identical request for index i. */
#ifndef LL_WORKLOAD_H
#define LL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "dist.h"

struct workload {
    struct dist prompt_tokens;   /* prompt length distribution, tokens */
    struct dist output_tokens;   /* max_tokens distribution, tokens */
    int ignore_eos;              /* ask the server to generate exactly max_tokens */
    uint64_t seed;
};

/* One request's content parameters. */
struct req_spec {
    uint64_t index;              /* schedule index */
    uint32_t prompt_tokens;      /* >= 1 */
    uint32_t max_tokens;         /* >= 1 */
};

/* Draw the lengths of request index. Deterministic in (seed, index).
 * Draws are rounded to the nearest integer and at least 1. */
void workload_spec(const struct workload *w, uint64_t index, struct req_spec *out);

/* Build a prompt of exactly n tokens under the documented whitespace
 * tokenizer (every word is 1 to 4 bytes, so one token each; see
 * docs/workload.md), unique to (seed, index): the first word is a nonce.
 * Writes at most len bytes (no NUL) into buf and returns the byte count
 * needed; when that exceeds len nothing useful was written and the caller
 * retries with a bigger buffer. The text needs no JSON escaping. */
size_t workload_prompt(uint64_t seed, uint64_t index, uint32_t n, char *buf, size_t len);

#endif
