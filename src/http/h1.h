/* h1.h: an HTTP/1.1 response parser, for the client's plain-HTTP path.
 *
 * Bytes in, callbacks out; the parser does no I/O and keeps no pointer to
 * the bytes it is fed. It reads one response at a time: a status line,
 * header lines, then a body framed by Transfer-Encoding: chunked, by
 * Content-Length, or by the connection's close (HTTP/1.0 style). Interim
 * 1xx responses (except 101) are passed on and skipped. Lines may end in
 * CRLF or a bare LF, and the bytes may be split anywhere.
 *
 * The header callback sees the status line and each header line as sent,
 * without the line ending (trailer lines after the last chunk are read and
 * skipped); the body callback sees the body with any chunk framing
 * removed, in the pieces it arrived in (no copy for body bytes). A
 * Transfer-Encoding whose last coding is not chunked means the body runs
 * until the close. An error is sticky: every later feed returns it again
 * until h1_parser_reset. Responses to HEAD are not supported (llmload
 * never sends one). */
#ifndef LL_H1_H
#define LL_H1_H

#include <stddef.h>
#include <stdint.h>

#define H1_MAX_LINE_BYTES (16u << 10)    /* one status, header or chunk-size line */
#define H1_MAX_HEADER_BYTES (100u << 10) /* the whole header section */

/* Returned by h1_parser_feed and h1_parser_eof. */
enum h1_result {
    H1_MORE = 0,   /* the response is not complete yet: feed more */
    H1_DONE = 1,   /* the response is complete */
    H1_STOPPED = 2 /* a callback returned non-zero: stop reading this response */
};

/* Both callbacks return 0 to go on, non-zero to stop. */
typedef int h1_header_cb(void *ud, const char *line, size_t len);
typedef int h1_body_cb(void *ud, const char *buf, size_t len);

struct h1_parser {
    int state;
    int status;              /* last status code seen, 0 before one */
    int http_minor;          /* 0 for HTTP/1.0, 1 for HTTP/1.1 */
    int keep_alive;          /* the connection may carry another request */
    int chunked;
    int has_length;
    int conn_header;         /* what Connection: said so far (h1.c) */
    uint64_t content_length;
    uint64_t remaining;      /* body or chunk bytes still to come */
    uint64_t bytes_seen;     /* every byte fed for this response */
    size_t header_bytes;     /* header section so far */
    char *line;              /* a line split across feeds, kept until it ends */
    size_t line_len, line_cap;
    char line_small[128];    /* most split lines fit here: no allocation */
    const char *error;       /* why the response is invalid (static text) */
    h1_header_cb *on_header;
    h1_body_cb *on_body;
    void *ud;
};

/* Prepare p for a first response; the callbacks (either may be NULL) get
 * ud. A line longer than line_small that arrives split is kept on the heap
 * (at most H1_MAX_LINE_BYTES + 1 bytes, room for its CR): free with
 * h1_parser_free. */
void h1_parser_init(struct h1_parser *p, h1_header_cb *on_header, h1_body_cb *on_body, void *ud);

/* Release what the parser allocated. NULL is fine. */
void h1_parser_free(struct h1_parser *p);

/* Forget the current response and expect a new one (same callbacks). */
void h1_parser_reset(struct h1_parser *p);

/* Feed len bytes (buf may be NULL when len is 0). Returns H1_MORE, H1_DONE
 * (the response ended; *used says how many of the len bytes belong to it,
 * the rest are the start of something else), H1_STOPPED (a callback said
 * stop; *used as far as it got), or LL_E_PROTO when the bytes are not a
 * valid response (p->error says why; the connection must be closed). */
int h1_parser_feed(struct h1_parser *p, const char *buf, size_t len, size_t *used);

/* The connection closed after the bytes fed so far. Returns H1_DONE when
 * that ends the response (a body framed by the close), or LL_E_PROTO with
 * p->error saying what was missing. */
int h1_parser_eof(struct h1_parser *p);

/* Nonzero once a status line (final or interim) has been read. */
int h1_parser_status_seen(const struct h1_parser *p);

/* Nonzero once the final response's headers have ended (its body, if any,
 * is being read, or the response is done). */
int h1_parser_in_body(const struct h1_parser *p);

#endif
