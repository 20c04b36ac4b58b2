/* sweep_jsonput.h: the small JSON writers the sweep's two JSON files
 * share (sweep_json.c: steps.jsonl's facts and run.json's settings;
 * sweep_summary_json.c: summary.json). Inline, private to src/sweep/. */
#ifndef LL_SWEEP_JSONPUT_H
#define LL_SWEEP_JSONPUT_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "measure/slo.h"
#include "util/util.h"

/* A count as a JSON integer (capped at INT64_MAX). */
static inline json_t *ju64(uint64_t v)
{
    return json_integer((json_int_t)LL_MIN(v, (uint64_t)INT64_MAX));
}

/* A number, or null when it is not finite. */
static inline json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Set o[k] = v (taking v); out of memory aborts. */
static inline void jset(json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v) != 0) {
        ll_errorf("out of memory building JSON");
        abort();
    }
}

/* An SLO as summary.json writes it: its text (slo_format), or null when
 * there is none (set is 0). */
static inline json_t *slo_json(const struct slo *slo, int set)
{
    char buf[96];
    if (!set)
        return json_null();
    slo_format(slo, buf, sizeof buf);
    return json_string(buf);
}

#endif
