/* histlog.h: hist.jsonl, the mergeable histogram log of a run.
 *
 * A worker counts what it measures into a window of HISTLOG_WINDOW_NS (one
 * second of its clock, from the run's or the sweep step's t = 0) and, as
 * the window closes, writes it as one JSON line: the window's start, the
 * records it counted, and a histogram of each of TTFT, ITL, TPOT and E2E
 * in hist.c's lossless serialised form (docs/formats.md, "hist.jsonl").
 * The windows of every worker, every shard and every second add up
 * exactly (hist_merge), so the percentiles of a merged log are the
 * histogram percentiles of the whole run, within 1/256 of the
 * record-exact ones (docs/percentiles.md).
 *
 * What a window holds is what the load point's stats hold (stats.h): ok
 * records' TTFT, TPOT and E2E, every ITL gap of a stream scheduled after
 * the warm-up, and the count of records of any other kind; never the
 * warm-up's or the cold start's requests. */
#ifndef LL_HISTLOG_H
#define LL_HISTLOG_H

#include <stddef.h>
#include <stdint.h>

#include "measure/hist.h"
#include "measure/record.h"

/* One window is one second of the worker's clock. */
#define HISTLOG_WINDOW_NS 1000000000ULL
/* The longest line a reader takes: four full histograms fit in far less. */
#define HISTLOG_MAX_LINE (1u << 20)

enum histlog_metric { HISTLOG_TTFT, HISTLOG_ITL, HISTLOG_TPOT, HISTLOG_E2E, HISTLOG_METRICS };

/* The metric's key in a line: "ttft", "itl", "tpot", "e2e". */
const char *histlog_metric_name(enum histlog_metric m);

/* One window (or the merge of several). Embedded: histlog_window_init /
 * histlog_window_free. */
struct histlog_window {
    int32_t step;                    /* the sweep step; -1 outside a sweep */
    uint32_t worker;                 /* the worker thread that counted it */
    uint32_t shard;                  /* --shard K (0 unsharded) */
    uint64_t t_ns;                   /* window start, ns from the run's (step's) t = 0,
                        a multiple of HISTLOG_WINDOW_NS */
    uint64_t ok;                     /* ok records counted */
    uint64_t failed;                 /* records of any other kind counted */
    struct hist *h[HISTLOG_METRICS]; /* ns each; owned */
    /* 1: every shard's and worker's window of this second (and step)
     * added together, a merged directory's line (llmload merge): written
     * without "shard" and "worker", and read back so from a line that has
     * neither. 0: one worker's window. */
    int combined;
};

/* Make w an empty window (step -1, everything 0) and allocate its
 * histograms (aborts on out of memory). Undo with histlog_window_free. */
void histlog_window_init(struct histlog_window *w);

/* Free w's histograms and zero it. Safe on a zeroed struct and twice. */
void histlog_window_free(struct histlog_window *w);

/* Empty the histograms and counts; keep step, worker, shard and t_ns. */
void histlog_window_clear(struct histlog_window *w);

/* Whether w counted nothing (no record, no ITL gap). */
int histlog_window_empty(const struct histlog_window *w);

/* Count one finished record: ok ones into TTFT, TPOT and E2E (each when
 * the record has it, as stats_add_record does), others into failed. The
 * ITL histogram is fed gap by gap by whoever reads the stream
 * (stats.h's itl_window). O(1), allocates nothing. */
void histlog_window_add_record(struct histlog_window *w, const struct record *r);

/* Add src's counts and histograms into dst (dst's step, worker, shard and
 * t_ns are kept). Afterwards dst's histograms are exactly what recording
 * both windows' values into one would have given. */
void histlog_window_merge(struct histlog_window *dst, const struct histlog_window *src);

/* w as one line of hist.jsonl, with its newline. Caller frees with free().
 * Aborts on out of memory. Empty histograms are left out of the line. */
char *histlog_line(const struct histlog_window *w);

/* Append histlog_line(w) to fd in whole (a loop over short writes; one
 * write(2) of the line on a file opened O_APPEND, so the lines of
 * several threads never interleave). 0, or LL_E_IO with errno set. */
int histlog_write_fd(int fd, const struct histlog_window *w);

/* Parse one line of hist.jsonl (len bytes, a trailing newline allowed)
 * into w, which must have been histlog_window_init'ed; its previous
 * contents are replaced. Returns 0, or LL_E_INVAL with a one-line reason
 * naming the field in err (errlen bytes, may be 0). Does no I/O. */
int histlog_parse_line(const char *line, size_t len, struct histlog_window *w, char *err,
                       size_t errlen);

/* Merge every window of the log text buf (len bytes, lines as
 * histlog_parse_line takes; blank lines skipped) whose step is step
 * (HISTLOG_ALL_STEPS: every line) into total (initialised; added to, not
 * replaced); *windows (may be NULL) gets how many lines were merged.
 * Returns 0, or LL_E_INVAL with "NAME:LINE: reason" in err, NAME being
 * name (the file's, for the message). Does no I/O. */
#define HISTLOG_ALL_STEPS INT32_MIN
int histlog_merge_text(const char *name, const char *buf, size_t len, int32_t step,
                       struct histlog_window *total, uint64_t *windows, char *err, size_t errlen);

/* histlog_merge_text on the file at path (LL_E_IO with "PATH: reason" when
 * it cannot be read). */
int histlog_merge_file(const char *path, int32_t step, struct histlog_window *total,
                       uint64_t *windows, char *err, size_t errlen);

#endif
