/* record.c: one record per scheduled request: its names, its JSON line
 * written and read back (the one owner of requests.jsonl's wire format),
 * and the latencies derived from its raw times.
 *
 * record_write_jsonl is on the path of every finished request, so it
 * formats by hand into a stack buffer, without printf, and writes the line
 * with one fwrite: no allocation, and a line is either whole in the stdio
 * buffer or absent. bench/decode.sh --instr counts its cost. */
#include "measure/record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <jansson.h>

#include "util/json.h"
#include "util/util.h"

static const char *const kind_names[REC_KIND_COUNT] = {
    [REC_OK] = "ok",
    [REC_HTTP_429] = "http_429",
    [REC_HTTP_5XX] = "http_5xx",
    [REC_HTTP_4XX] = "http_4xx",
    [REC_HTTP_OTHER] = "http_other",
    [REC_TIMEOUT_CONNECT] = "timeout_connect",
    [REC_TIMEOUT_FIRST_TOKEN] = "timeout_first_token",
    [REC_TIMEOUT_IDLE] = "timeout_idle",
    [REC_TIMEOUT_TOTAL] = "timeout_total",
    [REC_CONNECT_ERROR] = "connect_error",
    [REC_STREAM_TRUNCATED] = "stream_truncated",
    [REC_MALFORMED_EVENT] = "malformed_event",
    [REC_LINE_TOO_LONG] = "line_too_long",
    [REC_SERVER_ERROR_EVENT] = "server_error_event",
    [REC_CANCELLED] = "cancelled",
    [REC_CLIENT_DROPPED] = "client_dropped",
    [REC_TRANSPORT_ERROR] = "transport_error",
    [REC_OVERLOADED_EVENT] = "overloaded_event",
};

static const char *const source_names[] = {
    [REC_TOKENS_USAGE] = "usage",
    [REC_TOKENS_CHUNK_USAGE] = "chunk_usage",
    [REC_TOKENS_EVENTS] = "events",
};

/* Out-of-range values get "unknown" rather than a crash: a corrupt kind
 * must still produce a parseable line. */
const char *rec_kind_name(enum rec_kind k)
{
    if ((unsigned)k >= REC_KIND_COUNT)
        return "unknown";
    return kind_names[k];
}

int rec_kind_from_name(const char *s)
{
    if (s == NULL)
        return -1;
    for (int k = 0; k < REC_KIND_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0)
            return k;
    return -1;
}

const char *rec_tokens_source_name(enum rec_tokens_source s)
{
    if ((unsigned)s >= LL_ARRAY_LEN(source_names))
        return "unknown";
    return source_names[s];
}

/* tokens_source starts as "events": until a usage object arrives, the
 * only count there is is the events counted. */
void record_init(struct record *r, uint64_t id)
{
    memset(r, 0, sizeof(*r));
    r->id = id;
    r->kind = REC_OK;
    r->http_status = 0;
    r->sched_ns = LL_NO_TIME;
    r->sent_ns = LL_NO_TIME;
    r->late_ns = LL_NO_TIME;
    r->first_ns = LL_NO_TIME;
    r->first_content_ns = LL_NO_TIME;
    r->last_ns = LL_NO_TIME;
    r->end_ns = LL_NO_TIME;
    r->prompt_tokens_server = -1;
    r->cached_tokens = -1;
    r->tokens_source = REC_TOKENS_EVENTS;
    r->retry_after_ms = -1;
    r->user = -1;
    r->warmup = 0;
    r->cold = 0;
    r->step = -1;
    r->class_idx = -1;
    r->cls = NULL;
    r->session = -1;
    r->turn = -1;
    r->endpoint = -1;
    r->detail[0] = '\0';
}

/* A line buffer that remembers overflow instead of failing at every step.
 * The worst case line (every number at 20 digits, the whole detail escaped
 * as \u00XX) is under 1.2 KB, so LINE_MAX_BYTES is never reached by a
 * valid record; the check is there for safety, not for control flow. */
#define LINE_MAX_BYTES 2048

struct line {
    char buf[LINE_MAX_BYTES];
    size_t len;
    int overflow;
};

static void line_put(struct line *l, const char *s, size_t n)
{
    if (l->overflow || n > sizeof(l->buf) - l->len) {
        l->overflow = 1;
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void line_puts(struct line *l, const char *s)
{
    line_put(l, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define LINE_LIT(l, lit) line_put((l), (lit), sizeof(lit) - 1)

/* "00" "01" ... "99": two digits per division by 100. */
/* Append v in decimal, exactly as printf's %llu would (ll_fmt_u64). That
 * and the literals replace snprintf on this path: a typical line cost about
 * 19,000 instructions through snprintf and costs under 3,000 now, fwrite
 * included (bench/decode.sh --instr). */
static void line_u64(struct line *l, uint64_t v)
{
    if (l->overflow || ll_u64_digits(v) > sizeof(l->buf) - l->len) {
        l->overflow = 1;
        return;
    }
    l->len += ll_fmt_u64(l->buf + l->len, v);
}

/* ,"key":value for a time, or null for LL_NO_TIME. key_lit is the literal
 * ",\"key\":" itself. */
#define LINE_TIME(l, key_lit, ns) do { \
        LINE_LIT((l), key_lit); \
        line_u64_or_null((l), (ns) != LL_NO_TIME, (ns)); \
    } while (0)

/* ,"key":value for a count. */
#define LINE_U64(l, key_lit, v)                                                                    \
    do {                                                                                           \
        LINE_LIT((l), key_lit);                                                                    \
        line_u64((l), (v));                                                                        \
    } while (0)

/* key_lit, then true or false. */
#define LINE_BOOL(l, key_lit, b)                                                                   \
    do {                                                                                           \
        LINE_LIT((l), key_lit);                                                                    \
        if (b)                                                                                     \
            LINE_LIT((l), "true");                                                                 \
        else                                                                                       \
            LINE_LIT((l), "false");                                                                \
    } while (0)

/* ,"key":value for an optional signed number, null when negative. */
#define LINE_OPT(l, key_lit, v) do { \
        int64_t v_ = (v); \
        LINE_LIT((l), key_lit); \
        line_u64_or_null((l), v_ >= 0, (uint64_t)v_); \
    } while (0)

static void line_u64_or_null(struct line *l, int present, uint64_t v)
{
    if (present)
        line_u64(l, v);
    else
        LINE_LIT(l, "null");
}

/* Append s[0..n) as the body of a JSON string. The detail often carries a
 * server's own words, cut at a fixed size, so it may hold control bytes or
 * a UTF-8 sequence split in half: each invalid byte becomes U+FFFD, so the
 * line always parses. */
static void line_json_escaped(struct line *l, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        char esc[6];
        size_t e = ll_json_escape(p[i], esc), len = 1;
        if (e > 0) {
            line_put(l, esc, e);
        } else if (p[i] < 0x80) {
            line_put(l, (const char *)&p[i], 1);
        } else if ((len = ll_utf8_len(p + i, n - i)) == 0) {
            line_put(l, "\\ufffd", 6); /* a byte that is not UTF-8 */
            len = 1;
        } else {
            line_put(l, (const char *)&p[i], len);
        }
        i += len;
    }
}

/* s (n bytes) as a JSON string, or null when n is 0. */
static void line_string_or_null(struct line *l, const char *s, size_t n)
{
    if (n == 0) {
        LINE_LIT(l, "null");
        return;
    }
    LINE_LIT(l, "\"");
    line_json_escaped(l, s, n);
    LINE_LIT(l, "\"");
}

int record_write_jsonl(FILE *f, const struct record *r)
{
    struct line l;
    l.len = 0;
    l.overflow = 0;

    LINE_U64(&l, "{\"id\":", r->id);
    LINE_LIT(&l, ",\"kind\":\"");
    line_puts(&l, rec_kind_name(r->kind));
    LINE_LIT(&l, "\",\"http_status\":");
    line_u64_or_null(&l, r->http_status > 0, (uint64_t)r->http_status);
    LINE_TIME(&l, ",\"sched_ns\":", r->sched_ns);
    LINE_TIME(&l, ",\"sent_ns\":", r->sent_ns);
    LINE_TIME(&l, ",\"late_ns\":", r->late_ns);
    LINE_TIME(&l, ",\"first_ns\":", r->first_ns);
    LINE_TIME(&l, ",\"first_content_ns\":", r->first_content_ns);
    LINE_TIME(&l, ",\"last_ns\":", r->last_ns);
    LINE_TIME(&l, ",\"end_ns\":", r->end_ns);
    LINE_U64(&l, ",\"max_gap_ns\":", r->max_gap_ns);
    LINE_U64(&l, ",\"prompt_tokens\":", r->prompt_tokens);
    LINE_OPT(&l, ",\"prompt_tokens_server\":", r->prompt_tokens_server);
    LINE_OPT(&l, ",\"cached_tokens\":", r->cached_tokens);
    LINE_U64(&l, ",\"max_tokens\":", r->max_tokens);
    LINE_BOOL(&l, ",\"ignore_eos\":", r->ignore_eos);
    if (r->images)
        LINE_U64(&l, ",\"images\":", r->images);
    if (r->request_bytes)
        LINE_U64(&l, ",\"request_bytes\":", r->request_bytes);
    LINE_U64(&l, ",\"output_tokens\":", r->output_tokens);
    LINE_LIT(&l, ",\"tokens_source\":\"");
    line_puts(&l, rec_tokens_source_name(r->tokens_source));
    LINE_U64(&l, "\",\"events\":", r->events);
    size_t flen = strnlen(r->finish_reason, sizeof(r->finish_reason));
    LINE_LIT(&l, ",\"finish_reason\":");
    line_string_or_null(&l, r->finish_reason, flen);
    LINE_OPT(&l, ",\"retry_after_ms\":", r->retry_after_ms);
    LINE_U64(&l, ",\"worker\":", r->worker);
    LINE_OPT(&l, ",\"user\":", r->user);
    LINE_BOOL(&l, ",\"warmup\":", r->warmup);
    if (r->cold)
        LINE_LIT(&l, ",\"cold\":true");
    if (r->step >= 0)
        LINE_U64(&l, ",\"step\":", (uint64_t)r->step);
    if (r->cls) {
        LINE_LIT(&l, ",\"class\":\"");
        line_json_escaped(&l, r->cls, strnlen(r->cls, REC_CLASS_NAME_MAX));
        LINE_LIT(&l, "\"");
    }
    if (r->session >= 0)
        LINE_U64(&l, ",\"session\":", (uint64_t)r->session);
    if (r->turn >= 0)
        LINE_U64(&l, ",\"turn\":", (uint64_t)r->turn);
    if (r->endpoint >= 0)
        LINE_U64(&l, ",\"endpoint\":", (uint64_t)r->endpoint);
    if (r->inputs)
        LINE_U64(&l, ",\"inputs\":", r->inputs);

    size_t dlen = strnlen(r->detail, sizeof(r->detail));
    LINE_LIT(&l, ",\"detail\":");
    line_string_or_null(&l, r->detail, dlen);
    LINE_LIT(&l, "}\n");

    if (l.overflow) /* cannot happen (see LINE_MAX_BYTES); keep the contract */
        return LL_E_IO;
    if (fwrite(l.buf, 1, l.len, f) != l.len)
        return LL_E_IO;
    return 0;
}

/* ---- reading a line back ------------------------------------------------ */

/* A time field: an integer >= 0, or null for LL_NO_TIME. */
static int time_from(json_t *o, const char *k, uint64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (json_is_null(v) || !v) {
        *out = LL_NO_TIME;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* An integer field, or -1 when it is absent, null or not an integer. */
static int64_t opt_int(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* The line's id, kind, status and times into r (record_init'ed here).
 * Returns 0, or LL_E_INVAL with the reason in err. */
static int read_head(json_t *o, struct record *r, char *err, size_t errlen)
{
    json_t *id = json_object_get(o, "id");
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if (!json_is_object(o) || !json_is_integer(id) || !kind) {
        snprintf(err, errlen, "a record needs \"id\" and \"kind\"");
        return LL_E_INVAL;
    }
    record_init(r, (uint64_t)json_integer_value(id));
    int k = rec_kind_from_name(kind);
    if (k < 0) {
        char shown[41]; /* the file's text: one printable line */
        ll_printable(kind, strlen(kind), shown, sizeof shown);
        snprintf(err, errlen, "unknown kind \"%s\"", shown);
        return LL_E_INVAL;
    }
    r->kind = (enum rec_kind)k;
    int64_t st = opt_int(o, "http_status");
    r->http_status = st > 0 && st < 1000 ? (int)st : 0;
    if (time_from(o, "sched_ns", &r->sched_ns) || time_from(o, "sent_ns", &r->sent_ns) ||
        time_from(o, "late_ns", &r->late_ns) || time_from(o, "first_ns", &r->first_ns) ||
        time_from(o, "first_content_ns", &r->first_content_ns) ||
        time_from(o, "last_ns", &r->last_ns) || time_from(o, "end_ns", &r->end_ns)) {
        snprintf(err, errlen, "a time field is not a non-negative integer or null");
        return LL_E_INVAL;
    }
    if (r->sched_ns == LL_NO_TIME) {
        snprintf(err, errlen, "\"sched_ns\" is null");
        return LL_E_INVAL;
    }
    return 0;
}

/* The line's counts, tokens source and indices into r: a value absent or
 * out of its field's range keeps record_init's. */
static void read_counts(json_t *o, struct record *r)
{
    int64_t v = opt_int(o, "max_gap_ns");
    r->max_gap_ns = v > 0 ? (uint64_t)v : 0;
    v = opt_int(o, "prompt_tokens");
    r->prompt_tokens = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    r->prompt_tokens_server = opt_int(o, "prompt_tokens_server");
    r->cached_tokens = opt_int(o, "cached_tokens");
    v = opt_int(o, "max_tokens");
    r->max_tokens = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    v = opt_int(o, "output_tokens");
    r->output_tokens = v > 0 ? (uint64_t)v : 0;
    const char *src = json_string_value(json_object_get(o, "tokens_source"));
    r->tokens_source = REC_TOKENS_USAGE;
    for (int i = 0; src && i < (int)LL_ARRAY_LEN(source_names); i++)
        if (strcmp(src, source_names[i]) == 0)
            r->tokens_source = (enum rec_tokens_source)i;
    v = opt_int(o, "events");
    r->events = v > 0 ? (uint64_t)v : 0;
    v = opt_int(o, "inputs");
    r->inputs = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    r->ignore_eos = json_is_true(json_object_get(o, "ignore_eos"));
    v = opt_int(o, "images");
    r->images = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    v = opt_int(o, "request_bytes");
    r->request_bytes = v > 0 ? (uint64_t)v : 0;
    /* A reason longer than the record keeps (hand-edited) is cut, like
     * the decoder cuts the server's; "" (as null) when absent. */
    const char *fin = json_string_value(json_object_get(o, "finish_reason"));
    snprintf(r->finish_reason, sizeof r->finish_reason, "%s", fin ? fin : "");
    r->retry_after_ms = opt_int(o, "retry_after_ms");
    v = opt_int(o, "worker");
    r->worker = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
    r->user = opt_int(o, "user");
    r->warmup = json_is_true(json_object_get(o, "warmup"));
    r->cold = json_is_true(json_object_get(o, "cold"));
    v = opt_int(o, "step");
    r->step = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
    r->session = opt_int(o, "session");
    v = opt_int(o, "turn");
    r->turn = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
    v = opt_int(o, "endpoint");
    r->endpoint = v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

/* jansson reads the line: this is not the hot path (a report reads each
 * record once), and its errors say where a hand-edited line went wrong. */
int record_parse_jsonl(const char *line, size_t len, struct record *r, char *cls,
                       size_t cls_len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = ll_json_loadb(line, len, 0, &je);
    if (!o) {
        snprintf(err, errlen, "not JSON: %s", je.text);
        return LL_E_INVAL;
    }
    int rc = read_head(o, r, err, errlen);
    if (rc != 0)
        goto out;
    read_counts(o, r);
    const char *detail = json_string_value(json_object_get(o, "detail"));
    if (detail)
        snprintf(r->detail, sizeof r->detail, "%s", detail);
    if (cls && cls_len) {
        const char *c = json_string_value(json_object_get(o, "class"));
        cls[0] = '\0';
        if (c && strlen(c) < cls_len)
            memcpy(cls, c, strlen(c) + 1);
        r->cls = cls[0] ? cls : NULL;
    }
out:
    json_decref(o);
    return rc;
}

/* Where a record stood: its step (+1; 0 outside a sweep), id and line. */
struct seen_line {
    uint64_t id;
    uint32_t step;
    uint32_t line;
};

static int seen_cmp(const void *a, const void *b)
{
    const struct seen_line *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* A request's line twice in one file (a file appended to another, a
 * copy's lines pasted in) would count it twice in every figure: the
 * first repeat, by line, into err. 0 when every (step, id) is once. */
static int repeated_record(struct seen_line *s, size_t n, const char *path, char *err,
                           size_t errlen)
{
    if (n < 2)
        return 0;
    qsort(s, n, sizeof *s, seen_cmp);
    const struct seen_line *hit = NULL;
    for (size_t i = 1; i < n; i++)
        if (s[i].step == s[i - 1].step && s[i].id == s[i - 1].id &&
            (!hit || s[i].line < hit[1].line))
            hit = &s[i - 1];
    if (!hit)
        return 0;
    record_repeat_text(err, errlen, path, hit[1].line, hit->id, (int64_t)hit->step - 1, hit->line);
    return LL_E_INVAL;
}

void record_repeat_text(char *err, size_t errlen, const char *path, uint32_t line, uint64_t id,
                        int64_t step, uint32_t first_line)
{
    char of_step[32] = "";
    if (step >= 0)
        snprintf(of_step, sizeof of_step, " of step %" PRId64, step);
    snprintf(err, errlen,
             "%s:%" PRIu32 ": request id %" PRIu64 "%s again (first at line %" PRIu32
             "): one line per request; was a file appended to another?",
             path, line, id, of_step, first_line);
}

int record_read_file(const char *path, uint64_t from, record_read_cb *cb, void *ud,
                     char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    int rc = 0;
    char *line = NULL;
    size_t cap = 0, lineno = 0, n_seen = 0, seen_cap = 0;
    struct seen_line *seen = NULL;
    if (from && fseeko(f, (off_t)from, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: seek: %s", path, strerror(errno));
        rc = LL_E_IO;
        goto out;
    }
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        lineno++;
        struct record r;
        char why[200], cls[REC_CLASS_NAME_MAX];
        if (got == 1 && line[0] == '\n')
            continue;
        if (record_parse_jsonl(line, (size_t)got, &r, cls, sizeof cls, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%zu: %s", path, lineno, why);
            rc = LL_E_INVAL;
            goto out;
        }
        cb(ud, &r);
        if (n_seen == seen_cap) {
            seen_cap = seen_cap ? 2 * seen_cap : 1024;
            seen = ll_realloc(seen, seen_cap * sizeof *seen);
        }
        seen[n_seen++] = (struct seen_line){.id = r.id,
                                            .step = (uint32_t)(r.step + 1),
                                            .line = (uint32_t)LL_MIN(lineno, UINT32_MAX)};
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read: %s", path, strerror(errno));
        rc = LL_E_IO;
    } else {
        rc = repeated_record(seen, n_seen, path, err, errlen);
    }
out:
    free(seen);
    free(line);
    fclose(f);
    return rc;
}

/* b - a when both happened and b is not before a; LL_NO_TIME otherwise. A
 * negative interval can only come from a corrupt record, and reporting it
 * as undefined keeps it out of every percentile. */
static uint64_t span_ns(uint64_t a, uint64_t b)
{
    if (a == LL_NO_TIME || b == LL_NO_TIME || b < a)
        return LL_NO_TIME;
    return b - a;
}

int record_in_cold_start(uint64_t id, int64_t session, uint64_t cold_n)
{
    if (cold_n == 0)
        return 0;
    return session >= 0 ? (uint64_t)session < cold_n : id < cold_n;
}

uint64_t record_ttft_ns(const struct record *r)
{
    return span_ns(r->sched_ns, r->first_ns);
}

uint64_t record_ttft_server_ns(const struct record *r)
{
    return span_ns(r->sent_ns, r->first_ns);
}

uint64_t record_e2e_ns(const struct record *r)
{
    return span_ns(r->sched_ns, r->end_ns);
}

uint64_t record_tpot_ns(const struct record *r)
{
    /* Two output events at least: a non-streamed body (one event) has no
     * pace to measure, whatever its token count. */
    if (r->output_tokens < 2 || r->events < 2)
        return LL_NO_TIME;
    uint64_t decode_ns = span_ns(r->first_ns, r->last_ns);
    if (decode_ns == LL_NO_TIME)
        return LL_NO_TIME;
    return decode_ns / (r->output_tokens - 1);
}

uint64_t record_itl_req_ns(const struct record *r)
{
    if (r->events < 2)
        return LL_NO_TIME;
    uint64_t decode_ns = span_ns(r->first_ns, r->last_ns);
    if (decode_ns == LL_NO_TIME)
        return LL_NO_TIME;
    return decode_ns / (r->events - 1);
}
