/* fuzzutil.h: helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Each target is built alone from one .c file (see the Makefile's fuzz
 * rule), so these are static inline functions rather than a library. */
#ifndef LL_FUZZUTIL_H
#define LL_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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

/* A streaming parser's contract on one feed of fed bytes: it used at most
 * those, and all of them when it answered "more". Aborts otherwise, so the
 * fuzzer reports the input. */
static inline void fuzz_check_used(size_t used, size_t fed, int wants_more)
{
    if (used > fed || (wants_more && used != fed))
        abort();
}

#endif
