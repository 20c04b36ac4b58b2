/* Unit tests for sim/http.c: the request parser fed whole, byte by byte and
 * split at every offset; pipelining; chunked bodies; limits; bad requests;
 * and the output buffer's JSON escaping. */
#include <string.h>

#include "test.h"
#include "sim/http.h"
#include "util/util.h"

static const struct http_limits LIMITS = {.max_head_bytes = 1024, .max_body_bytes = 4096};

/* Feed s in two pieces split at `split` (or byte by byte when split is
 * SIZE_MAX). Returns the parser's last result; *used gets the total bytes
 * consumed. */
static int feed_split(struct http_parser *p, const char *s, size_t len, size_t split,
                      size_t *used)
{
    size_t total = 0;
    int rc = HTTP_PARSE_MORE;
    if (split == SIZE_MAX) {
        for (size_t i = 0; i < len && rc == HTTP_PARSE_MORE; i++) {
            size_t c = 0;
            rc = http_parser_feed(p, s + i, 1, &c);
            total += c;
        }
    } else {
        size_t c = 0;
        rc = http_parser_feed(p, s, split, &c);
        total += c;
        if (rc == HTTP_PARSE_MORE && split < len) {
            rc = http_parser_feed(p, s + split, len - split, &c);
            total += c;
        }
    }
    *used = total;
    return rc;
}

/* Run check(p) on s parsed whole, byte by byte and split at every offset. */
static void for_every_split(const char *s, size_t len, int want_rc, size_t want_used,
                            void (*check)(const struct http_parser *p))
{
    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    for (size_t split = 0; split <= len + 1; split++) {
        size_t sp = split == len + 1 ? SIZE_MAX : split;
        http_parser_reset(&p);
        size_t used = 0;
        int rc = feed_split(&p, s, len, sp, &used);
        if (rc != want_rc)
            fail_msg("split %zu: rc %d, want %d", split, rc, want_rc);
        if (want_rc == HTTP_PARSE_DONE && used != want_used)
            fail_msg("split %zu: used %zu, want %zu", split, used, want_used);
        if (check)
            check(&p);
    }
    http_parser_free(&p);
}

/* The request p parsed; fails the test when there is none. */
static const struct http_request *request_of(const struct http_parser *p)
{
    const struct http_request *r = http_parser_request(p);
    assert_non_null(r);
    return r;
}

static const char GET_REQ[] = "GET /v1/models?x=1 HTTP/1.1\r\n"
                              "Host: 127.0.0.1:8000\r\n"
                              "User-Agent:   curl/8  \r\n"
                              "Accept: */*\r\n"
                              "\r\n";

static void check_get(const struct http_parser *p)
{
    const struct http_request *r = request_of(p);
    assert_int_equal(r->method, HTTP_METHOD_GET);
    assert_string_equal(r->method_str, "GET");
    assert_string_equal(r->target, "/v1/models?x=1");
    assert_string_equal(r->path, "/v1/models");
    assert_int_equal(r->path_len, 10);
    assert_int_equal(r->version_minor, 1);
    assert_int_equal(r->keep_alive, 1);
    assert_int_equal(r->n_headers, 3);
    const struct http_header *ua = http_request_header(r, "user-agent");
    assert_non_null(ua);
    assert_int_equal(ua->value_len, 6);
    assert_memory_equal(ua->value, "curl/8", 6);
    assert_int_equal(r->body_len, 0);
    assert_string_equal(r->body, "");
    assert_null(http_request_header(r, "content-length"));
}

static const char POST_REQ[] = "POST /v1/completions HTTP/1.1\r\n"
                               "Content-Type: application/json\r\n"
                               "Content-Length: 16\r\n"
                               "\r\n"
                               "{\"prompt\":\"hi\"}\n";

static void check_post(const struct http_parser *p)
{
    const struct http_request *r = request_of(p);
    assert_int_equal(r->method, HTTP_METHOD_POST);
    assert_string_equal(r->path, "/v1/completions");
    assert_int_equal(r->body_len, 16);
    assert_string_equal(r->body, "{\"prompt\":\"hi\"}\n");
    assert_int_equal(r->chunked, 0);
}

static const char CHUNKED_REQ[] = "POST /v1/chat/completions HTTP/1.1\r\n"
                                  "Transfer-Encoding: chunked\r\n"
                                  "\r\n"
                                  "5;ext=1\r\nhello\r\n"
                                  "1A\r\n, this is twenty-six bytes\r\n"
                                  "0\r\n"
                                  "X-Trailer: yes\r\n"
                                  "\r\n";

static void check_chunked(const struct http_parser *p)
{
    const struct http_request *r = request_of(p);
    assert_int_equal(r->chunked, 1);
    assert_int_equal(r->body_len, 5 + 26);
    assert_string_equal(r->body, "hello, this is twenty-six bytes");
}

/* Bare LF line endings and blank lines before the request line. */
static const char LF_REQ[] = "\r\n\nPOST /v1/completions HTTP/1.0\nContent-Length: 3\n"
                             "Connection: keep-alive\n\nabc";

static void check_lf(const struct http_parser *p)
{
    const struct http_request *r = request_of(p);
    assert_int_equal(r->version_minor, 0);
    assert_int_equal(r->keep_alive, 1);
    assert_string_equal(r->body, "abc");
}

/* A request parsed whole, byte by byte and split at every offset, and
 * checked each time. */
struct split_case {
    const char *req;
    void (*check)(const struct http_parser *p);
};

static const struct split_case get_split = {GET_REQ, check_get};
static const struct split_case post_split = {POST_REQ, check_post};
static const struct split_case chunked_split = {CHUNKED_REQ, check_chunked};
static const struct split_case lf_split = {LF_REQ, check_lf};

/* A cmocka test whose initial state is its struct split_case. */
static void run_every_split(void **state)
{
    const struct split_case *c = *state;
    for_every_split(c->req, strlen(c->req), HTTP_PARSE_DONE, strlen(c->req), c->check);
}

#define SPLIT_TEST(name, c) { #name, run_every_split, NULL, NULL, (void *)&(c) }

/* After a reset, the next request of the pipelined buf (total bytes),
 * from *at: it must take exactly n bytes and pass check; *at moves past
 * it. */
static void feed_next(struct http_parser *p, const char *buf, size_t total, size_t *at, size_t n,
                      void (*check)(const struct http_parser *p))
{
    http_parser_reset(p);
    size_t used = 0;
    assert_int_equal(http_parser_feed(p, buf + *at, total - *at, &used), HTTP_PARSE_DONE);
    assert_int_equal(used, n);
    check(p);
    *at += used;
}

static void test_pipelined(void **state)
{
    char buf[1024];
    size_t n1 = strlen(POST_REQ), n2 = strlen(GET_REQ), n3 = strlen(CHUNKED_REQ);
    memcpy(buf, POST_REQ, n1);
    memcpy(buf + n1, GET_REQ, n2);
    memcpy(buf + n1 + n2, CHUNKED_REQ, n3);
    size_t total = n1 + n2 + n3;

    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    size_t used = 0;
    assert_int_equal(http_parser_feed(&p, buf, total, &used), HTTP_PARSE_DONE);
    assert_int_equal(used, n1);
    check_post(&p);
    /* Feeding again before reset consumes nothing. */
    size_t again = 99;
    assert_int_equal(http_parser_feed(&p, buf + used, total - used, &again), HTTP_PARSE_DONE);
    assert_int_equal(again, 0);

    feed_next(&p, buf, total, &used, n2, check_get);
    feed_next(&p, buf, total, &used, n3, check_chunked);
    http_parser_free(&p);
}

/* Expect a parse error with this status, whole and byte by byte. */
static void expect_status(const char *s, int status)
{
    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    for (int mode = 0; mode < 2; mode++) {
        http_parser_reset(&p);
        size_t used;
        int rc = feed_split(&p, s, strlen(s), mode ? SIZE_MAX : strlen(s), &used);
        if (rc != LL_E_PROTO || http_parser_error_status(&p) != status)
            fail_msg("%s (mode %d): rc %d status %d, want status %d", s, mode, rc,
                     http_parser_error_status(&p), status);
        assert_null(http_parser_request(&p));
    }
    http_parser_free(&p);
}

static void test_bad_requests(void **state)
{
    expect_status("GET\r\n\r\n", 400);
    expect_status("GET /\r\n\r\n", 400);
    expect_status("GET  / HTTP/1.1\r\n\r\n", 400);
    expect_status("GET / HTTP/1.1 \r\n\r\n", 400);
    expect_status("G(T / HTTP/1.1\r\n\r\n", 400);
    expect_status("GET x HTTP/1.1\r\n\r\n", 400);
    expect_status("GET / HTTX/1.1\r\n\r\n", 400);
    expect_status("GET / HTTP/2.0\r\n\r\n", 505);
    expect_status("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400);
    expect_status("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400);
    expect_status("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400);
    expect_status("GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501);
    expect_status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400);
    expect_status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX", 400);
}

static void test_limits(void **state)
{
    /* Head over 1024 bytes: 431. */
    char big[2048];
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /", 5);
    big[sizeof(big) - 1] = '\0';
    expect_status(big, 431);
    /* Body over 4096 bytes: 413, at once from Content-Length. */
    expect_status("POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n", 413);
    /* Exactly the limit is fine. */
    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    char req[5000];
    int n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nContent-Length: 4096\r\n\r\n");
    memset(req + n, 'b', 4096);
    size_t used;
    assert_int_equal(http_parser_feed(&p, req, (size_t)n + 4096, &used), HTTP_PARSE_DONE);
    assert_int_equal(http_parser_request(&p)->body_len, 4096);
    http_parser_free(&p);
    /* Chunked bodies add up: 0xF00 + 0x200 > 4096 once the second size is read. */
    http_parser_init(&p, &LIMITS);
    n = snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nF00\r\n");
    memset(req + n, 'c', 0xF00);
    n += 0xF00;
    memcpy(req + n, "\r\n200\r\n", 8);
    n += 8;
    assert_int_equal(http_parser_feed(&p, req, (size_t)n, &used), LL_E_PROTO);
    assert_int_equal(http_parser_error_status(&p), 413);
    http_parser_free(&p);
}

static void test_expect_continue(void **state)
{
    const char *s = "POST /v1/completions HTTP/1.1\r\nExpect: 100-continue\r\n"
                    "Content-Length: 2\r\n\r\n";
    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    size_t used;
    assert_int_equal(http_parser_feed(&p, s, strlen(s), &used), HTTP_PARSE_MORE);
    assert_int_equal(used, strlen(s));
    assert_int_equal(http_parser_in_body(&p), 1);
    assert_int_equal(http_parser_expects_continue(&p), 1);
    assert_int_equal(http_parser_feed(&p, "{}", 2, &used), HTTP_PARSE_DONE);
    assert_int_equal(http_parser_in_body(&p), 0);
    assert_string_equal(http_parser_request(&p)->body, "{}");
    http_parser_free(&p);
}

static void test_connection_close(void **state)
{
    const char *s = "GET /health HTTP/1.1\r\nConnection: foo, Close\r\n\r\n";
    struct http_parser p;
    http_parser_init(&p, &LIMITS);
    size_t used;
    assert_int_equal(http_parser_feed(&p, s, strlen(s), &used), HTTP_PARSE_DONE);
    assert_int_equal(http_parser_request(&p)->keep_alive, 0);
    http_parser_reset(&p);
    s = "GET /health HTTP/1.0\r\n\r\n";
    assert_int_equal(http_parser_feed(&p, s, strlen(s), &used), HTTP_PARSE_DONE);
    assert_int_equal(http_parser_request(&p)->keep_alive, 0);
    http_parser_free(&p);
}

static void test_buf(void **state)
{
    struct http_buf b;
    http_buf_init(&b);
    http_buf_puts(&b, "x=");
    http_buf_json_escape(&b, "a\"b\\c\n\x01\x7f", 8);
    http_buf_u64(&b, 0);
    http_buf_u64(&b, 18446744073709551615ULL);
    http_buf_printf(&b, "|%0200d|", 7);
    assert_int_equal(http_buf_pending(&b), 2 + 21 + 1 + 20 + 202);
    assert_memory_equal(b.data,
                        "x=a\\\"b\\\\c\\n\\u0001\\u007f"
                        "018446744073709551615|000",
                        46);
    http_buf_consume(&b, 10);
    assert_int_equal(http_buf_pending(&b), 236);
    http_buf_consume(&b, 236);
    assert_int_equal(http_buf_pending(&b), 0);
    assert_int_equal(b.len, 0);
    http_buf_free(&b);
}

TEST_MAIN(SPLIT_TEST(test_get_every_split, get_split),
          SPLIT_TEST(test_post_every_split, post_split),
          SPLIT_TEST(test_chunked_every_split, chunked_split), SPLIT_TEST(test_lf_only, lf_split),
          cmocka_unit_test(test_pipelined), cmocka_unit_test(test_bad_requests),
          cmocka_unit_test(test_limits), cmocka_unit_test(test_expect_continue),
          cmocka_unit_test(test_connection_close), cmocka_unit_test(test_buf))
