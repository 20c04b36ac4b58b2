/* trace.h: replay traces (`llmload replay TRACE.jsonl`).
 *
 * A trace is JSON Lines, one request per line (docs/workload.md):
 *
 *   {"index":0,"sched_ns":0,"prompt_tokens":512,"max_tokens":128}
 *   {"t":0.25,"prompt_tokens":40,"output_tokens":300,"class":"chat",
 *    "prefix_id":3,"prefix_tokens":256,"session_id":17,"prompt":"...",
 *    "cancel_after_ns":2000000000,"api":"completions","ignore_eos":true}
 *
 * The arrival time is exactly one of `sched_ns` (integer ns from the trace
 * start), `t` (seconds from the trace start) or `timestamp` (absolute
 * seconds, e.g. Unix time; rebased so the earliest request is at 0), and
 * every line must use the same one. The lines need not be in time order:
 * the loader sorts them by time, ties kept in file order. The exact lines
 * `llmload run --dump-schedule` writes load back to the same requests at
 * the same offsets (no rebasing of sched_ns or t).
 *
 * A run's records (requests.jsonl, docs/formats.md) load as a trace too,
 * told apart by the first line's "id" and "kind": each record is the
 * request the run offered, its id the index, its sched_ns the offset, its
 * prompt_tokens, max_tokens, class and session carried, whatever
 * happened to it (failed, cancelled and dropped requests were offered
 * too); its other members are passed over. Records of requests with
 * images, of embeddings, or of several sweep steps are refused.
 *
 * Every error is one line naming the file, line, column and field:
 *   trace.jsonl:7:31: max_tokens: expected a whole number in [1, 100000000], got 0 */
#ifndef LL_TRACE_H
#define LL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "workload/dist.h"

/* "absent" for the optional 64-bit fields. */
#define TRACE_NONE UINT64_MAX
/* Most requests in one trace (each takes about 72 bytes plus its prompt). */
#define TRACE_MAX_ENTRIES 10000000u
/* Largest token count in a request: the one cap of every drawn length
 * (dist.h), so a dumped schedule always loads back. */
#define TRACE_MAX_TOKENS DIST_TOKENS_MAX
/* Most distinct class names, and the longest (NUL included). */
#define TRACE_MAX_CLASSES 256
#define TRACE_CLASS_MAX 64

enum trace_time_field {
    TRACE_TIME_SCHED_NS,   /* "sched_ns": integer ns */
    TRACE_TIME_SECONDS,    /* "t": seconds from the start */
    TRACE_TIME_TIMESTAMP,  /* "timestamp": absolute seconds, rebased */
};

struct trace_entry {
    uint64_t index;            /* the line's "index", else its position after sorting */
    uint64_t sched_ns;         /* arrival offset from the trace start, ns, unscaled */
    uint64_t cancel_after_ns;  /* cancel this long after sending, or TRACE_NONE */
    uint64_t session_id;       /* or TRACE_NONE */
    uint64_t prompt_off;       /* prompt text at arena + prompt_off, or TRACE_NONE */
    uint32_t prompt_len;       /* prompt text bytes (NUL not counted) */
    uint32_t prompt_tokens;    /* [1, TRACE_MAX_TOKENS]; 0 only when the line
                                  gave a prompt text and no count */
    uint32_t max_tokens;       /* [1, TRACE_MAX_TOKENS] */
    uint32_t prefix_tokens;    /* shared-prefix length, tokens; 0 when none */
    int64_t prefix_id;         /* shared-prefix group, [0, 2^32), or -1 */
    int32_t class_id;          /* index into trace.classes, or -1 */
    int8_t api;                /* "api": enum oai_api (never embeddings), or -1: --api */
    int8_t ignore_eos;         /* "ignore_eos": 0 or 1, or -1: the command line's */
    uint32_t line;             /* 1-based line in the file */
};

/* The latest offset a trace line may give, ns (about 146 years). */
#define TRACE_MAX_SCHED_NS ((int64_t)1 << 62)

struct trace {
    struct trace_entry *entries;   /* n, in arrival order */
    size_t n;                      /* >= 1 */
    char *arena;                   /* prompt texts, each NUL-terminated */
    size_t arena_bytes;
    char (*classes)[TRACE_CLASS_MAX]; /* distinct class names, first-seen order */
    size_t n_classes;
    enum trace_time_field time_field;
    int has_index;                 /* the lines carried "index" */
    int from_records;              /* the file is a run's requests.jsonl */
};

/* Load the trace at path. Returns 0 and a new *out (caller frees with
 * trace_free), or LL_E_IO / LL_E_INVAL / LL_E_RANGE with one line in err.
 * *out is NULL on error. */
int trace_load(const char *path, struct trace **out, char *err, size_t errlen);

/* The same for text[0..len) (need not be NUL-terminated), name used in
 * messages. Does no I/O. */
int trace_parse(const char *name, const char *text, size_t len,
                struct trace **out, char *err, size_t errlen);

/* Free t. NULL does nothing. */
void trace_free(struct trace *t);

/* The prompt text of entry i (NUL-terminated, *len_out bytes if not NULL),
 * or NULL when it has none. Borrowed; valid until trace_free. */
const char *trace_prompt(const struct trace *t, size_t i, size_t *len_out);

/* The class name of entry i, or NULL. Borrowed. */
const char *trace_class_name(const struct trace *t, size_t i);

/* The one factor replay multiplies offsets by, from --time-scale S (> 0:
 * 2 plays the trace twice as slowly) and --rate-scale R (> 0: 2 plays it at
 * twice the rate): S / R. Returns 0, or LL_E_INVAL with a reason in err
 * when either is not a finite number > 0. */
int trace_time_factor(double time_scale, double rate_scale, double *factor,
                      char *err, size_t errlen);

/* Entry i's arrival offset with the factor applied: sched_ns * factor,
 * rounded to the nearest ns, saturating at UINT64_MAX - 1. factor 1 gives
 * sched_ns exactly. Cancellation delays are not scaled. */
uint64_t trace_scaled_sched_ns(const struct trace *t, size_t i, double factor);

#endif
