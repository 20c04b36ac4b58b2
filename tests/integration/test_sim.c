/* Integration tests for `llmload sim` over real sockets on 127.0.0.1:
 * SSE framing byte for byte, exact usage, keep-alive and pipelining,
 * non-stream bodies, every error status, each fault, /metrics, --log, and
 * clients that vanish or stop reading. Timing is only ever checked as a
 * lower bound (the machine is shared and noisy). */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "sim/api.h"
#include "workload/tokenizer.h"
#include "test.h"
#include "util/util.h"

#define IO_TIMEOUT_MS 5000

/* ---- helpers ---- */

struct resp {
    int status;
    char *raw;            /* whole response */
    size_t raw_len;
    char *headers;        /* NUL-terminated copy of the head */
    char *body;           /* decoded body (de-chunked when chunked) */
    size_t body_len;
    int chunked;
    int chunked_complete; /* saw the last (0) chunk */
};

static void resp_free(struct resp *r)
{
    free(r->raw);
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

/* Parse the first response in raw (status, head, body). */
static void resp_parse(struct resp *r)
{
    char *he = strstr(r->raw, "\r\n\r\n");
    assert_non_null(he);
    size_t hlen = (size_t)(he - r->raw);
    r->headers = ll_strndup(r->raw, hlen);
    assert_int_equal(strncmp(r->raw, "HTTP/1.1 ", 9), 0);
    r->status = (int)strtol(r->raw + 9, NULL, 10);
    const char *b = he + 4;
    size_t blen = r->raw_len - (size_t)(b - r->raw);
    r->chunked = strstr(r->headers, "Transfer-Encoding: chunked") != NULL;
    if (!r->chunked) {
        const char *cl = strstr(r->headers, "Content-Length: ");
        if (cl) {
            size_t n = (size_t)strtoul(cl + 16, NULL, 10);
            assert_true(n <= blen);
            blen = n;
        }
        r->body = ll_strndup(b, blen);
        r->body_len = blen;
        return;
    }
    r->body = ll_malloc(blen + 1);
    size_t out = 0, i = 0;
    while (i < blen) {
        char *end;
        unsigned long n = strtoul(b + i, &end, 16);
        assert_true(end > b + i);
        assert_memory_equal(end, "\r\n", 2);
        i = (size_t)(end - b) + 2;
        if (n == 0) {
            assert_true(i + 2 <= blen);
            assert_memory_equal(b + i, "\r\n", 2);
            r->chunked_complete = 1;
            break;
        }
        assert_true(i + n + 2 <= blen);
        memcpy(r->body + out, b + i, n);
        out += n;
        i += n;
        assert_memory_equal(b + i, "\r\n", 2);
        i += 2;
    }
    r->body[out] = '\0';
    r->body_len = out;
}

static void exchange(int port, const char *req, struct resp *r)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(harness_http(port, req, strlen(req), &r->raw, &r->raw_len, IO_TIMEOUT_MS), 0);
    assert_true(r->raw_len > 0);
    resp_parse(r);
}

/* A POST with Connection: close. Caller frees. */
static char *post(const char *path, const char *body)
{
    size_t n = strlen(body) + strlen(path) + 200;
    char *s = ll_malloc(n);
    snprintf(s, n,
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
             path, strlen(body), body);
    return s;
}

static void post_exchange(int port, const char *path, const char *body, struct resp *r)
{
    char *req = post(path, body);
    exchange(port, req, r);
    free(req);
}

/* Split an SSE body into the data of each event. Returns the count;
 * events[i] are malloc'd (free with free_events). Asserts the framing. */
static size_t sse_events(const char *body, char ***events)
{
    size_t n = 0, cap = 16;
    char **ev = ll_malloc(cap * sizeof(char *));
    const char *p = body;
    while (*p) {
        assert_memory_equal(p, "data: ", 6);
        const char *e = strstr(p, "\n\n");
        assert_non_null(e);
        if (n == cap) {
            cap *= 2;
            ev = ll_realloc(ev, cap * sizeof(char *));
        }
        ev[n++] = ll_strndup(p + 6, (size_t)(e - p - 6));
        p = e + 2;
    }
    *events = ev;
    return n;
}

static void free_events(char **ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ev[i]);
    free(ev);
}

/* Output token i of completion request number num under seed. */
static void token_text(uint64_t seed, uint64_t num, uint32_t i, char *buf, size_t len)
{
    size_t n = tokenizer_output_token(api_token_seed(seed, num), i, buf, len);
    assert_true(n >= 2 && n < len);
}

static json_t *parse_json(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %s", e.text, s);
    return j;
}

static json_int_t jint(json_t *root, const char *a, const char *b)
{
    json_t *v = json_object_get(root, a);
    if (b)
        v = json_object_get(v, b);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

/* Start harness_cur_sim with args (each test's teardown stops it, also
 * after a failed assertion). Returns it. */
static struct harness_sim *start_sim(const char *const *args)
{
    harness_cur_sim_start(args);
    return &harness_cur_sim;
}

/* start_sim with args, then one exchange (post_exchange) of body to path
 * into *r; the sim is left running. Returns it. */
static struct harness_sim *start_post(const char *const *args, const char *path, const char *body,
                                      struct resp *r)
{
    struct harness_sim *s = start_sim(args);
    post_exchange(s->port, path, body, r);
    return s;
}

/* start_sim with args and --log into the test's temporary directory
 * (harness_log_args; harness_sim_tmp_teardown removes it): logpath gets
 * the log's path. Returns the sim. */
static struct harness_sim *start_logged_sim(const char *const *args, char *logpath, size_t len)
{
    struct harness_argv a = {.n = 0};
    harness_log_args(&a, args, "sim.jsonl", logpath, len);
    return start_sim(a.v);
}

/* The sim's log at logpath holds needle. */
static void assert_log_has(const char *logpath, const char *needle)
{
    char *log = harness_read_file(logpath, NULL);
    assert_non_null(log);
    if (strstr(log, needle) == NULL)
        fail_msg("the sim's log lacks %s:\n%s", needle, log);
    free(log);
}

static int connect_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
    assert_int_equal(harness_send_all(fd, s, n, NULL), 0);
}

/* Read from fd until it closes or IO_TIMEOUT_MS of silence. */
static char *read_all(int fd, size_t *len)
{
    size_t n = 0, cap = 4096;
    char *buf = ll_malloc(cap);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, IO_TIMEOUT_MS) <= 0)
            break;
        if (n + 4096 > cap) {
            cap *= 2;
            buf = ll_realloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Value of the sample line that starts with prefix in a /metrics body. */
static double metric(const char *body, const char *prefix)
{
    const char *p = body;
    while (p && *p) {
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            const char *eol = strchr(p, '\n');
            const char *q = eol - 1;
            while (q > p && *q != ' ')
                q--;
            return strtod(q + 1, NULL);
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    fail_msg("metric %s not found", prefix);
    return -1;
}

static uint64_t mono_ns(void)
{
    return ll_now_ns();
}

/* ---- tests ---- */

/* A chat stream, byte for byte: headers, chunk framing, every event. */
static void test_stream_chat_exact(void **state)
{
    const char *args[] = {"--profile", "instant", "--seed", "7", NULL};
    struct resp r;
    struct harness_sim *s = start_post(
        args, "/v1/chat/completions",
        "{\"model\":\"my-model\",\"messages\":[{\"role\":\"system\",\"content\":\"hello world\"},"
        "{\"role\":\"user\",\"content\":\"foo\"}],\"stream\":true,\"max_tokens\":5,"
        "\"ignore_eos\":true,\"stream_options\":{\"include_usage\":true}}",
        &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "\r\nContent-Type: text/event-stream"));
    assert_non_null(strstr(r.headers, "\r\nServer: llmload-sim/"));
    assert_int_equal(r.chunked, 1);
    assert_int_equal(r.chunked_complete, 1);
    /* Each SSE event is its own HTTP chunk: 5 tokens + finish + usage + DONE. */
    size_t chunks = 0;
    for (const char *p = strstr(r.raw, "\r\n\r\n") + 4; (p = strstr(p, "\r\ndata: ")) != NULL; p++)
        chunks++;
    assert_int_equal(chunks, 8);

    const char *created = strstr(r.body, "\"created\":");
    assert_non_null(created);
    long long ts = strtoll(created + 10, NULL, 10);
    char head[256];
    snprintf(head, sizeof(head),
             "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":%lld,"
             "\"model\":\"my-model\",", ts);
    struct http_buf want;
    http_buf_init(&want);
    for (uint32_t i = 0; i < 5; i++) {
        char tok[8];
        token_text(7, 1, i, tok, sizeof(tok));
        http_buf_printf(&want,
                        "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},"
                        "\"logprobs\":null,\"finish_reason\":null}]}\n\n", head, tok);
    }
    http_buf_printf(&want, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
                           "\"finish_reason\":\"length\"}]}\n\n", head);
    /* "hello world" + "\n" + "foo": hell|o worl|d foo = 5 tokens. */
    http_buf_printf(&want, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
                           "\"completion_tokens\":5,\"total_tokens\":10,"
                           "\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n", head);
    http_buf_puts(&want, "data: [DONE]\n\n");
    assert_int_equal(r.body_len, want.len);
    assert_memory_equal(r.body, want.data, want.len);
    http_buf_free(&want);
    resp_free(&r);
    assert_int_equal(harness_sim_stop_status(s), 0);
}

/* A completions stream without usage, and a non-stream completion. */
static void test_completions(void **state)
{
    const char *args[] = {"--profile", "instant", "--seed", "3", NULL};
    struct resp r;
    struct harness_sim *s = start_post(
        args, "/v1/completions",
        "{\"prompt\":\"abcdefghij\",\"stream\":true,\"max_tokens\":3,\"ignore_eos\":true}", &r);
    assert_int_equal(r.status, 200);
    char **ev;
    size_t n = sse_events(r.body, &ev);
    assert_int_equal(n, 5); /* 3 tokens, finish, [DONE]: no usage unless asked */
    for (size_t i = 0; i < 3; i++) {
        json_t *j = parse_json(ev[i]);
        assert_string_equal(json_string_value(json_object_get(j, "object")), "text_completion");
        json_t *c0 = json_array_get(json_object_get(j, "choices"), 0);
        char tok[8];
        token_text(3, 1, (uint32_t)i, tok, sizeof(tok));
        assert_string_equal(json_string_value(json_object_get(c0, "text")), tok);
        assert_true(json_is_null(json_object_get(c0, "finish_reason")));
        json_decref(j);
    }
    json_t *fin = parse_json(ev[3]);
    json_t *c0 = json_array_get(json_object_get(fin, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "finish_reason")), "length");
    json_decref(fin);
    assert_string_equal(ev[4], "[DONE]");
    free_events(ev, n);
    resp_free(&r);

    /* Non-stream: the text is the same tokens for request number 2. */
    post_exchange(
        s->port, "/v1/completions",
        "{\"model\":\"x\",\"prompt\":[\"abcdefghij\"],\"max_tokens\":4,\"ignore_eos\":true}", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "Content-Type: application/json"));
    json_t *j = parse_json(r.body);
    assert_string_equal(json_string_value(json_object_get(j, "object")), "text_completion");
    assert_string_equal(json_string_value(json_object_get(j, "id")), "cmpl-2");
    assert_string_equal(json_string_value(json_object_get(j, "model")), "x");
    char text[64] = "";
    for (uint32_t i = 0; i < 4; i++) {
        char tok[8];
        token_text(3, 2, i, tok, sizeof(tok));
        strncat(text, tok, sizeof(text) - strlen(text) - 1);
    }
    c0 = json_array_get(json_object_get(j, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "text")), text);
    assert_int_equal(tokenizer_count(text, strlen(text)), 4);
    assert_int_equal(jint(j, "usage", "prompt_tokens"), 3);
    assert_int_equal(jint(j, "usage", "completion_tokens"), 4);
    assert_int_equal(jint(j, "usage", "total_tokens"), 7);
    json_decref(j);
    resp_free(&r);

    /* Non-stream chat: a chat.completion with a message. */
    post_exchange(
        s->port, "/v1/chat/completions",
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a b\"}]}],"
        "\"max_completion_tokens\":2,\"ignore_eos\":true}",
        &r);
    assert_int_equal(r.status, 200);
    j = parse_json(r.body);
    assert_string_equal(json_string_value(json_object_get(j, "object")), "chat.completion");
    assert_string_equal(json_string_value(json_object_get(j, "model")), "llmload-sim");
    c0 = json_array_get(json_object_get(j, "choices"), 0);
    json_t *msg = json_object_get(c0, "message");
    assert_string_equal(json_string_value(json_object_get(msg, "role")), "assistant");
    assert_int_equal(jint(j, "usage", "prompt_tokens"), 2);
    assert_int_equal(jint(j, "usage", "completion_tokens"), 2);
    json_decref(j);
    resp_free(&r);
}

/* Keep-alive: several requests pipelined on one connection, one of them
 * streamed, sent in one write and then byte by byte. */
static void test_keepalive_pipelined(void **state)
{
    const char *args[] = {"--profile", "instant", NULL};
    struct harness_sim *s = start_sim(args);
    const char *body = "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":2,\"ignore_eos\":true}";
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"
                     "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %zu\r\n\r\n%s"
                     "GET /v1/models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
                     strlen(body), body);
    for (int mode = 0; mode < 2; mode++) {
        int fd = connect_port(s->port);
        if (mode == 0) {
            send_all(fd, req, (size_t)n);
        } else {
            for (int i = 0; i < n; i++) {
                send_all(fd, req + i, 1);
                if (i % 16 == 0)
                    usleep(1000);
            }
        }
        size_t len;
        char *all = read_all(fd, &len);
        close(fd);
        const char *a = strstr(all, "HTTP/1.1 200 OK");
        assert_non_null(a);
        const char *b = strstr(a + 1, "HTTP/1.1 200 OK");
        assert_non_null(b);
        assert_non_null(strstr(b, "text/event-stream"));
        const char *done = strstr(b, "data: [DONE]\n\n\r\n0\r\n\r\n");
        assert_non_null(done);
        const char *c = strstr(done, "HTTP/1.1 200 OK");
        assert_non_null(c);
        assert_non_null(strstr(c, "\"object\":\"list\""));
        assert_null(strstr(c + 1, "HTTP/1.1"));
        free(all);
    }
}

static void expect_error(int port, const char *raw, int status, const char *code)
{
    struct resp r;
    exchange(port, raw, &r);
    if (r.status != status)
        fail_msg("want %d, got %d for %s", status, r.status, raw);
    json_t *j = parse_json(r.body);
    json_t *e = json_object_get(j, "error");
    assert_true(json_is_object(e));
    assert_true(json_is_string(json_object_get(e, "message")));
    assert_true(json_is_string(json_object_get(e, "type")));
    if (code)
        assert_string_equal(json_string_value(json_object_get(e, "code")), code);
    json_decref(j);
    resp_free(&r);
}

static void expect_post_error(int port, const char *path, const char *body, int status,
                              const char *code)
{
    char *req = post(path, body);
    expect_error(port, req, status, code);
    free(req);
}

/* A body the sim refuses: where it is posted, and the status and error
 * code it must answer. */
struct refusal {
    const char *path, *body;
    int status;
    const char *code;
};

/* POST /tokenize, llama.cpp's: the content's token IDs under the sim's
 * tokenizer (one per word); its malformed bodies are in test_errors. */
static void test_tokenize(void **state)
{
    const char *args[] = {"--profile", "instant", NULL};
    struct resp r;
    const char *text = "the quick brown fox";
    start_post(args, "/tokenize", "{\"content\":\"the quick brown fox\",\"add_special\":false}",
               &r);
    assert_int_equal(r.status, 200);
    json_t *j = json_loadb(r.body, r.body_len, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "tokens")),
                     tokenizer_count(text, strlen(text)));
    json_decref(j);
    resp_free(&r);
}

static void test_errors(void **state)
{
    const char *args[] = {"--profile", "instant", "--max-body", "2000", "--kv-tokens", "64", NULL};
    struct harness_sim *s = start_sim(args);
    static const struct refusal bad[] = {
        {"/v1/completions", "{bad json", 400, "invalid_json"},
        {"/v1/completions", "[1,2]", 400, "invalid_json"},
        {"/v1/completions", "{}", 400, "missing_field"},
        {"/v1/completions", "{\"prompt\":5}", 400, "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":\"ten\"}", 400, "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":0}", 400, "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"stream\":1}", 400, "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"n\":2}", 400, "unsupported"},
        /* Past int64 and past a double: JSON, refused by the field. */
        {"/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":99999999999999999999}", 400,
         "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":1e400}", 400, "invalid_field"},
        {"/v1/completions", "{\"prompt\":\"x\",\"n\":99999999999999999999}", 400, "unsupported"},
        /* A repeated key counts by its last value. */
        {"/v1/completions", "{\"prompt\":\"x\",\"prompt\":5}", 400, "invalid_field"},
        {"/v1/chat/completions", "{\"messages\":[]}", 400, "invalid_field"},
        {"/v1/chat/completions", "{\"messages\":[{\"content\":7}]}", 400, "invalid_field"},
        {"/v1/chat/completions", "{\"prompt\":\"x\"}", 400, "missing_field"},
        /* The Responses API's body: input and max_output_tokens, by those names. */
        {"/v1/responses", "{\"messages\":[{\"content\":\"x\"}]}", 400, "missing_field"},
        {"/v1/responses", "{\"input\":[]}", 400, "invalid_field"},
        {"/v1/responses", "{\"input\":5}", 400, "invalid_field"},
        {"/v1/responses", "{\"input\":[\"x\"]}", 400, "invalid_field"},
        {"/v1/responses", "{\"input\":\"x\",\"max_output_tokens\":0}", 400, "invalid_field"},
        {"/v1/responses", "{\"input\":\"x\",\"max_output_tokens\":\"ten\"}", 400, "invalid_field"},
        /* llama.cpp's /tokenize (test_tokenize). */
        {"/tokenize", "{bad", 400, "invalid_json"},
        {"/tokenize", "{}", 400, "missing_field"},
        {"/tokenize", "{\"content\":5}", 400, "invalid_field"},
        {"/tokenize", "{\"content\":\"x\",\"add_special\":1}", 400, "invalid_field"},
        {"/tokenize", "{\"content\":\"x\",\"with_pieces\":true}", 400, "unsupported"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++)
        expect_post_error(s->port, bad[i].path, bad[i].body, bad[i].status, bad[i].code);
    const char *c = "/v1/completions";
    /* 80 one-letter words: 80 prompt tokens > 64 KV tokens. */
    char big[400] = "{\"prompt\":\"";
    for (int i = 0; i < 80; i++)
        strncat(big, "a ", sizeof(big) - strlen(big) - 1);
    strncat(big, "\"}", sizeof(big) - strlen(big) - 1);
    expect_post_error(s->port, c, big, 400, "context_length_exceeded");
    /* Body over --max-body 2000. */
    char *huge = ll_malloc(3000);
    memset(huge, ' ', 2999);
    huge[2999] = '\0';
    expect_post_error(s->port, c, huge, 413, "body_too_large");
    free(huge);
    expect_error(s->port, "GET /v2/nothing HTTP/1.1\r\nConnection: close\r\n\r\n", 404,
                 "not_found");
    expect_error(s->port, "GET /v1/completions HTTP/1.1\r\nConnection: close\r\n\r\n", 405,
                 "method_not_allowed");
    expect_error(s->port, "POST /health HTTP/1.1\r\nConnection: close\r\n\r\n", 405,
                 "method_not_allowed");
    /* Bad HTTP: 400, then the server closes even though we did not ask. */
    struct resp r;
    exchange(s->port, "GARBAGE\r\n\r\n", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.headers, "Connection: close"));
    resp_free(&r);
    exchange(s->port, "GET / HTTP/3.0\r\n\r\n", &r);
    assert_int_equal(r.status, 505);
    resp_free(&r);
    /* Still healthy. */
    exchange(s->port, "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

/* 429 from the queue bound: one running, one waiting, the third refused. */
static void test_queue_full(void **state)
{
    const char *args[] = {"--max-num-seqs", "1", "--queue-limit", "1", "--step-base", "50ms", NULL};
    struct harness_sim *s = start_sim(args);
    const char *body = "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":100,\"ignore_eos\":true}";
    char *req = post("/v1/completions", body);
    int fd1 = connect_port(s->port);
    send_all(fd1, req, strlen(req));
    usleep(100 * 1000);
    int fd2 = connect_port(s->port);
    send_all(fd2, req, strlen(req));
    usleep(100 * 1000);
    struct resp r;
    exchange(s->port, req, &r);
    assert_int_equal(r.status, 429);
    assert_non_null(strstr(r.headers, "\r\nRetry-After: 1"));
    resp_free(&r);
    close(fd1);
    close(fd2);
    free(req);
}

/* Start a sim with one fault at fraction 1 and run one request through it. */
static void fault_exchange(const char *fault, const char *extra, const char *path,
                           const char *body, struct resp *r)
{
    const char *args[] = {"--profile", "instant", "--fault", fault, extra ? extra : NULL,
                          extra ? "300ms" : NULL, NULL};
    struct harness_sim *s = start_post(args, path, body, r);
    harness_sim_stop(s);
}

static const char *STREAM10 =
    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,\"max_tokens\":10,"
    "\"ignore_eos\":true}";

static int count_prefix(char **ev, size_t n, const char *needle)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (strstr(ev[i], needle))
            k++;
    return k;
}

static void test_faults(void **state)
{
    struct resp r;
    const char *specs[3] = {"500:1", "503:1", "429:1"};
    const int statuses[3] = {500, 503, 429};
    for (int i = 0; i < 3; i++) {
        fault_exchange(specs[i], NULL, "/v1/chat/completions", STREAM10, &r);
        assert_int_equal(r.status, statuses[i]);
        resp_free(&r);
    }
    /* cut: half the tokens, then the connection closes: no finish, no [DONE]. */
    fault_exchange("cut:1", NULL, "/v1/chat/completions", STREAM10, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.chunked_complete, 0);
    char **ev;
    size_t n = sse_events(r.body, &ev);
    assert_int_equal(n, 5);
    assert_int_equal(count_prefix(ev, n, "\"content\":"), 5);
    assert_int_equal(count_prefix(ev, n, "[DONE]"), 0);
    free_events(ev, n);
    resp_free(&r);
    /* malformed: one event is not JSON; the stream still completes. */
    fault_exchange("malformed:1", NULL, "/v1/chat/completions", STREAM10, &r);
    assert_int_equal(r.chunked_complete, 1);
    n = sse_events(r.body, &ev);
    assert_int_equal(n, 10 + 1 + 1 + 1);
    int bad = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        json_error_t e;
        json_t *j = json_loads(ev[i], 0, &e);
        if (!j)
            bad++;
        json_decref(j);
    }
    assert_int_equal(bad, 1);
    assert_string_equal(ev[n - 1], "[DONE]");
    free_events(ev, n);
    resp_free(&r);
    /* role-only: the first chunk has the role and no content. */
    fault_exchange("role-only:1", NULL, "/v1/chat/completions", STREAM10, &r);
    n = sse_events(r.body, &ev);
    assert_int_equal(n, 1 + 10 + 1 + 1);
    assert_non_null(strstr(ev[0], "\"delta\":{\"role\":\"assistant\"}"));
    assert_null(strstr(ev[0], "content"));
    assert_int_equal(count_prefix(ev, n, "\"content\":"), 10);
    free_events(ev, n);
    resp_free(&r);
    /* reasoning: the first 5 tokens as reasoning_content, then content. */
    fault_exchange("reasoning:1", NULL, "/v1/chat/completions", STREAM10, &r);
    n = sse_events(r.body, &ev);
    assert_int_equal(n, 10 + 1 + 1);
    for (size_t i = 0; i < 10; i++)
        assert_non_null(strstr(ev[i], i < 5 ? "{\"reasoning_content\":\"" : "{\"content\":\""));
    free_events(ev, n);
    resp_free(&r);
    /* slow-headers: nothing for at least the delay. */
    uint64_t t0 = mono_ns();
    fault_exchange("slow-headers:1", "--slow-headers-delay", "/v1/chat/completions", STREAM10, &r);
    assert_true(mono_ns() - t0 >= 300 * LL_NS_PER_MS);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.chunked_complete, 1);
    resp_free(&r);
}

static void test_tokens_per_event(void **state)
{
    const char *args[] = {"--profile", "instant", "--tokens-per-event", "4", NULL};
    struct resp r;
    start_post(args, "/v1/chat/completions", STREAM10, &r);
    char **ev;
    size_t n = sse_events(r.body, &ev);
    assert_int_equal(n, 3 + 1 + 1); /* 4 + 4 + 2 tokens, finish, [DONE] */
    for (size_t i = 0; i < 3; i++) {
        json_t *j = parse_json(ev[i]);
        json_t *d = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "delta");
        const char *t = json_string_value(json_object_get(d, "content"));
        assert_int_equal(tokenizer_count(t, strlen(t)), i < 2 ? 4 : 2);
        json_decref(j);
    }
    free_events(ev, n);
    resp_free(&r);
}

static void test_metrics_and_log(void **state)
{
    char logpath[512];
    const char *args[] = {"--profile", "instant", NULL};
    struct harness_sim *s = start_logged_sim(args, logpath, sizeof logpath);
    const char *prompts[3] = {"a", "hello world", "abcdefghi jk"}; /* 1, 4, 4 tokens */
    for (int i = 0; i < 3; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"prompt\":\"%s\",\"stream\":true,\"max_tokens\":4,\"ignore_eos\":true}",
                 prompts[i]);
        struct resp r;
        post_exchange(s->port, "/v1/completions", body, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
    }
    struct resp m;
    exchange(s->port, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n", &m);
    assert_int_equal(m.status, 200);
    assert_non_null(strstr(m.headers, "text/plain; version=0.0.4"));
    /* Every line is a comment or "name{labels} value". */
    for (const char *p = m.body; *p;) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        if (*p != '#') {
            const char *brace = memchr(p, '{', (size_t)(eol - p));
            assert_non_null(brace);
            assert_memory_equal(p, "vllm:", 5);
            const char *sp = memchr(brace, ' ', (size_t)(eol - brace));
            assert_non_null(sp);
            char *end;
            strtod(sp + 1, &end);
            assert_true(end == eol);
        }
        p = eol + 1;
    }
    const char *lab = "{model_name=\"llmload-sim\"}";
    char key[128];
    snprintf(key, sizeof(key), "vllm:generation_tokens_total%s", lab);
    assert_true(metric(m.body, key) == 12);
    snprintf(key, sizeof(key), "vllm:prompt_tokens_total%s", lab);
    assert_true(metric(m.body, key) == 9);
    assert_true(metric(m.body, "vllm:request_success_total{finished_reason=\"length\"") == 3);
    snprintf(key, sizeof(key), "vllm:time_to_first_token_seconds_count%s", lab);
    assert_true(metric(m.body, key) == 3);
    assert_true(metric(m.body, "vllm:time_to_first_token_seconds_bucket{model_name=\"llmload-sim\",le=\"+Inf\"}") == 3);
    snprintf(key, sizeof(key), "vllm:num_requests_running%s", lab);
    assert_true(metric(m.body, key) == 0);
    assert_non_null(strstr(m.body, "# TYPE vllm:kv_cache_usage_perc gauge\n"));
    assert_non_null(strstr(m.body, "# TYPE vllm:num_preemptions_total counter\n"));
    resp_free(&m);
    assert_int_equal(harness_sim_stop_status(s), 0);

    size_t len;
    char *log = harness_read_file(logpath, &len);
    assert_non_null(log);
    const uint32_t want_prompt[3] = {1, 4, 4};
    int lines = 0;
    for (char *p = log; *p;) {
        char *eol = strchr(p, '\n');
        assert_non_null(eol);
        *eol = '\0';
        json_t *j = parse_json(p);
        char id[32];
        snprintf(id, sizeof(id), "cmpl-%d", lines + 1);
        assert_string_equal(json_string_value(json_object_get(j, "id")), id);
        assert_string_equal(json_string_value(json_object_get(j, "path")), "/v1/completions");
        assert_int_equal(jint(j, "status", NULL), 200);
        assert_int_equal(jint(j, "prompt_tokens", NULL), want_prompt[lines]);
        assert_int_equal(jint(j, "output_tokens", NULL), 4);
        assert_int_equal(jint(j, "cached_tokens", NULL), 0);
        json_int_t a = jint(j, "arrival_ns", NULL), f = jint(j, "first_token_ns", NULL),
                   l = jint(j, "last_token_ns", NULL), e = jint(j, "end_ns", NULL);
        assert_true(a > 0 && a <= f && f <= l && l <= e);
        assert_true((uint64_t)e <= ll_now_ns());
        assert_null(json_object_get(j, "fault"));
        json_decref(j);
        lines++;
        p = eol + 1;
    }
    assert_int_equal(lines, 3);
    free(log);
    harness_tmp_end();
}

/* n one-letter words: n prompt tokens under the words tokenizer. */
static void words(char *buf, size_t len, int n)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        strncat(buf, i ? " a" : "a", len - strlen(buf) - 1);
}

/* POST to path a body of fmt (which holds one %s: the prompt) with a
 * prompt of n words (words), into *r. Fails the test, naming the path and
 * n, unless the answer's status is want. */
static void post_words(int port, const char *path, const char *fmt, int n, int want, struct resp *r)
{
    char prompt[128], body[512];
    words(prompt, sizeof prompt, n);
    snprintf(body, sizeof body, fmt, prompt);
    post_exchange(port, path, body, r);
    if (r->status != want)
        fail_msg("POST %s with a prompt of %d words: status %d, want %d", path, n, r->status, want);
}

/* --context-tokens 20: /v1/models says so; a prompt of 20 or more gets
 * llama.cpp's 400; an output that would pass 20 ends there as "length",
 * streamed or not, ignore_eos or not; the log keeps max_tokens and the
 * finish_reason sent. */
static void test_context_limit(void **state)
{
    char logpath[512];
    const char *args[] = {"--profile", "instant", "--context-tokens", "20", NULL};
    struct harness_sim *s = start_logged_sim(args, logpath, sizeof logpath);
    struct resp r;
    exchange(s->port, "GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    json_t *j = parse_json(r.body);
    json_t *m0 = json_array_get(json_object_get(j, "data"), 0);
    assert_int_equal(jint(m0, "max_model_len", NULL), 20);
    assert_int_equal(jint(m0, "meta", "n_vocab"), TOKENIZER_ID_MAX + 1);
    json_decref(j);
    resp_free(&r);

    /* 15 + 10 > 20: a stream of 5 tokens, then "length". */
    post_words(s->port, "/v1/completions",
               "{\"prompt\":\"%s\",\"stream\":true,\"max_tokens\":10,"
               "\"ignore_eos\":true,\"stream_options\":{\"include_usage\":true}}",
               15, 200, &r);
    char **ev;
    size_t n = sse_events(r.body, &ev);
    assert_int_equal(n, 5 + 3); /* 5 tokens, the finish, usage, [DONE] */
    j = parse_json(ev[5]);
    json_t *c0 = json_array_get(json_object_get(j, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "finish_reason")), "length");
    json_decref(j);
    j = parse_json(ev[6]);
    assert_int_equal(jint(j, "usage", "prompt_tokens"), 15);
    assert_int_equal(jint(j, "usage", "completion_tokens"), 5);
    json_decref(j);
    free_events(ev, n);
    resp_free(&r);

    /* Not streamed, natural length: 19 + 1 = 20 at most. */
    post_words(s->port, "/v1/chat/completions",
               "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}],"
               "\"max_tokens\":50}",
               19, 200, &r);
    j = parse_json(r.body);
    c0 = json_array_get(json_object_get(j, "choices"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "finish_reason")), "length");
    assert_int_equal(jint(j, "usage", "completion_tokens"), 1);
    json_decref(j);
    resp_free(&r);

    /* Within the context: max_tokens as asked. */
    post_words(s->port, "/v1/completions",
               "{\"prompt\":\"%s\",\"max_tokens\":10,\"ignore_eos\":true}", 10, 200, &r);
    j = parse_json(r.body);
    assert_int_equal(jint(j, "usage", "completion_tokens"), 10);
    json_decref(j);
    resp_free(&r);

    /* A prompt of 20: no room for one token. */
    post_words(s->port, "/v1/completions", "{\"prompt\":\"%s\",\"max_tokens\":1}", 20, 400, &r);
    assert_non_null(strstr(r.body, "\"code\":\"context_length_exceeded\""));
    assert_non_null(strstr(r.body, "request (20 tokens) exceeds the available context size "
                                   "(20 tokens), try increasing it"));
    resp_free(&r);
    assert_int_equal(harness_sim_stop_status(s), 0);

    char *log = harness_read_file(logpath, NULL);
    assert_non_null(log);
    static const struct {
        int status;
        int max_tokens, output_tokens;
        const char *finish;
    } want[] = {
        {200, 10, 5, "length"}, {200, 50, 1, "length"}, {200, 10, 10, "length"}, {400, 1, 0, NULL}};
    size_t lines = 0;
    for (char *p = log; *p; lines++) {
        char *eol = strchr(p, '\n');
        assert_non_null(eol);
        *eol = '\0';
        assert_true(lines < LL_ARRAY_LEN(want));
        j = parse_json(p);
        assert_int_equal(jint(j, "status", NULL), want[lines].status);
        assert_int_equal(jint(j, "max_tokens", NULL), want[lines].max_tokens);
        assert_int_equal(jint(j, "output_tokens", NULL), want[lines].output_tokens);
        json_t *f = json_object_get(j, "finish_reason");
        if (want[lines].finish)
            assert_string_equal(json_string_value(f), want[lines].finish);
        else
            assert_true(json_is_null(f));
        json_decref(j);
        p = eol + 1;
    }
    assert_int_equal(lines, LL_ARRAY_LEN(want));
    free(log);
    harness_tmp_end();
}

/* A client that vanishes mid-stream: cancelled, logged, server fine. */
static void test_disconnect_midstream(void **state)
{
    char logpath[512];
    const char *args[] = {"--step-base", "10ms", NULL};
    struct harness_sim *s = start_logged_sim(args, logpath, sizeof logpath);
    char *req = post("/v1/completions",
                     "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":100000,\"ignore_eos\":true}");
    int fd = connect_port(s->port);
    send_all(fd, req, strlen(req));
    free(req);
    char buf[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    assert_true(poll(&p, 1, IO_TIMEOUT_MS) == 1);
    assert_true(read(fd, buf, sizeof(buf)) > 0);
    close(fd);
    /* The request leaves the batch. */
    int running = -1;
    for (int i = 0; i < 100 && running != 0; i++) {
        usleep(20 * 1000);
        struct resp m;
        exchange(s->port, "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n", &m);
        running = (int)metric(m.body, "vllm:num_requests_running{");
        resp_free(&m);
    }
    assert_int_equal(running, 0);
    assert_int_equal(harness_sim_stop_status(s), 0);
    assert_log_has(logpath, "\"error\":\"client_gone\"");
    harness_tmp_end();
}

/* A client that stops reading is dropped at --conn-buffer. */
static void test_slow_reader_dropped(void **state)
{
    char logpath[512];
    const char *args[] = {"--profile", "instant", "--conn-buffer", "65536", NULL};
    struct harness_sim *s = start_logged_sim(args, logpath, sizeof logpath);
    char *req = post("/v1/completions",
                     "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":100000,\"ignore_eos\":true}");
    int fd = connect_port(s->port);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    send_all(fd, req, strlen(req));
    free(req);
    usleep(300 * 1000);
    struct resp r;
    exchange(s->port, "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    close(fd);
    assert_int_equal(harness_sim_stop_status(s), 0);
    assert_log_has(logpath, "\"error\":\"buffer_overflow\"");
    harness_tmp_end();
}

/* Start a sim with args, wait delay_ms, then time one completion request
 * from the moment the wait began (from_start = 0) or from the sim's start
 * (from_start = 1): it must take at least 600 ms. */
static void stall_case(const char *const *args, unsigned delay_ms, int from_start)
{
    uint64_t t0 = mono_ns();
    struct harness_sim *s = start_sim(args);
    harness_sleep_ms(delay_ms);
    if (!from_start)
        t0 = mono_ns();
    struct resp r;
    post_exchange(s->port, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":1}", &r);
    assert_int_equal(r.status, 200);
    assert_true(mono_ns() - t0 >= 600 * LL_NS_PER_MS);
    resp_free(&r);
}

/* --stall-at 0 --stall-for 600ms: nothing is generated before the stall
 * ends (checked as a lower bound only). */
static void test_stall(void **state)
{
    const char *args[] = {"--stall-at", "0", "--stall-for", "600ms", NULL};
    stall_case(args, 0, 1);
}

/* --stall-from first-request: the stall counts from the first completion
 * request, however long after the start it comes. 400 ms after the start,
 * a request to a sim with --stall-at 0 --stall-for 600ms waits the whole
 * 600 ms (counted from the start it would wait about 200). */
static void test_stall_from_first_request(void **state)
{
    const char *args[] = {"--stall-at", "0", "--stall-for", "600ms", "--stall-from",
                          "first-request", NULL};
    stall_case(args, 400, 0);
}

static void test_cli(void **state)
{
    int st;
    char *out, *err;
    const char *help[] = {"sim", "--help", NULL};
    assert_int_equal(harness_run(help, 10, &st, &out, &err), 0);
    assert_int_equal(st, 0);
    /* clang-format off */
    const char *flags[] = {"--host", "--port", "--profile", "--model-name", "--duration", "--seed",
                           "--log", "--max-num-seqs", "--kv-tokens", "--block-tokens",
                           "--prefill-chunk", "--step-base", "--step-per-prefill-token",
                           "--step-per-seq", "--queue-limit", "--output-len-median",
                           "--output-len-sigma", "--no-prefix-cache", "--stall-at", "--stall-for", "--stall-from",
                           "--fault", "--slow-headers-delay", "--role-chunk",
                           "--tokens-per-event", "--explain", "--context-tokens",
                           "--vocab"};
    /* clang-format on */
    for (size_t i = 0; i < LL_ARRAY_LEN(flags); i++)
        if (!strstr(out, flags[i]))
            fail_msg("--help does not list %s", flags[i]);
    free(out);
    free(err);

    const char *bad[] = {"sim", "--port", "http", NULL};
    assert_int_equal(harness_run(bad, 10, &st, &out, &err), 0);
    assert_int_equal(st, 2);
    assert_non_null(strstr(err, "--port"));
    assert_non_null(strstr(err, "\"http\""));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    free(out);
    free(err);

    static const char *const bad_values[][3] = {
        {"--context-tokens", "1", "from 2 to"},
        {"--context-tokens", "x", "\"x\""},
        {"--vocab", "0", "from 1 to 262144"},
        {"--vocab", "262145", "\"262145\""},
        {"--vocab", "-5", "\"-5\""},
        /* the profile's check named its field, not the flag */
        {"--output-len-median", "1e20", "--output-len-median: must be in [1, 1e9]"},
        {"--step-per-seq", "5", "must be at most 1 s"},
        {"--kv-tokens", "8", "one block of --block-tokens"},
        {"--port", "0x10", "\"0x10\""}}; /* was port 16 */
    for (size_t i = 0; i < LL_ARRAY_LEN(bad_values); i++) {
        const char *a[] = {"sim", bad_values[i][0], bad_values[i][1], NULL};
        assert_int_equal(harness_run(a, 10, &st, &out, &err), 0);
        assert_int_equal(st, 2);
        if (!strstr(err, bad_values[i][0]) || !strstr(err, bad_values[i][2]))
            fail_msg("%s %s: %s", bad_values[i][0], bad_values[i][1], err);
        assert_null(strchr(strchr(err, '\n') + 1, '\n'));
        free(out);
        free(err);
    }

    /* sim reads whole option names only, unlike the other commands
     * (docs/run.md says so): a cut one is unknown, not --duration. */
    HARNESS_EXPECT_USAGES({{"sim", "--port", "0", "--dur", "1"},
                           "unknown option \"--dur\" (see llmload sim --help)"});

    /* exited 3, as if it could not run */
    HARNESS_EXPECT_USAGES({{"sim", "--port", "0", "--log", "/nonexistent/dir/log"},
                           "sim: --log: cannot open \"/nonexistent/dir/log\""});

    const char *badf[] = {"sim", "--fault", "explode:0.5", NULL};
    assert_int_equal(harness_run(badf, 10, &st, &out, &err), 0);
    assert_int_equal(st, 2);
    assert_non_null(strstr(err, "explode"));
    free(out);
    free(err);

    const char *explain[] = {"sim", "--explain", "--max-num-seqs", "7", NULL};
    assert_int_equal(harness_run(explain, 10, &st, &out, &err), 0);
    assert_int_equal(st, 0);
    assert_true(strlen(out) > 0);
    free(out);
    free(err);

    /* --duration: exits by itself, status 0. */
    const char *dur[] = {"sim", "--port", "0", "--duration", "200ms", NULL};
    assert_int_equal(harness_run(dur, 10, &st, &out, &err), 0);
    assert_int_equal(st, 0);
    assert_int_equal(strncmp(out, "http://127.0.0.1:", 17), 0);
    free(out);
    free(err);
}

/* clang-format off */
HARNESS_MAIN(cmocka_unit_test_teardown(test_stream_chat_exact, harness_sim_teardown),
             cmocka_unit_test_teardown(test_completions, harness_sim_teardown),
             cmocka_unit_test_teardown(test_keepalive_pipelined, harness_sim_teardown),
             cmocka_unit_test_teardown(test_errors, harness_sim_teardown),
             cmocka_unit_test_teardown(test_tokenize, harness_sim_teardown),
             cmocka_unit_test_teardown(test_queue_full, harness_sim_teardown),
             cmocka_unit_test_teardown(test_faults, harness_sim_teardown),
             cmocka_unit_test_teardown(test_tokens_per_event, harness_sim_teardown),
             cmocka_unit_test_teardown(test_metrics_and_log, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_context_limit, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_disconnect_midstream, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_slow_reader_dropped, harness_sim_tmp_teardown),
             cmocka_unit_test_teardown(test_stall, harness_sim_teardown),
             cmocka_unit_test_teardown(test_stall_from_first_request, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cli, harness_sim_teardown))
/* clang-format on */
