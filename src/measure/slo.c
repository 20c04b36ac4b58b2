/* slo.c: SLO thresholds. */
#include "measure/slo.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static int parse_spec(const char *spec, struct slo *out, char *err, size_t errlen)
{
    struct slo s = {0};
    const char *p = spec;
    if (!spec || !*spec) {
        snprintf(err, errlen, "expected ttft=DUR,tpot=DUR,e2e=DUR (any of them), got \"\"");
        return LL_E_INVAL;
    }
    while (*p) {
        char part[64];
        size_t n = ll_list_item(p, part, sizeof part);
        if (n == 0 || n >= sizeof part) {
            snprintf(err, errlen, "expected NAME=DURATION between commas in \"%s\"", spec);
            return LL_E_INVAL;
        }
        char *eq = strchr(part, '=');
        if (!eq) {
            snprintf(err, errlen, "expected NAME=DURATION, got \"%s\"", part);
            return LL_E_INVAL;
        }
        *eq = '\0';
        const char *name = ll_trim(part), *val = ll_trim(eq + 1);
        uint64_t *slot = NULL;
        if (strcmp(name, "ttft") == 0)
            slot = &s.ttft_ns;
        else if (strcmp(name, "tpot") == 0)
            slot = &s.tpot_ns;
        else if (strcmp(name, "e2e") == 0)
            slot = &s.e2e_ns;
        else {
            snprintf(err, errlen, "unknown threshold \"%s\" (expected ttft, tpot or e2e)", name);
            return LL_E_INVAL;
        }
        if (*slot) { /* the later one silently won */
            snprintf(err, errlen, "%s given twice in \"%s\"", name, spec);
            return LL_E_INVAL;
        }
        uint64_t ns;
        if (ll_parse_duration_ns(val, LL_NS_PER_MS, &ns) != 0 || ns == 0) {
            snprintf(err, errlen, "%s: expected a positive duration (e.g. 500ms, 2s), got \"%s\"",
                     name, val);
            return LL_E_INVAL;
        }
        /* A bare number was read as ms, where every other duration reads
         * one as seconds (docs/distributions.md): --expect refuses it, and
         * so does this. */
        size_t vl = strlen(val);
        if (vl && (isdigit((unsigned char)val[vl - 1]) || val[vl - 1] == '.')) {
            snprintf(err, errlen, "%s: \"%s\" has no unit (%sms or %ss?); give one: 500ms, 2s",
                     name, val, val, val);
            return LL_E_INVAL;
        }
        *slot = ns;
        p = ll_list_next(p, n, "", spec, err, errlen);
        if (!p) {
            snprintf(err, errlen, "a trailing comma in \"%s\"", spec);
            return LL_E_INVAL;
        }
    }
    *out = s;
    return 0;
}

int slo_parse(const char *spec, struct slo *out, char *err, size_t errlen)
{
    int rc = parse_spec(spec, out, err, errlen);
    /* The reason quotes the spec, which may come from a file (a class's
     * "slo" in steps.jsonl): one printable line. */
    if (rc != 0 && err && errlen)
        ll_printable(err, strlen(err), err, errlen);
    return rc;
}

int slo_is_set(const struct slo *s)
{
    return s->ttft_ns || s->tpot_ns || s->e2e_ns;
}

/* Whether r's TPOT is over s's threshold, when s sets one. A request with
 * no TPOT (record_tpot_ns: fewer than two output tokens or events) has
 * none to miss, ended or cancelled. */
static int tpot_missed(const struct slo *s, const struct record *r)
{
    if (!s->tpot_ns)
        return 0;
    uint64_t v = record_tpot_ns(r);
    return v != LL_NO_TIME && v > s->tpot_ns;
}

int slo_met(const struct slo *s, const struct record *r)
{
    if (r->kind != REC_OK)
        return 0;
    if (s->ttft_ns) {
        uint64_t v = record_ttft_ns(r);
        if (v == LL_NO_TIME || v > s->ttft_ns)
            return 0;
    }
    if (tpot_missed(s, r))
        return 0;
    if (s->e2e_ns) {
        uint64_t v = record_e2e_ns(r);
        if (v == LL_NO_TIME || v > s->e2e_ns)
            return 0;
    }
    return 1;
}

static size_t put_one(char *buf, size_t len, size_t at, const char *name, uint64_t ns)
{
    if (!ns)
        return at;
    char d[24];
    if (ns % LL_NS_PER_SEC == 0)
        snprintf(d, sizeof d, "%llus", (unsigned long long)(ns / LL_NS_PER_SEC));
    else if (ns % LL_NS_PER_MS == 0)
        snprintf(d, sizeof d, "%llums", (unsigned long long)(ns / LL_NS_PER_MS));
    else if (ns % LL_NS_PER_US == 0)
        snprintf(d, sizeof d, "%lluus", (unsigned long long)(ns / LL_NS_PER_US));
    else /* whole: what is written reads back to the threshold applied */
        snprintf(d, sizeof d, "%lluns", (unsigned long long)ns);
    int n = snprintf(buf + (at < len ? at : len), at < len ? len - at : 0, "%s%s=%s",
                     at ? "," : "", name, d);
    return at + (n > 0 ? (size_t)n : 0);
}

void slo_format(const struct slo *s, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    at = put_one(buf, len, at, "ttft", s->ttft_ns);
    at = put_one(buf, len, at, "tpot", s->tpot_ns);
    put_one(buf, len, at, "e2e", s->e2e_ns);
}

const struct slo *slo_or(const struct slo *own, const struct slo *fallback)
{
    return slo_is_set(own) ? own : fallback;
}

int slo_judge(const struct slo *s, const struct record *r)
{
    if (r->kind != REC_CANCELLED)
        return slo_met(s, r);
    uint64_t waited = record_e2e_ns(r);
    if (s->ttft_ns) {
        uint64_t v = record_ttft_ns(r);
        if (v != LL_NO_TIME ? v > s->ttft_ns : waited != LL_NO_TIME && waited > s->ttft_ns)
            return 0;
    }
    if (tpot_missed(s, r))
        return 0;
    if (s->e2e_ns && waited != LL_NO_TIME && waited > s->e2e_ns)
        return 0;
    /* Met when every threshold set was already decided, which before the
     * end only TTFT can be: a first token in time. Leaving such a request
     * out while counting one that missed would bias attainment against
     * the server (with --cancel-after-tokens and a TTFT SLO, only the
     * late first tokens of the cancelled were counted). A TPOT or E2E
     * threshold waits for an end the client took away. */
    if (s->ttft_ns && !s->tpot_ns && !s->e2e_ns && record_ttft_ns(r) != LL_NO_TIME)
        return 1;
    return SLO_UNJUDGED;
}

int slo_judge_any(const struct slo *slo, int any, const struct record *r)
{
    return any ? slo_judge(slo, r) : 0;
}
