/* libFuzzer target for dist.c: any bytes as a DIST spec, in both units.
 * Checks that parse never crashes, that an error always comes with a
 * message, and that an accepted spec formats to a canonical string that
 * parses back to the same distribution, whose samples are never NaN and
 * stay inside the truncation bounds. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "util/util.h"
#include "workload/dist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_one(const char *spec, enum dist_unit unit)
{
    struct dist d, e;
    char err[512], buf[DIST_SPEC_MAX], again[DIST_SPEC_MAX];

    err[0] = '\0';
    if (dist_parse(spec, unit, &d, err, sizeof(err)) != 0) {
        if (err[0] == '\0')
            abort(); /* every rejection explains itself */
        return;
    }
    int n = dist_format(&d, buf, sizeof(buf));
    if (n < 0 || (size_t)n != strlen(buf))
        abort();
    if (dist_parse(buf, unit, &e, err, sizeof(err)) != 0)
        abort(); /* the canonical form must parse */
    if (e.kind != d.kind || e.a != d.a || e.b != d.b || e.min != d.min ||
        e.max != d.max)
        abort();
    if (dist_format(&e, again, sizeof(again)) != n || strcmp(buf, again))
        abort();

    struct rng r;
    rng_seed(&r, (uint64_t)n, 0);
    for (int i = 0; i < 8; i++) {
        double x = dist_sample(&d, &r);
        if (isnan(x) || x < d.min || x > d.max)
            abort();
    }
    if (isnan(dist_mean(&d)))
        abort();
    char nerr[256];
    if (dist_require_nonneg(&d, nerr, sizeof(nerr)) == 0) {
        for (int i = 0; i < 8; i++)
            if (dist_sample(&d, &r) < 0)
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = fuzz_cstring(data, size);
    if (!spec)
        return 0;
    check_one(spec, DIST_UNIT_NONE);
    check_one(spec, DIST_UNIT_DURATION_NS);
    free(spec);
    return 0;
}
