/* smi.c: one line of nvidia-smi's CSV. See smi.h. */
#include "metrics/smi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static const char *const field_name[SMI_FIELDS] = {
    "timestamp",   "index",        "power.draw", "utilization.gpu",
    "memory.used", "memory.total", "clocks.sm",
};

/* A trimmed field [a, b) as a NUL-terminated copy in buf (len > b - a,
 * which SMI_MAX_LINE guarantees). */
static void field_copy(const char *a, const char *b, char *buf, size_t len)
{
    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    size_t n = LL_MIN((size_t)(b - a), len - 1);
    memcpy(buf, a, n);
    buf[n] = '\0';
}

/* A value field: 1 and *v for a number, 0 for a bracketed word (missing),
 * -1 for anything else. */
static int value_parse(const char *f, double *v)
{
    size_t n = strlen(f);
    if (n >= 2 && f[0] == '[' && f[n - 1] == ']')
        return 0;
    if (n == 0 || ll_parse_double(f, v) != 0 || !isfinite(*v) || *v < 0)
        return -1;
    return 1;
}

int smi_line_parse(const char *line, size_t len, struct smi_line *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    if (len > SMI_MAX_LINE) {
        snprintf(err, errlen, "line longer than %d bytes", SMI_MAX_LINE);
        return LL_E_PROTO;
    }
    char f[SMI_MAX_LINE + 1];
    const char *p = line, *end = line + len;
    for (int i = 0; i < SMI_FIELDS; i++) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        if ((c != NULL) != (i < SMI_FIELDS - 1)) {
            snprintf(err, errlen, "expected %d comma-separated fields", SMI_FIELDS);
            goto fail;
        }
        const char *fe = c ? c : end;
        if (memchr(p, '\0', (size_t)(fe - p))) {
            snprintf(err, errlen, "a NUL byte in %s", field_name[i]);
            goto fail;
        }
        field_copy(p, fe, f, sizeof f);
        p = c ? c + 1 : end;
        if (f[0] == '\0') {
            snprintf(err, errlen, "empty %s", field_name[i]);
            goto fail;
        }
        if (i == 0) {
            field_copy(f, f + strlen(f), out->timestamp, sizeof out->timestamp);
        } else if (i == 1) {
            uint64_t k;
            if (ll_parse_u64(f, &k) != 0 || k > SMI_MAX_INDEX) {
                snprintf(err, errlen, "index: expected a GPU number 0-%d, got \"%.40s\"",
                         SMI_MAX_INDEX, f);
                goto fail;
            }
            out->index = (unsigned)k;
        } else {
            int r = value_parse(f, &out->value[i - 2]);
            if (r < 0) {
                snprintf(err, errlen, "%s: expected a non-negative number or [N/A], got \"%.40s\"",
                         field_name[i], f);
                goto fail;
            }
            out->present[i - 2] = (unsigned char)r;
            if (!r)
                out->value[i - 2] = 0;
        }
    }
    return 0;
fail:
    memset(out, 0, sizeof *out);
    return LL_E_PROTO;
}

/* ---- periods ----------------------------------------------------------- */

int smi_group_repeats(const struct smi_group *g, const struct smi_line *l)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->line[i].index == l->index)
            return 1;
    return 0;
}

static void group_stamp(struct smi_group *g, uint64_t now_abs_ns)
{
    if (g->n == 0 && g->bad == 0)
        g->first_abs_ns = now_abs_ns;
    g->last_abs_ns = now_abs_ns;
}

int smi_group_add(struct smi_group *g, const struct smi_line *l, uint64_t now_abs_ns)
{
    group_stamp(g, now_abs_ns);
    if (g->n == SMI_MAX_GPUS) {
        g->bad++;
        return 0;
    }
    g->line[g->n++] = *l;
    return g->want > 0 && g->n >= g->want;
}

void smi_group_bad(struct smi_group *g, uint64_t now_abs_ns)
{
    group_stamp(g, now_abs_ns);
    g->bad++;
}

/* The meaning each value feeds, and whether it is summed over GPUs (else
 * averaged). memory.total has no meaning of its own. */
static const struct {
    int meaning; /* enum engine_meaning, or -1 */
    int summed;
} field_meaning[SMI_VALUE_COUNT] = {
    [SMI_POWER_W] = {ENGINE_M_GPU_POWER, 1},         [SMI_UTIL_PCT] = {ENGINE_M_GPU_UTIL, 0},
    [SMI_MEM_USED_MIB] = {ENGINE_M_GPU_MEM_USED, 1}, [SMI_MEM_TOTAL_MIB] = {-1, 1},
    [SMI_SM_CLOCK_MHZ] = {ENGINE_M_GPU_SM_CLOCK, 0},
};

size_t smi_group_take(struct smi_group *g, struct scrape_point *p)
{
    size_t n = g->n, held = g->n + g->bad;
    if (held == 0)
        return 0;
    memset(p, 0, sizeof *p);
    p->start_abs_ns = g->first_abs_ns;
    p->end_abs_ns = g->last_abs_ns;
    p->kv_capacity_tokens = NAN;
    p->engine = ENGINE_DCGM;
    p->gpus = (unsigned)n;
    p->ok = n > 0 && g->bad == 0 && n >= g->want;
    for (int f = 0; f < SMI_VALUE_COUNT && p->ok; f++) {
        int m = field_meaning[f].meaning;
        if (m < 0)
            continue;
        double sum = 0;
        size_t have = 0;
        for (size_t i = 0; i < n; i++) {
            if (g->line[i].present[f]) {
                sum += g->line[i].value[f];
                have++;
            }
        }
        if (have == n) {
            p->present[m] = 1;
            p->value[m] = field_meaning[f].summed ? sum : sum / (double)n;
        }
    }
    if (p->ok)
        g->want = (unsigned)n;
    unsigned want = g->want;
    memset(g, 0, sizeof *g);
    g->want = want;
    return held;
}
