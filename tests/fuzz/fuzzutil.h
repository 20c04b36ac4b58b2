/* fuzzutil.h: helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Each target is built alone from one .c file (see the Makefile's fuzz
 * rule), so these are static inline functions rather than a library. */
#ifndef LL_FUZZUTIL_H
#define LL_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "decode/openai.h"

/* The starting value of a digest. The targets compare digests of one input
 * parsed in different ways, so any fixed value does; this one has always
 * been used. */
#define FUZZ_HASH_SEED 1469598103934665603ULL

/* Mix n bytes at p into the FNV-1a style digest *h. */
static inline void fuzz_hash_mix(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= s[i];
        *h *= 1099511628211ULL;
    }
}

/* The input as a NUL-terminated string, for a parser of option values
 * (bytes after an embedded NUL are then not seen). Caller frees; NULL when
 * out of memory, which the target answers by returning. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s != NULL) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* A streaming parser's contract on one feed of fed bytes: it used at most
 * those, and all of them when it answered "more". Aborts otherwise, so the
 * fuzzer reports the input. */
static inline void fuzz_check_used(size_t used, size_t fed, int wants_more)
{
    if (used > fed || (wants_more && used != fed))
        abort();
}

/* Two decodes of one event agree on everything a record takes from it;
 * aborts otherwise. */
static inline void fuzz_same_chunk(const struct oai_chunk *a, const struct oai_chunk *b)
{
    if (a->done != b->done || a->role_only != b->role_only ||
        a->content_bytes != b->content_bytes || a->reasoning_bytes != b->reasoning_bytes ||
        a->tool_call_deltas != b->tool_call_deltas || a->has_finish != b->has_finish ||
        strcmp(a->finish_reason, b->finish_reason) != 0 || a->has_usage != b->has_usage ||
        a->prompt_tokens != b->prompt_tokens || a->completion_tokens != b->completion_tokens ||
        a->cached_tokens != b->cached_tokens || a->has_error != b->has_error ||
        strcmp(a->error_message, b->error_message) != 0)
        abort();
}

/* One API's event decoder (named events: Anthropic, Responses) on
 * arbitrary bytes: nothing crashes, its strings stay NUL-terminated, it
 * accepts exactly the valid JSON objects (as the validator says), under
 * the name end_event too and as a non-streamed body; and through a memo,
 * fed the input's lines as one stream, it always agrees with itself
 * without one. */
static inline void fuzz_event_decoder(const uint8_t *data, size_t size,
                                      int (*decode)(const char *, size_t, const char *, size_t,
                                                    struct oai_chunk *, struct oai_memo *),
                                      int (*decode_response)(const char *, size_t,
                                                             struct oai_chunk *),
                                      const char *end_event)
{
    const char *s = (const char *)data;
    struct oai_chunk c, full, memo;
    struct jscan_value v;

    int rc = decode("", 0, s, size, &c, NULL);
    if (c.finish_reason[sizeof(c.finish_reason) - 1] != '\0' ||
        c.error_message[sizeof(c.error_message) - 1] != '\0')
        abort();
    int valid_obj = jscan_validate(s, size, JSCAN_DEFAULT_DEPTH, &v) == 0 && v.type == JSCAN_OBJECT;
    if ((rc == 0) != valid_obj)
        abort();
    (void)decode(end_event, strlen(end_event), s, size, &c, NULL);
    (void)decode_response(s, size, &c);
    if (c.error_message[sizeof(c.error_message) - 1] != '\0')
        abort();

    /* The input's lines as one stream, both ways, the memo carried along. */
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t at = 0; at <= size;) {
        const char *nl = memchr(s + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (s + at)) : size - at;
        int rc_full = decode("", 0, s + at, n, &full, NULL);
        int rc_memo = decode("", 0, s + at, n, &memo, &m);
        if (rc_full != rc_memo)
            abort();
        if (rc_full == 0)
            fuzz_same_chunk(&full, &memo);
        at += n + 1;
    }
}

#endif
