/* trace.c: replay traces from JSON Lines. See trace.h for the format. */
#include "workload/trace.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "decode/openai.h"
#include "util/util.h"
#include "workload/jsonfile.h"

/* Largest arrival offset, ns (about 146 years), and the matching bounds in
 * seconds; a timestamp may be any time up to the year 5000. */
#define TRACE_MAX_T_S 4.6e9
#define TRACE_MAX_TIMESTAMP_S 1e11
/* Longest prompt text in one line, bytes. */
#define TRACE_MAX_PROMPT_BYTES ((size_t)16 << 20)

enum {
    F_INDEX,
    F_SCHED_NS,
    F_T,
    F_TIMESTAMP,
    F_PROMPT_TOKENS,
    F_MAX_TOKENS,
    F_OUTPUT_TOKENS,
    F_CLASS,
    F_PREFIX_ID,
    F_PREFIX_TOKENS,
    F_SESSION_ID,
    F_PROMPT,
    F_CANCEL_AFTER_NS,
    F_API,
    F_IGNORE_EOS,
    F_COUNT
};

static const char *const field_names[F_COUNT] = {
    "index",           "sched_ns", "t",          "timestamp",     "prompt_tokens", "max_tokens",
    "output_tokens",   "class",    "prefix_id",  "prefix_tokens", "session_id",    "prompt",
    "cancel_after_ns", "api",      "ignore_eos",
};

struct tparse {
    const char *name;
    char *err;
    size_t errlen;
    struct trace *t;
    size_t cap;            /* entries allocated */
    size_t arena_cap;
    double *stamps;        /* TRACE_TIME_TIMESTAMP: the raw seconds per entry */
    int time_field;        /* -1 until the first line */
    unsigned long time_line;
    unsigned long index_line; /* the first line that decided has_index */
    const char *ls;        /* the current line's start */
    unsigned long line;
    int64_t step; /* records: the first line's "step", or -1 */
    unsigned long step_line;
};

static void terr(struct tparse *p, const struct jscan_value *at,
                 const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "NAME:LINE:COL: FIELD: <fmt>", the column of at (or 1). */
static void terr(struct tparse *p, const struct jscan_value *at,
                 const char *field, const char *fmt, ...)
{
    unsigned long col = at && at->ptr ? (unsigned long)(at->ptr - p->ls) + 1 : 1;
    va_list ap;
    va_start(ap, fmt);
    jsonfile_verrf(p->err, p->errlen, p->name, p->line, col, field, fmt, ap);
    va_end(ap);
}

/* Report v, the value of field, as not expect ("expected EXPECT, got
 * VALUE"); returns LL_E_INVAL. */
static int bad_number(struct tparse *p, const struct jscan_value *v, const char *field,
                      const char *expect)
{
    char q[64];
    terr(p, v, field, "expected %s, got %s", expect, jsonfile_quote(v->ptr, v->len, q, sizeof(q)));
    return LL_E_INVAL;
}

/* A whole number field in [lo, hi], however written (5, 5.0, 5e0:
 * jsonfile_whole_number). */
static int get_int(struct tparse *p, const struct jscan_value *v,
                   const char *field, int64_t lo, int64_t hi,
                   const char *expect, int64_t *out)
{
    int64_t x;
    if (jsonfile_whole_number(v, lo, hi, &x) != 0)
        return bad_number(p, v, field, expect);
    *out = x;
    return 0;
}

static int get_seconds(struct tparse *p, const struct jscan_value *v,
                       const char *field, double hi, const char *expect,
                       double *out)
{
    double x;
    if (v->type != JSCAN_NUMBER || jscan_number_double(v, &x) != 0 || !(x >= 0) || x > hi)
        return bad_number(p, v, field, expect);
    *out = x;
    return 0;
}

static int get_class(struct tparse *p, const struct jscan_value *v,
                     int32_t *out)
{
    char name[TRACE_CLASS_MAX];
    size_t n = 0;
    struct trace *t = p->t;
    if (v->type != JSCAN_STRING ||
        jscan_string_unescape(v, name, sizeof(name), &n) != 0 ||
        !jsonfile_valid_name(name, n, TRACE_CLASS_MAX)) {
        char q[64];
        terr(p, v, "class", "expected a name of 1 to %d letters, digits, '_', "
                            "'.' or '-', got %s", TRACE_CLASS_MAX - 1,
             jsonfile_quote(v->ptr, v->len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    for (size_t i = 0; i < t->n_classes; i++) {
        if (strcmp(t->classes[i], name) == 0) {
            *out = (int32_t)i;
            return 0;
        }
    }
    if (t->n_classes == TRACE_MAX_CLASSES) {
        terr(p, v, "class", "more than %d distinct classes", TRACE_MAX_CLASSES);
        return LL_E_RANGE;
    }
    if (t->n_classes == 0)
        t->classes = ll_calloc(TRACE_MAX_CLASSES, TRACE_CLASS_MAX);
    memcpy(t->classes[t->n_classes], name, n + 1);
    *out = (int32_t)t->n_classes++;
    return 0;
}

static int get_prompt(struct tparse *p, const struct jscan_value *v,
                      struct trace_entry *e)
{
    struct trace *t = p->t;
    size_t n = v->type == JSCAN_STRING ? jscan_string_decoded_len(v) : 0;
    if (v->type != JSCAN_STRING || n > TRACE_MAX_PROMPT_BYTES) {
        char q[64];
        terr(p, v, "prompt", "expected a string of at most %zu bytes, got %s",
             TRACE_MAX_PROMPT_BYTES, jsonfile_quote(v->ptr, v->len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    /* An empty text is a prompt of 0 tokens, refused as prompt_tokens 0
     * is: the record would say 1 and the server would get no question. */
    if (n == 0) {
        terr(p, v, "prompt",
             "expected a non-empty string (a prompt of at least 1 token), "
             "got \"\"");
        return LL_E_INVAL;
    }
    if (t->arena_bytes + n + 1 > p->arena_cap) {
        size_t cap = p->arena_cap ? p->arena_cap : 4096;
        while (cap < t->arena_bytes + n + 1)
            cap *= 2;
        t->arena = ll_realloc(t->arena, cap);
        p->arena_cap = cap;
    }
    size_t got_len = 0;
    char *dst = t->arena + t->arena_bytes;
    if (jscan_string_unescape(v, dst, n + 1, &got_len) != 0 || got_len != n ||
        memchr(dst, '\0', n)) {
        terr(p, v, "prompt", "expected text without NUL characters");
        return LL_E_INVAL;
    }
    e->prompt_off = t->arena_bytes;
    e->prompt_len = (uint32_t)n;
    t->arena_bytes += n + 1;
    return 0;
}

/* The arrival time's field on this line (F_SCHED_NS, F_T or F_TIMESTAMP)
 * into *tf: exactly one spelling, the same on every line. The first line
 * decides the trace's time field. Returns 0 or LL_E_INVAL (message in
 * p->err). */
static int pick_time_field(struct tparse *p, const struct jscan_value *root,
                           const struct jscan_value *v, int *tf)
{
    int count = 0;
    *tf = -1;
    for (int k = F_SCHED_NS; k <= F_TIMESTAMP; k++) {
        if (v[k].type != JSCAN_INVALID) {
            count++;
            *tf = k;
        }
    }
    if (count != 1) {
        terr(p, root, NULL, "%s: expected exactly one of sched_ns (integer "
             "ns), t (seconds) or timestamp (absolute seconds)",
             count ? "more than one arrival time" : "no arrival time");
        return LL_E_INVAL;
    }
    int want = *tf == F_SCHED_NS ? TRACE_TIME_SCHED_NS
             : *tf == F_T        ? TRACE_TIME_SECONDS
                                 : TRACE_TIME_TIMESTAMP;
    if (p->time_field < 0) {
        p->time_field = want;
        p->time_line = p->line;
        p->t->time_field = (enum trace_time_field)want;
    } else if (p->time_field != want) {
        static const char *const tn[] = {"sched_ns", "t", "timestamp"};
        terr(p, &v[*tf], field_names[*tf], "expected %s, as on line %lu "
             "(every line must use the same time field)", tn[p->time_field],
             p->time_line);
        return LL_E_INVAL;
    }
    return 0;
}

/* The arrival time into e->sched_ns, or for a timestamp the raw seconds
 * into *secs (trace_parse makes them relative once all are read). Returns
 * 0, or an error with its message in p->err. */
static int get_arrival(struct tparse *p, const struct jscan_value *root,
                       const struct jscan_value *v, struct trace_entry *e,
                       double *secs)
{
    int tf, rc;
    int64_t x;
    if ((rc = pick_time_field(p, root, v, &tf)))
        return rc;
    *secs = 0;
    if (tf == F_SCHED_NS) {
        if ((rc = get_int(p, &v[tf], "sched_ns", 0, TRACE_MAX_SCHED_NS,
                          "a whole number of nanoseconds in [0, 4611686018427387904]", &x)))
            return rc;
        e->sched_ns = (uint64_t)x;
    } else if (tf == F_T) {
        if ((rc = get_seconds(p, &v[tf], "t", TRACE_MAX_T_S,
                              "seconds from the trace start, in [0, 4.6e9]", secs)))
            return rc;
        e->sched_ns = (uint64_t)llround(*secs * 1e9);
    } else if ((rc = get_seconds(p, &v[tf], "timestamp", TRACE_MAX_TIMESTAMP_S,
                                 "absolute seconds in [0, 1e11] (e.g. Unix time)", secs))) {
        return rc;
    }
    return 0;
}

/* The lengths: the prompt (text, prompt_tokens, or both) and exactly one of
 * max_tokens and output_tokens, into e; expect says what a token count
 * must be. Returns 0, or an error with its message in p->err. A prompt
 * text goes into the trace's arena. */
static int get_lengths(struct tparse *p, const struct jscan_value *root,
                       const struct jscan_value *v, const char *expect,
                       struct trace_entry *e)
{
    int64_t x;
    int rc;
    if (v[F_PROMPT].type != JSCAN_INVALID && (rc = get_prompt(p, &v[F_PROMPT], e)))
        return rc;
    if (v[F_PROMPT_TOKENS].type != JSCAN_INVALID) {
        if ((rc = get_int(p, &v[F_PROMPT_TOKENS], "prompt_tokens", 1,
                          TRACE_MAX_TOKENS, expect, &x)))
            return rc;
        e->prompt_tokens = (uint32_t)x;
    } else if (e->prompt_off == TRACE_NONE) {
        terr(p, root, "prompt_tokens", "missing: expected %s (or a \"prompt\" "
             "text)", expect);
        return LL_E_INVAL;
    }
    int has_max = v[F_MAX_TOKENS].type != JSCAN_INVALID;
    int has_out = v[F_OUTPUT_TOKENS].type != JSCAN_INVALID;
    if (has_max == has_out) {
        terr(p, has_out ? &v[F_OUTPUT_TOKENS] : root, has_max ? "output_tokens" : "max_tokens",
             "%s: expected exactly one of max_tokens and output_tokens (the "
             "same thing)", has_max ? "given with max_tokens" : "missing");
        return LL_E_INVAL;
    }
    int of = has_max ? F_MAX_TOKENS : F_OUTPUT_TOKENS;
    if ((rc = get_int(p, &v[of], field_names[of], 1, TRACE_MAX_TOKENS, expect,
                      &x)))
        return rc;
    e->max_tokens = (uint32_t)x;
    return 0;
}

/* prefix_id and prefix_tokens, which go together, into e; prefix_tokens
 * (a token count, as expect says) may not exceed a known prompt_tokens.
 * Returns 0, or an error with its message in p->err. */
static int get_prefix(struct tparse *p, const struct jscan_value *v,
                      const char *expect, struct trace_entry *e)
{
    int64_t x;
    int rc;
    int has_pid = v[F_PREFIX_ID].type != JSCAN_INVALID;
    int has_ptok = v[F_PREFIX_TOKENS].type != JSCAN_INVALID;
    if (has_pid != has_ptok) {
        terr(p, has_pid ? &v[F_PREFIX_ID] : &v[F_PREFIX_TOKENS],
             has_pid ? "prefix_tokens" : "prefix_id",
             "missing: prefix_id and prefix_tokens go together");
        return LL_E_INVAL;
    }
    if (!has_pid)
        return 0;
    /* A prompt text is sent as it is, with no synthetic prefix: the pair
     * would be ignored, and the record would claim a prefix never sent. */
    if (e->prompt_off != TRACE_NONE) {
        terr(p, &v[F_PREFIX_ID], "prefix_id",
             "given with a \"prompt\" text, which is sent as it is (no shared prefix is "
             "built into it): expected prompt_tokens instead of prompt, or no prefix_id and "
             "prefix_tokens");
        return LL_E_INVAL;
    }
    if ((rc = get_int(p, &v[F_PREFIX_ID], "prefix_id", 0, 0xFFFFFFFFLL,
                      "a whole number in [0, 4294967295]", &x)))
        return rc;
    e->prefix_id = x;
    if ((rc = get_int(p, &v[F_PREFIX_TOKENS], "prefix_tokens", 1,
                      TRACE_MAX_TOKENS, expect, &x)))
        return rc;
    e->prefix_tokens = (uint32_t)x;
    if (e->prompt_tokens && e->prefix_tokens > e->prompt_tokens) {
        terr(p, &v[F_PREFIX_TOKENS], "prefix_tokens", "expected at most "
             "prompt_tokens (%u), got %u", e->prompt_tokens, e->prefix_tokens);
        return LL_E_INVAL;
    }
    return 0;
}

/* api and ignore_eos, a --workload class's own (written by --dump-schedule),
 * into e. An embeddings line is refused: its API does not stream, so it is
 * the whole replay's --api, never one line's. Returns 0 or LL_E_INVAL. */
static int get_request_kind(struct tparse *p, const struct jscan_value *v, struct trace_entry *e)
{
    const struct jscan_value *a = &v[F_API], *x = &v[F_IGNORE_EOS];
    if (a->type != JSCAN_INVALID) {
        char name[32], q[64];
        size_t n = 0;
        int api = a->type == JSCAN_STRING && jscan_string_unescape(a, name, sizeof name, &n) == 0
                      ? oai_api_from_name(name)
                      : -1;
        if (api < 0 || api == OAI_API_EMBEDDINGS) {
            terr(p, a, "api",
                 "expected \"chat\", \"completions\", \"anthropic-messages\" or "
                 "\"openai-responses\" (openai-embeddings is the replay's --api), got %s",
                 jsonfile_quote(a->ptr, a->len, q, sizeof q));
            return LL_E_INVAL;
        }
        e->api = (int8_t)api;
    }
    if (x->type != JSCAN_INVALID) {
        if (x->type != JSCAN_TRUE && x->type != JSCAN_FALSE) {
            char q[64];
            terr(p, x, "ignore_eos", "expected true or false, got %s",
                 jsonfile_quote(x->ptr, x->len, q, sizeof q));
            return LL_E_INVAL;
        }
        e->ignore_eos = x->type == JSCAN_TRUE;
    }
    return 0;
}

/* The optional fields: class, the prefix pair, session_id,
 * cancel_after_ns, api and ignore_eos, into e; expect says what a token
 * count must be. Returns 0, or an error with its message in p->err. */
static int get_optional(struct tparse *p, const struct jscan_value *v,
                        const char *expect, struct trace_entry *e)
{
    int64_t x;
    int rc;
    if (v[F_CLASS].type != JSCAN_INVALID && (rc = get_class(p, &v[F_CLASS], &e->class_id)))
        return rc;
    if ((rc = get_prefix(p, v, expect, e)))
        return rc;
    if (v[F_SESSION_ID].type != JSCAN_INVALID) {
        if ((rc = get_int(p, &v[F_SESSION_ID], "session_id", 0, INT64_MAX,
                          "a whole number in [0, 9223372036854775807]", &x)))
            return rc;
        e->session_id = (uint64_t)x;
    }
    if (v[F_CANCEL_AFTER_NS].type != JSCAN_INVALID) {
        if ((rc = get_int(p, &v[F_CANCEL_AFTER_NS], "cancel_after_ns", 0, TRACE_MAX_SCHED_NS,
                          "a whole number of nanoseconds in [0, 4611686018427387904]", &x)))
            return rc;
        e->cancel_after_ns = (uint64_t)x;
    }
    return get_request_kind(p, v, e);
}

/* index: on every line or on none; the first line decides. Into
 * e->index. Returns 0, or an error with its message in p->err. */
static int get_index(struct tparse *p, const struct jscan_value *root,
                     const struct jscan_value *v, struct trace_entry *e)
{
    struct trace *t = p->t;
    int64_t x;
    int rc;
    int has_index = v[F_INDEX].type != JSCAN_INVALID;
    if (t->n == 0) {
        t->has_index = has_index;
        p->index_line = p->line;
    } else if (has_index != t->has_index) {
        terr(p, has_index ? &v[F_INDEX] : root, "index", "%s, but line %lu "
             "%s: expected index on every line or on none",
             has_index ? "given" : "missing", p->index_line,
             t->has_index ? "has one" : "has none");
        return LL_E_INVAL;
    }
    if (has_index) {
        if ((rc = get_int(p, &v[F_INDEX], "index", 0, INT64_MAX,
                          "a whole number in [0, 9223372036854775807]", &x)))
            return rc;
        e->index = (uint64_t)x;
    }
    return 0;
}

/* Append e to the trace, growing the entries (and, for timestamps, the
 * raw seconds beside them) by doubling. secs is e's raw timestamp. */
static void append_entry(struct tparse *p, const struct trace_entry *e,
                         double secs)
{
    struct trace *t = p->t;
    if (t->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1024;
        t->entries = ll_realloc(t->entries, p->cap * sizeof(*t->entries));
        if (p->time_field == TRACE_TIME_TIMESTAMP)
            p->stamps = ll_realloc(p->stamps, p->cap * sizeof(double));
    }
    if (p->time_field == TRACE_TIME_TIMESTAMP)
        p->stamps[t->n] = secs;
    t->entries[t->n++] = *e;
}

/* The members of a run's record (requests.jsonl, docs/formats.md) that
 * say what was offered, put where a trace line's would be: id as index,
 * sched_ns, prompt_tokens, max_tokens, class, session as session_id,
 * ignore_eos (kept by record_fields only when true). The
 * record's other members (what happened to the request) are passed over,
 * as are members added to records later. Its step, images and inputs go
 * to step, images and inputs (JSCAN_INVALID when absent). */
static void record_members(const struct jscan_value *root, struct jscan_value *v,
                           struct jscan_value *step, struct jscan_value *images,
                           struct jscan_value *inputs)
{
    static const struct {
        const char *key;
        int field; /* F_*, or -1, -2, -3: step, images, inputs */
    } map[] = {
        {"id", F_INDEX},
        {"sched_ns", F_SCHED_NS},
        {"prompt_tokens", F_PROMPT_TOKENS},
        {"max_tokens", F_MAX_TOKENS},
        {"class", F_CLASS},
        {"session", F_SESSION_ID},
        {"ignore_eos", F_IGNORE_EOS},
        {"step", -1},
        {"images", -2},
        {"inputs", -3},
    };
    struct jscan_iter it;
    struct jscan_value key, val;
    for (int i = 0; i < F_COUNT; i++)
        v[i].type = JSCAN_INVALID;
    step->type = images->type = inputs->type = JSCAN_INVALID;
    if (jscan_iter_init(&it, root) != 0)
        return;
    while (jscan_iter_next_member(&it, &key, &val)) {
        for (size_t i = 0; i < LL_ARRAY_LEN(map); i++) {
            if (!jscan_string_equals(&key, map[i].key, strlen(map[i].key)))
                continue;
            struct jscan_value *to = map[i].field >= 0    ? &v[map[i].field]
                                     : map[i].field == -1 ? step
                                     : map[i].field == -2 ? images
                                                          : inputs;
            if (to->type == JSCAN_INVALID) /* the first wins, as the reader's */
                *to = val;
            break;
        }
    }
}

/* A record line's fields as a trace line's, into v (record_members), and
 * what a trace cannot say refused: a request with images (its
 * prompt_tokens count them), an embeddings batch, records of several sweep
 * steps (each step's sched_ns counts from its own t = 0), a record without
 * a scheduled time. Returns 0, or LL_E_INVAL with the message in p->err. */
static int record_fields(struct tparse *p, const struct jscan_value *root, struct jscan_value *v)
{
    struct jscan_value step, images, inputs;
    int64_t x;
    record_members(root, v, &step, &images, &inputs);
    /* A record's ignore_eos false may be a file from before the field was
     * kept (docs/formats.md): it leaves the choice to the command line's
     * --ignore-eos; true is certain, and replays as asked. */
    if (v[F_IGNORE_EOS].type == JSCAN_FALSE)
        v[F_IGNORE_EOS].type = JSCAN_INVALID;
    if (v[F_INDEX].type == JSCAN_INVALID) {
        terr(p, root, "id", "missing: expected a record of requests.jsonl, like line %lu",
             p->index_line);
        return LL_E_INVAL;
    }
    if (v[F_SCHED_NS].type == JSCAN_NULL) {
        terr(p, &v[F_SCHED_NS], "sched_ns", "null: the record has no scheduled time to replay");
        return LL_E_INVAL;
    }
    if (images.type != JSCAN_INVALID) {
        terr(p, &images, "images",
             "the request carried images, which a trace cannot say (its prompt_tokens "
             "count their tokens): a run with images cannot be replayed from its records");
        return LL_E_INVAL;
    }
    if (inputs.type != JSCAN_INVALID) {
        terr(p, &inputs, "inputs",
             "an embeddings request (a batch of inputs), which a trace cannot say: "
             "expected the records of a completion run");
        return LL_E_INVAL;
    }
    int64_t s = -1;
    if (step.type != JSCAN_INVALID && jsonfile_whole_number(&step, 0, INT64_MAX, &x) == 0)
        s = x;
    if (p->t->n == 0) {
        p->step = s;
        p->step_line = p->line;
    } else if (s != p->step) {
        terr(p, step.type != JSCAN_INVALID ? &step : root, "step",
             "%lld, but line %lu's is %lld: a sweep's records hold one schedule per step, "
             "each from its own t = 0; replay one step's, e.g. "
             "jq -c 'select(.step == %lld)' requests.jsonl",
             (long long)s, p->step_line, (long long)p->step, (long long)p->step);
        return LL_E_INVAL;
    }
    return 0;
}

/* Whether the object root is a run's record (requests.jsonl): it has the
 * two members every record starts with, "id" and "kind". */
static int is_record(const struct jscan_value *root)
{
    struct jscan_value x;
    return jscan_object_get(root, "id", 2, &x) == 0 && jscan_object_get(root, "kind", 4, &x) == 0;
}

/* One non-blank line, s[0..n): one JSON object, its fields checked in the
 * order the messages promise (arrival, lengths, optional fields, index),
 * then appended. The first line says whether the file is a trace or a
 * run's records (is_record); a record's fields are read as record_fields
 * says. Returns 0, or an error with "NAME:LINE:COL: ..." in
 * p->err; on error the entry is not appended. */
static int parse_line(struct tparse *p, const char *s, size_t n)
{
    struct jscan_value root, v[F_COUNT];
    struct trace_entry e;
    double secs;
    int rc;
    char expect[96];

    p->ls = s;
    if (jscan_validate(s, n, JSCAN_DEFAULT_DEPTH, &root) != 0) {
        jsonfile_json_error(p->name, p->line, s, n, p->err, p->errlen);
        return LL_E_INVAL;
    }
    if (root.type != JSCAN_OBJECT) {
        char q[64];
        terr(p, &root, NULL, "expected one JSON object per line, like "
             "{\"sched_ns\":0,\"prompt_tokens\":100,\"max_tokens\":50}, got %s",
             jsonfile_quote(root.ptr, root.len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    if (p->t->n == 0)
        p->t->from_records = is_record(&root);
    if (p->t->from_records) {
        if ((rc = record_fields(p, &root, v)))
            return rc;
    } else if ((rc = jsonfile_json_members(p->name, p->line, s, &root, field_names, F_COUNT, v,
                                           p->err, p->errlen))) {
        return rc;
    }
    if (p->t->n >= TRACE_MAX_ENTRIES) {
        terr(p, &root, NULL, "too many requests: at most %u are read",
             TRACE_MAX_ENTRIES);
        return LL_E_RANGE;
    }

    memset(&e, 0, sizeof(e));
    e.cancel_after_ns = TRACE_NONE;
    e.session_id = TRACE_NONE;
    e.prompt_off = TRACE_NONE;
    e.prefix_id = -1;
    e.class_id = -1;
    e.api = -1;
    e.ignore_eos = -1;
    e.line = (uint32_t)p->line;

    snprintf(expect, sizeof(expect), "a whole number in [1, %u]",
             TRACE_MAX_TOKENS);
    if ((rc = get_arrival(p, &root, v, &e, &secs)) ||
        (rc = get_lengths(p, &root, v, expect, &e)) ||
        (rc = get_optional(p, v, expect, &e)) ||
        (rc = get_index(p, &root, v, &e)))
        return rc;
    append_entry(p, &e, secs);
    return 0;
}

static int cmp_arrival(const void *a, const void *b)
{
    const struct trace_entry *x = a, *y = b;
    int c = LL_CMP(x->sched_ns, y->sched_ns);
    return c ? c : LL_CMP(x->line, y->line);
}

struct idx_line {
    uint64_t index;
    uint32_t line;
};

static int cmp_index(const void *a, const void *b)
{
    const struct idx_line *x = a, *y = b;
    int c = LL_CMP(x->index, y->index);
    return c ? c : LL_CMP(x->line, y->line);
}

static int parse_line_cb(void *ud, const char *s, size_t n, unsigned long line)
{
    struct tparse *p = ud;
    p->line = line;
    return parse_line(p, s, n);
}

void trace_free(struct trace *t)
{
    if (!t)
        return;
    free(t->entries);
    free(t->arena);
    free(t->classes);
    free(t);
}

int trace_parse(const char *name, const char *text, size_t len,
                struct trace **out, char *err, size_t errlen)
{
    struct tparse p = {.name = name, .err = err, .errlen = errlen, .time_field = -1, .step = -1};
    int rc = LL_E_INVAL;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    p.t = ll_calloc(1, sizeof(*p.t));

    if ((rc = jsonfile_each_line(text, len, parse_line_cb, &p)) != 0)
        goto fail;
    struct trace *t = p.t;
    if (t->n == 0) {
        snprintf(err, errlen, "%s: empty trace: expected one JSON object per "
                 "line, like {\"sched_ns\":0,\"prompt_tokens\":100,"
                 "\"max_tokens\":50}", name);
        rc = LL_E_INVAL;
        goto fail;
    }
    if (t->time_field == TRACE_TIME_TIMESTAMP) {
        size_t at = 0;
        for (size_t i = 1; i < t->n; i++)
            at = p.stamps[i] < p.stamps[at] ? i : at;
        double lo = p.stamps[at];
        /* A span past what "t" takes (2^62 ns) would overflow the
         * nanoseconds (timestamps go to 1e11 s): refused, not wrapped. */
        for (size_t i = 0; i < t->n; i++) {
            if (p.stamps[i] - lo > TRACE_MAX_T_S) {
                snprintf(err, errlen,
                         "%s:%u: timestamp: %.17g s after the earliest (line %u): "
                         "expected at most %g s after it",
                         name, t->entries[i].line, p.stamps[i] - lo, t->entries[at].line,
                         TRACE_MAX_T_S);
                rc = LL_E_INVAL;
                goto fail;
            }
            t->entries[i].sched_ns = (uint64_t)llround((p.stamps[i] - lo) * 1e9);
        }
    }
    qsort(t->entries, t->n, sizeof(*t->entries), cmp_arrival);
    if (t->has_index) {
        struct idx_line *il = ll_malloc(t->n * sizeof(*il));
        for (size_t i = 0; i < t->n; i++) {
            il[i].index = t->entries[i].index;
            il[i].line = t->entries[i].line;
        }
        qsort(il, t->n, sizeof(*il), cmp_index);
        for (size_t i = 1; i < t->n; i++) {
            if (il[i].index == il[i - 1].index) {
                snprintf(err, errlen, "%s:%u: index: %llu repeats line %u's: "
                         "expected a unique index per request", name,
                         il[i].line, (unsigned long long)il[i].index,
                         il[i - 1].line);
                free(il);
                rc = LL_E_INVAL;
                goto fail;
            }
        }
        free(il);
    } else {
        for (size_t i = 0; i < t->n; i++)
            t->entries[i].index = i;
    }
    *out = t;
    p.t = NULL;
    rc = 0;

fail:
    free(p.stamps);
    trace_free(p.t); /* NULL once handed to *out */
    return rc;
}

JSONFILE_DEFINE_LOAD(trace_load, trace_parse, struct trace)

const char *trace_prompt(const struct trace *t, size_t i, size_t *len_out)
{
    const struct trace_entry *e = &t->entries[i];
    if (e->prompt_off == TRACE_NONE) {
        if (len_out)
            *len_out = 0;
        return NULL;
    }
    if (len_out)
        *len_out = e->prompt_len;
    return t->arena + e->prompt_off;
}

const char *trace_class_name(const struct trace *t, size_t i)
{
    int32_t c = t->entries[i].class_id;
    return c < 0 ? NULL : t->classes[c];
}

int trace_time_factor(double time_scale, double rate_scale, double *factor,
                      char *err, size_t errlen)
{
    if (!(time_scale > 0) || !isfinite(time_scale)) {
        snprintf(err, errlen, "--time-scale: expected a number > 0 (2 plays "
                 "the trace twice as slowly), got %g", time_scale);
        return LL_E_INVAL;
    }
    if (!(rate_scale > 0) || !isfinite(rate_scale)) {
        snprintf(err, errlen, "--rate-scale: expected a number > 0 (2 plays "
                 "the trace at twice the rate), got %g", rate_scale);
        return LL_E_INVAL;
    }
    *factor = time_scale / rate_scale;
    return 0;
}

uint64_t trace_scaled_sched_ns(const struct trace *t, size_t i, double factor)
{
    uint64_t ns = t->entries[i].sched_ns;
    if (factor == 1.0)
        return ns;
    double v = (double)ns * factor;
    if (!(v >= 0))
        return 0;
    if (v >= 1.8e19)
        return UINT64_MAX - 1;
    if (v >= 9e18)
        return (uint64_t)v; /* beyond llround's range; ns precision is moot */
    return (uint64_t)llround(v);
}
