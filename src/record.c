/* record.c: one record per scheduled request: its names, its JSON line, and
 * the latencies derived from its raw times.
 *
 * record_write_jsonl is on the path of every finished request, so it
 * formats by hand into a stack buffer and writes the line with one fwrite:
 * no allocation, and a line is either whole in the stdio buffer or absent. */
#include "record.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "util.h"

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
    r->step = -1;
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

static void line_printf(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void line_printf(struct line *l, const char *fmt, ...)
{
    if (l->overflow)
        return;
    size_t room = sizeof(l->buf) - l->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->buf + l->len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) {
        l->overflow = 1;
        return;
    }
    l->len += (size_t)n;
}

/* ,"key":value for a time, or null for LL_NO_TIME. */
static void line_time(struct line *l, const char *key, uint64_t ns)
{
    if (ns == LL_NO_TIME)
        line_printf(l, ",\"%s\":null", key);
    else
        line_printf(l, ",\"%s\":%" PRIu64, key, ns);
}

/* ,"key":value for an optional signed number, null when negative. */
static void line_opt(struct line *l, const char *key, int64_t v)
{
    if (v < 0)
        line_printf(l, ",\"%s\":null", key);
    else
        line_printf(l, ",\"%s\":%" PRId64, key, v);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if the
 * bytes there are not one. Overlong forms, surrogates and code points above
 * U+10FFFF are invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return len;
}

/* Append s[0..n) as the body of a JSON string. The detail often carries a
 * server's own words, cut at a fixed size, so it may hold control bytes or
 * a UTF-8 sequence split in half: each invalid byte becomes U+FFFD, so the
 * line always parses. */
static void line_json_escaped(struct line *l, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c == '"') {
            line_put(l, "\\\"", 2);
        } else if (c == '\\') {
            line_put(l, "\\\\", 2);
        } else if (c == '\n') {
            line_put(l, "\\n", 2);
        } else if (c == '\r') {
            line_put(l, "\\r", 2);
        } else if (c == '\t') {
            line_put(l, "\\t", 2);
        } else if (c < 0x20 || c == 0x7F) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
            line_put(l, esc, sizeof(esc));
        } else if (c < 0x80) {
            line_put(l, (const char *)&p[i], 1);
        } else {
            size_t len = utf8_seq_len(p + i, n - i);
            if (len == 0) {
                line_put(l, "\\ufffd", 6);
                i++;
                continue;
            }
            line_put(l, (const char *)&p[i], len);
            i += len;
            continue;
        }
        i++;
    }
}

int record_write_jsonl(FILE *f, const struct record *r)
{
    struct line l;
    l.len = 0;
    l.overflow = 0;

    line_printf(&l, "{\"id\":%" PRIu64 ",\"kind\":\"%s\"", r->id,
                rec_kind_name(r->kind));
    if (r->http_status > 0)
        line_printf(&l, ",\"http_status\":%d", r->http_status);
    else
        line_puts(&l, ",\"http_status\":null");
    line_time(&l, "sched_ns", r->sched_ns);
    line_time(&l, "sent_ns", r->sent_ns);
    line_time(&l, "first_ns", r->first_ns);
    line_time(&l, "first_content_ns", r->first_content_ns);
    line_time(&l, "last_ns", r->last_ns);
    line_time(&l, "end_ns", r->end_ns);
    line_printf(&l, ",\"max_gap_ns\":%" PRIu64, r->max_gap_ns);
    line_printf(&l, ",\"prompt_tokens\":%" PRIu32, r->prompt_tokens);
    line_opt(&l, "prompt_tokens_server", r->prompt_tokens_server);
    line_opt(&l, "cached_tokens", r->cached_tokens);
    line_printf(&l, ",\"max_tokens\":%" PRIu32, r->max_tokens);
    line_printf(&l, ",\"output_tokens\":%" PRIu64, r->output_tokens);
    line_printf(&l, ",\"tokens_source\":\"%s\"",
                rec_tokens_source_name(r->tokens_source));
    line_printf(&l, ",\"events\":%" PRIu64, r->events);
    line_opt(&l, "retry_after_ms", r->retry_after_ms);
    line_printf(&l, ",\"worker\":%" PRIu32, r->worker);
    line_opt(&l, "user", r->user);
    line_puts(&l, r->warmup ? ",\"warmup\":true" : ",\"warmup\":false");
    if (r->step >= 0) {
        line_puts(&l, ",\"step\":");
        line_printf(&l, "%d", (int)r->step);
    }

    size_t dlen = strnlen(r->detail, sizeof(r->detail));
    if (dlen == 0) {
        line_puts(&l, ",\"detail\":null}\n");
    } else {
        line_puts(&l, ",\"detail\":\"");
        line_json_escaped(&l, r->detail, dlen);
        line_puts(&l, "\"}\n");
    }

    if (l.overflow) /* cannot happen (see LINE_MAX_BYTES); keep the contract */
        return LL_E_IO;
    if (fwrite(l.buf, 1, l.len, f) != l.len)
        return LL_E_IO;
    return 0;
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
    if (r->output_tokens < 2)
        return LL_NO_TIME;
    uint64_t decode_ns = span_ns(r->first_ns, r->last_ns);
    if (decode_ns == LL_NO_TIME)
        return LL_NO_TIME;
    return decode_ns / (r->output_tokens - 1);
}
