/* promapi.c: the selector check, the query, the answer's parser and its
 * rendering as Prometheus text (see promapi.h). */
#include "metrics/promapi.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* ---- the selector ------------------------------------------------------ */

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

int promapi_label_name_ok(const char *s)
{
    if (!s || !is_name_start(*s) || (s[0] == '_' && s[1] == '_'))
        return 0;
    for (s++; *s; s++)
        if (!is_name_char(*s))
            return 0;
    return 1;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* One matcher at *pp: name op "string". Advances *pp past it. */
static int selector_matcher(const char *sel, const char **pp, char *err, size_t errlen)
{
    const char *p = *pp;
    if (!is_name_start(*p))
        return snprintf(err, errlen,
                        "--prometheus-selector: expected a label name at byte %zu of \"%s\"",
                        (size_t)(p - sel), sel),
               LL_E_INVAL;
    while (is_name_char(*p))
        p++;
    p = skip_space(p);
    if (p[0] == '=' && p[1] == '~')
        p += 2;
    else if (p[0] == '!' && (p[1] == '=' || p[1] == '~'))
        p += 2;
    else if (p[0] == '=')
        p += 1;
    else
        return snprintf(err, errlen,
                        "--prometheus-selector: expected =, !=, =~ or !~ at byte %zu of \"%s\"",
                        (size_t)(p - sel), sel),
               LL_E_INVAL;
    p = skip_space(p);
    if (*p != '"')
        return snprintf(err, errlen,
                        "--prometheus-selector: expected a double-quoted value at byte %zu of "
                        "\"%s\"",
                        (size_t)(p - sel), sel),
               LL_E_INVAL;
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    if (*p != '"')
        return snprintf(err, errlen, "--prometheus-selector: unterminated string in \"%s\"", sel),
               LL_E_INVAL;
    *pp = p + 1;
    return 0;
}

int promapi_selector_check(const char *sel, char *inner, size_t innerlen, char *err, size_t errlen)
{
    if (!sel || !inner || innerlen == 0)
        return LL_E_INVAL;
    inner[0] = '\0';
    if (strlen(sel) > PROMAPI_MAX_SELECTOR)
        return snprintf(err, errlen, "--prometheus-selector: longer than %d bytes",
                        PROMAPI_MAX_SELECTOR),
               LL_E_INVAL;
    const char *p = skip_space(sel);
    if (*p != '{')
        return snprintf(err, errlen,
                        "--prometheus-selector: expected label matchers in braces, e.g. "
                        "'{job=\"vllm\"}', got \"%s\"",
                        sel),
               LL_E_INVAL;
    const char *from = ++p;
    const char *to = from;
    for (;;) {
        p = skip_space(p);
        if (*p == '}')
            break;
        int rc = selector_matcher(sel, &p, err, errlen);
        if (rc)
            return rc;
        to = p;
        p = skip_space(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p != '}')
            return snprintf(err, errlen,
                            "--prometheus-selector: expected ',' or '}' at byte %zu of \"%s\"",
                            (size_t)(p - sel), sel),
                   LL_E_INVAL;
    }
    if (*skip_space(p + 1) != '\0')
        return snprintf(err, errlen,
                        "--prometheus-selector: unexpected text after '}' at byte %zu of \"%s\"",
                        (size_t)(p + 1 - sel), sel),
               LL_E_INVAL;
    from = skip_space(from);
    size_t n = to > from ? (size_t)(to - from) : 0;
    if (n + 1 > innerlen)
        return LL_E_RANGE;
    memcpy(inner, from, n);
    inner[n] = '\0';
    return 0;
}

/* ---- the query and its URL --------------------------------------------- */

void promapi_query(const char *const *names, size_t n, const char *inner, struct strbuf *out)
{
    strbuf_puts(out, "{__name__=~\"");
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_puts(out, "|");
        strbuf_puts(out, names[i]);
    }
    strbuf_puts(out, "\"");
    if (inner && *inner) {
        strbuf_puts(out, ",");
        strbuf_puts(out, inner);
    }
    strbuf_printf(out, "}[%ds]", PROMAPI_WINDOW_S);
}

void promapi_url(const char *base, const char *query, double eval_time_s, struct strbuf *out)
{
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    strbuf_add(out, base, bl);
    strbuf_puts(out, "/api/v1/query?query=");
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *q = (const unsigned char *)query; *q; q++) {
        if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
            *q == '-' || *q == '_' || *q == '.' || *q == '~') {
            strbuf_add(out, (const char *)q, 1);
        } else {
            char e[3] = {'%', hex[*q >> 4], hex[*q & 15]};
            strbuf_add(out, e, 3);
        }
    }
    strbuf_printf(out, "&time=%.3f", eval_time_s);
}

/* ---- the answer -------------------------------------------------------- */

/* Free what one series holds. */
static void series_free(struct promapi_series *s)
{
    free((char *)s->name);
    for (size_t k = 0; k < s->n_labels; k++) {
        free((char *)s->labels[k].name);
        free((char *)s->labels[k].value);
    }
    free(s->labels);
}

void promapi_answer_reset(struct promapi_answer *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        series_free(&a->series[i]);
    free(a->series);
    memset(a, 0, sizeof *a);
}

/* One [t, "v"] pair into *t_s and *v. */
static int sample_pair(json_t *pair, double *t_s, double *v)
{
    if (!json_is_array(pair) || json_array_size(pair) != 2)
        return LL_E_PROTO;
    json_t *t = json_array_get(pair, 0), *x = json_array_get(pair, 1);
    if (!json_is_number(t) || !json_is_string(x))
        return LL_E_PROTO;
    *t_s = json_number_value(t);
    return prom_parse_value(json_string_value(x), json_string_length(x), v) == 0 ? 0 : LL_E_PROTO;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The latest sample of one result entry and the median gap between its
 * samples into *s (labels not yet). Returns 1 when it had a sample, 0
 * when none, LL_E_PROTO when malformed. */
static int series_samples(json_t *r, struct promapi_series *s)
{
    json_t *values = json_object_get(r, "values"), *value = json_object_get(r, "value");
    s->interval_s = NAN;
    if (value)
        return sample_pair(value, &s->t_s, &s->value) == 0 ? 1 : LL_E_PROTO;
    if (!json_is_array(values))
        return LL_E_PROTO;
    size_t n = json_array_size(values);
    if (n == 0)
        return 0;
    double *gaps = n > 1 ? ll_malloc((n - 1) * sizeof *gaps) : NULL;
    double prev = 0;
    int rc = 1;
    for (size_t i = 0; i < n && rc == 1; i++) {
        double t, v;
        if (sample_pair(json_array_get(values, i), &t, &v) != 0) {
            rc = LL_E_PROTO;
            break;
        }
        if (i)
            gaps[i - 1] = t - prev;
        prev = t;
        s->t_s = t;
        s->value = v;
    }
    if (rc == 1 && n > 1) {
        qsort(gaps, n - 1, sizeof *gaps, cmp_double);
        s->interval_s = gaps[(n - 1) / 2];
    }
    free(gaps);
    return rc;
}

/* The labels of a result's "metric" object into *s. */
static int series_labels(json_t *metric, struct promapi_series *s)
{
    if (!json_is_object(metric))
        return LL_E_PROTO;
    s->labels = ll_calloc(json_object_size(metric) + 1, sizeof *s->labels);
    const char *k;
    json_t *v;
    json_object_foreach(metric, k, v)
    {
        if (!json_is_string(v))
            return LL_E_PROTO;
        if (strcmp(k, "__name__") == 0) {
            free((char *)s->name);
            s->name = ll_strdup(json_string_value(v));
            continue;
        }
        /* A label value with a NUL cannot be written back out as text. */
        if (strlen(json_string_value(v)) != json_string_length(v))
            return LL_E_PROTO;
        struct prom_label *l = &s->labels[s->n_labels++];
        l->name = ll_strdup(k);
        l->value = ll_strdup(json_string_value(v));
        l->value_len = json_string_length(v);
    }
    if (!s->name)
        s->name = ll_strdup("");
    return 0;
}

static int answer_fail(json_t *root, struct promapi_answer *out, char *err, size_t errlen,
                       const char *why)
{
    snprintf(err, errlen, "%s", why);
    json_decref(root);
    promapi_answer_reset(out);
    return LL_E_PROTO;
}

int promapi_answer_parse(const char *body, size_t len, struct promapi_answer *out, char *err,
                         size_t errlen)
{
    if (!out)
        return LL_E_INVAL;
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(body ? body : "", body ? len : 0, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(root))
        return answer_fail(root, out, err, errlen, "the answer is not a JSON object");
    const char *status = json_string_value(json_object_get(root, "status"));
    if (status && strcmp(status, "error") == 0) {
        const char *et = json_string_value(json_object_get(root, "errorType"));
        const char *e = json_string_value(json_object_get(root, "error"));
        char type[64], why[400]; /* the server's words: one printable line */
        ll_printable(et ? et : "error", SIZE_MAX, type, sizeof type);
        ll_printable(e ? e : "(no reason given)", SIZE_MAX, why, sizeof why);
        snprintf(err, errlen, "%s: %s", type, why);
        json_decref(root);
        return LL_E_PROTO;
    }
    if (!status || strcmp(status, "success") != 0)
        return answer_fail(root, out, err, errlen, "the answer has no \"status\": \"success\"");
    json_t *data = json_object_get(root, "data");
    const char *type = json_string_value(json_object_get(data, "resultType"));
    json_t *result = json_object_get(data, "result");
    if (!type || (strcmp(type, "matrix") != 0 && strcmp(type, "vector") != 0) ||
        !json_is_array(result))
        return answer_fail(root, out, err, errlen,
                           "the answer's data is not a matrix or vector result");
    size_t n = json_array_size(result);
    if (n > PROMAPI_MAX_SERIES)
        return answer_fail(root, out, err, errlen, "the answer has too many series");
    out->series = ll_calloc(n + 1, sizeof *out->series);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(result, i);
        struct promapi_series *s = &out->series[out->n];
        memset(s, 0, sizeof *s);
        int rc = json_is_object(r) ? series_samples(r, s) : LL_E_PROTO;
        if (rc == 0)
            continue; /* no sample in the window */
        out->n++;     /* counted first, so a failure below frees what it holds */
        if (rc < 0 || series_labels(json_object_get(r, "metric"), s) != 0)
            return answer_fail(root, out, err, errlen, "a malformed series in the answer");
    }
    json_decref(root);
    return 0;
}

const char *promapi_series_label(const struct promapi_series *s, const char *name)
{
    for (size_t k = 0; k < s->n_labels; k++)
        if (strcmp(s->labels[k].name, name) == 0)
            return s->labels[k].value;
    return NULL;
}

size_t promapi_groups(const struct promapi_answer *a, const char *by, const char **groups,
                      size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n && n < max; i++) {
        const char *g = promapi_series_label(&a->series[i], by);
        size_t k = 0;
        while (g && k < n && strcmp(groups[k], g) != 0)
            k++; /* linear: replicas are few */
        if (g && k == n)
            groups[n++] = g;
    }
    return n;
}

static int in_group(const struct promapi_series *s, const char *by, const char *group)
{
    if (!group)
        return 1;
    const char *g = promapi_series_label(s, by);
    return g && strcmp(g, group) == 0;
}

void promapi_render(const struct promapi_answer *a, const char *by, const char *group,
                    struct strbuf *out)
{
    for (size_t i = 0; i < a->n; i++) {
        const struct promapi_series *s = &a->series[i];
        if (!in_group(s, by, group) || !*s->name)
            continue;
        strbuf_puts(out, s->name);
        for (size_t k = 0; k < s->n_labels; k++) {
            strbuf_printf(out, "%c%s=\"", k ? ',' : '{', s->labels[k].name);
            for (const char *v = s->labels[k].value; *v; v++) {
                if (*v == '\\' || *v == '"')
                    strbuf_printf(out, "\\%c", *v);
                else if (*v == '\n')
                    strbuf_puts(out, "\\n");
                else
                    strbuf_add(out, v, 1);
            }
            strbuf_puts(out, "\"");
        }
        strbuf_puts(out, s->n_labels ? "} " : " ");
        if (isnan(s->value))
            strbuf_puts(out, "NaN");
        else if (isinf(s->value))
            strbuf_puts(out, s->value > 0 ? "+Inf" : "-Inf");
        else
            strbuf_printf(out, "%.17g", s->value);
        strbuf_puts(out, "\n");
    }
}

void promapi_staleness(const struct promapi_answer *a, const char *by, const char *group,
                       double eval_time_s, double *age_s, double *interval_s)
{
    double oldest = NAN;
    double *iv = ll_malloc((a->n + 1) * sizeof *iv);
    size_t n_iv = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct promapi_series *s = &a->series[i];
        if (!in_group(s, by, group))
            continue;
        if (isnan(oldest) || s->t_s < oldest)
            oldest = s->t_s;
        if (!isnan(s->interval_s))
            iv[n_iv++] = s->interval_s;
    }
    if (age_s)
        *age_s = isnan(oldest) ? NAN : eval_time_s - oldest;
    if (interval_s) {
        qsort(iv, n_iv, sizeof *iv, cmp_double);
        *interval_s = n_iv ? iv[n_iv / 2] : NAN;
    }
    free(iv);
}

size_t promapi_drop_stale(struct promapi_answer *a, double fallback_interval_s)
{
    double newest = NAN, iv;
    for (size_t i = 0; i < a->n; i++)
        if (isnan(newest) || a->series[i].t_s > newest)
            newest = a->series[i].t_s;
    promapi_staleness(a, NULL, NULL, newest, NULL, &iv);
    if (isnan(iv) || iv <= 0)
        iv = fallback_interval_s;
    if (isnan(newest) || !(iv > 0))
        return 0;
    double oldest_ok_s = newest - PROMAPI_STALE_INTERVALS * iv;
    size_t kept = 0, n = a->n;
    for (size_t i = 0; i < n; i++) {
        struct promapi_series *s = &a->series[i];
        if (s->t_s >= oldest_ok_s) {
            a->series[kept++] = *s;
            continue;
        }
        series_free(s);
    }
    a->n = kept;
    return n - kept;
}
