/* promopts.h: the --prometheus flags of run, replay and sweep (server
 * metrics through a Prometheus HTTP API; docs/server-metrics.md), their
 * checks, and what run.json says of them. The querying is the metrics
 * layer's (metrics/promsource.h). */
#ifndef LL_PROMOPTS_H
#define LL_PROMOPTS_H

#include <jansson.h>
#include <stddef.h>

#include "metrics/promapi.h"
#include "metrics/promsource.h"

/* The most --prometheus-header lines. */
#define PROMOPTS_MAX_HEADERS 16

/* The flags as given (strings borrowed from argv), and once checked the
 * source's configuration. Zero-initialise; part of struct run_opts. */
struct prom_opts {
    const char *url;                           /* --prometheus URL */
    const char *selector;                      /* --prometheus-selector '{k="v",...}' */
    const char *by;                            /* --prometheus-by LABEL */
    const char *headers[PROMOPTS_MAX_HEADERS]; /* --prometheus-header 'Name: value' */
    size_t n_headers;
    /* Set by promopts_check: */
    char inner[PROMAPI_MAX_SELECTOR + 1]; /* the selector's matchers */
    struct promsource_config cfg;         /* interval_ns, gpu and quiet left to the caller */
};

/* One --prometheus-header a ("Name: value") into p. Returns 0, or
 * LL_E_INVAL with a reason in err that never holds the value. The other
 * flags are plain values: runopts.c's shared table stores them. */
int promopts_take_header(struct prom_opts *p, const char *a, char *err, size_t errlen);

/* Check what the flags say (a no-op without --prometheus; the others
 * alone are refused) and fill o->inner and o->cfg. Returns 0, or
 * LL_E_INVAL with a one-line reason naming the flag in err. A header's
 * value never appears in a reason. */
int promopts_check(struct prom_opts *o, char *err, size_t errlen);

/* run.json's "prometheus" member of config (URL, selector, by, and the
 * headers' names only), or NULL without --prometheus. */
json_t *promopts_json(const struct prom_opts *o);

/* The --help lines of the flags (run, replay and sweep print them). */
extern const char promopts_help[];

#endif
