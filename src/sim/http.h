/* http.h: the HTTP/1.1 pieces of `llmload sim`: an incremental request
 * parser (bytes in, one request out; no I/O) and a growable output buffer
 * the server writes responses into.
 *
 * The parser copies what it keeps (the request head and the decoded body)
 * into buffers it owns, so the caller may reuse its read buffer at once.
 * It handles requests split anywhere (even byte by byte), pipelined
 * requests (it stops right after one request and reports how many bytes it
 * used), Content-Length and chunked request bodies, and bounded sizes. */
#ifndef LL_SIM_HTTP_H
#define LL_SIM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEADERS 64          /* header fields per request */
#define HTTP_MAX_CHUNK_LINE_BYTES 256 /* a chunk-size line with extensions */

/* Results of http_parser_feed that are not errors. */
#define HTTP_PARSE_MORE 0            /* every byte used; the request is incomplete */
#define HTTP_PARSE_DONE 1            /* one request is complete */

struct http_limits {
    size_t max_head_bytes;           /* request line + header fields (and trailers) */
    size_t max_body_bytes;           /* decoded body */
};

enum http_method {
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_POST,
    HTTP_METHOD_OTHER,               /* any other valid token: 405 for us */
};

/* A view of one header field inside the parser's buffer. */
struct http_header {
    const char *name;
    size_t name_len;
    const char *value;               /* leading and trailing blanks trimmed */
    size_t value_len;
};

/* A parsed request. Every pointer is borrowed from the parser and valid
 * until the next http_parser_reset or http_parser_free. target and body are
 * NUL-terminated (the body may still contain NUL bytes: use body_len). */
struct http_request {
    enum http_method method;
    const char *method_str;
    size_t method_len;
    const char *target;              /* request-target as sent, e.g. "/v1/models?x=1" */
    size_t target_len;
    const char *path;                /* target up to '?' (NUL-terminated copy) */
    size_t path_len;
    int version_minor;               /* HTTP/1.<version_minor>: 0 or 1 */
    int keep_alive;                  /* 1 = the connection may serve another request */
    int expect_continue;             /* 1 = "Expect: 100-continue" was sent */
    int chunked;                     /* 1 = the body came chunked */
    size_t n_headers;
    struct http_header headers[HTTP_MAX_HEADERS];
    const char *body;
    size_t body_len;
};

struct http_parser {
    struct http_limits lim;
    int state;                       /* internal (enum in http.c) */
    int error_status;                /* HTTP status to answer after an error */
    char *head;                      /* request head bytes, then path copy */
    size_t head_len, head_cap;       /* bytes */
    size_t head_scan;                /* where the search for the blank line resumes */
    char *body;
    size_t body_len, body_cap;       /* bytes */
    uint64_t remaining_bytes;        /* of the Content-Length body or current chunk */
    char chunk_line[HTTP_MAX_CHUNK_LINE_BYTES];
    size_t chunk_line_len;           /* bytes */
    size_t trailer_bytes;            /* bytes of trailer section so far */
    int trailer_line_empty;          /* 1 = the current trailer line has no bytes yet */
    struct http_request req;
};

/* Prepare a parser for the first request. lim is copied; both limits must
 * be > 0. Release with http_parser_free. */
void http_parser_init(struct http_parser *p, const struct http_limits *lim);

/* Forget the current request (complete or not, or an error) and get ready
 * for the next one. Keeps the buffers for reuse. */
void http_parser_reset(struct http_parser *p);

/* Free the parser's buffers. The struct itself is the caller's. */
void http_parser_free(struct http_parser *p);

/* Feed len bytes. Sets *consumed to the bytes used: all of them unless a
 * request completed earlier in buf (the rest belongs to the next,
 * pipelined, request: call http_parser_reset, then feed the rest).
 * Returns HTTP_PARSE_MORE, HTTP_PARSE_DONE (http_parser_request() is valid),
 * or LL_E_PROTO: the request is bad; http_parser_error_status() says which
 * status to answer (400, 413, 414, 431, 501, 505) and the connection must
 * close. After DONE or an error, further feeds consume nothing and repeat
 * the result until http_parser_reset. */
int http_parser_feed(struct http_parser *p, const char *buf, size_t len,
                     size_t *consumed);

/* The complete request after HTTP_PARSE_DONE; borrowed (see struct). */
const struct http_request *http_parser_request(const struct http_parser *p);

/* 1 once the head of a request is parsed and its body is still to come. */
int http_parser_in_body(const struct http_parser *p);

/* 1 = the head announced "Expect: 100-continue" (valid from in_body). */
int http_parser_expects_continue(const struct http_parser *p);

/* The HTTP status to answer after LL_E_PROTO (0 before any error). */
int http_parser_error_status(const struct http_parser *p);

/* First header named name (case-insensitive), or NULL. */
const struct http_header *http_request_header(const struct http_request *r,
                                              const char *name);

/* The reason phrase of a status ("OK", "Not Found"); "Unknown" otherwise. */
const char *http_status_reason(int status);

/* A byte buffer: data[off, len) is pending output; cap is allocated.
 * Starts zeroed (or via http_buf_init); grows by doubling; allocation
 * failure aborts (util.h). */
struct http_buf {
    char *data;
    size_t off;                      /* bytes already consumed */
    size_t len;                      /* end of the valid bytes */
    size_t cap;                      /* allocated bytes */
};

void http_buf_init(struct http_buf *b);
/* Free the storage; the buffer is empty and reusable afterwards. */
void http_buf_free(struct http_buf *b);
/* Bytes pending: len - off. */
size_t http_buf_pending(const struct http_buf *b);
/* Drop everything (keeps the storage). */
void http_buf_clear(struct http_buf *b);
/* Make room for n more bytes and return where they go; then http_buf_commit. */
char *http_buf_reserve(struct http_buf *b, size_t n);
void http_buf_commit(struct http_buf *b, size_t n);
void http_buf_append(struct http_buf *b, const void *p, size_t n);
void http_buf_puts(struct http_buf *b, const char *s);
/* printf-style append (via vsnprintf). */
void http_buf_printf(struct http_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s[0, n) as the inside of a JSON string (no quotes): escapes '"',
 * '\\', control bytes and DEL (ll_json_escape); other bytes are copied
 * as they are. */
void http_buf_json_escape(struct http_buf *b, const char *s, size_t n);
/* Append a decimal unsigned number. */
void http_buf_u64(struct http_buf *b, uint64_t v);
/* Mark n pending bytes as written; compacts when the buffer empties. */
void http_buf_consume(struct http_buf *b, size_t n);

#endif
