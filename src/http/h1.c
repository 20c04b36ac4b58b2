/* h1.c: an HTTP/1.1 response parser (see h1.h).
 *
 * Lines (status, headers, chunk sizes, trailers) are handled where they lie
 * in the caller's buffer when they arrive whole; only a line split across
 * two feeds is copied, into a small inline buffer or, past 128 bytes, a
 * heap one bounded by H1_MAX_LINE_BYTES. Body bytes are never copied: the
 * body callback gets pointers into the caller's buffer. */
#include "http/h1.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/util.h"

enum {
    ST_STATUS,     /* waiting for the status line */
    ST_HEADER,     /* header lines until an empty one */
    ST_BODY_LEN,   /* remaining bytes of a Content-Length body */
    ST_BODY_CLOSE, /* body until the connection closes */
    ST_CHUNK_SIZE, /* a chunk-size line */
    ST_CHUNK_DATA, /* remaining bytes of a chunk */
    ST_CHUNK_END,  /* the empty line after a chunk's data */
    ST_TRAILER,    /* trailer lines after the last chunk */
    ST_DONE
};

/* Bits of conn_header: what the Connection header said, and whether a
 * Transfer-Encoding header was seen at all (it overrides Content-Length:
 * when chunked is not its last coding, the body runs until the close). */
#define CONN_CLOSE 1
#define CONN_KEEP 2
#define CONN_TE_SEEN 4

void h1_parser_init(struct h1_parser *p, h1_header_cb *on_header, h1_body_cb *on_body, void *ud)
{
    memset(p, 0, sizeof *p);
    p->on_header = on_header;
    p->on_body = on_body;
    p->ud = ud;
    p->line = p->line_small;
    p->line_cap = sizeof p->line_small;
}

void h1_parser_free(struct h1_parser *p)
{
    if (p && p->line && p->line != p->line_small)
        free(p->line);
    if (p) {
        p->line = p->line_small;
        p->line_cap = sizeof p->line_small;
        p->line_len = 0;
    }
}

void h1_parser_reset(struct h1_parser *p)
{
    /* Named here is what outlives a response: the line buffer (perhaps on
     * the heap) and the callbacks. Everything else starts from zero, a
     * field added later included. */
    *p = (struct h1_parser){
        .state = ST_STATUS,
        .http_minor = 1,
        .line = p->line,
        .line_cap = p->line_cap,
        .on_header = p->on_header,
        .on_body = p->on_body,
        .ud = p->ud,
    };
}

int h1_parser_status_seen(const struct h1_parser *p)
{
    return p->status != 0;
}

int h1_parser_in_body(const struct h1_parser *p)
{
    return p->state != ST_STATUS && p->state != ST_HEADER;
}

static int fail(struct h1_parser *p, const char *why)
{
    p->error = why;
    return LL_E_PROTO;
}

/* Does the header line name (case-insensitive) equal want, followed by ':'?
 * On a match, value and vlen hold the value without surrounding blanks. */
static int header_is(const char *line, size_t len, const char *want, size_t n,
                     const char **value, size_t *vlen)
{
    /* want is lower case: a first letter in either case, then the rest. */
    if (len <= n || line[n] != ':' || (line[0] | 0x20) != want[0] ||
        strncasecmp(line, want, n) != 0)
        return 0;
    size_t i = n + 1;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t end = len;
    while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t'))
        end--;
    *value = line + i;
    *vlen = end - i;
    return 1;
}
#define HEADER_IS(line, len, lit, value, vlen) header_is(line, len, lit, sizeof(lit) - 1, value, vlen)

static int status_line(struct h1_parser *p, const char *l, size_t len)
{
    /* HTTP/1.x SSS[ reason] */
    if (len < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
        return fail(p, "not an HTTP/1.x status line");
    int st = 0;
    for (int i = 9; i < 12; i++) {
        if (l[i] < '0' || l[i] > '9')
            return fail(p, "bad status code");
        st = st * 10 + (l[i] - '0');
    }
    if (len > 12 && l[12] != ' ')
        return fail(p, "bad status code");
    if (st < 100)
        return fail(p, "bad status code");
    p->status = st;
    p->http_minor = l[7] - '0';
    p->chunked = 0;
    p->has_length = 0;
    p->content_length = 0;
    p->keep_alive = 0; /* decided at the end of the headers */
    p->conn_header = 0;
    p->state = ST_HEADER;
    if (p->on_header && p->on_header(p->ud, l, len) != 0)
        return H1_STOPPED;
    return H1_MORE;
}

static int header_line(struct h1_parser *p, const char *l, size_t len)
{
    const char *v;
    size_t vl;
    if (len == 0) {
        /* End of the header section. */
        if (p->status >= 100 && p->status < 200) {
            if (p->status == 101)
                return fail(p, "101 Switching Protocols is not supported");
            p->state = ST_STATUS; /* an interim response: the real one follows */
            return H1_MORE;
        }
        int conn = p->conn_header;
        p->keep_alive = (conn & CONN_CLOSE)  ? 0
                        : p->http_minor >= 1 ? 1
                                             : (conn & CONN_KEEP) != 0;
        if (p->status == 204 || p->status == 304) {
            p->state = ST_DONE;
            return H1_DONE;
        }
        if (p->chunked) {
            p->state = ST_CHUNK_SIZE;
        } else if (conn & CONN_TE_SEEN) {
            p->keep_alive = 0;
            p->state = ST_BODY_CLOSE; /* a coding other than chunked last */
        } else if (p->has_length) {
            p->remaining = p->content_length;
            p->state = ST_BODY_LEN;
            if (p->remaining == 0) {
                p->state = ST_DONE;
                return H1_DONE;
            }
        } else {
            p->keep_alive = 0;
            p->state = ST_BODY_CLOSE;
        }
        return H1_MORE;
    }
    if (l[0] == ' ' || l[0] == '\t')
        return fail(p, "obsolete folded header line");
    if (HEADER_IS(l, len, "content-length", &v, &vl)) {
        uint64_t n = 0;
        if (vl == 0)
            return fail(p, "empty Content-Length");
        for (size_t i = 0; i < vl; i++) {
            if (v[i] < '0' || v[i] > '9' || n > (UINT64_MAX - 9) / 10)
                return fail(p, "bad Content-Length");
            n = n * 10 + (uint64_t)(v[i] - '0');
        }
        if (p->has_length && n != p->content_length)
            return fail(p, "two different Content-Length values");
        p->has_length = 1;
        p->content_length = n;
    } else if (HEADER_IS(l, len, "transfer-encoding", &v, &vl)) {
        /* Several Transfer-Encoding lines form one list: the last one
         * decides whether chunked is the final coding. */
        p->chunked = ll_http_list_has(v, vl, "chunked", 1);
        p->conn_header |= CONN_TE_SEEN;
    } else if (HEADER_IS(l, len, "connection", &v, &vl)) {
        if (ll_http_list_has(v, vl, "close", 0))
            p->conn_header |= CONN_CLOSE;
        else if (ll_http_list_has(v, vl, "keep-alive", 0))
            p->conn_header |= CONN_KEEP;
    }
    if (p->on_header && p->on_header(p->ud, l, len) != 0)
        return H1_STOPPED;
    return H1_MORE;
}

/* A hex digit's value, -1 for anything else. */
static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A chunk of n bytes is next (its size line read, by either path): its
 * data, or the trailer after the last chunk (n = 0). */
static void chunk_begin(struct h1_parser *p, uint64_t n)
{
    if (n == 0) {
        p->state = ST_TRAILER;
    } else {
        p->remaining = n;
        p->state = ST_CHUNK_DATA;
    }
}

static int chunk_size_line(struct h1_parser *p, const char *l, size_t len)
{
    uint64_t n = 0;
    size_t i = 0;
    for (; i < len; i++) {
        int d = hex_digit(l[i]);
        if (d < 0)
            break;
        if (n >> 59)
            return fail(p, "chunk size too large");
        n = n * 16 + (uint64_t)d;
    }
    if (i == 0)
        return fail(p, "bad chunk size line");
    while (i < len && (l[i] == ' ' || l[i] == '\t'))
        i++;
    if (i < len && l[i] != ';')
        return fail(p, "bad chunk size line");
    chunk_begin(p, n);
    return H1_MORE;
}

/* One complete line (line ending removed) in the current state. */
static int on_line(struct h1_parser *p, const char *l, size_t len)
{
    switch (p->state) {
    case ST_STATUS:
        if (len == 0 && p->status == 0 && p->header_bytes <= 2)
            return H1_MORE; /* tolerate one stray empty line before a response */
        return status_line(p, l, len);
    case ST_HEADER:
        return header_line(p, l, len);
    case ST_CHUNK_SIZE:
        return chunk_size_line(p, l, len);
    case ST_CHUNK_END:
        if (len != 0)
            return fail(p, "chunk data not followed by a line end");
        p->state = ST_CHUNK_SIZE;
        return H1_MORE;
    case ST_TRAILER:
        if (len == 0) {
            p->state = ST_DONE;
            return H1_DONE;
        }
        return H1_MORE;
    default:
        return fail(p, "internal: line in a body state");
    }
}

/* Append n bytes of a line split across feeds. The bound leaves room for
 * the line's CR, so that a line of exactly H1_MAX_LINE_BYTES is accepted
 * with a CRLF ending as with a bare LF, however the bytes are split. */
static int line_keep(struct h1_parser *p, const char *buf, size_t n)
{
    size_t need = p->line_len + n;
    if (need > H1_MAX_LINE_BYTES + 1)
        return fail(p, "a header or chunk line over 16 KiB");
    if (need > p->line_cap) {
        size_t cap = p->line_cap * 2;
        while (cap < need)
            cap *= 2;
        if (cap > H1_MAX_LINE_BYTES + 1)
            cap = H1_MAX_LINE_BYTES + 1;
        if (p->line == p->line_small) {
            char *nl = ll_malloc(cap);
            memcpy(nl, p->line, p->line_len);
            p->line = nl;
        } else {
            p->line = ll_realloc(p->line, cap);
        }
        p->line_cap = cap;
    }
    memcpy(p->line + p->line_len, buf, n);
    p->line_len += n;
    return H1_MORE;
}

static int is_line_state(int st)
{
    return st == ST_STATUS || st == ST_HEADER || st == ST_CHUNK_SIZE || st == ST_CHUNK_END ||
           st == ST_TRAILER;
}

/* The chunked stream's framing, whole in buf at *i and with no line begun
 * in an earlier feed: the "\r\n" after a chunk's data and the next
 * "HEX\r\n" size line, taken without the line machinery (a token's chunk
 * is framed by both). Returns 1 and advances *i when it took one, else 0:
 * anything else (extensions, bare LF, a line split across feeds, more
 * than 15 digits) is left to feed_line, which reads it from *i. This is
 * the per-token hot path: keep it small enough to inline. */
static int feed_chunk_framing(struct h1_parser *p, const char *buf, size_t len, size_t *i)
{
    size_t at = *i;
    if (p->line_len != 0)
        return 0;
    if (p->state == ST_CHUNK_END && len - at >= 2 && buf[at] == '\r' && buf[at + 1] == '\n') {
        *i = at + 2;
        p->state = ST_CHUNK_SIZE;
        return 1;
    }
    if (p->state != ST_CHUNK_SIZE)
        return 0;
    size_t j = at, lim = LL_MIN(len, at + 15);
    uint64_t n = 0;
    int d;
    while (j < lim && (d = hex_digit(buf[j])) >= 0) {
        n = n * 16 + (uint64_t)d;
        j++;
    }
    if (j == at || len - j < 2 || buf[j] != '\r' || buf[j + 1] != '\n')
        return 0;
    *i = j + 2;
    chunk_begin(p, n);
    return 1;
}

/* In a line state: take buf[*i..len) up to and including the next LF,
 * counting header bytes against H1_MAX_HEADER_BYTES. A line without its LF
 * yet is kept (line_keep) and *i moves to len; a whole line (joined to
 * what was kept, its CR dropped) goes to on_line. Returns H1_MORE to go
 * on, or what the feed returns (H1_DONE, H1_STOPPED, LL_E_PROTO); on a
 * refused line *i stays at its start. */
static int feed_line(struct h1_parser *p, const char *buf, size_t len, size_t *i)
{
    const char *nl = memchr(buf + *i, '\n', len - *i);
    size_t take = nl ? (size_t)(nl - (buf + *i)) + 1 : len - *i;
    int rc;
    if (p->state == ST_STATUS || p->state == ST_HEADER || p->state == ST_TRAILER) {
        p->header_bytes += take;
        if (p->header_bytes > H1_MAX_HEADER_BYTES)
            return fail(p, "header section over 100 KiB");
    }
    if (!nl) {
        rc = line_keep(p, buf + *i, take);
        *i += take;
        return rc;
    }
    const char *l = buf + *i;
    size_t ll = take - 1;
    if (p->line_len) {
        rc = line_keep(p, l, ll);
        if (rc < 0)
            return rc;
        l = p->line;
        ll = p->line_len;
        p->line_len = 0;
    }
    if (ll && l[ll - 1] == '\r')
        ll--;
    if (ll > H1_MAX_LINE_BYTES)
        return fail(p, "a header or chunk line over 16 KiB");
    *i += take;
    return on_line(p, l, ll);
}

/* In a body state: hand the body bytes at buf[*i..len) (up to what the
 * Content-Length or chunk has left) to on_body, uncopied, and advance *i.
 * Returns H1_MORE to go on, H1_DONE at the end of a Content-Length body,
 * or H1_STOPPED when the callback asked to stop (that wins over done). */
static int feed_body(struct h1_parser *p, const char *buf, size_t len, size_t *i)
{
    int rc = H1_MORE;
    size_t n = len - *i;
    if (p->state != ST_BODY_CLOSE && p->remaining < n)
        n = (size_t)p->remaining;
    int stop = p->on_body && n ? p->on_body(p->ud, buf + *i, n) : 0;
    *i += n;
    if (p->state != ST_BODY_CLOSE) {
        p->remaining -= n;
        if (p->remaining == 0) {
            if (p->state == ST_BODY_LEN) {
                p->state = ST_DONE;
                rc = H1_DONE;
            } else {
                p->state = ST_CHUNK_END;
            }
        }
    }
    return stop ? H1_STOPPED : rc;
}

/* Feed buf[0..len) (see h1.h): chunk framing on its fast path, lines, body
 * bytes, until the buffer ends or the response does. *used is how many
 * bytes were taken. */
int h1_parser_feed(struct h1_parser *p, const char *buf, size_t len, size_t *used)
{
    size_t i = 0;
    int rc = H1_MORE;
    if (p->error) {
        *used = 0; /* an invalid response stays invalid until a reset */
        return LL_E_PROTO;
    }
    if (p->state == ST_DONE) {
        *used = 0;
        return H1_DONE;
    }
    while (i < len) {
        if (feed_chunk_framing(p, buf, len, &i))
            continue;
        if (is_line_state(p->state))
            rc = feed_line(p, buf, len, &i);
        else
            rc = feed_body(p, buf, len, &i);
        if (rc != H1_MORE)
            break;
    }
    p->bytes_seen += i;
    *used = i;
    return rc;
}

int h1_parser_eof(struct h1_parser *p)
{
    if (p->error)
        return LL_E_PROTO;
    switch (p->state) {
    case ST_DONE:
    case ST_BODY_CLOSE:
        p->state = ST_DONE;
        return H1_DONE;
    case ST_STATUS:
        return fail(p, p->bytes_seen ? "connection closed before the status line"
                                     : "connection closed with no response");
    case ST_HEADER:
        return fail(p, "connection closed inside the headers");
    case ST_BODY_LEN:
        return fail(p, "connection closed before the end of the body (Content-Length)");
    default:
        return fail(p, "connection closed before the last chunk");
    }
}
