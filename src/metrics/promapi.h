/* promapi.h: the pure parts of reading server metrics through a
 * Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir,
 * VictoriaMetrics): the --prometheus-selector check, the query and its
 * URL, the JSON answer's parser, and the answer written back out as
 * Prometheus text, one body per replica and one for them all, so that
 * scrape.c's path (engine detection, the engine map, the TTFT histogram)
 * reads it exactly as a direct scrape. No I/O here: promsource.c asks.
 *
 * The query is one range selector over the raw series of the names the
 * engine map knows, `{__name__=~"a|b|...",<selector>}[30s]`: a matrix of
 * every series' samples with Prometheus's own timestamps, so the latest
 * value of each series, its age (the staleness) and Prometheus's scrape
 * interval all come from one answer. docs/server-metrics.md has the rules. */
#ifndef LL_PROMAPI_H
#define LL_PROMAPI_H

#include <stddef.h>

#include "metrics/prom.h"
#include "util/strbuf.h"

/* The range the query looks back over, seconds: a series whose latest
 * sample is older than this is not seen (scrape intervals up to 15 s,
 * Prometheus's default, leave two samples in it). */
#define PROMAPI_WINDOW_S 30
/* A series this many scrape intervals behind the newest is gone
 * (promapi_drop_stale). */
#define PROMAPI_STALE_INTERVALS 2.0
/* The longest --prometheus-selector, bytes. */
#define PROMAPI_MAX_SELECTOR 2048
/* The most series one answer may hold (a larger one is refused). */
#define PROMAPI_MAX_SERIES 20000

/* Check a --prometheus-selector: '{' matchers '}', each matcher a label
 * name, one of = != =~ !~, and a double-quoted string (\\ \" \n and other
 * backslash escapes kept as written), separated by commas (a trailing one
 * allowed); "{}" is no matcher. On success writes the matchers without
 * the braces (trimmed, no trailing comma) into inner (innerlen bytes) and
 * returns 0. Returns LL_E_INVAL with a one-line reason naming the byte
 * offset in err (errlen bytes), or LL_E_RANGE when inner is too small. */
int promapi_selector_check(const char *sel, char *inner, size_t innerlen, char *err, size_t errlen);

/* 1 when s is a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not
 * starting with "__"), else 0. */
int promapi_label_name_ok(const char *s);

/* The query over names[0, n) (exact sample names, e.g.
 * "vllm:num_requests_waiting", "x_seconds_bucket") with the matchers
 * inner (from promapi_selector_check; "" or NULL for none), appended to
 * out: {__name__=~"n1|n2",inner}[PROMAPI_WINDOW_S s]. Regex
 * metacharacters in names (a '.' cannot occur; ':' is not one) need none
 * escaped. */
void promapi_query(const char *const *names, size_t n, const char *inner, struct strbuf *out);

/* The instant-query URL: base (the --prometheus URL, trailing slashes
 * dropped) + "/api/v1/query?query=" + query percent-encoded + "&time=" +
 * eval_time_s (Unix seconds, millisecond precision), appended to out. */
void promapi_url(const char *base, const char *query, double eval_time_s, struct strbuf *out);

/* One series of an answer, its latest sample. Strings owned by the answer. */
struct promapi_series {
    const char *name;          /* __name__ ("" when the answer had none) */
    struct prom_label *labels; /* the other labels, n_labels of them */
    size_t n_labels;
    double value;      /* the latest sample's value */
    double t_s;        /* its timestamp, Unix seconds */
    double interval_s; /* the median gap between its samples, s;
                                     * NAN with fewer than two */
};

/* A parsed answer. */
struct promapi_answer {
    struct promapi_series *series; /* n of them, in answer order */
    size_t n;
};

/* Parse an HTTP API answer (len bytes of JSON, need not be
 * NUL-terminated): {"status":"success","data":{"resultType":"matrix" or
 * "vector","result":[{"metric":{...},"values":[[t,"v"],...]}]}} (a
 * vector's "value" is one [t,"v"]). Returns 0 and *out (release with
 * promapi_answer_reset; zeroed first); LL_E_PROTO with a one-line reason
 * in err for anything else: not JSON, a "status":"error" answer (err then
 * "<errorType>: <error>" as Prometheus said it), another result type, a
 * malformed series or value, more than PROMAPI_MAX_SERIES series. A
 * series with no sample is skipped. Keeps no pointer to body. */
int promapi_answer_parse(const char *body, size_t len, struct promapi_answer *out, char *err,
                         size_t errlen);

/* Free what an answer holds and zero it. Safe on a zeroed answer. */
void promapi_answer_reset(struct promapi_answer *a);

/* The value of series s's label name, or NULL. */
const char *promapi_series_label(const struct promapi_series *s, const char *name);

/* The distinct values of label by over the series, in order of first
 * appearance, into groups[0, max) (borrowed from a); a series without the
 * label is in no group, and values past the first max are left out.
 * Returns how many were stored. */
size_t promapi_groups(const struct promapi_answer *a, const char *by, const char **groups,
                      size_t max);

/* Append to out, as Prometheus text (one "name{labels} value" line each,
 * label values escaped), the series whose label by equals group; every
 * series when group is NULL. */
void promapi_render(const struct promapi_answer *a, const char *by, const char *group,
                    struct strbuf *out);

/* Over the series rendered for group (as promapi_render chooses them):
 * the age of the oldest latest sample at eval_time_s (seconds; the
 * staleness of the figures), and the median of the series' intervals
 * (Prometheus's scrape interval; NAN when no series has two samples).
 * Either pointer may be NULL. */
void promapi_staleness(const struct promapi_answer *a, const char *by, const char *group,
                       double eval_time_s, double *age_s, double *interval_s);

/* Drop from a the series whose latest sample is older than
 * PROMAPI_STALE_INTERVALS intervals before the newest series' latest: the
 * interval is the series' median (Prometheus's scrape interval), else
 * fallback_interval_s (the source's own; no drop when neither is > 0).
 * The range query sees a series for PROMAPI_WINDOW_S after its target
 * went away: a replaced exporter's old series beside its new one read
 * "gpus": 2 and twice the power of one GPU, and dated the point 20 s
 * back. Returns how many were dropped; a's order is kept. */
size_t promapi_drop_stale(struct promapi_answer *a, double fallback_interval_s);

#endif
