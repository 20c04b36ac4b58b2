/* promopts.c: the --prometheus flags (see promopts.h). */
#include "cli/promopts.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/* A reason into err, and LL_E_INVAL (as runopts_errf, which this file
 * cannot include: runopts.h includes it). */
int promopts_take_header(struct prom_opts *p, const char *a, char *err, size_t errlen)
{
    if (!ll_header_line_ok(a))
        return ll_errf(err, errlen,
                       "--prometheus-header: expected 'Name: value' (a token, a colon, "
                       "the value; no line breaks)");
    if (p->n_headers == PROMOPTS_MAX_HEADERS)
        return ll_errf(err, errlen, "--prometheus-header: at most %d", PROMOPTS_MAX_HEADERS);
    p->headers[p->n_headers++] = a;
    return 0;
}

/* The --prometheus URL: http(s), no user info (run.json keeps the URL). */
static int check_url(const char *url, char *err, size_t errlen)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return ll_errf(err, errlen,
                       "--prometheus: expected http://HOST:PORT or https://... (the URL is not "
                       "repeated here: it may carry a secret)");
    const char *a = strstr(url, "://") + 3;
    size_t n = strcspn(a, "/?#");
    if (n == 0)
        return ll_errf(err, errlen, "--prometheus: no host after the scheme");
    if (memchr(a, '@', n))
        return ll_errf(err, errlen,
                       "--prometheus: user info (USER:PASSWORD@) is not taken: the URL is "
                       "written to run.json; send credentials with --prometheus-header");
    if (strpbrk(url, "?#"))
        return ll_errf(err, errlen,
                       "--prometheus: expected the API's base URL, without a query (?) or a "
                       "fragment (#): credentials go in --prometheus-header");
    return 0;
}

int promopts_check(struct prom_opts *o, char *err, size_t errlen)
{
    if (!o->url) {
        const char *alone = o->selector    ? "--prometheus-selector"
                            : o->by        ? "--prometheus-by"
                            : o->n_headers ? "--prometheus-header"
                                           : NULL;
        if (alone)
            return ll_errf(err, errlen, "%s: goes with --prometheus URL", alone);
        return 0;
    }
    if (check_url(o->url, err, errlen) != 0)
        return LL_E_INVAL;
    o->inner[0] = '\0';
    if (o->selector) {
        int rc = promapi_selector_check(o->selector, o->inner, sizeof o->inner, err, errlen);
        if (rc == LL_E_RANGE)
            return ll_errf(err, errlen, "--prometheus-selector: too long");
        if (rc != 0)
            return LL_E_INVAL;
    }
    if (o->by && !promapi_label_name_ok(o->by))
        return ll_errf(err, errlen,
                       "--prometheus-by: expected a label name ([a-zA-Z_][a-zA-Z0-9_]*, "
                       "e.g. pod), got \"%s\"",
                       o->by);
    memset(&o->cfg, 0, sizeof o->cfg);
    o->cfg.url = o->url;
    o->cfg.inner = o->inner;
    o->cfg.by = o->by;
    o->cfg.headers = o->headers;
    o->cfg.n_headers = o->n_headers;
    return 0;
}

json_t *promopts_json(const struct prom_opts *o)
{
    if (!o->url)
        return NULL;
    json_t *p = json_object();
    json_object_set_new(p, "url", json_string(o->url));
    json_object_set_new(p, "selector", o->selector ? json_string(o->selector) : json_null());
    json_object_set_new(p, "by", json_string(o->by ? o->by : "pod"));
    json_t *h = json_array();
    for (size_t i = 0; i < o->n_headers; i++)
        json_array_append_new(
            h, json_stringn(o->headers[i], (size_t)(strchr(o->headers[i], ':') - o->headers[i])));
    json_object_set_new(p, "header_names", h);
    return p;
}

/* clang-format off */
const char promopts_help[] =
"Server metrics through Prometheus (docs/server-metrics.md):\n"
"  --prometheus URL         query a Prometheus HTTP API (Prometheus, Thanos, Mimir,\n"
"                           VictoriaMetrics) every --metrics-interval and at the end for\n"
"                           the engine metrics, summed over replicas and per replica,\n"
"                           instead of scraping a /metrics; DCGM_FI_* series behind the\n"
"                           selector give the energy figures as --gpu-metrics does\n"
"  --prometheus-selector '{k=\"v\",...}'  label matchers added to every query\n"
"  --prometheus-by LABEL    the label that tells replicas apart (default pod, else instance)\n"
"  --prometheus-header 'Name: value'  sent with each query (repeatable; never written out)\n";
/* clang-format on */
