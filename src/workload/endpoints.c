/* endpoints.c: the spreading of requests over several endpoints
 * (endpoints.h): --url-weights' parser and the smooth weighted
 * round-robin's period. */
#include "workload/endpoints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int endpoints_parse_weights(const char *s, uint32_t *w, size_t max, size_t *n, char *err,
                            size_t errlen)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        char *end;
        errno = 0;
        long v = p[0] >= '0' && p[0] <= '9' ? strtol(p, &end, 10) : -1;
        if (v < 1 || v > ENDPOINTS_WEIGHT_MAX || errno || end != p + len) {
            /* The value as given, cut to 32 bytes, a control or non-ASCII
             * byte as '?':
             * the reason stays one line. */
            char shown[33];
            ll_printable(p, len, shown, sizeof shown);
            snprintf(err, errlen,
                     "--url-weights: weight %zu must be a whole number 1 to %d, got \"%s\"", *n + 1,
                     ENDPOINTS_WEIGHT_MAX, shown);
            return LL_E_INVAL;
        }
        if (*n == max) {
            snprintf(err, errlen, "--url-weights: at most %zu weights", max);
            return LL_E_INVAL;
        }
        w[(*n)++] = (uint32_t)v;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int endpoints_plan(struct endpoints *e, const char *const *urls, const uint32_t *w, size_t n)
{
    memset(e, 0, sizeof *e);
    if (n < 1 || n > ENDPOINTS_MAX)
        return LL_E_INVAL;
    e->n = (uint32_t)n;
    e->weighted = w != NULL;
    for (size_t i = 0; i < n; i++) {
        e->url[i] = urls[i];
        e->weight[i] = w ? w[i] : 1;
        if (e->weight[i] < 1 || e->weight[i] > ENDPOINTS_WEIGHT_MAX)
            return LL_E_INVAL;
        e->period += e->weight[i];
    }
    /* nginx's smooth weighted round-robin, one period: after sum rounds
     * every credit is back at 0, so the period repeats exactly. */
    int64_t credit[ENDPOINTS_MAX] = {0};
    for (uint32_t k = 0; k < e->period; k++) {
        size_t best = 0;
        for (size_t i = 0; i < n; i++) {
            credit[i] += e->weight[i];
            if (credit[i] > credit[best])
                best = i;
        }
        credit[best] -= e->period;
        e->seq[k] = (uint8_t)best;
    }
    return 0;
}

uint32_t endpoints_pick(const struct endpoints *e, uint64_t key)
{
    if (e->n < 2)
        return 0;
    return e->seq[key % e->period];
}

uint32_t endpoints_for_spec(const struct endpoints *e, const struct req_spec *spec)
{
    return endpoints_pick(e, spec->session >= 0 ? (uint64_t)spec->session : spec->index);
}
