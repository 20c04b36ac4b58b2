/* sse.h: a Server-Sent Events decoder (WHATWG HTML, "event stream
 * interpretation"): bytes in, events out, no I/O.
 *
 * The parser is embedded in its owner (one per connection or per worker
 * slot) and reused across requests with sse_parser_reset(), so after warm-up
 * decoding allocates nothing: not per event, not per request. docs/decoding.md
 * lists the rules implemented and the few places we differ from the spec on
 * purpose (end of stream). */
#ifndef LL_SSE_H
#define LL_SSE_H

#include <stddef.h>

/* The default bound on one line, and on one event's joined data. */
#define SSE_DEFAULT_MAX_LINE (256 * 1024)

/* One dispatched event. Every pointer is a view that is valid only during
 * the callback (it may point into the buffer being fed or into the
 * parser's own buffers); none is NUL-terminated. data joins the event's
 * `data` lines with "\n". event is the last `event` field's value, empty
 * (event_len 0) when the event had none: the spec's default type "message"
 * is left to the caller; an `error` field, which is not in the spec
 * (llama.cpp's failed streams), names its event "error" and is its data.
 * id is the last event ID, which per the spec
 * persists across events until an `id` field changes it. */
struct sse_event {
    const char *data;
    size_t data_len;
    const char *event;
    size_t event_len;
    const char *id;
    size_t id_len;
    int unterminated;            /* 1 when dispatched by sse_parser_finish() without its blank line */
};

/* Called once per event. Return 0 to go on, nonzero to stop: the feed (or
 * finish) then returns that value at once and drops the rest of its input. */
typedef int sse_event_cb(void *ud, const struct sse_event *ev);

/* Parser state; fields are private. Embedded, caller-owned. */
struct sse_parser {
    size_t max_line_bytes;       /* bound on a line and on an event's data */
    char *line_buf;              /* a line split across feeds */
    size_t line_len, line_cap;   /* bytes */
    char *data_buf;              /* the pending event's data, when copied */
    size_t data_len, data_cap;   /* bytes */
    const char *data_view;       /* ...or a view into the buffer being fed */
    size_t data_view_len;        /* bytes */
    int data_state;              /* none, view or owned (sse.c) */
    char *event_buf;
    size_t event_len, event_cap; /* bytes */
    char *id_buf;
    size_t id_len, id_cap;       /* bytes */
    unsigned bom_state;          /* bytes of a leading BOM matched; 3 once past it */
    int skip_lf;                 /* the last feed ended in CR: drop a leading LF */
    int error;                   /* sticky LL_E_PROTO after an over-long line */
};

/* Make p ready for a stream. max_line_bytes bounds a line (terminator
 * excluded) and an event's joined data; 0 means SSE_DEFAULT_MAX_LINE. The
 * parser allocates small buffers here and grows them (doubling, never past
 * the bound) only when a longer line or event arrives, so its memory is at
 * most about 4 * max_line_bytes and, once warm, decoding allocates nothing.
 * Aborts on out of memory (ll_malloc). Free with sse_parser_free(). */
void sse_parser_init(struct sse_parser *p, size_t max_line_bytes);

/* Forget the current stream (pending line, pending event, last event ID,
 * BOM state, error) and keep the buffers, ready for a new stream. */
void sse_parser_reset(struct sse_parser *p);

/* Release the buffers. p may be NULL; a freed parser must be initialised
 * again before use. */
void sse_parser_free(struct sse_parser *p);

/* Feed len bytes of the body (len may be 0; buf need not be
 * NUL-terminated). Bytes may split anywhere, even inside a CRLF or the BOM.
 * Calls cb once per complete event, in order. The parser keeps no pointer
 * into buf after it returns (a pending event is copied). Returns 0, the
 * callback's nonzero value (the rest of buf is then dropped: reset before
 * feeding another stream), or LL_E_PROTO when a line or an event's data
 * exceeds max_line_bytes; the parser then answers LL_E_PROTO to every feed
 * and finish until reset. Linear in len. */
int sse_parser_feed(struct sse_parser *p, const char *buf, size_t len,
                    sse_event_cb *cb, void *ud);

/* End of stream. A final line that had no terminator is taken as a line,
 * and a pending event with data but no blank line after it is dispatched
 * with unterminated = 1 (the caller decides how to count it). Then the
 * pending state is cleared. Returns like sse_parser_feed(). */
int sse_parser_finish(struct sse_parser *p, sse_event_cb *cb, void *ud);

#endif
