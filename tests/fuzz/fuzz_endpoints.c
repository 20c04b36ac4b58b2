/* libFuzzer target for endpoints.c: any bytes as --url-weights' value.
 * Checks that the parser never crashes, that a rejection always explains
 * itself in one line naming the flag, and that accepted weights make a
 * plan whose every period gives each endpoint exactly its weight. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "workload/endpoints.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    uint32_t w[ENDPOINTS_MAX];
    size_t n = 99;
    char err[256] = "";
    if (endpoints_parse_weights(s, w, ENDPOINTS_MAX, &n, err, sizeof err) != 0) {
        if (strncmp(err, "--url-weights: ", 15) != 0 || strchr(err, '\n'))
            abort();
        free(s);
        return 0;
    }
    if (n < 1 || n > ENDPOINTS_MAX)
        abort();
    static const char *const urls[ENDPOINTS_MAX] = {"http://x/v1"};
    struct endpoints e;
    if (endpoints_plan(&e, urls, w, n) != 0)
        abort(); /* every weight the parser takes, the plan takes */
    uint32_t got[ENDPOINTS_MAX] = {0};
    for (uint64_t k = 0; k < e.period; k++) {
        uint32_t p = endpoints_pick(&e, k + e.period * 7);
        if (p >= n)
            abort();
        got[p]++;
    }
    for (size_t i = 0; i < n; i++)
        if (got[i] != w[i])
            abort();
    free(s);
    return 0;
}
