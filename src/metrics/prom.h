/* prom.h: a parser for the Prometheus text exposition format (0.0.4, plus
 * the OpenMetrics bits an inference server may send: exemplars, "# EOF"),
 * and the few helpers the /metrics scraper needs: find a sample, gather a
 * histogram, and estimate a quantile from its buckets the way Prometheus'
 * histogram_quantile() does.
 *
 * The parser does no I/O: the caller has the whole scrape body in memory
 * and gets samples back. A malformed line never fails the parse: it is
 * skipped, counted, and its line number kept for the report.
 *
 * The rules it follows are written out in docs/server-metrics.md. */
#ifndef LL_PROM_H
#define LL_PROM_H

#include <stddef.h>
#include <stdint.h>

/* A line longer than this (excluding its LF or CRLF) is a bad line. */
#define PROM_MAX_LINE_BYTES 16384
/* A label value longer than this after unescaping is a bad line. */
#define PROM_MAX_LABEL_VALUE_BYTES 4096
/* A sample with more labels than this is a bad line. */
#define PROM_MAX_LABELS 64
/* How many bad line numbers (and reasons) the stats keep; all are counted. */
#define PROM_BAD_LINES_KEPT 8
/* The most distinct buckets (le values) a gathered histogram can hold. */
#define PROM_HIST_MAX_BUCKETS 128

/* A family's type, from its "# TYPE" line. OpenMetrics' "unknown", "info",
 * "stateset" and "gaugehistogram" are read as PROM_UNTYPED. */
enum prom_type {
    PROM_UNTYPED = 0,
    PROM_COUNTER,
    PROM_GAUGE,
    PROM_HISTOGRAM,
    PROM_SUMMARY,
};

/* Which part of its family a sample is: the suffix after the family name.
 * Only the suffixes its family's type allows are recognised (histogram:
 * _bucket _sum _count _created; summary: _sum _count _created; counter:
 * _total _created); anything else is PROM_SUFFIX_NONE. */
enum prom_suffix {
    PROM_SUFFIX_NONE = 0,
    PROM_SUFFIX_BUCKET,
    PROM_SUFFIX_SUM,
    PROM_SUFFIX_COUNT,
    PROM_SUFFIX_TOTAL,
    PROM_SUFFIX_CREATED,
};

/* One label. Both strings are NUL-terminated; value is unescaped (\\ \"
 * and \n turned into \ " and a newline) and holds no NUL byte. */
struct prom_label {
    const char *name;
    const char *value;
    size_t value_len;   /* bytes in value, excluding the NUL */
};

/* One sample. In a callback every pointer is borrowed and valid only until
 * the callback returns; in a struct prom_scrape they live as long as it. */
struct prom_sample {
    const char *name;             /* as written, e.g. "x_seconds_bucket" */
    const char *family;           /* the TYPE'd family it belongs to
                                   * ("x_seconds"), or name when none */
    enum prom_type type;          /* the family's type; PROM_UNTYPED if no
                                   * TYPE line named it */
    enum prom_suffix suffix;      /* its part within the family */
    const struct prom_label *labels;
    size_t n_labels;
    double value;                 /* may be +Inf, -Inf or NaN */
    int has_timestamp;            /* 1 when a timestamp followed the value */
    int64_t timestamp_ms;         /* milliseconds since the Unix epoch: the
                                   * text format's integer as written, or
                                   * OpenMetrics' fractional seconds x 1000,
                                   * rounded. An OpenMetrics integer (seconds)
                                   * reads as ms: the parser cannot tell. */
    size_t line;                  /* 1-based line number in the body */
};

/* What a parse saw. Bad lines are counted in full; the first
 * PROM_BAD_LINES_KEPT of them keep their line number and a static reason. */
struct prom_parse_stats {
    size_t lines;                 /* lines read, comments and blanks too */
    size_t samples;               /* samples delivered */
    size_t bad_lines;             /* lines skipped as malformed */
    size_t bad_line_no[PROM_BAD_LINES_KEPT];      /* 1-based */
    const char *bad_reason[PROM_BAD_LINES_KEPT];  /* static strings */
    int saw_eof;                  /* 1 if a "# EOF" line ended the input */
};

typedef void prom_sample_cb(void *ud, const struct prom_sample *s);

/* Parse a whole scrape body of len bytes (it need not end in a newline and
 * need not be NUL-terminated; LF and CRLF line ends both work). Calls cb
 * once per sample, in body order. Fills *stats (may be NULL). Malformed
 * lines are skipped and counted, never fatal. Returns 0, or LL_E_INVAL if
 * cb is NULL or buf is NULL with len > 0. Keeps no pointer to buf.
 * Cost: one allocation of about 2 * min(len, PROM_MAX_LINE_BYTES) bytes,
 * plus a small table of TYPE'd families. */
int prom_parse(const char *buf, size_t len, prom_sample_cb *cb, void *ud,
               struct prom_parse_stats *stats);

struct prom_arena_block;

/* A parsed scrape, owning copies of all its samples. */
struct prom_scrape {
    struct prom_sample *samples;  /* n_samples of them, in body order */
    size_t n_samples;
    struct prom_parse_stats stats;
    /* private */
    size_t cap_samples;
    struct prom_arena_block *arena;
};

/* Parse a body (as prom_parse does) into a new scrape. On success returns
 * 0 and *out, which the caller frees with prom_scrape_free; LL_E_INVAL for
 * bad arguments. Aborts on out of memory (ll_malloc). */
int prom_scrape_parse(const char *buf, size_t len, struct prom_scrape **out);

/* Free a scrape and everything in it. NULL does nothing. */
void prom_scrape_free(struct prom_scrape *s);

/* The value of smp's label name, or NULL when it has none. */
const char *prom_sample_label(const struct prom_sample *smp, const char *name);

/* Find a sample named name (exact sample name, suffix included) whose
 * labels include every pair in match[0..n_match) (other labels may be
 * present; match may be NULL when n_match is 0). The search starts at
 * index *pos; on a hit sets *pos to its index and returns 0, so a caller
 * can loop with ++*pos. Returns LL_E_NOTFOUND when there is none more. */
int prom_scrape_find(const struct prom_scrape *s, const char *name,
                     const struct prom_label *match, size_t n_match,
                     size_t *pos);

/* The sum of the values of every sample that prom_scrape_find would return
 * (e.g. vllm:request_success_total over all finished_reason values). Sets
 * *n_found (may be NULL) to how many there were; returns 0.0 when none. */
double prom_scrape_sum(const struct prom_scrape *s, const char *name,
                       const struct prom_label *match, size_t n_match,
                       size_t *n_found);

/* A histogram's cumulative buckets, ascending by upper bound. */
struct prom_histogram {
    size_t n_buckets;
    double le[PROM_HIST_MAX_BUCKETS];     /* upper bounds; +Inf last when
                                           * the server sent it */
    double count[PROM_HIST_MAX_BUCKETS];  /* observations <= le[i] */
    double sum;                           /* the _sum sample(s), or 0 */
    double total;                         /* the _count sample(s), or 0 */
};

/* Gather the histogram family (e.g. "vllm:time_to_first_token_seconds")
 * from a scrape: its <family>_bucket samples whose labels include match,
 * with series that differ in other labels summed bucket by bucket (as
 * PromQL's sum by (le) does), plus _sum and _count the same way. Works
 * with or without a TYPE line. Returns 0; LL_E_NOTFOUND when no bucket
 * matched; LL_E_INVAL when a bucket has no le label or an unreadable one;
 * LL_E_RANGE when there are more than PROM_HIST_MAX_BUCKETS distinct le. */
int prom_scrape_histogram(const struct prom_scrape *s, const char *family,
                          const struct prom_label *match, size_t n_match,
                          struct prom_histogram *out);

/* Subtract an earlier scrape of the same histogram from a later one,
 * bucket by bucket, giving the observations made between the two scrapes
 * (e.g. over one load step). out may be the same object as later.
 * An earlier histogram with no buckets counts as all zeros. Returns 0;
 * LL_E_INVAL when the bucket bounds differ; LL_E_RANGE when some count
 * went down (the server restarted: a counter reset), in which case out is
 * left untouched. */
int prom_histogram_delta(const struct prom_histogram *later,
                         const struct prom_histogram *earlier,
                         struct prom_histogram *out);

/* Estimate the q-quantile (0 <= q <= 1) of a histogram by Prometheus'
 * histogram_quantile() rule: find the bucket holding rank q * N and
 * interpolate linearly inside it, taking the first bucket to start at 0
 * (or to be its own value when its bound is <= 0); a rank that falls in
 * the +Inf bucket returns the largest finite bound. Non-monotonic counts
 * are read as their running maximum. The error is at most the width of
 * the bucket that holds the rank (see docs/server-metrics.md).
 * Returns 0 and *out; LL_E_RANGE when q is outside [0, 1] or NaN;
 * LL_E_INVAL when there are fewer than 2 buckets or the last is not +Inf;
 * LL_E_NOTFOUND when the histogram holds no observations. */
int prom_histogram_quantile(const struct prom_histogram *h, double q,
                            double *out);

/* Static names: "counter", "gauge", ... and "", "_bucket", "_sum", ... */
const char *prom_type_name(enum prom_type t);
const char *prom_suffix_name(enum prom_suffix x);

/* Parse a sample value as the text format writes it: a decimal float, or
 * +Inf / -Inf / Inf / NaN (any case). Exposed for le and quantile labels.
 * Returns 0 and *out, or LL_E_INVAL. */
int prom_parse_value(const char *s, size_t len, double *out);

#endif
