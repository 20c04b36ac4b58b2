/* Unit tests for h1.c: the HTTP/1.1 response parser.
 *
 * Each response is fed whole, byte by byte, in pieces of a few sizes, and
 * split at every offset into two feeds (the very long ones at chosen
 * offsets), and every way of feeding must give the same outcome: the
 * result and *used, the status, the header lines in order, the body bytes
 * with the chunk framing removed, keep_alive, what h1_parser_eof says, and
 * p->error. The real llama.cpp captures in tests/data/h1 (copies of
 * shared/fixtures/llama-cpp) are checked against a de-chunking done here by
 * hand. The body callback must only ever get pointers into the piece being
 * fed (no copy, no framing bytes). */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/h1.h"
#include "util/util.h"

/* ---- what the callbacks saw --------------------------------------------- */

struct rec {
    char *hdr; /* every header-callback line, each + '\n' */
    size_t hdr_len, hdr_cap;
    int hdr_lines;
    char *body; /* every body byte, in order */
    size_t body_len, body_cap;
    int body_calls;
    int stop_header_at; /* return 1 on this header line (1-based), 0 never */
    int stop_body_at;   /* return 1 on this body call (1-based), 0 never */
    const char *piece;  /* the bytes being fed right now */
    size_t piece_len;
    int bad_body_calls; /* empty, or not pointing into the piece */
};

static void buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (*len + n + 1 > c)
            c *= 2;
        *buf = ll_realloc(*buf, c);
        *cap = c;
    }
    if (n)
        memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
}

static int on_header(void *ud, const char *line, size_t len)
{
    struct rec *r = ud;
    buf_append(&r->hdr, &r->hdr_len, &r->hdr_cap, line, len);
    buf_append(&r->hdr, &r->hdr_len, &r->hdr_cap, "\n", 1);
    r->hdr_lines++;
    return r->stop_header_at != 0 && r->hdr_lines == r->stop_header_at;
}

static int on_body(void *ud, const char *buf, size_t len)
{
    struct rec *r = ud;
    uintptr_t lo = (uintptr_t)r->piece, hi = lo + r->piece_len, b = (uintptr_t)buf;
    if (len == 0 || b < lo || b + len > hi)
        r->bad_body_calls++;
    buf_append(&r->body, &r->body_len, &r->body_cap, buf, len);
    r->body_calls++;
    return r->stop_body_at != 0 && r->body_calls == r->stop_body_at;
}

static void rec_clear(struct rec *r)
{
    r->hdr_len = 0;
    r->body_len = 0;
    if (r->hdr)
        r->hdr[0] = '\0';
    if (r->body)
        r->body[0] = '\0';
    r->hdr_lines = 0;
    r->body_calls = 0;
    r->bad_body_calls = 0;
}

static void rec_free(struct rec *r)
{
    free(r->hdr);
    free(r->body);
}

/* ---- one outcome, every way of feeding ---------------------------------- */

#define USED_ANY SIZE_MAX /* *used not checked (where an error is found) */

struct expect {
    int rc;      /* what the last feed returns */
    size_t used; /* bytes used in all; 0: the whole input; or USED_ANY */
    int status;
    int keep_alive;      /* checked when the response completes */
    const char *headers; /* each line + '\n'; NULL: "" */
    const char *body;    /* NULL: "" */
    size_t body_len;     /* 0: strlen(body) */
    int eof_rc;          /* after a final H1_MORE: h1_parser_eof's result */
    const char *error;   /* p->error at the end, exactly; NULL: none */
    int stop_header_at, stop_body_at;
    int check_calls;      /* check body_calls_whole */
    int body_calls_whole; /* body calls when fed whole */
};

/* Feed data[0..len) to a fresh parser: in pieces of step bytes when step
 * is not 0, else as two feeds split at cut (cut 0 or len: one feed). Stops
 * at the first result other than H1_MORE, then compares with e. */
static void run_plan(const char *data, size_t len, size_t cut, size_t step, const struct expect *e)
{
    struct rec r;
    struct h1_parser p;
    char what[64];
    size_t off = 0, used_total = 0;
    int rc = H1_MORE;

    memset(&r, 0, sizeof r);
    r.stop_header_at = e->stop_header_at;
    r.stop_body_at = e->stop_body_at;
    if (step)
        snprintf(what, sizeof what, "pieces of %zu", step);
    else
        snprintf(what, sizeof what, "split at %zu of %zu", cut, len);
    h1_parser_init(&p, on_header, on_body, &r);
    while (off < len) {
        size_t n = step ? LL_MIN(step, len - off) : (off < cut ? cut - off : len - off);
        size_t used = SIZE_MAX;
        r.piece = data + off;
        r.piece_len = n;
        rc = h1_parser_feed(&p, data + off, n, &used);
        if (used > n)
            fail_msg("%s: used %zu of a %zu-byte feed", what, used, n);
        used_total += used;
        if (rc != H1_MORE)
            break;
        if (used != n)
            fail_msg("%s: H1_MORE but used %zu of %zu", what, used, n);
        off += n;
    }
    if (rc != e->rc)
        fail_msg("%s: rc %d, want %d (error: %s)", what, rc, e->rc, p.error ? p.error : "none");
    size_t want_used = e->used == 0 ? len : e->used;
    if (e->used != USED_ANY && used_total != want_used)
        fail_msg("%s: used %zu in all, want %zu", what, used_total, want_used);
    int done = rc == H1_DONE;
    if (rc == H1_MORE) {
        int erc = h1_parser_eof(&p);
        if (erc != e->eof_rc)
            fail_msg("%s: eof rc %d, want %d (error: %s)", what, erc, e->eof_rc,
                     p.error ? p.error : "none");
        done = erc == H1_DONE;
    }
    if (p.status != e->status)
        fail_msg("%s: status %d, want %d", what, p.status, e->status);
    if (h1_parser_status_seen(&p) != (e->status != 0))
        fail_msg("%s: status_seen %d", what, h1_parser_status_seen(&p));
    if (done && p.keep_alive != e->keep_alive)
        fail_msg("%s: keep_alive %d, want %d", what, p.keep_alive, e->keep_alive);
    const char *wh = e->headers ? e->headers : "";
    if (strcmp(r.hdr ? r.hdr : "", wh) != 0)
        fail_msg("%s: headers\n[%s]\nwant\n[%s]", what, r.hdr ? r.hdr : "", wh);
    const char *wb = e->body ? e->body : "";
    size_t wbl = e->body_len ? e->body_len : strlen(wb);
    if (r.body_len != wbl || (wbl && memcmp(r.body, wb, wbl) != 0))
        fail_msg("%s: body of %zu bytes, want %zu (or different bytes)", what, r.body_len, wbl);
    if (r.bad_body_calls)
        fail_msg("%s: %d body calls empty or outside the fed piece", what, r.bad_body_calls);
    if (e->check_calls && !step && (cut == 0 || cut >= len) && r.body_calls != e->body_calls_whole)
        fail_msg("%s: %d body calls, want %d", what, r.body_calls, e->body_calls_whole);
    if (e->error == NULL && p.error != NULL)
        fail_msg("%s: error \"%s\", want none", what, p.error);
    if (e->error != NULL && (p.error == NULL || strcmp(p.error, e->error) != 0))
        fail_msg("%s: error \"%s\", want \"%s\"", what, p.error ? p.error : "(null)", e->error);
    h1_parser_free(&p);
    rec_free(&r);
}

/* Whole, byte by byte, in pieces of 3 and 64, and split at every offset. */
static void check_all(const char *data, size_t len, const struct expect *e)
{
    run_plan(data, len, len, 0, e);
    run_plan(data, len, 0, 1, e);
    run_plan(data, len, 0, 3, e);
    run_plan(data, len, 0, 64, e);
    for (size_t cut = 1; cut < len; cut++)
        run_plan(data, len, cut, 0, e);
}

static void check_str(const char *s, const struct expect *e)
{
    check_all(s, strlen(s), e);
}

/* For long inputs: whole, byte by byte, in pieces of 1000, and at cuts. */
static void check_cuts(const char *data, size_t len, const struct expect *e, const size_t *cuts,
                       size_t ncuts)
{
    run_plan(data, len, len, 0, e);
    run_plan(data, len, 0, 1, e);
    run_plan(data, len, 0, 1000, e);
    for (size_t i = 0; i < ncuts; i++)
        run_plan(data, len, cuts[i], 0, e);
}

/* The header lines as the callback should see them: s's CRLFs as LFs. */
static char *crlf_to_lf(const char *s, size_t len)
{
    char *out = ll_malloc(len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
            continue;
        out[o++] = s[i];
    }
    out[o] = '\0';
    return out;
}

/* ---- the real captures -------------------------------------------------- */

/* Hex digits at s[*i] up to CRLF; advances *i past the CRLF. */
static size_t hand_hex_line(const char *s, size_t len, size_t *i)
{
    size_t n = 0, start = *i;
    while (*i < len && s[*i] != '\r') {
        char c = s[*i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            fail_msg("capture: bad chunk size byte at %zu", *i);
        n = n * 16 + (size_t)d;
        (*i)++;
    }
    assert_true(*i > start);
    assert_true(*i + 1 < len && s[*i + 1] == '\n');
    *i += 2;
    return n;
}

static const struct capture {
    const char *name;
    int status;
    int header_lines;    /* status line included */
    size_t header_bytes; /* through the empty line */
    size_t body_bytes;   /* de-chunked */
    int chunks;          /* 0: Content-Length */
    int keep_alive;
} captures[] = {
    {"chat-nostream.http", 200, 6, 169, 633, 0, 1},
    {"chat-stream-usage.http", 200, 6, 162, 3976, 14, 1},
    {"completions-stream.http", 200, 6, 162, 3501, 14, 1},
    {"error-context-too-long.http", 400, 6, 165, 193, 0, 0},
    {"metrics.http", 200, 7, 201, 1642, 0, 1},
    {"models.http", 200, 6, 169, 550, 0, 1},
    {"tokenize.http", 200, 6, 168, 28, 0, 1},
};

static void test_captures(void **state)
{
    for (size_t c = 0; c < sizeof captures / sizeof captures[0]; c++) {
        const struct capture *cap = &captures[c];
        size_t len;
        char *raw = test_read_data("h1", cap->name, &len);
        char *end = strstr(raw, "\r\n\r\n");
        assert_non_null(end);
        size_t hbytes = (size_t)(end - raw) + 4;
        assert_int_equal(hbytes, cap->header_bytes);
        char *headers = crlf_to_lf(raw, hbytes - 2);
        int lines = 0;
        for (const char *h = headers; *h; h++)
            lines += *h == '\n';
        assert_int_equal(lines, cap->header_lines);

        /* The body, de-chunked by hand. */
        char *body = ll_malloc(len);
        size_t blen = 0, i = hbytes;
        int chunks = 0;
        if (cap->chunks) {
            assert_non_null(strstr(headers, "\nTransfer-Encoding: chunked\n"));
            for (;;) {
                size_t n = hand_hex_line(raw, len, &i);
                if (n == 0)
                    break;
                assert_true(i + n + 2 <= len);
                memcpy(body + blen, raw + i, n);
                blen += n;
                i += n;
                assert_memory_equal(raw + i, "\r\n", 2);
                i += 2;
                chunks++;
            }
            assert_memory_equal(raw + i, "\r\n", 2);
            assert_int_equal(i + 2, len);
            /* The SSE body uses bare LFs; every CR in the file is framing. */
            assert_null(memchr(body, '\r', blen));
        } else {
            blen = len - hbytes;
            memcpy(body, raw + hbytes, blen);
        }
        assert_int_equal(chunks, cap->chunks);
        assert_int_equal(blen, cap->body_bytes);

        struct expect e = (struct expect){.rc = H1_DONE,
                                          .status = cap->status,
                                          .keep_alive = cap->keep_alive,
                                          .headers = headers,
                                          .body = body,
                                          .body_len = blen,
                                          .check_calls = 1,
                                          .body_calls_whole = cap->chunks ? cap->chunks : 1};
        check_all(raw, len, &e);

        /* Two back to back in one buffer: the first ends where it should. */
        char *two = ll_malloc(2 * len);
        memcpy(two, raw, len);
        memcpy(two + len, raw, len);
        e.used = len;
        run_plan(two, 2 * len, 2 * len, 0, &e);
        run_plan(two, 2 * len, len / 2, 0, &e);
        run_plan(two, 2 * len, len + 1, 0, &e);
        free(two);
        free(body);
        free(headers);
        free(raw);
    }
}

/* The de-chunked bodies hold what the captures say they hold. */
static void test_capture_contents(void **state)
{
    struct rec r;
    struct h1_parser p;
    size_t len, used;
    char *raw;

    memset(&r, 0, sizeof r);
    h1_parser_init(&p, on_header, on_body, &r);
    raw = test_read_data("h1", "tokenize.http", &len);
    r.piece = raw;
    r.piece_len = len;
    assert_int_equal(h1_parser_feed(&p, raw, len, &used), H1_DONE);
    assert_string_equal(r.body, "{\"tokens\":[403,407,261,378]}");
    free(raw);

    h1_parser_reset(&p);
    rec_clear(&r);
    raw = test_read_data("h1", "chat-stream-usage.http", &len);
    r.piece = raw;
    r.piece_len = len;
    assert_int_equal(h1_parser_feed(&p, raw, len, &used), H1_DONE);
    assert_int_equal(used, len);
    assert_int_equal(r.body_calls, 14);
    assert_memory_equal(r.body, "data: {\"choices\":[{\"finish_reason\":null", 39);
    assert_true(r.body_len >= 14);
    assert_memory_equal(r.body + r.body_len - 14, "data: [DONE]\n\n", 14);
    int events = 0;
    for (const char *s = r.body; (s = strstr(s, "data: ")) != NULL; s += 6)
        events++;
    assert_int_equal(events, 16);
    assert_int_equal(p.keep_alive, 1);
    free(raw);
    h1_parser_free(&p);
    rec_free(&r);
}

/* ---- framing ------------------------------------------------------------ */

/* One response and what every way of feeding it must give. */
struct h1_case {
    const char *in;
    struct expect e;
};

static void check_cases(const struct h1_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_str(c[i].in, &c[i].e);
}

/* A complete response of the given status that keeps the connection. */
#define DONE_KEPT(code) .rc = H1_DONE, .status = (code), .keep_alive = 1
/* A response framed by the close: more until h1_parser_eof completes it. */
#define DONE_AT_EOF(code) .rc = H1_MORE, .eof_rc = H1_DONE, .status = (code), .keep_alive = 0

static void test_content_length(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nContent-Length: 5\n", .body = "hello",
          .check_calls = 1, .body_calls_whole = 1}},
        /* The bytes after the body are not this response's. */
        {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200",
         {DONE_KEPT(200), .used = strlen("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
          .headers = "HTTP/1.1 200 OK\nContent-Length: 5\n", .body = "hello",
          .check_calls = 1, .body_calls_whole = 1}},
        /* Zero: done at the empty line; the body callback is never called. */
        {"HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\ncontent-length:0\n", .check_calls = 1,
          .body_calls_whole = 0}},
        /* Blanks around the value; the same value twice is fine. */
        {"HTTP/1.1 201 Created\r\nCONTENT-LENGTH: \t3 \r\nContent-Length: 3\r\n\r\na\r\n",
         {DONE_KEPT(201),
          .headers = "HTTP/1.1 201 Created\nCONTENT-LENGTH: \t3 \nContent-Length: 3\n",
          .body = "a\r\n", .check_calls = 1, .body_calls_whole = 1}},
        /* Transfer-Encoding: chunked wins over Content-Length. */
        {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
         "3\r\nabc\r\n0\r\n\r\n",
         {DONE_KEPT(200),
          .headers = "HTTP/1.1 200 OK\nContent-Length: 100\nTransfer-Encoding: chunked\n",
          .body = "abc", .check_calls = 1, .body_calls_whole = 1}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_close_delimited(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello world",
         {DONE_AT_EOF(200), .headers = "HTTP/1.0 200 OK\nContent-Type: text/plain\n",
          .body = "hello world"}},
        /* HTTP/1.1 without a length: chunk-like bytes are body bytes. */
        {"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
         {DONE_AT_EOF(200), .headers = "HTTP/1.1 200 OK\nConnection: keep-alive\n",
          .body = "3\r\nabc\r\n0\r\n\r\n"}},
        /* An empty close-delimited body. */
        {"HTTP/1.0 500 Oops\r\n\r\n",
         {DONE_AT_EOF(500), .headers = "HTTP/1.0 500 Oops\n", .check_calls = 1,
          .body_calls_whole = 0}},
        /* A coding other than chunked last: the close frames the body,
         * whatever Content-Length says (RFC 9112 6.3). */
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef",
         {DONE_AT_EOF(200),
          .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: gzip\nContent-Length: 3\n",
          .body = "abcdef"}},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
         {DONE_AT_EOF(200), .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked, gzip\n",
          .body = "3\r\nabc\r\n0\r\n\r\n"}},
        /* Two Transfer-Encoding lines are one list: chunked last is chunked. */
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
         "3\r\nabc\r\n0\r\n\r\n",
         {DONE_KEPT(200),
          .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: gzip\nTransfer-Encoding: chunked\n",
          .body = "abc"}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_no_body_status(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n",
         {DONE_KEPT(204), .headers = "HTTP/1.1 204 No Content\nServer: x\n", .check_calls = 1,
          .body_calls_whole = 0}},
        /* 304 with a Content-Length: still no body; what follows is not used. */
        {"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n0123456789",
         {DONE_KEPT(304), .used = strlen("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"),
          .headers = "HTTP/1.1 304 Not Modified\nContent-Length: 10\n", .check_calls = 1,
          .body_calls_whole = 0}},
        /* 204 on HTTP/1.0 with Transfer-Encoding: chunked: done, not kept. */
        {"HTTP/1.0 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
         {.rc = H1_DONE, .status = 204, .keep_alive = 0,
          .headers = "HTTP/1.0 204 No Content\nTransfer-Encoding: chunked\n", .check_calls = 1,
          .body_calls_whole = 0}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_interim_100(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
         {DONE_KEPT(200),
          .headers = "HTTP/1.1 100 Continue\nHTTP/1.1 200 OK\nContent-Length: 2\n",
          .body = "ok"}},
        /* Two interim responses with headers, then a chunked final one. */
        {"HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\n"
         "Link: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"
         "Transfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
         {DONE_KEPT(200),
          .headers = "HTTP/1.1 100 Continue\nX-A: 1\nHTTP/1.1 103 Early Hints\n"
                     "Link: </s.css>; rel=preload\nHTTP/1.1 200 OK\n"
                     "Transfer-Encoding: chunked\n",
          .body = "abcd"}},
        /* The interim response's Content-Length does not carry over. */
        {"HTTP/1.1 100 Continue\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\n\r\nabc",
         {DONE_AT_EOF(200),
          .headers = "HTTP/1.1 100 Continue\nContent-Length: 5\nHTTP/1.1 200 OK\n",
          .body = "abc"}},
        /* The connection closes after the interim response. */
        {"HTTP/1.1 100 Continue\r\n\r\n",
         {.rc = H1_MORE, .eof_rc = LL_E_PROTO, .status = 100,
          .headers = "HTTP/1.1 100 Continue\n",
          .error = "connection closed before the status line"}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_chunk_extensions(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "5;name=val\r\nhello\r\n0006 ; x=\"y;z\"\r\n world\r\nA\r\n0123456789\r\n"
         "0;last\r\n\r\n",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
          .body = "hello world0123456789", .check_calls = 1, .body_calls_whole = 3}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

/* Chunk sizes in every form the framing shortcut meets or leaves to the
 * line reader: upper and lower case, leading zeros up to 15 digits (the
 * shortcut) and past them (the line reader), a last chunk of "000". */
static void test_chunk_sizes(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "000000000000005\r\nhello\r\n0000000000000000A\r\n0123456789\r\n"
         "1a\r\nabcdefghijklmnopqrstuvwxyz\r\n000\r\n\r\n",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
          .body = "hello0123456789abcdefghijklmnopqrstuvwxyz", .check_calls = 1,
          .body_calls_whole = 3}},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "A\r\n0123456789\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
          .body = "0123456789abcdefghijklmnopqrstuvwxyz", .check_calls = 1,
          .body_calls_whole = 2}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_trailers(void **state)
{
    /* Trailer lines are read and skipped: the header callback sees only
     * the header section. */
    const char *s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
                    "3\r\nabc\r\n0\r\nX-Sum: 42\r\nX-Other: a b\r\n\r\n";
    const struct h1_case cases[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
         "3\r\nabc\r\n0\r\nX-Sum: 42\r\nX-Other: a b\r\n\r\nNEXT",
         {DONE_KEPT(200), .used = strlen(s),
          .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nTrailer: X-Sum\n",
          .body = "abc", .check_calls = 1, .body_calls_whole = 1}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_bare_lf(void **state)
{
    const struct h1_case cases[] = {
        {"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n6\nhello\n\n6\n world\n0\n\n",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
          .body = "hello\n world", .check_calls = 1, .body_calls_whole = 2}},
        /* Mixed endings; a CR inside a line stays in it. */
        {"HTTP/1.1 200 OK\nX-A: a\rb\r\nContent-Length: 2\n\r\nok",
         {DONE_KEPT(200), .headers = "HTTP/1.1 200 OK\nX-A: a\rb\nContent-Length: 2\n",
          .body = "ok"}},
    };
    check_cases(cases, LL_ARRAY_LEN(cases));
}

static void test_connection(void **state)
{
    static const struct {
        const char *in;
        int keep_alive;
    } cases[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", 1},
        {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", 0},
        {"HTTP/1.1 200 OK\r\nconnection: Keep-Alive, CLOSE\r\nContent-Length: 1\r\n\r\nx", 0},
        {"HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\n"
         "Content-Length: 1\r\n\r\nx",
         0},
        {"HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length: 1\r\n\r\nx", 1},
        {"HTTP/1.1 200 OK\r\nConnection: upgrade, close\t ,x\r\nContent-Length: 1\r\n\r\nx", 0},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip ,\tchunked \r\n\r\n1\r\nx\r\n0\r\n\r\n", 1},
        {"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 1\r\n\r\nx", 1},
        {"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 0},
        {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", 1},
        {"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\n"
         "Content-Length: 1\r\n\r\nx",
         0},
        {"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nTransfer-Encoding: chunked\r\n\r\n"
         "1\r\nx\r\n0\r\n\r\n",
         1},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
         "1\r\nx\r\n0\r\n\r\n",
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in;
        const char *hend = strstr(in, "\r\n\r\n");
        char *headers = crlf_to_lf(in, (size_t)(hend - in) + 2);
        struct expect e = (struct expect){.rc = H1_DONE,
                                          .status = 200,
                                          .keep_alive = cases[i].keep_alive,
                                          .headers = headers,
                                          .body = "x"};
        check_str(in, &e);
        free(headers);
    }
}

/* ---- several responses on one connection -------------------------------- */

/* Feed data split at cut, resetting after each complete response, and log
 * each response as "headers|body|status keep_alive\n", then the final
 * h1_parser_eof's result. Caller frees. */
static char *stream_log(const char *data, size_t len, size_t cut)
{
    struct rec r;
    struct h1_parser p;
    char *log = NULL, tail[160];
    size_t log_len = 0, log_cap = 0, off = 0;
    int rc = H1_MORE;

    memset(&r, 0, sizeof r);
    h1_parser_init(&p, on_header, on_body, &r);
    buf_append(&log, &log_len, &log_cap, "", 0);
    while (off < len) {
        size_t end = off < cut ? cut : len;
        while (off < end) {
            size_t used = SIZE_MAX;
            r.piece = data + off;
            r.piece_len = end - off;
            rc = h1_parser_feed(&p, data + off, end - off, &used);
            assert_true(used <= end - off);
            off += used;
            if (rc == H1_DONE) {
                assert_true(used > 0);
                buf_append(&log, &log_len, &log_cap, r.hdr ? r.hdr : "", r.hdr_len);
                buf_append(&log, &log_len, &log_cap, "|", 1);
                buf_append(&log, &log_len, &log_cap, r.body ? r.body : "", r.body_len);
                snprintf(tail, sizeof tail, "|%d %d\n", p.status, p.keep_alive);
                buf_append(&log, &log_len, &log_cap, tail, strlen(tail));
                assert_int_equal(r.bad_body_calls, 0);
                rec_clear(&r);
                h1_parser_reset(&p);
                continue;
            }
            if (rc != H1_MORE) {
                snprintf(tail, sizeof tail, "rc %d %s\n", rc, p.error ? p.error : "-");
                buf_append(&log, &log_len, &log_cap, tail, strlen(tail));
                goto out;
            }
            assert_int_equal(off, end);
        }
    }
    rc = h1_parser_eof(&p);
    if (rc == H1_DONE) {
        buf_append(&log, &log_len, &log_cap, r.hdr ? r.hdr : "", r.hdr_len);
        buf_append(&log, &log_len, &log_cap, "|", 1);
        buf_append(&log, &log_len, &log_cap, r.body ? r.body : "", r.body_len);
        snprintf(tail, sizeof tail, "|%d %d\n", p.status, p.keep_alive);
        buf_append(&log, &log_len, &log_cap, tail, strlen(tail));
    }
    snprintf(tail, sizeof tail, "eof %d %s\n", rc, p.error ? p.error : "-");
    buf_append(&log, &log_len, &log_cap, tail, strlen(tail));
out:
    h1_parser_free(&p);
    rec_free(&r);
    return log;
}

static void test_back_to_back(void **state)
{
    const char *r1 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    const char *r2 = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope";
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%s%s", r1, r2);
    assert_true(n > 0 && (size_t)n < sizeof buf);

    /* By hand: DONE at the end of the first, then a reset, then the second. */
    struct rec r;
    struct h1_parser p;
    size_t used = 0;
    memset(&r, 0, sizeof r);
    h1_parser_init(&p, on_header, on_body, &r);
    r.piece = buf;
    r.piece_len = (size_t)n;
    assert_int_equal(h1_parser_feed(&p, buf, (size_t)n, &used), H1_DONE);
    assert_int_equal(used, strlen(r1));
    assert_int_equal(p.status, 200);
    assert_string_equal(r.body, "abc");
    /* Fed again without a reset, the parser stays done and takes nothing. */
    assert_int_equal(h1_parser_feed(&p, buf + used, (size_t)n - used, &used), H1_DONE);
    assert_int_equal(used, 0);
    h1_parser_reset(&p);
    rec_clear(&r);
    assert_int_equal(h1_parser_status_seen(&p), 0);
    r.piece = buf + strlen(r1);
    r.piece_len = strlen(r2);
    assert_int_equal(h1_parser_feed(&p, r.piece, r.piece_len, &used), H1_DONE);
    assert_int_equal(used, strlen(r2));
    assert_int_equal(p.status, 404);
    assert_int_equal(p.keep_alive, 1);
    assert_string_equal(r.hdr, "HTTP/1.1 404 Not Found\nContent-Length: 4\n");
    assert_string_equal(r.body, "nope");
    h1_parser_free(&p);
    rec_free(&r);

    /* Four responses (one stray CRLF between the first two, which a client
     * may meet), at every split. */
    const char *stream =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        "\r\n"
        "HTTP/1.1 404 Not Found\nContent-Length: 4\n\nnope"
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
        "HTTP/1.0 200 OK\r\n\r\nrest of it";
    const char *want = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n|abc|200 1\n"
                       "HTTP/1.1 404 Not Found\nContent-Length: 4\n|nope|404 1\n"
                       "HTTP/1.1 100 Continue\nHTTP/1.1 204 No Content\n||204 1\n"
                       "HTTP/1.0 200 OK\n|rest of it|200 0\n"
                       "eof 1 -\n";
    size_t len = strlen(stream);
    for (size_t cut = 0; cut <= len; cut++) {
        char *log = stream_log(stream, len, cut);
        if (strcmp(log, want) != 0)
            fail_msg("split at %zu:\n%s\nwant\n%s", cut, log, want);
        free(log);
    }

    /* Two stray empty lines are one too many. */
    const char *stray = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n";
    char *log = stream_log(stray, strlen(stray), strlen(stray));
    assert_string_equal(log, "HTTP/1.1 200 OK\nContent-Length: 0\n||200 1\n"
                             "rc -3 not an HTTP/1.x status line\n");
    free(log);
    /* A response that ends exactly at the close: the next one never starts. */
    log = stream_log(r2, strlen(r2), 5);
    assert_string_equal(log, "HTTP/1.1 404 Not Found\nContent-Length: 4\n|nope|404 1\n"
                             "eof -3 connection closed with no response\n");
    free(log);
}

/* ---- callbacks that stop ------------------------------------------------ */

static void test_callback_stop(void **state)
{
    const char *s = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 5\r\n\r\nhello";
    struct expect e;

    e = (struct expect){.rc = H1_STOPPED,
                        .status = 200,
                        .stop_header_at = 2,
                        .used = strlen("HTTP/1.1 200 OK\r\nA: 1\r\n"),
                        .headers = "HTTP/1.1 200 OK\nA: 1\n"};
    check_str(s, &e);
    e = (struct expect){.rc = H1_STOPPED,
                        .status = 200,
                        .stop_header_at = 1,
                        .used = strlen("HTTP/1.1 200 OK\r\n"),
                        .headers = "HTTP/1.1 200 OK\n"};
    check_str(s, &e);

    /* The body callback: *used ends with the piece it was given. */
    size_t hlen = strlen(s) - 5;
    e = (struct expect){.rc = H1_STOPPED,
                        .status = 200,
                        .keep_alive = 1,
                        .stop_body_at = 1,
                        .headers = "HTTP/1.1 200 OK\nA: 1\nB: 2\nContent-Length: 5\n",
                        .body = "hello"};
    run_plan(s, strlen(s), strlen(s), 0, &e);
    for (size_t cut = 0; cut <= hlen; cut++)
        run_plan(s, strlen(s), cut, 0, &e);
    e.used = hlen + 2;
    e.body = "he";
    run_plan(s, strlen(s), hlen + 2, 0, &e);
    e.used = hlen + 1;
    e.body = "h";
    run_plan(s, strlen(s), 0, 1, &e);

    /* Chunked, fed whole: stops after the first chunk's data, before its CRLF. */
    const char *c =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    e = (struct expect){.rc = H1_STOPPED,
                        .status = 200,
                        .keep_alive = 1,
                        .stop_body_at = 1,
                        .used =
                            strlen("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc"),
                        .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
                        .body = "abc"};
    run_plan(c, strlen(c), strlen(c), 0, &e);
    e.stop_body_at = 2;
    e.used = strlen(c) - strlen("\r\n0\r\n\r\n");
    e.body = "abcde";
    run_plan(c, strlen(c), strlen(c), 0, &e);
}

/* Chunk data that looks like framing, and NULs, reach the body as data. */
static void test_body_never_framing(void **state)
{
    static const char in[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "7\r\n\r\n0\r\n\r\n\r\n3\r\n5\r\n\r\n4\r\na\0b\n\r\n0\r\n\r\n";
    static const char body[] = "\r\n0\r\n\r\n5\r\na\0b\n";
    struct expect e = (struct expect){.rc = H1_DONE,
                                      .status = 200,
                                      .keep_alive = 1,
                                      .headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
                                      .body = body,
                                      .body_len = sizeof body - 1,
                                      .check_calls = 1,
                                      .body_calls_whole = 3};
    check_all(in, sizeof in - 1, &e);
}

/* ---- errors ------------------------------------------------------------- */

struct bad {
    const char *in;
    int status; /* p->status afterwards */
    const char *error;
    const char *headers; /* delivered before the error */
    const char *body;    /* delivered before the error */
};

/* Each of b, fed every way, fails with its error: in a feed, or, when
 * at_eof, only at h1_parser_eof after every byte was taken. */
static void check_bad(const struct bad *b, size_t n, int at_eof)
{
    for (size_t i = 0; i < n; i++) {
        struct expect e = {.rc = at_eof ? H1_MORE : LL_E_PROTO,
                           .eof_rc = at_eof ? LL_E_PROTO : 0,
                           .used = at_eof ? 0 : USED_ANY,
                           .status = b[i].status,
                           .error = b[i].error,
                           .headers = b[i].headers,
                           .body = b[i].body};
        check_str(b[i].in, &e);
    }
}

static void test_errors_status(void **state)
{
    static const struct bad b[] = {
        {"HTTP/2 200 OK\r\n\r\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"HTTP/1.2 200 OK\r\n\r\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"SSH-2.0-OpenSSH_9.6\r\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"<html><body>hi</body></html>\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"http/1.1 200 OK\r\n\r\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"HTTP/1.1 20\r\n\r\n", 0, "not an HTTP/1.x status line", NULL, NULL},
        {"HTTP/1.1 2x0 OK\r\n\r\n", 0, "bad status code", NULL, NULL},
        {"HTTP/1.1 099 Low\r\n\r\n", 0, "bad status code", NULL, NULL},
        {"HTTP/1.1 2000 OK\r\n\r\n", 0, "bad status code", NULL, NULL},
        {"HTTP/1.1 200OK\r\n\r\n", 0, "bad status code", NULL, NULL},
        {"HTTP/1.1  200 OK\r\n\r\n", 0, "bad status code", NULL, NULL},
    };
    check_bad(b, sizeof b / sizeof b[0], 0);
}

static void test_errors_headers(void **state)
{
    static const struct bad b[] = {
#define OK_H "HTTP/1.1 200 OK\n"
        {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", 200,
         "two different Content-Length values", OK_H "Content-Length: 5\n", NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", 200, "bad Content-Length", OK_H,
         NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello", 200, "bad Content-Length", OK_H,
         NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", 200, "bad Content-Length", OK_H,
         NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", 200,
         "bad Content-Length", OK_H, NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length:  \r\n\r\nhello", 200, "empty Content-Length", OK_H,
         NULL},
        {"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", 200, "obsolete folded header line",
         OK_H "X-A: 1\n", NULL},
        {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "\r\n",
         101, "101 Switching Protocols is not supported",
         "HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\nConnection: Upgrade\n", NULL},
#undef OK_H
    };
    check_bad(b, sizeof b / sizeof b[0], 0);
}

static void test_errors_chunks(void **state)
{
#define TE "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
#define TE_H "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n"
    static const struct bad b[] = {
        {TE "zz\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE "\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE "5x\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE " 5\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE "-1\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE "0x5\r\nhello\r\n0\r\n\r\n", 200, "bad chunk size line", TE_H, NULL},
        {TE "10000000000000000\r\n", 200, "chunk size too large", TE_H, NULL},
        {TE "5\r\nhelloX\r\n0\r\n\r\n", 200, "chunk data not followed by a line end", TE_H,
         "hello"},
        {TE "5\r\nhello0\r\n\r\n", 200, "chunk data not followed by a line end", TE_H, "hello"},
        {TE "3\r\nabc\r\n5\r\nhello\r\r\n0\r\n\r\n", 200, "chunk data not followed by a line end",
         TE_H, "abchello"},
    };
#undef TE
#undef TE_H
    check_bad(b, sizeof b / sizeof b[0], 0);
}

static void test_errors_eof(void **state)
{
#define TE "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
#define TE_H "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n"
    static const struct bad b[] = {
        {"H", 0, "connection closed before the status line", NULL, NULL},
        {"HTTP/1.1 20", 0, "connection closed before the status line", NULL, NULL},
        {"HTTP/1.1 200 OK", 0, "connection closed before the status line", NULL, NULL},
        {"HTTP/1.1 200 OK\r\n", 200, "connection closed inside the headers", "HTTP/1.1 200 OK\n",
         NULL},
        {"HTTP/1.1 200 OK\r\nContent-Len", 200, "connection closed inside the headers",
         "HTTP/1.1 200 OK\n", NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", 200,
         "connection closed before the end of the body (Content-Length)",
         "HTTP/1.1 200 OK\nContent-Length: 10\n", "hello"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\nabc", 200,
         "connection closed before the end of the body (Content-Length)",
         "HTTP/1.1 200 OK\nContent-Length: 1000000000000\n", "abc"},
        {TE, 200, "connection closed before the last chunk", TE_H, NULL},
        {TE "5", 200, "connection closed before the last chunk", TE_H, NULL},
        {TE "5\r\nhel", 200, "connection closed before the last chunk", TE_H, "hel"},
        {TE "5\r\nhello", 200, "connection closed before the last chunk", TE_H, "hello"},
        {TE "5\r\nhello\r", 200, "connection closed before the last chunk", TE_H, "hello"},
        {TE "5\r\nhello\r\n", 200, "connection closed before the last chunk", TE_H, "hello"},
        {TE "5\r\nhello\r\n0\r\n", 200, "connection closed before the last chunk", TE_H, "hello"},
        {TE "5\r\nhello\r\n0\r\nX: 1\r\n", 200, "connection closed before the last chunk", TE_H,
         "hello"},
    };
#undef TE
#undef TE_H
    check_bad(b, sizeof b / sizeof b[0], 1);

    /* Nothing at all. */
    struct h1_parser p;
    size_t used = 99;
    h1_parser_init(&p, NULL, NULL, NULL);
    assert_int_equal(h1_parser_feed(&p, NULL, 0, &used), H1_MORE);
    assert_int_equal(used, 0);
    assert_int_equal(h1_parser_eof(&p), LL_E_PROTO);
    assert_string_equal(p.error, "connection closed with no response");
    h1_parser_free(&p);
}

/* An error stays until a reset; the parser is usable after one. */
static void test_error_sticky(void **state)
{
    struct h1_parser p;
    size_t used = 99;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

    h1_parser_init(&p, NULL, NULL, NULL);
    assert_int_equal(h1_parser_feed(&p, "HTTP/1.1 2x0 OK\r\n", 17, &used), LL_E_PROTO);
    assert_string_equal(p.error, "bad status code");
    assert_int_equal(h1_parser_feed(&p, ok, strlen(ok), &used), LL_E_PROTO);
    assert_int_equal(used, 0);
    assert_int_equal(h1_parser_eof(&p), LL_E_PROTO);
    assert_string_equal(p.error, "bad status code");
    h1_parser_reset(&p);
    assert_null(p.error);
    assert_int_equal(h1_parser_feed(&p, ok, strlen(ok), &used), H1_DONE);
    assert_int_equal(used, strlen(ok));
    assert_int_equal(p.status, 200);
    h1_parser_free(&p);
}

/* h1_parser_in_body: zero until the final response's headers end. */
static void test_in_body(void **state)
{
    static const struct {
        const char *in;
        int rc;
        int in_body;
    } steps[] = {
        {"HTTP/1.1 100 Continue\r\n", H1_MORE, 0},
        {"X: 1\r\n\r\n", H1_MORE, 0},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", H1_MORE, 0},
        {"\r\n", H1_MORE, 1},
        {"3\r\nab", H1_MORE, 1},
        {"c\r\n0\r\n", H1_MORE, 1},
        {"\r\n", H1_DONE, 1},
    };
    struct h1_parser p;
    size_t used;

    h1_parser_init(&p, NULL, NULL, NULL);
    assert_int_equal(h1_parser_in_body(&p), 0);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        assert_int_equal(h1_parser_feed(&p, steps[i].in, strlen(steps[i].in), &used), steps[i].rc);
        assert_int_equal(used, strlen(steps[i].in));
        assert_int_equal(h1_parser_in_body(&p), steps[i].in_body);
    }
    h1_parser_reset(&p);
    assert_int_equal(h1_parser_in_body(&p), 0);

    /* An error in the headers is before the body; one in the chunks is not. */
    const char *bad = "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n";
    assert_int_equal(h1_parser_feed(&p, bad, strlen(bad), &used), LL_E_PROTO);
    assert_int_equal(h1_parser_in_body(&p), 0);
    h1_parser_reset(&p);
    bad = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nq\r\n";
    assert_int_equal(h1_parser_feed(&p, bad, strlen(bad), &used), LL_E_PROTO);
    assert_int_equal(h1_parser_in_body(&p), 1);
    h1_parser_free(&p);
}

/* ---- bounds ------------------------------------------------------------- */

/* "HTTP/1.1 200 OK" eol "X-Long: aaaa..." eol "Content-Length: 2" eol eol
 * "ok", the long line holding line_bytes bytes before its ending. */
static char *long_line_response(size_t line_bytes, const char *eol, size_t *len)
{
    size_t el = strlen(eol), cap = line_bytes + 64;
    char *s = ll_malloc(cap);
    size_t o = 0;
    memcpy(s + o, "HTTP/1.1 200 OK", 15);
    o += 15;
    memcpy(s + o, eol, el);
    o += el;
    memcpy(s + o, "X-Long: ", 8);
    o += 8;
    memset(s + o, 'a', line_bytes - 8);
    o += line_bytes - 8;
    memcpy(s + o, eol, el);
    o += el;
    memcpy(s + o, "Content-Length: 2", 17);
    o += 17;
    memcpy(s + o, eol, el);
    o += el;
    memcpy(s + o, eol, el);
    o += el;
    memcpy(s + o, "ok", 2);
    o += 2;
    s[o] = '\0';
    *len = o;
    return s;
}

static void test_long_line(void **state)
{
    const size_t max = H1_MAX_LINE_BYTES;
    static const char *eols[] = {"\r\n", "\n"};

    for (size_t k = 0; k < 2; k++) {
        size_t el = strlen(eols[k]), start = 15 + el, len;
        /* Exactly the bound is fine, with either line ending, split or not. */
        char *s = long_line_response(max, eols[k], &len);
        const size_t cuts[] = {start,           start + 1,      start + 127,     start + 128,
                               start + 129,     start + 4096,   start + max - 1, start + max,
                               start + max + 1, start + max + 2};
        char *headers = crlf_to_lf(s, len - 2 - el);
        struct expect e = (struct expect){
            .rc = H1_DONE, .status = 200, .keep_alive = 1, .headers = headers, .body = "ok"};
        check_cuts(s, len, &e, cuts, sizeof cuts / sizeof cuts[0]);
        free(headers);
        free(s);

        /* One more byte is not. */
        s = long_line_response(max + 1, eols[k], &len);
        e = (struct expect){.rc = LL_E_PROTO,
                            .used = USED_ANY,
                            .status = 200,
                            .headers = "HTTP/1.1 200 OK\n",
                            .error = "a header or chunk line over 16 KiB"};
        check_cuts(s, len, &e, cuts, sizeof cuts / sizeof cuts[0]);

        /* Nor is a long line that never ends. */
        e.rc = LL_E_PROTO;
        check_cuts(s, start + max + 2, &e, cuts, 7);
        free(s);
    }

    /* A long status line, and a long chunk-size line (an extension). */
    size_t n = max + 20;
    char *s = ll_malloc(n + 64);
    memcpy(s, "HTTP/1.1 200 ", 13);
    memset(s + 13, 'r', n - 13);
    memcpy(s + n, "\r\n\r\n", 5);
    struct expect e = (struct expect){
        .rc = LL_E_PROTO, .used = USED_ANY, .error = "a header or chunk line over 16 KiB"};
    const size_t cuts[] = {1, 200, max, max + 1, max + 2};
    check_cuts(s, n + 4, &e, cuts, sizeof cuts / sizeof cuts[0]);
    const char *te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;";
    size_t tl = strlen(te);
    memcpy(s, te, tl);
    memset(s + tl, 'e', max);
    memcpy(s + tl + max, "\r\nhello\r\n0\r\n\r\n", 15);
    e.status = 200;
    e.headers = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n";
    check_cuts(s, tl + max + 14, &e, cuts, sizeof cuts / sizeof cuts[0]);
    free(s);
}

/* A header section of exactly H1_MAX_HEADER_BYTES (status line through the
 * empty line) is read; one byte more is refused. */
static void test_header_section_bound(void **state)
{
    for (int extra = 0; extra <= 1; extra++) {
        size_t cap = H1_MAX_HEADER_BYTES + 64, o = 0;
        char *s = ll_malloc(cap);
        const char *head = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n";
        memcpy(s, head, strlen(head));
        o = strlen(head);
        size_t left = H1_MAX_HEADER_BYTES + (size_t)extra - o - 2;
        while (left > 0) {
            size_t line = left >= 1000 + 100 ? 1000 : left; /* no line under 100 bytes */
            memcpy(s + o, "X-Pad: ", 7);
            memset(s + o + 7, 'b', line - 9);
            memcpy(s + o + line - 2, "\r\n", 2);
            o += line;
            left -= line;
        }
        memcpy(s + o, "\r\nok", 4);
        o += 4;
        assert_int_equal(o, H1_MAX_HEADER_BYTES + (size_t)extra + 2);
        char *headers = crlf_to_lf(s, o - 4);
        struct expect e = (struct expect){
            .rc = H1_DONE, .status = 200, .keep_alive = 1, .headers = headers, .body = "ok"};
        if (extra) {
            /* The empty line is the byte too many: every header line was
             * delivered, the body is not. */
            e = (struct expect){.rc = LL_E_PROTO,
                                .used = USED_ANY,
                                .status = 200,
                                .headers = headers,
                                .error = "header section over 100 KiB"};
        }
        const size_t cuts[] = {1, 5000, H1_MAX_HEADER_BYTES - 1, H1_MAX_HEADER_BYTES,
                               H1_MAX_HEADER_BYTES + 1};
        check_cuts(s, o, &e, cuts, sizeof cuts / sizeof cuts[0]);
        free(headers);
        free(s);
    }
}

/* A split line past line_small goes to the heap, is reused after a reset,
 * and h1_parser_free gives it back; short split lines stay inline. */
static void test_heap_line(void **state)
{
    struct rec r;
    struct h1_parser p;
    size_t len, used;
    char *s = long_line_response(300, "\r\n", &len);

    memset(&r, 0, sizeof r);
    h1_parser_init(&p, on_header, on_body, &r);
    assert_ptr_equal(p.line, p.line_small);
    /* A split short line: inline. */
    r.piece = s;
    r.piece_len = 10;
    assert_int_equal(h1_parser_feed(&p, s, 10, &used), H1_MORE);
    assert_ptr_equal(p.line, p.line_small);
    /* Stop inside the long line: the heap. */
    r.piece = s + 10;
    r.piece_len = 200;
    assert_int_equal(h1_parser_feed(&p, s + 10, 200, &used), H1_MORE);
    assert_int_equal(used, 200);
    assert_ptr_not_equal(p.line, p.line_small);
    assert_true(p.line_cap >= 200 - 7 && p.line_cap <= H1_MAX_LINE_BYTES + 1);
    r.piece = s + 210;
    r.piece_len = len - 210;
    assert_int_equal(h1_parser_feed(&p, s + 210, len - 210, &used), H1_DONE);
    assert_int_equal(used, len - 210);
    assert_int_equal(r.hdr_lines, 3);
    assert_int_equal(r.hdr_len, 16 + 301 + 18);
    assert_string_equal(r.body, "ok");

    /* Reset keeps the buffer; a second long split line reuses it. */
    char *heap = p.line;
    h1_parser_reset(&p);
    rec_clear(&r);
    for (size_t i = 0; i < len; i += 50) {
        size_t n = LL_MIN((size_t)50, len - i);
        r.piece = s + i;
        r.piece_len = n;
        int rc = h1_parser_feed(&p, s + i, n, &used);
        assert_int_equal(rc, i + n == len ? H1_DONE : H1_MORE);
        assert_int_equal(used, n);
    }
    assert_ptr_equal(p.line, heap);
    assert_int_equal(r.hdr_len, 16 + 301 + 18);

    /* Left mid-line, then freed: nothing leaks (valgrind), and the parser
     * is back on its inline buffer. */
    h1_parser_reset(&p);
    assert_int_equal(h1_parser_feed(&p, s, 250, &used), H1_MORE);
    h1_parser_free(&p);
    assert_ptr_equal(p.line, p.line_small);
    assert_int_equal(p.line_len, 0);
    h1_parser_free(&p);
    h1_parser_free(NULL);
    free(s);
    rec_free(&r);
}

UNIT_TESTS(test_captures, test_capture_contents, test_content_length, test_close_delimited,
           test_no_body_status, test_interim_100, test_chunk_extensions, test_chunk_sizes,
           test_trailers, test_bare_lf, test_connection, test_back_to_back, test_callback_stop,
           test_body_never_framing, test_errors_status, test_errors_headers, test_errors_chunks,
           test_errors_eof, test_error_sticky, test_in_body, test_long_line,
           test_header_section_bound, test_heap_line)
