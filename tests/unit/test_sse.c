/* Unit tests for sse.c: the SSE decoder.
 *
 * Every vector is fed whole, byte by byte, split at every offset and at
 * every pair of offsets, and must produce the identical transcript (events
 * and the final return code). The real llama.cpp captures in tests/data/sse
 * are de-chunked here and fed with their own HTTP chunk boundaries. */
#include "test.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "decode/openai.h"
#include "decode/sse.h"
#include "util/util.h"

/* ---- a transcript of what the parser did --------------------------------- */

struct transcript {
    char *buf;
    size_t len, cap;
    int stop_after;              /* return 99 from the callback at this event (1-based), 0 = never */
    int events;
};

static void tr_append(struct transcript *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        while (t->len + n + 1 > t->cap)
            t->cap = t->cap ? t->cap * 2 : 256;
        t->buf = ll_realloc(t->buf, t->cap);
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

/* Length-prefixed fields, so data containing newlines stays unambiguous. */
static void tr_field(struct transcript *t, const char *s, size_t n)
{
    char num[32];
    int k = snprintf(num, sizeof(num), "%zu:", n);
    tr_append(t, num, (size_t)k);
    tr_append(t, s, n);
    tr_append(t, " ", 1);
}

static int tr_event_cb(void *ud, const struct sse_event *ev)
{
    struct transcript *t = ud;
    tr_append(t, "E ", 2);
    tr_field(t, ev->event, ev->event_len);
    tr_field(t, ev->id, ev->id_len);
    tr_field(t, ev->data, ev->data_len);
    tr_append(t, ev->unterminated ? "u\n" : "t\n", 2);
    t->events++;
    if (t->stop_after && t->events == t->stop_after)
        return 99;
    return 0;
}

static void tr_result(struct transcript *t, int rc)
{
    char num[32];
    int k = snprintf(num, sizeof(num), "rc=%d\n", rc);
    tr_append(t, num, (size_t)k);
}

/* Feed input cut at the given offsets (sorted, each in [0, len]), then
 * finish. Writes the transcript into *t (which it resets). */
static void run_cuts(const char *in, size_t len, const size_t *cuts, size_t ncuts,
                     size_t max_line, struct transcript *t)
{
    struct sse_parser p;
    size_t pos = 0;
    int rc = 0;

    t->len = 0;
    t->events = 0;
    tr_append(t, "", 0);
    sse_parser_init(&p, max_line);
    for (size_t i = 0; i <= ncuts && rc == 0; i++) {
        size_t next = i < ncuts ? cuts[i] : len;
        rc = sse_parser_feed(&p, in + pos, next - pos, tr_event_cb, t);
        pos = next;
    }
    if (rc == 0)
        rc = sse_parser_finish(&p, tr_event_cb, t);
    tr_result(t, rc);
    sse_parser_free(&p);
}

/* Check one vector against its expected transcript every way we can cut
 * it. */
static void check_vector(const char *in, size_t len, size_t max_line,
                         const char *expect)
{
    struct transcript t = { 0 };
    size_t cuts[2];

    run_cuts(in, len, NULL, 0, max_line, &t);
    if (strcmp(t.buf, expect) != 0)
        fail_msg("whole feed of %s\n got:\n%s expected:\n%s", in, t.buf, expect);

    /* byte by byte */
    {
        size_t *all = ll_malloc((len + 1) * sizeof(size_t));
        for (size_t i = 0; i < len; i++)
            all[i] = i + 1;
        run_cuts(in, len, all, len ? len - 1 : 0, max_line, &t);
        free(all);
        if (strcmp(t.buf, expect) != 0)
            fail_msg("byte-by-byte feed of %s\n got:\n%s expected:\n%s", in, t.buf, expect);
    }
    /* every single split, and every pair of splits */
    for (size_t i = 0; i <= len; i++) {
        cuts[0] = i;
        run_cuts(in, len, cuts, 1, max_line, &t);
        if (strcmp(t.buf, expect) != 0)
            fail_msg("split at %zu of %s\n got:\n%s expected:\n%s", i, in, t.buf, expect);
        for (size_t j = i; j <= len; j++) {
            cuts[1] = j;
            run_cuts(in, len, cuts, 2, max_line, &t);
            if (strcmp(t.buf, expect) != 0)
                fail_msg("splits at %zu,%zu of %s\n got:\n%s expected:\n%s",
                         i, j, in, t.buf, expect);
        }
    }
    free(t.buf);
}

#define CHECK(in, expect) check_vector((in), sizeof(in) - 1, 0, (expect))
#define CHECK_MAX(in, max, expect) check_vector((in), sizeof(in) - 1, (max), (expect))

/* ---- vectors --------------------------------------------------------------- */

static void test_line_endings(void **state)
{
    const char *two = "E 0: 0: 5:hello t\nE 0: 0: 5:world t\nrc=0\n";
    CHECK("data: hello\n\ndata: world\n\n", two);
    CHECK("data: hello\r\rdata: world\r\r", two);
    CHECK("data: hello\r\n\r\ndata: world\r\n\r\n", two);
    CHECK("data: hello\r\n\rdata: world\n\r\n", two);
    /* CR LF is one line end, but LF CR is two: the CR is a blank line. */
    CHECK("data: a\n\rdata: b\n\n", "E 0: 0: 1:a t\nE 0: 0: 1:b t\nrc=0\n");
    /* CR CR LF: a line end, then a blank line (CRLF). */
    CHECK("data: a\r\r\ndata: b\r\r\n", "E 0: 0: 1:a t\nE 0: 0: 1:b t\nrc=0\n");
}

static void test_comments_and_fields(void **state)
{
    CHECK(": keepalive\n\ndata: x\n: a comment inside\n\n", "E 0: 0: 1:x t\nrc=0\n");
    CHECK("data: line1\ndata: line2\ndata:\ndata: line4\n\n",
          "E 0: 0: 18:line1\nline2\n\nline4 t\nrc=0\n");
    CHECK("data:nospace\n\ndata:  two\n\n", "E 0: 0: 7:nospace t\nE 0: 0: 4: two t\nrc=0\n");
    CHECK("data: a:b: c\n\n", "E 0: 0: 6:a:b: c t\nrc=0\n");
    CHECK("retry: 1000\nfoo: bar\ndata: x\nDATA: y\n\n", "E 0: 0: 1:x t\nrc=0\n");
    /* A field with no colon has an empty value: `data` alone is an event
     * with empty data (the spec dispatches it; it had a data field). */
    CHECK("data\n\n", "E 0: 0: 0: t\nrc=0\n");
    CHECK("data:\n\n", "E 0: 0: 0: t\nrc=0\n");
    /* No data field: nothing is dispatched, and the event type resets. */
    CHECK("event: ping\n\n\n\ndata: q\n\n", "E 0: 0: 1:q t\nrc=0\n");
}

static void test_event_and_id(void **state)
{
    /* The event type lasts one event; the last event ID persists until an
     * id field changes it (an id field with no value clears it). */
    CHECK("event: add\nid: 42\ndata: x\n\ndata: y\n\nid\ndata: z\n\n",
          "E 3:add 2:42 1:x t\nE 0: 2:42 1:y t\nE 0: 0: 1:z t\nrc=0\n");
    /* The last event field wins; an id holding NUL is ignored. */
    CHECK("event: a\nevent: b\nid: 7\nid: 8\0x\ndata: d\n\n",
          "E 1:b 1:7 1:d t\nrc=0\n");
}

/* Older llama.cpp's failed stream at HTTP 200: an `error` field (not in
 * the spec), then [DONE]. It is an event named "error" with the value as
 * its data, so the transport can count the request failed; an event field
 * after it in the same event still renames it, as the last one wins. */
static void test_error_field(void **state)
{
    CHECK("error: {\"code\":400,\"message\":\"the request exceeds the available context "
          "size\",\"type\":\"invalid_request_error\"}\n\ndata: [DONE]\n\n",
          "E 5:error 0: 102:{\"code\":400,\"message\":\"the request exceeds the available "
          "context size\",\"type\":\"invalid_request_error\"} t\nE 0: 0: 6:[DONE] t\nrc=0\n");
    CHECK("error:oops\n\n", "E 5:error 0: 4:oops t\nrc=0\n");
    CHECK("error: a\nevent: b\n\n", "E 1:b 0: 1:a t\nrc=0\n");
    /* Case-sensitive, as every field name. */
    CHECK("ERROR: a\ndata: x\n\n", "E 0: 0: 1:x t\nrc=0\n");
}

static void test_end_of_stream(void **state)
{
    CHECK("data: a\n\ndata: last\n", "E 0: 0: 1:a t\nE 0: 0: 4:last u\nrc=0\n");
    CHECK("data: a\n\ndata: last", "E 0: 0: 1:a t\nE 0: 0: 4:last u\nrc=0\n");
    CHECK("data: a\n\ndata: last\r", "E 0: 0: 1:a t\nE 0: 0: 4:last u\nrc=0\n");
    CHECK("data: a\ndata: b", "E 0: 0: 3:a\nb u\nrc=0\n");
    CHECK("event: x\n", "rc=0\n");
    CHECK("", "rc=0\n");
}

static void test_bom(void **state)
{
    CHECK("\xEF\xBB\xBF" "data: bom\n\n", "E 0: 0: 3:bom t\nrc=0\n");
    /* Only a leading BOM is skipped; later it is part of the field name. */
    CHECK("data: a\n\n\xEF\xBB\xBF" "data: b\n\n", "E 0: 0: 1:a t\nrc=0\n");
    /* Only one BOM is skipped. */
    CHECK("\xEF\xBB\xBF\xEF\xBB\xBF" "data: b\n\n", "rc=0\n");
    /* A partial BOM is text (an unknown field name here). */
    CHECK("\xEF\xBB" "data: x\n\n", "rc=0\n");
    CHECK("\xEF\xBB", "rc=0\n");
    CHECK("\xEF" "\n" "data: y\n\n", "E 0: 0: 1:y t\nrc=0\n");
}

static void test_long_line(void **state)
{
    /* max 16: a 16-byte line is fine, 17 is not; events before the long
     * line are still delivered, whatever the splits. */
    CHECK_MAX("data: 0123456789\n\n", 16, "E 0: 0: 10:0123456789 t\nrc=0\n");
    CHECK_MAX("data: a\n\ndata: 0123456789A\n\n", 16, "E 0: 0: 1:a t\nrc=-3\n");
    CHECK_MAX("data: a\n\ndata: 0123456789A", 16, "E 0: 0: 1:a t\nrc=-3\n");
    CHECK_MAX("data: a\r\rdata: 0123456789A\r", 16, "E 0: 0: 1:a t\nrc=-3\n");
    /* Joined data is bounded too: 10 + 1 + 10 > 16. */
    CHECK_MAX("data: 0123456789\ndata: 0123456789\n\n", 16, "rc=-3\n");
    /* A comment line counts. */
    CHECK_MAX(": 0123456789abcdef\ndata: a\n\n", 16, "rc=-3\n");
}

static int count_cb(void *ud, const struct sse_event *ev)
{
    (void)ev;
    (*(int *)ud)++;
    return 0;
}

/* 8 MiB of one line, 4 KiB at a time, against a 1 KiB bound: the error
 * comes as soon as the line passes the bound, sticks until reset, and the
 * parser's buffers never grow past the bound. */
static void test_long_line_bounded(void **state)
{
    struct sse_parser p;
    char chunk[4096];
    int n = 0, rc = 0;
    size_t fed = 0;

    memset(chunk, 'x', sizeof(chunk));
    memcpy(chunk, "data: ", 6);
    sse_parser_init(&p, 1024);
    while (fed < 8u << 20) {
        rc = sse_parser_feed(&p, chunk, sizeof(chunk), count_cb, &n);
        fed += sizeof(chunk);
        if (rc)
            break;
    }
    assert_int_equal(rc, LL_E_PROTO);
    assert_int_equal(fed, 4096);
    assert_true(p.line_cap <= 1024);
    assert_true(p.data_cap <= 1024);
    assert_int_equal(sse_parser_feed(&p, "data: a\n\n", 9, count_cb, &n), LL_E_PROTO);
    assert_int_equal(sse_parser_finish(&p, count_cb, &n), LL_E_PROTO);
    assert_int_equal(n, 0);

    /* Byte by byte, the error comes at byte 1025 of the line. */
    sse_parser_reset(&p);
    for (fed = 0; fed < 4096; fed++) {
        rc = sse_parser_feed(&p, chunk + fed, 1, count_cb, &n);
        if (rc)
            break;
    }
    assert_int_equal(rc, LL_E_PROTO);
    assert_int_equal(fed, 1024);
    assert_true(p.line_cap <= 1024);

    sse_parser_reset(&p);
    assert_int_equal(sse_parser_feed(&p, "data: a\n\n", 9, count_cb, &n), 0);
    assert_int_equal(n, 1);
    sse_parser_free(&p);
    sse_parser_free(NULL);
}

static void test_callback_stops(void **state)
{
    struct transcript t = { 0 };
    struct sse_parser p;
    const char in[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

    t.stop_after = 2;
    sse_parser_init(&p, 0);
    assert_int_equal(sse_parser_feed(&p, in, sizeof(in) - 1, tr_event_cb, &t), 99);
    assert_int_equal(t.events, 2);
    sse_parser_reset(&p);
    t.stop_after = 0;
    assert_int_equal(sse_parser_feed(&p, in, sizeof(in) - 1, tr_event_cb, &t), 0);
    assert_int_equal(t.events, 5);
    sse_parser_free(&p);
    free(t.buf);
}

/* The zero-copy fast path: an event inside one buffer is handed over as a
 * view into that buffer; a split one comes from the parser's copy. */
static const char *g_seen_data;

static int ptr_cb(void *ud, const struct sse_event *ev)
{
    (void)ud;
    g_seen_data = ev->data;
    return 0;
}

static void test_zero_copy(void **state)
{
    struct sse_parser p;
    const char in[] = "data: {\"x\":1}\n\n";

    sse_parser_init(&p, 0);
    assert_int_equal(sse_parser_feed(&p, in, sizeof(in) - 1, ptr_cb, NULL), 0);
    assert_ptr_equal(g_seen_data, in + 6);
    assert_int_equal(sse_parser_feed(&p, in, 10, ptr_cb, NULL), 0);
    assert_int_equal(sse_parser_feed(&p, in + 10, sizeof(in) - 11, ptr_cb, NULL), 0);
    assert_ptr_equal(g_seen_data, p.data_buf);
    /* Data complete but the blank line in the next feed: copied. */
    assert_int_equal(sse_parser_feed(&p, in, sizeof(in) - 2, ptr_cb, NULL), 0);
    assert_int_equal(sse_parser_feed(&p, "\n", 1, ptr_cb, NULL), 0);
    assert_ptr_equal(g_seen_data, p.data_buf);
    sse_parser_free(&p);
}

/* Reuse: after a first stream has warmed the buffers, a reset and a second
 * stream of the same shape allocate nothing (the buffers stay put). */
static void test_reuse_no_growth(void **state)
{
    struct sse_parser p;
    char big[3000];
    int n = 0;

    memset(big, 'y', sizeof(big));
    memcpy(big, "data: ", 6);
    big[sizeof(big) - 2] = '\n';
    big[sizeof(big) - 1] = '\n';
    sse_parser_init(&p, 0);
    for (int round = 0; round < 2; round++) {
        const char *line_buf = round ? p.line_buf : NULL;
        const char *data_buf = round ? p.data_buf : NULL;
        size_t line_cap = p.line_cap, data_cap = p.data_cap;
        for (size_t i = 0; i < sizeof(big); i += 700)
            assert_int_equal(sse_parser_feed(&p, big + i, LL_MIN(700, sizeof(big) - i),
                                             count_cb, &n), 0);
        assert_int_equal(sse_parser_finish(&p, count_cb, &n), 0);
        if (round) {
            assert_ptr_equal(line_buf, p.line_buf);
            assert_ptr_equal(data_buf, p.data_buf);
            assert_int_equal(line_cap, p.line_cap);
            assert_int_equal(data_cap, p.data_cap);
        }
        sse_parser_reset(&p);
    }
    assert_int_equal(n, 2);
    sse_parser_free(&p);
}

/* ---- real captures ------------------------------------------------------ */

struct body {
    char *buf;
    size_t len;
    size_t cuts[256];            /* HTTP chunk boundaries inside buf */
    size_t ncuts;
    int status;
};

static char *read_file(const char *name, size_t *len)
{
    const char *dir = getenv("LLMLOAD_DATA");
    char path[512];
    FILE *f;
    char *buf = NULL;
    long n = 0;

    snprintf(path, sizeof(path), "%s/sse/%s", dir ? dir : "tests/data", name);
    f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        fail_msg("cannot size %s", path);
    buf = ll_malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        fail_msg("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Strip the status line and headers and undo chunked framing (or take a
 * Content-Length body as it is). */
static void load_capture(const char *name, struct body *b)
{
    size_t len;
    char *raw = read_file(name, &len);
    char *hdr_end = strstr(raw, "\r\n\r\n");
    char *p, *end = raw + len;

    memset(b, 0, sizeof(*b));
    assert_non_null(hdr_end);
    assert_true(strncmp(raw, "HTTP/1.1 ", 9) == 0);
    b->status = (raw[9] - '0') * 100 + (raw[10] - '0') * 10 + (raw[11] - '0');
    b->buf = ll_malloc(len + 1);
    p = hdr_end + 4;
    if (!strstr(raw, "Transfer-Encoding: chunked")) {
        b->len = (size_t)(end - p);
        memcpy(b->buf, p, b->len);
        free(raw);
        return;
    }
    for (;;) {
        char *endp;
        unsigned long n = strtoul(p, &endp, 16);
        assert_true(endp != p);
        assert_true(endp + 2 <= end && endp[0] == '\r' && endp[1] == '\n');
        p = endp + 2;
        if (n == 0)
            break;
        assert_true(p + n + 2 <= end);
        memcpy(b->buf + b->len, p, n);
        b->len += n;
        if (b->ncuts < LL_ARRAY_LEN(b->cuts))
            b->cuts[b->ncuts++] = b->len;
        p += n;
        assert_true(p[0] == '\r' && p[1] == '\n');
        p += 2;
    }
    if (b->ncuts && b->cuts[b->ncuts - 1] == b->len)
        b->ncuts--;
    free(raw);
}

struct stream_ctx {
    enum oai_api api;
    struct oai_stream st;
    int malformed;
    int unterminated;
};

static int oai_cb(void *ud, const struct sse_event *ev)
{
    struct stream_ctx *c = ud;
    struct oai_chunk ch;

    if (ev->unterminated)
        c->unterminated++;
    if (oai_decode_chunk(c->api, ev->data, ev->data_len, &ch) < 0) {
        c->malformed++;
        return 0;
    }
    oai_stream_add(&c->st, &ch);
    return 0;
}

/* Decode a capture three ways (its own chunking, whole, byte by byte) and
 * check all agree; returns the accumulated stream of the first. */
static void decode_capture(const char *name, enum oai_api api, struct stream_ctx *out)
{
    struct body b;
    struct sse_parser p;
    struct transcript t1 = { 0 }, t2 = { 0 }, t3 = { 0 };
    size_t *all;

    load_capture(name, &b);
    assert_int_equal(b.status, 200);
    run_cuts(b.buf, b.len, b.cuts, b.ncuts, 0, &t1);
    run_cuts(b.buf, b.len, NULL, 0, 0, &t2);
    all = ll_malloc(b.len * sizeof(size_t));
    for (size_t i = 0; i + 1 < b.len; i++)
        all[i] = i + 1;
    run_cuts(b.buf, b.len, all, b.len - 1, 0, &t3);
    assert_string_equal(t1.buf, t2.buf);
    assert_string_equal(t1.buf, t3.buf);
    free(all);
    free(t1.buf);
    free(t2.buf);
    free(t3.buf);

    memset(out, 0, sizeof(*out));
    out->api = api;
    oai_stream_init(&out->st);
    sse_parser_init(&p, 0);
    size_t pos = 0;
    for (size_t i = 0; i <= b.ncuts; i++) {
        size_t next = i < b.ncuts ? b.cuts[i] : b.len;
        assert_int_equal(sse_parser_feed(&p, b.buf + pos, next - pos, oai_cb, out), 0);
        pos = next;
    }
    assert_int_equal(sse_parser_finish(&p, oai_cb, out), 0);
    sse_parser_free(&p);
    free(b.buf);
}

/* A captured stream, read as api: decode_capture must find it complete
 * (no malformed or unterminated event, [DONE] seen, a finish reason, no
 * error) and holding every figure of want (test_stream_expect). */
struct capture_case {
    const char *name, *want;
    enum oai_api api;
};

/* chat-stream-usage: 1 role chunk, 12 content chunks ("\"" "H" "a" "\"" " "
 * "A" "n" "an" "t" "o" "p" "," decoded), 1 finish chunk, 1 usage chunk,
 * [DONE]. completions-stream: 12 text chunks ("," " there" " was" " a"
 * " little" " g" "ir" "l" " named" " Lily" "." " She"), a final chunk with ""
 * text + finish + usage, [DONE]. */
static const struct capture_case captures[] = {
    {"chat-stream-usage.http",
     "events=16;role_only_events=1;content_events=12;output_events=12;content_bytes=13;"
     "reasoning_bytes=0;tool_call_deltas=0;finish_reason=length;completion_tokens=12;"
     "prompt_tokens=46;cached_tokens=0;output_tokens=12;tokens_source=usage",
     OAI_API_CHAT},
    {"completions-stream.http",
     "events=14;role_only_events=0;content_events=12;output_events=12;content_bytes=41;"
     "reasoning_bytes=0;tool_call_deltas=0;finish_reason=length;completion_tokens=12;"
     "prompt_tokens=5;cached_tokens=1;output_tokens=12;tokens_source=usage",
     OAI_API_COMPLETIONS},
};

/* A cmocka test whose initial state is its struct capture_case. */
static void run_capture(void **state)
{
    const struct capture_case *k = *state;
    struct stream_ctx c;

    decode_capture(k->name, k->api, &c);
    assert_int_equal(c.malformed, 0);
    assert_int_equal(c.unterminated, 0);
    test_stream_expect(k->name, &c.st, k->want);
}

#define CAPTURE_TEST(name, i)                                                                      \
    {                                                                                              \
#name, run_capture, NULL, NULL, (void *)&captures[i]                                       \
    }

/* The completions stream read as chat finds no output: the api matters. */
static void test_llama_completions_as_chat(void **state)
{
    struct stream_ctx c;
    decode_capture("completions-stream.http", OAI_API_CHAT, &c);
    assert_int_equal(c.st.output_events, 0);
}

static void test_llama_nostream_and_error(void **state)
{
    struct body b;
    struct oai_chunk ch;

    load_capture("chat-nostream.http", &b);
    assert_int_equal(b.status, 200);
    assert_int_equal(oai_decode_response(OAI_API_CHAT, b.buf, b.len, &ch), 0);
    assert_int_equal(ch.content_bytes, 20);   /* "His mouthade outside" */
    assert_int_equal(ch.has_finish, 1);
    assert_string_equal(ch.finish_reason, "length");
    assert_int_equal(ch.has_usage, 1);
    assert_int_equal(ch.completion_tokens, 12);
    assert_int_equal(ch.prompt_tokens, 46);
    assert_int_equal(ch.cached_tokens, 45);
    assert_int_equal(ch.role_only, 0);
    free(b.buf);

    load_capture("error-context-too-long.http", &b);
    assert_int_equal(b.status, 400);
    assert_int_equal(oai_decode_response(OAI_API_CHAT, b.buf, b.len, &ch), 0);
    assert_int_equal(ch.has_error, 1);
    assert_string_equal(ch.error_message,
                        "request (2102 tokens) exceeds the available context size "
                        "(512 tokens), try increasing it");
    assert_int_equal(ch.has_usage, 0);
    free(b.buf);
}

TEST_MAIN(cmocka_unit_test(test_line_endings), cmocka_unit_test(test_comments_and_fields),
          cmocka_unit_test(test_event_and_id), cmocka_unit_test(test_error_field),
          cmocka_unit_test(test_end_of_stream), cmocka_unit_test(test_bom),
          cmocka_unit_test(test_long_line), cmocka_unit_test(test_long_line_bounded),
          cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_zero_copy),
          cmocka_unit_test(test_reuse_no_growth), CAPTURE_TEST(test_llama_chat_stream_usage, 0),
          CAPTURE_TEST(test_llama_completions_stream, 1),
          cmocka_unit_test(test_llama_completions_as_chat),
          cmocka_unit_test(test_llama_nostream_and_error))
