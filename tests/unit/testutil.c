/* testutil.c: helpers shared by the unit tests (see testutil.h). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "decode/sse.h"
#include "test.h"
#include "util/rng.h"
#include "util/util.h"

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

void test_capture_splits(const char *name, test_event_decode_fn *decode,
                         void (*check)(const struct test_stream_acc *a), uint64_t memo_hits)
{
    int status;
    size_t len;
    char *body = test_capture_body(name, &status, &len);
    struct test_stream_acc a = {.decode = decode};

    assert_int_equal(status, 200);
    for (int memo = 0; memo <= 1; memo++) {
        stream_feed(body, len, NULL, 0, memo, &a);
        check(&a);
        if (memo)
            assert_int_equal(a.memo.hits, memo_hits);
        /* Split at every offset. */
        for (size_t k = 0; k <= len; k++) {
            stream_feed(body, len, &k, 1, memo, &a);
            check(&a);
        }
    }
    /* Byte by byte. */
    size_t *all = ll_malloc(len * sizeof *all);
    for (size_t i = 0; i + 1 < len; i++)
        all[i] = i + 1;
    stream_feed(body, len, all, len - 1, 1, &a);
    check(&a);
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
    struct oai_chunk c;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(decode(event, strlen(event), bad[i], strlen(bad[i]), &c, NULL),
                         LL_E_PROTO);
        assert_int_equal(c.has_error + c.done + (int)c.content_bytes, 0);
        assert_int_equal(decode_response(bad[i], strlen(bad[i]), &c), LL_E_PROTO);
    }
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
