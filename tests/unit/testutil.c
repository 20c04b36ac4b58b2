/* testutil.c: helpers shared by the unit tests (see testutil.h). */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sse.h"
#include "metrics/prom.h"
#include "sim/engine.h"
#include "test.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/dist.h"

const char *test_data_path(const char *dir, const char *name, char *buf, size_t len)
{
    const char *root = getenv("LLMLOAD_DATA");
    int n = snprintf(buf, len, "%s/%s/%s", root ? root : "tests/data", dir, name);
    assert_true(n > 0 && (size_t)n < len);
    return buf;
}

void assert_message_has(const char *err, const char *want, const char *input)
{
    if (strstr(err, want) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"\n(input %s)", err, want, input);
}

void assert_rejected(int rc, const void *out, const char *err, const char *input,
                     const char *a, const char *b, const char *c)
{
    if (rc == 0)
        fail_msg("accepted: %s", input);
    if (out != NULL)
        fail_msg("refused, but returned %p: %s", out, input);
    const char *parts[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (parts[i] != NULL)
            assert_message_has(err, parts[i], input);
    if (strchr(err, '\n') != NULL)
        fail_msg("message \"%s\" is more than one line\n(input %s)", err, input);
}

void assert_load_missing(int rc, const void *out, const char *err, const char *path)
{
    char want[512];
    assert_int_equal(rc, LL_E_IO);
    assert_null(out);
    assert_true((size_t)snprintf(want, sizeof want, "%s: cannot open", path) < sizeof want);
    assert_message_has(err, want, path);
}

void test_mem_open(struct test_mem *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
}

char *test_mem_close(struct test_mem *m)
{
    assert_int_equal(fclose(m->f), 0);
    m->f = NULL;
    return m->buf;
}

const char *svgtest_chart_find(const char *doc, const char *id, size_t *len)
{
    char pat[128];
    snprintf(pat, sizeof(pat), "id=\"%s\"", id);
    const char *p = strstr(doc, pat);
    if (p == NULL)
        return NULL;
    while (p > doc && strncmp(p, "<svg", 4) != 0)
        p--;
    const char *e = strstr(p, "</svg>");
    if (e == NULL)
        return NULL;
    *len = (size_t)(e + 6 - p);
    return p;
}

int svgtest_attr(const char *tag, const char *name, char *out, size_t outlen)
{
    const char *end = strchr(tag, '>');
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=\"", name);
    const char *p = strstr(tag, pat);
    if (p == NULL || end == NULL || p > end)
        return 0;
    p += strlen(pat);
    const char *q = strchr(p, '"');
    if (q == NULL || (size_t)(q - p) >= outlen)
        return 0;
    memcpy(out, p, (size_t)(q - p));
    out[q - p] = '\0';
    return 1;
}

double svgtest_num(const char *tag, const char *name)
{
    char v[128];
    if (!svgtest_attr(tag, name, v, sizeof(v)))
        fail_msg("attribute %s missing in %.80s", name, tag);
    char *end;
    double d = strtod(v, &end);
    if (*end != '\0')
        fail_msg("attribute %s=\"%s\" is not a number", name, v);
    return d;
}

size_t svgtest_collect(const char *s, size_t len, const char *prefix, const char *series,
                       const char *a, const char *b, double *xs, double *ys, size_t max)
{
    size_t n = 0;
    const char *end = s + len;
    for (const char *p = strstr(s, prefix); p != NULL && p < end;
         p = strstr(p + 1, prefix)) {
        char v[128];
        if (series != NULL &&
            (!svgtest_attr(p, "data-series", v, sizeof(v)) || strcmp(v, series) != 0))
            continue;
        if (n < max) {
            xs[n] = svgtest_num(p, a);
            ys[n] = svgtest_num(p, b);
        }
        n++;
    }
    return n;
}

uint64_t test_splitmix64(uint64_t *state)
{
    return rng_splitmix64(state);
}

char *test_capture_body(const char *name, int *status, size_t *len)
{
    size_t raw_len;
    char *raw = test_read_data("sse", name, &raw_len);
    char *hdr_end = strstr(raw, "\r\n\r\n");
    assert_non_null(hdr_end);
    assert_true(strncmp(raw, "HTTP/1.1 ", 9) == 0);
    *status = atoi(raw + 9);
    char *out = ll_malloc(raw_len + 1);
    char *p = hdr_end + 4, *end = raw + raw_len;
    size_t n = 0;
    if (!strstr(raw, "Transfer-Encoding: chunked")) {
        n = (size_t)(end - p);
        memcpy(out, p, n);
    } else {
        for (;;) {
            char *e;
            unsigned long k = strtoul(p, &e, 16);
            assert_true(e != p && e[0] == '\r' && e[1] == '\n');
            p = e + 2;
            if (k == 0)
                break;
            assert_true(p + k + 2 <= end);
            memcpy(out + n, p, k);
            n += k;
            p += k + 2;
        }
    }
    out[n] = '\0';
    *len = n;
    free(raw);
    return out;
}

static int stream_acc_cb(void *ud, const struct sse_event *ev)
{
    struct test_stream_acc *a = ud;
    struct oai_chunk c, ref;
    int rc = a->decode(ev->event, ev->event_len, ev->data, ev->data_len, &c,
                       a->memo_on ? &a->memo : NULL);
    /* The memo never changes an answer. */
    assert_int_equal(a->decode(ev->event, ev->event_len, ev->data, ev->data_len, &ref, NULL), rc);
    assert_memory_equal(&c, &ref, sizeof c);
    if (rc != 0) {
        a->malformed++;
        return 0;
    }
    oai_stream_add(&a->st, &c);
    return 0;
}

/* Feed body through an SSE parser cut at the offsets in cuts (ascending). */
static void stream_feed(const char *body, size_t len, const size_t *cuts, size_t ncuts, int memo,
                        struct test_stream_acc *a)
{
    test_event_decode_fn *decode = a->decode;
    struct sse_parser p;
    memset(a, 0, sizeof *a);
    a->decode = decode;
    a->memo_on = memo;
    oai_memo_reset(&a->memo);
    oai_stream_init(&a->st);
    sse_parser_init(&p, 0);
    size_t pos = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t next = i < ncuts ? cuts[i] : len;
        assert_int_equal(sse_parser_feed(&p, body + pos, next - pos, stream_acc_cb, a), 0);
        pos = next;
    }
    assert_int_equal(sse_parser_finish(&p, stream_acc_cb, a), 0);
    sse_parser_free(&p);
}

/* What test_capture_splits asks of each decoding of the stream. */
static void capture_check(const char *name, const struct test_stream_acc *a, const char *want)
{
    if (a->malformed != 0)
        fail_msg("%s: %d malformed events", name, a->malformed);
    test_stream_expect(name, &a->st, want);
}

void test_capture_splits(const char *name, test_event_decode_fn *decode, uint64_t memo_hits,
                         const char *want)
{
    int status;
    size_t len;
    char *body = test_capture_body(name, &status, &len);
    struct test_stream_acc a = {.decode = decode};

    assert_int_equal(status, 200);
    for (int memo = 0; memo <= 1; memo++) {
        stream_feed(body, len, NULL, 0, memo, &a);
        capture_check(name, &a, want);
        if (memo)
            assert_int_equal(a.memo.hits, memo_hits);
        /* Split at every offset. */
        for (size_t k = 0; k <= len; k++) {
            stream_feed(body, len, &k, 1, memo, &a);
            capture_check(name, &a, want);
        }
    }
    /* Byte by byte. */
    size_t *all = ll_malloc(len * sizeof *all);
    for (size_t i = 0; i + 1 < len; i++)
        all[i] = i + 1;
    stream_feed(body, len, all, len - 1, 1, &a);
    capture_check(name, &a, want);
    free(all);
    free(body);
}

void test_long_error_cut(test_event_decode_fn *decode, const char *event, const char *before,
                         const char *after, const char *prefix)
{
    char data[512], msg[300];
    struct oai_chunk c;
    memset(msg, 'a', sizeof msg);
    memcpy(msg + 96, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8);
    msg[sizeof msg - 1] = '\0';
    snprintf(data, sizeof data, "%s%s%s", before, msg, after);
    assert_int_equal(decode(event, strlen(event), data, strlen(data), &c, NULL), 0);
    assert_true(strlen(c.error_message) < sizeof c.error_message);
    assert_true(strncmp(c.error_message, prefix, strlen(prefix)) == 0);
    assert_true(strncmp(c.error_message + strlen(prefix), "aaa", 3) == 0);
    size_t n = strlen(c.error_message);
    assert_true(((unsigned char)c.error_message[n - 1] & 0xC0) != 0xC0);
}

void test_event_refusals(test_event_decode_fn *decode,
                         int (*decode_response)(const char *body, size_t len,
                                                struct oai_chunk *out),
                         const char *event, const char *const *bad, size_t n)
{
    /* What no decoder takes: nothing, [DONE] (an event API has its own
     * end), an array. */
    static const char *const common[] = {"", "[DONE]", "[1]"};
    struct oai_chunk c;
    for (size_t i = 0; i < LL_ARRAY_LEN(common) + n; i++) {
        const char *in = i < LL_ARRAY_LEN(common) ? common[i] : bad[i - LL_ARRAY_LEN(common)];
        if (decode(event, strlen(event), in, strlen(in), &c, NULL) != LL_E_PROTO)
            fail_msg("event %s not refused: %s", event, in);
        if (c.has_error + c.done + (int)c.content_bytes != 0)
            fail_msg("event %s refused but decoded: %s", event, in);
        if (decode_response(in, strlen(in), &c) != LL_E_PROTO)
            fail_msg("body not refused: %s", in);
    }
}

struct oai_chunk test_event_ok(test_event_decode_fn *decode, const char *name, const char *data)
{
    struct oai_chunk c;
    int rc = decode(name, strlen(name), data, strlen(data), &c, NULL);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", data, rc);
    return c;
}

void test_capture_response(const char *name,
                           int (*decode_response)(const char *body, size_t len,
                                                  struct oai_chunk *out),
                           int status, const char *expect)
{
    int got_status;
    size_t len;
    struct oai_chunk c;
    char *body = test_capture_body(name, &got_status, &len);

    if (got_status != status)
        fail_msg("%s: status %d, expected %d", name, got_status, status);
    for (size_t k = 0; k < len; k++)
        if (decode_response(body, k, &c) != LL_E_PROTO)
            fail_msg("%s: its first %zu bytes were not refused", name, k);
    assert_int_equal(decode_response(body, len, &c), 0);
    EXPECT_CHUNK(name, &c, expect);
    free(body);
}

void test_event_cases(test_event_decode_fn *decode, const struct test_event_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct oai_chunk c = test_event_ok(decode, cases[i].event, cases[i].data);
        EXPECT_CHUNK(cases[i].data, &c, cases[i].expect);
    }
}

uint64_t test_memo_agrees(test_event_decode_fn *decode, const char *const *seq, size_t n)
{
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t i = 0; i < n; i++) {
        struct oai_chunk a, b;
        size_t len = strlen(seq[i]);
        int ra = decode("", 0, seq[i], len, &a, &m);
        int rb = decode("", 0, seq[i], len, &b, NULL);
        if (ra != rb)
            fail_msg("event %zu: %d with the memo, %d without: %s", i, ra, rb, seq[i]);
        if (ra == 0 && memcmp(&a, &b, sizeof a) != 0)
            fail_msg("event %zu: the memo changed the chunk: %s", i, seq[i]);
    }
    return m.hits;
}

/* The integer at p, size bytes, signed or not, widened. */
static int64_t field_int(const char *p, size_t size, int is_signed)
{
    switch (size) {
    case 1: {
        uint8_t v;
        memcpy(&v, p, 1);
        return is_signed ? (int64_t)(int8_t)v : (int64_t)v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
        uint64_t v;
        assert_int_equal(size, 8);
        memcpy(&v, p, 8);
        return (int64_t)v;
    }
    }
}

/* Check one "name=value" item of an EXPECT_FIELDS string. */
static void expect_field(const char *file, int line, const char *what, const void *obj,
                         const struct test_field *f, const char *want)
{
    const char *at = (const char *)obj + f->off;
    char *end;
    if (f->kind == 's') {
        if (f->get_str != NULL)
            at = f->get_str(obj);
        if (strcmp(at, want) != 0)
            fail_msg("%s:%d: %s: %s = \"%s\", expected \"%s\"", file, line, what, f->name, at,
                     want);
        return;
    }
    if (f->kind == 'd') {
        double got, w = strtod(want, &end);
        if (*end != '\0' || end == want)
            fail_msg("%s:%d: %s=%s: not a number", file, line, f->name, want);
        memcpy(&got, at, sizeof got);
        if (got != w)
            fail_msg("%s:%d: %s: %s = %.17g, expected %.17g", file, line, what, f->name, got, w);
        return;
    }
    errno = 0;
    long long w = strtoll(want, &end, 10);
    if (*end != '\0' || end == want || errno != 0)
        fail_msg("%s:%d: %s=%s: not an integer", file, line, f->name, want);
    int64_t got = f->get ? f->get(obj) : field_int(at, f->size, f->kind == 'i');
    if (f->kind == 'u' && f->get == NULL && f->size == 8 && got < 0)
        fail_msg("%s:%d: %s: %s = %llu, beyond what a check can name", file, line, what, f->name,
                 (unsigned long long)got);
    if (got != w)
        fail_msg("%s:%d: %s: %s = %lld, expected %lld", file, line, what, f->name, (long long)got,
                 w);
}

void test_expect_fields(const char *file, int line, const char *what, const void *obj,
                        const struct test_field *fields, size_t n, const char *expect)
{
    char buf[512];
    size_t len = strlen(expect);
    if (len >= sizeof buf)
        fail_msg("%s:%d: the expectation is too long", file, line);
    memcpy(buf, expect, len + 1);
    for (char *item = buf, *next; item != NULL; item = next) {
        next = strchr(item, ';');
        if (next != NULL)
            *next++ = '\0';
        char *eq = strchr(item, '=');
        if (eq == NULL)
            fail_msg("%s:%d: \"%s\" is not name=value", file, line, item);
        *eq = '\0';
        size_t i = 0;
        while (i < n && strcmp(fields[i].name, item) != 0)
            i++;
        if (i == n)
            fail_msg("%s:%d: no field %s to check", file, line, item);
        expect_field(file, line, what, obj, &fields[i], eq + 1);
    }
}

static int64_t chunk_output(const void *c)
{
    return oai_chunk_carries_output(c);
}

const struct test_field test_chunk_fields[15] = {
    TEST_FIELD(struct oai_chunk, done),
    TEST_FIELD(struct oai_chunk, role_only),
    TEST_FIELD(struct oai_chunk, content_bytes),
    TEST_FIELD(struct oai_chunk, reasoning_bytes),
    TEST_FIELD(struct oai_chunk, tool_call_deltas),
    TEST_FIELD(struct oai_chunk, has_finish),
    TEST_FIELD(struct oai_chunk, finish_reason),
    TEST_FIELD(struct oai_chunk, has_usage),
    TEST_FIELD(struct oai_chunk, prompt_tokens),
    TEST_FIELD(struct oai_chunk, completion_tokens),
    TEST_FIELD(struct oai_chunk, cached_tokens),
    TEST_FIELD(struct oai_chunk, has_error),
    TEST_FIELD(struct oai_chunk, overloaded),
    TEST_FIELD(struct oai_chunk, error_message),
    {"output", 0, 0, 'i', chunk_output, NULL},
};

static int64_t stream_output_tokens(const void *st)
{
    return (int64_t)oai_stream_output_tokens(st, NULL);
}

static const char *stream_tokens_source(const void *st)
{
    enum oai_tokens_source src;
    oai_stream_output_tokens(st, &src);
    return oai_tokens_source_name(src);
}

const struct test_field test_stream_fields[19] = {
    TEST_FIELD(struct oai_stream, events),
    TEST_FIELD(struct oai_stream, output_events),
    TEST_FIELD(struct oai_stream, content_events),
    TEST_FIELD(struct oai_stream, role_only_events),
    TEST_FIELD(struct oai_stream, content_bytes),
    TEST_FIELD(struct oai_stream, reasoning_bytes),
    TEST_FIELD(struct oai_stream, tool_call_deltas),
    TEST_FIELD(struct oai_stream, done),
    TEST_FIELD(struct oai_stream, has_finish),
    TEST_FIELD(struct oai_stream, finish_reason),
    TEST_FIELD(struct oai_stream, usage_on_output),
    TEST_FIELD(struct oai_stream, has_usage),
    TEST_FIELD(struct oai_stream, prompt_tokens),
    TEST_FIELD(struct oai_stream, completion_tokens),
    TEST_FIELD(struct oai_stream, cached_tokens),
    TEST_FIELD(struct oai_stream, has_error),
    TEST_FIELD(struct oai_stream, error_message),
    {"output_tokens", 0, 0, 'i', stream_output_tokens, NULL},
    {"tokens_source", 0, 0, 's', NULL, stream_tokens_source},
};

void test_stream_expect(const char *what, const struct oai_stream *st, const char *expect)
{
    if (!st->done || !st->has_finish || st->has_error)
        fail_msg("%s: done %d, has_finish %d, has_error %d; expected 1, 1, 0", what, st->done,
                 st->has_finish, st->has_error);
    test_expect_fields(__FILE__, __LINE__, what, st, test_stream_fields,
                       LL_ARRAY_LEN(test_stream_fields), expect);
}

/* Costs chosen so that step times are easy to add up by hand:
 * a step is 1000 ns + 10 ns per prefill token + 100 ns per decoding seq. */
struct engine_config test_engine_cfg(void)
{
    struct engine_config c = {
        .max_num_seqs = 4,
        .kv_tokens = 4096,
        .block_tokens = 16,
        .prefill_chunk_tokens = 512,
        .step_base_ns = 1000,
        .step_prefill_token_ns = 10,
        .step_seq_ns = 100,
        .queue_limit = 0,
        .natural_len_median_tokens = 1000,
        .natural_len_sigma = 0,
        .prefix_cache = 0,
        .seed = 7,
    };
    return c;
}

void test_workload_fixed(struct workload *w, uint64_t seed, const char *prompt_tokens,
                         const char *output_tokens)
{
    memset(w, 0, sizeof *w);
    w->seed = seed;
    assert_int_equal(dist_parse(prompt_tokens, DIST_UNIT_NONE, &w->prompt_tokens, NULL, 0), 0);
    assert_int_equal(dist_parse(output_tokens, DIST_UNIT_NONE, &w->output_tokens, NULL, 0), 0);
}

int test_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int test_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void test_refusals(test_parse_fn *parse, void *ctx, int want_rc, const struct bad_input *bad,
                   size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char err[1024] = "";
        int rc = parse(ctx, bad[i].in, err, sizeof err);
        if (rc != want_rc)
            fail_msg("\"%s\": returned %d, expected %d (message \"%s\")", bad[i].in, rc, want_rc,
                     err);
        assert_message_has(err, bad[i].why, bad[i].in);
        if (strchr(err, '\n') != NULL)
            fail_msg("message \"%s\" is more than one line\n(input %s)", err, bad[i].in);
    }
}

void assert_page(const char *doc, const char *const *has, const char *const *lacks)
{
    for (size_t i = 0; has != NULL && has[i] != NULL; i++)
        if (strstr(doc, has[i]) == NULL)
            fail_msg("the page lacks \"%s\"", has[i]);
    for (size_t i = 0; lacks != NULL && lacks[i] != NULL; i++)
        if (strstr(doc, lacks[i]) != NULL)
            fail_msg("the page has \"%s\"", lacks[i]);
}

static int is_void_element(const char *name, size_t n)
{
    static const char *const v[] = {"meta", "br", "link", "img", "hr", "input"};
    for (size_t i = 0; i < LL_ARRAY_LEN(v); i++)
        if (strlen(v[i]) == n && strncmp(v[i], name, n) == 0)
            return 1;
    return 0;
}

/* A strict well-formedness check, the subset of XML this page uses: every
 * element closed in order (HTML void elements excepted), attribute values
 * quoted, no '<' inside them, every '&' a complete entity. */
void assert_well_formed(const char *doc)
{
    const char *stack[128];
    size_t len[128], depth = 0;
    const char *p = doc;
    while (*p) {
        if (*p == '&') {
            const char *q = p + 1;
            if (*q == '#') {
                q++;
                while (*q >= '0' && *q <= '9')
                    q++;
            } else {
                while (*q >= 'a' && *q <= 'z')
                    q++;
            }
            if (*q != ';' || q == p + 1)
                fail_msg("bare '&' at offset %td: %.30s", p - doc, p);
            p = q + 1;
            continue;
        }
        if (*p == '>')
            fail_msg("bare '>' in text at offset %td", p - doc);
        if (*p != '<') {
            p++;
            continue;
        }
        if (strncmp(p, "<!--", 4) == 0) {
            p = strstr(p, "-->");
            assert_non_null(p);
            p += 3;
            continue;
        }
        if (p[1] == '!') {
            p = strchr(p, '>') + 1;
            continue;
        }
        if (p[1] == '/') {
            const char *n = p + 2;
            size_t nl = strcspn(n, " >");
            if (depth == 0 || len[depth - 1] != nl || strncmp(stack[depth - 1], n, nl) != 0)
                fail_msg("</%.*s> at offset %td closes <%.*s>", (int)nl, n, p - doc,
                         depth ? (int)len[depth - 1] : 0, depth ? stack[depth - 1] : "");
            depth--;
            p = strchr(p, '>') + 1;
            continue;
        }
        const char *n = p + 1;
        size_t nl = strcspn(n, " \n/>");
        const char *q = n + nl;
        /* Attributes: name="value" with no '<' inside. */
        while (*q && *q != '>' && !(q[0] == '/' && q[1] == '>')) {
            if (*q == '=') {
                if (q[1] != '"')
                    fail_msg("unquoted attribute at offset %td", q - doc);
                const char *e = strchr(q + 2, '"');
                assert_non_null(e);
                if (memchr(q + 2, '<', (size_t)(e - q - 2)) != NULL)
                    fail_msg("'<' in an attribute at offset %td", q - doc);
                q = e + 1;
                continue;
            }
            q++;
        }
        assert_true(*q != '\0');
        int self_closing = *q == '/';
        p = q + (self_closing ? 2 : 1);
        if (self_closing || is_void_element(n, nl))
            continue;
        if (nl == 5 && strncmp(n, "style", 5) == 0) {
            p = strstr(p, "</style>"); /* CSS is not markup */
            assert_non_null(p);
        }
        assert_true(depth < LL_ARRAY_LEN(stack));
        stack[depth] = n;
        len[depth] = nl;
        depth++;
    }
    if (depth != 0)
        fail_msg("%zu elements left open, innermost <%.*s>", depth, (int)len[depth - 1],
                 stack[depth - 1]);
}

struct prom_scrape *test_prom_parse(const char *body)
{
    struct prom_scrape *s = NULL;
    assert_int_equal(prom_scrape_parse(body, strlen(body), &s), 0);
    assert_non_null(s);
    return s;
}

/* dupunita: helpers from the duplicates clean-up (issue 14). */

FILE *test_temp_file(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    return f;
}
