/* backend.h: the operations table an HTTP client implements behind the
 * transport, and what the transport lends it. Internal to src/http/.
 *
 * transport.c owns what every client shares: the request slots and their
 * bodies, the epoll + timerfd loop, our timeouts, and the decoding of each
 * response into its record (status and header lines, body bytes, SSE
 * events, then outcome_decide). A backend only moves bytes: curl.c drives
 * libcurl's multi_socket API, native.c our own HTTP/1.1 connections. A new
 * client (HTTP/2 of our own, say) is one new file that fills a struct
 * backend_ops, registers its sockets on the transport's epoll set, stamps
 * each read with ll_now_ns() the moment read() returns, and hands the bytes
 * to transport_header_line and transport_body_bytes.
 *
 * Cost: the loop calls through this table once or twice per request (send,
 * detach) and once per socket event, never per token; what a backend calls
 * back (the decoding) are direct calls.
 *
 * A backend includes http/transport.h for the configuration's fields; this
 * header does not, because transport.c includes it (check-layers counts a
 * header that includes its includer back as a cycle). */
#ifndef LL_BACKEND_H
#define LL_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "decode/openai.h"
#include "decode/sse.h"
#include "http/outcome.h"
#include "measure/record.h"
#include "workload/endpoints.h"

struct transport;        /* transport.c */
struct transport_config; /* http/transport.h */

/* epoll data: the low 3 bits say what an event is for. The loop owns SCHED
 * and WAKE and hands every other event to the backend. A native
 * connection's pointer (16-byte aligned) has them 0. */
#define BACKEND_TAG_MASK 7u
#define BACKEND_TAG_CONN 0u  /* native.c: a connection, the pointer itself */
#define BACKEND_TAG_CURL 1u  /* curl.c: libcurl's socket, fd in the upper bits */
#define BACKEND_TAG_SCHED 2u /* the schedule timerfd */
#define BACKEND_TAG_WAKE 3u  /* the wake eventfd */

/* The first bytes of an error status's body, and of a 200 stream's body
 * before its first SSE event: 1 KiB holds the whole of an error object
 * sent where a stream was asked for (transport_stream_error). */
#define BACKEND_ERRBODY_BYTES 1024

/* One request slot: the part every backend shares. A backend's own request
 * struct starts with it (backend_ops.req_bytes says how big the whole is),
 * so a struct treq * and the backend's pointer are the same address. Slots
 * are reused: after warm-up nothing is allocated per request. Written by
 * transport.c except where a field says so. */
struct transport_config;
struct stats;

struct treq {
    struct transport *t;
    /* t's configuration and stats, for the decoding (respdecode.c), which
     * does not see inside struct transport. */
    const struct transport_config *cfg;
    struct stats *stats;
    struct record rec;
    struct sse_parser sse;
    struct oai_memo memo;     /* the stream's last chunk, for oai_decode_chunk_memo */
    char *body;               /* request body, reused (read by the backend) */
    size_t body_len, body_cap;
    char *resp;               /* non-stream response body, reused */
    size_t resp_len, resp_cap;
    char errbody[BACKEND_ERRBODY_BYTES]; /* see BACKEND_ERRBODY_BYTES; reused */
    size_t errbody_len;                  /* bytes, < BACKEND_ERRBODY_BYTES */
    uint64_t sent_abs_ns;     /* handed to the backend (CLOCK_MONOTONIC) */
    uint64_t last_read_abs_ns; /* the backend: its last read for this request */
    uint64_t read_abs_ns;     /* the backend: time of the read being decoded, set before
                                 transport_header_line / transport_body_bytes */
    uint64_t connecting_since_abs_ns; /* the backend: its connect() for this request
                                         is in progress since then; 0 = none */
    int status_seen;
    int64_t retry_at_s, date_s; /* a Retry-After HTTP-date, and the Date beside it */
    enum rec_kind forced;     /* a kind decided before the transfer ended */
    int has_forced;
    int saw_done, saw_finish;
    uint32_t usage_chunks_with_output;
    int64_t usage_completion_tokens;
    enum oai_api api;         /* this request's API path and chunk format */
    uint32_t ep;              /* which of the run's endpoints carries it (0 with one) */
    int abort;                /* 1: the backend stops the transfer at its next callback */
    uint64_t last_event_abs_ns;   /* last output event (the idle timeout counts from it) */
    uint64_t done_abs_ns;         /* when [DONE] arrived, 0 before */
    uint32_t sse_events;          /* SSE events of any kind in this response */
    uint64_t resp_len_seen;       /* body bytes of a 200 stream */
    uint64_t cancel_after_events; /* workload cancellation after N output events, 0 = none */
    uint64_t cancel_at_abs_ns;    /* workload cancellation at this time, 0 = none */
    struct treq *next, *prev; /* active list, or free list (next only) */
};

/* What the transport lends a backend at start, valid for its whole life. */
struct backend_env {
    const struct transport_config *cfg;
    int epfd;                 /* register sockets here, tagged as above */
    uint32_t n_ep;            /* endpoints, >= 1 */
    const char *base_url[ENDPOINTS_MAX];           /* each endpoint's API base */
    const char *url[ENDPOINTS_MAX][OAI_API_COUNT]; /* the full URL, by endpoint and
                                                    * enum oai_api */
};

/* How a transfer failed, in the words of the client that carried it. */
struct xfer_error {
    enum outcome_xfer xfer;   /* never OUTCOME_XFER_NONE */
    const char *detail;       /* the client's own words (copied into the record) */
    int os_errno;             /* the errno behind it, 0 = not known */
    int fd_probe_errno;       /* errno of opening one more descriptor now, 0 = it opened */
};

/* A backend. be is what start returned; q a slot of req_bytes. Functions
 * marked "may be NULL" are optional. */
struct backend_ops {
    size_t req_bytes; /* the backend's request struct, starting with struct treq */
    /* Set up for env. Returns the backend's state, or NULL with a reason in
     * err. */
    void *(*start)(const struct backend_env *env, char *err, size_t errlen);
    /* Free the state: every request is finished and every slot freed. */
    void (*stop)(void *be);
    /* A new slot, its shared part set up (q->api included): 0, or -1 with a
     * reason in err. May be NULL. */
    int (*slot_init)(void *be, struct treq *q, char *err, size_t errlen);
    /* Undo slot_init (the slot's memory is the transport's). May be NULL. */
    void (*slot_free)(void *be, struct treq *q);
    /* q->api or q->ep is not the one the slot last carried. May be NULL. */
    void (*set_api)(void *be, struct treq *q);
    /* Send q: its body is built, its sent time taken, it is in flight.
     * Returns 0 (a failure from here on finishes q through transport_finish
     * or transport_finish_failed, maybe before send returns), or -1 with
     * q->rec.detail set when it could not even be started (the transport
     * records it as transport_error). */
    int (*send)(void *be, struct treq *q);
    /* q is finishing (its record decided): let go of it. */
    void (*detach)(void *be, struct treq *q);
    /* One epoll event on what the backend registered. */
    void (*event)(void *be, const struct epoll_event *ev);
    /* Run what the client's own timers made due and finish what completed.
     * Returns when it next needs to run (CLOCK_MONOTONIC; UINT64_MAX =
     * only on its events). May be NULL. */
    uint64_t (*service)(void *be);
    /* q's connect has been in progress for --timeout-connect: 1 when the
     * backend went on to the host's next address (q stays in flight), 0
     * when q ends as timeout_connect. May be NULL (then
     * connecting_since_abs_ns is never set). */
    int (*connect_expired)(void *be, struct treq *q);
    /* When the schedule is far behind, would reading all that is ready
     * before the due sends free connections for them? finished: requests
     * the transport finished so far. May be NULL (never read ahead). */
    int (*read_ahead_frees)(void *be, uint64_t finished);
};

extern const struct backend_ops backend_curl;   /* curl.c */
extern const struct backend_ops backend_native; /* native.c */

/* What the transport lends its backend: the decoding, and finishing. */

/* One response header line (or the status line), with or without its line
 * end, read at q->read_abs_ns. Returns 1 when the transfer must stop. */
int transport_header_line(struct treq *q, const char *line, size_t len);

/* len response body bytes (no transfer framing) read at q->read_abs_ns.
 * Returns 1 when the transfer must stop (the kind is already decided). */
int transport_body_bytes(struct treq *q, const char *buf, size_t len);

/* Decide q's kind now, with detail (NULL: none); a kind decided earlier
 * stands. */
void transport_force_kind(struct treq *q, enum rec_kind kind, const char *detail);

/* respdecode.c's, for transport.c: the SSE parser's event callback (ud
 * is the treq); the decoded non-stream body (its usage, finish and error
 * into c and the record; the outcome's view of it); an error status's
 * body quoted into the record's detail. */
int transport_on_sse_event(void *ud, const struct sse_event *ev);
enum outcome_body transport_take_body(struct treq *q, struct oai_chunk *c);
void transport_errbody_detail(struct treq *q);
/* A 200 stream that brought no SSE event: its first bytes (q->errbody)
 * decoded as a plain body of q's API; an error there forces
 * server_error_event (overloaded_event when it says so) with its message,
 * where the stream would be malformed_event. Nothing when a kind is
 * already forced, an event came, or the bytes hold no error. */
void transport_stream_error(struct treq *q);

/* q ended at end_abs_ns (CLOCK_MONOTONIC): decide its record, hand it to
 * the transport's caller (backend_ops.detach first), and put the slot back.
 * q must not be used after. transport_finish_failed: the transfer failed
 * as xe says. */
void transport_finish(struct treq *q, uint64_t end_abs_ns);
void transport_finish_failed(struct treq *q, const struct xfer_error *xe, uint64_t end_abs_ns);

#endif
