/* http.c: incremental HTTP/1.1 request parser and the output buffer.
 *
 * The parser is a small state machine. The head (request line and header
 * fields) is copied into p->head until the blank line that ends it, then
 * parsed in one pass; the body is decoded into p->body, from a
 * Content-Length or from chunks. I keep it strict where leniency breeds
 * request smuggling (both Content-Length and Transfer-Encoding, obsolete
 * line folding, blanks before the colon: all 400) and lenient where real
 * clients are sloppy (bare LF line endings, empty lines before the request
 * line). */
#include "sim/http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

#define HTTP_MAX_TARGET_BYTES 8192

enum {
    ST_HEAD,
    ST_BODY_CL,
    ST_CHUNK_SIZE,
    ST_CHUNK_DATA,
    ST_CHUNK_CR,
    ST_CHUNK_LF,
    ST_TRAILERS,
    ST_DONE,
    ST_ERROR,
};

void http_parser_init(struct http_parser *p, const struct http_limits *lim)
{
    memset(p, 0, sizeof(*p));
    p->lim = *lim;
    p->state = ST_HEAD;
}

#define HTTP_KEEP_BUF_BYTES (64 * 1024)

void http_parser_reset(struct http_parser *p)
{
    /* A keep-alive connection must not hold its largest request forever:
     * buffers past HTTP_KEEP_BUF_BYTES go back and regrow on demand. */
    if (p->head_cap > HTTP_KEEP_BUF_BYTES) {
        free(p->head);
        p->head = NULL;
        p->head_cap = 0;
    }
    if (p->body_cap > HTTP_KEEP_BUF_BYTES) {
        free(p->body);
        p->body = NULL;
        p->body_cap = 0;
    }
    /* Named here is what outlives a request: the limits and the buffers.
     * Everything else starts from zero, a field added later included. */
    *p = (struct http_parser){
        .lim = p->lim,
        .state = ST_HEAD,
        .head = p->head,
        .head_cap = p->head_cap,
        .body = p->body,
        .body_cap = p->body_cap,
        .trailer_line_empty = 1,
    };
}

void http_parser_free(struct http_parser *p)
{
    if (!p)
        return;
    free(p->head);
    free(p->body);
    p->head = NULL;
    p->body = NULL;
    p->head_cap = p->body_cap = 0;
    http_parser_reset(p);
}

static int fail_status(struct http_parser *p, int status)
{
    p->state = ST_ERROR;
    p->error_status = status;
    p->req.keep_alive = 0;
    return LL_E_PROTO;
}

static void head_reserve(struct http_parser *p, size_t need)
{
    p->head = ll_grow(p->head, &p->head_cap, need, 1024);
}

static void body_reserve(struct http_parser *p, size_t need)
{
    p->body = ll_grow(p->body, &p->body_cap, need, 1024);
}

/* RFC 9110 tchar. */
static int is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int token_ieq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Strict decimal: digits only, no overflow past 2^63. */
static int parse_decimal(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 18)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* The end of the token (RFC 9110's tchars: a method, a field name) that
 * starts at s and ends at the first delim in [s, e): a pointer to that
 * delim, or NULL when there is none, the token is empty or it holds a byte
 * that is not a tchar. */
static char *token_until(char *s, char *e, char delim)
{
    char *d = memchr(s, delim, (size_t)(e - s));
    if (!d || d == s)
        return NULL;
    for (char *c = s; c < d; c++)
        if (!is_tchar((unsigned char)*c))
            return NULL;
    return d;
}

/* Parse the request line [s, e) (line ending already stripped). */
static int parse_request_line(struct http_parser *p, char *s, char *e)
{
    struct http_request *r = &p->req;
    char *sp1 = token_until(s, e, ' ');
    if (!sp1)
        return fail_status(p, 400);
    char *t = sp1 + 1;
    char *sp2 = memchr(t, ' ', (size_t)(e - t));
    if (!sp2 || sp2 == t)
        return fail_status(p, 400);
    for (char *c = t; c < sp2; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
            return fail_status(p, 400);
    if ((size_t)(sp2 - t) > HTTP_MAX_TARGET_BYTES)
        return fail_status(p, 414);
    if (*t != '/')
        return fail_status(p, 400);
    char *v = sp2 + 1;
    size_t vlen = (size_t)(e - v);
    if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' ||
        v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
        return fail_status(p, 400);
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return fail_status(p, 505);
    r->version_minor = v[7] - '0';
    r->keep_alive = r->version_minor == 1;

    *sp1 = '\0';
    *sp2 = '\0';
    r->method_str = s;
    r->method_len = (size_t)(sp1 - s);
    if (strcmp(s, "GET") == 0)
        r->method = HTTP_METHOD_GET;
    else if (strcmp(s, "POST") == 0)
        r->method = HTTP_METHOD_POST;
    else if (strcmp(s, "HEAD") == 0)
        r->method = HTTP_METHOD_HEAD;
    else
        r->method = HTTP_METHOD_OTHER;
    r->target = t;
    r->target_len = (size_t)(sp2 - t);
    return 0;
}

/* Parse the complete head in p->head[0, head_len) and choose the body
 * state. The path copy goes after the head in the same buffer. */
static int parse_head(struct http_parser *p)
{
    struct http_request *r = &p->req;
    size_t n = p->head_len;
    head_reserve(p, 2 * n + 1); /* room for the path copy (target < n) */
    char *h = p->head;
    char *end = h + n;
    char *line = h;
    char *nl = memchr(line, '\n', n);
    char *le = (nl > line && nl[-1] == '\r') ? nl - 1 : nl;
    if (parse_request_line(p, line, le) < 0)
        return LL_E_PROTO;

    int have_cl = 0, have_te = 0, te_chunked = 0;
    uint64_t cl = 0;
    line = nl + 1;
    while (line < end) {
        nl = memchr(line, '\n', (size_t)(end - line));
        le = (nl > line && nl[-1] == '\r') ? nl - 1 : nl;
        if (le == line)
            break; /* the blank line */
        if (*line == ' ' || *line == '\t')
            return fail_status(p, 400); /* obsolete line folding */
        char *colon = token_until(line, le, ':');
        if (!colon)
            return fail_status(p, 400);
        char *vs = colon + 1, *ve = le;
        while (vs < ve && (*vs == ' ' || *vs == '\t'))
            vs++;
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        for (char *c = vs; c < ve; c++) {
            unsigned char u = (unsigned char)*c;
            if ((u < 0x20 && u != '\t') || u == 0x7f)
                return fail_status(p, 400);
        }
        if (r->n_headers == HTTP_MAX_HEADERS)
            return fail_status(p, 431);
        struct http_header *hd = &r->headers[r->n_headers++];
        hd->name = line;
        hd->name_len = (size_t)(colon - line);
        hd->value = vs;
        hd->value_len = (size_t)(ve - vs);

        if (token_ieq(hd->name, hd->name_len, "content-length")) {
            uint64_t v;
            if (parse_decimal(hd->value, hd->value_len, &v) < 0)
                return fail_status(p, 400);
            if (have_cl && v != cl)
                return fail_status(p, 400);
            have_cl = 1;
            cl = v;
        } else if (token_ieq(hd->name, hd->name_len, "transfer-encoding")) {
            if (have_te || !token_ieq(hd->value, hd->value_len, "chunked"))
                return fail_status(p, 501);
            have_te = 1;
            te_chunked = 1;
        } else if (token_ieq(hd->name, hd->name_len, "connection")) {
            if (ll_http_list_has(hd->value, hd->value_len, "close", 0))
                r->keep_alive = 0;
            else if (ll_http_list_has(hd->value, hd->value_len, "keep-alive", 0))
                r->keep_alive = 1;
        } else if (token_ieq(hd->name, hd->name_len, "expect")) {
            if (token_ieq(hd->value, hd->value_len, "100-continue") &&
                r->version_minor == 1)
                r->expect_continue = 1;
        }
        line = nl + 1;
    }
    if (have_cl && have_te)
        return fail_status(p, 400);

    /* The path: target up to '?', copied after the head. */
    const char *q = memchr(r->target, '?', r->target_len);
    size_t plen = q ? (size_t)(q - r->target) : r->target_len;
    char *path = p->head + n;
    memcpy(path, r->target, plen);
    path[plen] = '\0';
    r->path = path;
    r->path_len = plen;

    if (te_chunked) {
        r->chunked = 1;
        p->state = ST_CHUNK_SIZE;
        p->chunk_line_len = 0;
    } else if (have_cl && cl > 0) {
        if (cl > p->lim.max_body_bytes)
            return fail_status(p, 413);
        body_reserve(p, (size_t)cl + 1);
        p->remaining_bytes = cl;
        p->state = ST_BODY_CL;
    } else {
        p->state = ST_DONE;
    }
    return 0;
}

/* Copy head bytes from buf until the blank line. Returns bytes used. */
static size_t feed_head(struct http_parser *p, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && p->state == ST_HEAD) {
        if (p->head_len == 0 && (buf[i] == '\r' || buf[i] == '\n')) {
            i++; /* empty lines before the request line are ignored */
            continue;
        }
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t take = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;
        if (p->head_len + take > p->lim.max_head_bytes) {
            fail_status(p, 431);
            return i;
        }
        head_reserve(p, p->head_len + take);
        memcpy(p->head + p->head_len, buf + i, take);
        p->head_len += take;
        i += take;
        if (!nl)
            break;
        /* A line ended at head_len - 1; it started at head_scan. */
        size_t line_len = p->head_len - 1 - p->head_scan;
        if (line_len > 0 && p->head[p->head_len - 2] == '\r')
            line_len--;
        if (line_len == 0 && p->head_scan > 0) {
            if (parse_head(p) < 0)
                return i;
        } else if (line_len == 0) {
            p->head_len = 0; /* a lone "\r\n": still before the request */
        }
        p->head_scan = p->head_len;
    }
    return i;
}

static int parse_chunk_line(struct http_parser *p)
{
    size_t n = p->chunk_line_len;
    const char *s = p->chunk_line;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    size_t i = 0;
    uint64_t v = 0;
    while (i < n) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            break;
        if (i >= 15)
            return fail_status(p, 413);
        v = v * 16 + (uint64_t)d;
        i++;
    }
    if (i == 0)
        return fail_status(p, 400);
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] != ';')
        return fail_status(p, 400);
    if (v == 0) {
        p->state = ST_TRAILERS;
        p->trailer_line_empty = 1;
        p->trailer_bytes = 0;
        return 0;
    }
    if (v > p->lim.max_body_bytes - p->body_len)
        return fail_status(p, 413);
    body_reserve(p, p->body_len + (size_t)v + 1);
    p->remaining_bytes = v;
    p->state = ST_CHUNK_DATA;
    return 0;
}

static void finish(struct http_parser *p)
{
    body_reserve(p, p->body_len + 1);
    p->body[p->body_len] = '\0';
    p->req.body = p->body;
    p->req.body_len = p->body_len;
    p->state = ST_DONE;
}

int http_parser_feed(struct http_parser *p, const char *buf, size_t len,
                     size_t *consumed)
{
    size_t i = 0;
    while (i < len && p->state != ST_DONE && p->state != ST_ERROR) {
        switch (p->state) {
        case ST_HEAD:
            i += feed_head(p, buf + i, len - i);
            break;
        case ST_BODY_CL:
        case ST_CHUNK_DATA: {
            size_t take = len - i;
            if (take > p->remaining_bytes)
                take = (size_t)p->remaining_bytes;
            memcpy(p->body + p->body_len, buf + i, take);
            p->body_len += take;
            p->remaining_bytes -= take;
            i += take;
            if (p->remaining_bytes == 0)
                p->state = p->state == ST_BODY_CL ? ST_DONE : ST_CHUNK_CR;
            break;
        }
        case ST_CHUNK_SIZE: {
            char c = buf[i++];
            if (c == '\n') {
                parse_chunk_line(p);
                p->chunk_line_len = 0;
            } else if (p->chunk_line_len == sizeof(p->chunk_line)) {
                fail_status(p, 400);
            } else {
                p->chunk_line[p->chunk_line_len++] = c;
            }
            break;
        }
        case ST_CHUNK_CR: {
            char c = buf[i++];
            if (c == '\r')
                p->state = ST_CHUNK_LF;
            else if (c == '\n')
                p->state = ST_CHUNK_SIZE;
            else
                fail_status(p, 400);
            break;
        }
        case ST_CHUNK_LF:
            if (buf[i++] == '\n')
                p->state = ST_CHUNK_SIZE;
            else
                fail_status(p, 400);
            break;
        case ST_TRAILERS: {
            char c = buf[i++];
            if (++p->trailer_bytes > p->lim.max_head_bytes) {
                fail_status(p, 431);
            } else if (c == '\n') {
                if (p->trailer_line_empty)
                    p->state = ST_DONE;
                p->trailer_line_empty = 1;
            } else if (c != '\r') {
                p->trailer_line_empty = 0;
            }
            break;
        }
        default:
            break;
        }
    }
    *consumed = i;
    if (p->state == ST_ERROR)
        return LL_E_PROTO;
    if (p->state == ST_DONE) {
        if (p->req.body == NULL)
            finish(p);
        return HTTP_PARSE_DONE;
    }
    return HTTP_PARSE_MORE;
}

const struct http_request *http_parser_request(const struct http_parser *p)
{
    return p->state == ST_DONE ? &p->req : NULL;
}

int http_parser_in_body(const struct http_parser *p)
{
    return p->state != ST_HEAD && p->state != ST_DONE && p->state != ST_ERROR;
}

int http_parser_expects_continue(const struct http_parser *p)
{
    return p->req.expect_continue;
}

int http_parser_error_status(const struct http_parser *p)
{
    return p->error_status;
}

const struct http_header *http_request_header(const struct http_request *r,
                                              const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (token_ieq(r->headers[i].name, r->headers[i].name_len, name))
            return &r->headers[i];
    return NULL;
}

const char *http_status_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 529: return "Overloaded"; /* Anthropic's */
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* ---- output buffer ---- */

void http_buf_init(struct http_buf *b)
{
    memset(b, 0, sizeof(*b));
}

void http_buf_free(struct http_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

size_t http_buf_pending(const struct http_buf *b)
{
    return b->len - b->off;
}

void http_buf_clear(struct http_buf *b)
{
    b->off = b->len = 0;
}

char *http_buf_reserve(struct http_buf *b, size_t n)
{
    if (b->cap - b->len >= n)
        return b->data + b->len;
    if (b->off > 0) {
        /* Slide the pending bytes down before growing. */
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->cap - b->len >= n)
            return b->data + b->len;
    }
    b->data = ll_grow(b->data, &b->cap, b->len + n, 512);
    return b->data + b->len;
}

void http_buf_commit(struct http_buf *b, size_t n)
{
    b->len += n;
}

void http_buf_append(struct http_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(http_buf_reserve(b, n), p, n);
    b->len += n;
}

void http_buf_puts(struct http_buf *b, const char *s)
{
    http_buf_append(b, s, strlen(s));
}

void http_buf_printf(struct http_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(http_buf_reserve(b, 64), 64, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= 64) {
        va_start(ap, fmt);
        vsnprintf(http_buf_reserve(b, (size_t)n + 1), (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

static void buf_put(void *b, const char *p, size_t n)
{
    http_buf_append(b, p, n);
}

void http_buf_json_escape(struct http_buf *b, const char *s, size_t n)
{
    ll_json_escape_runs(s, n, buf_put, b);
}

void http_buf_u64(struct http_buf *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    http_buf_append(b, tmp + i, sizeof(tmp) - i);
}

void http_buf_consume(struct http_buf *b, size_t n)
{
    b->off += n;
    if (b->off >= b->len)
        b->off = b->len = 0;
}
