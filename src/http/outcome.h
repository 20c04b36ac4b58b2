/* outcome.h: what happened to a request, decided once from what the
 * transport saw: the record's kind and where its output token count comes
 * from.
 *
 * This is the one home of that rule for both HTTP clients (libcurl and the
 * native HTTP/1.1 path): the transport gathers the facts of a finished
 * request into a struct outcome_in and writes the record from the struct
 * outcome that outcome_decide returns. Pure: no I/O, no clock, no state,
 * so tests/unit/test_outcome.c holds it to every combination of its inputs. */
#ifndef LL_OUTCOME_H
#define LL_OUTCOME_H

#include <stdint.h>

#include "measure/record.h"

/* How the transfer itself failed, in words common to every HTTP client (the
 * libcurl backend maps its CURLcode to one of these). */
enum outcome_xfer {
    OUTCOME_XFER_NONE,    /* the transfer ended cleanly, or was never asked about */
    OUTCOME_XFER_TIMEOUT, /* the client's own timeout (libcurl's connect timeout) */
    OUTCOME_XFER_CONNECT, /* could not connect, or resolve the host or proxy */
    OUTCOME_XFER_CUT,     /* reset or closed: before a status line, or mid-response */
    OUTCOME_XFER_OTHER    /* anything else (TLS, protocol, an aborted write) */
};

/* A non-stream 200 response's body, decoded (read only where the decision
 * gets that far: outcome_reads_body). */
enum outcome_body {
    OUTCOME_BODY_NOT_JSON,  /* not the API's response JSON */
    OUTCOME_BODY_ERROR,     /* JSON with an error object in it */
    OUTCOME_BODY_OK,        /* the response; its usage and output already taken */
    OUTCOME_BODY_OVERLOADED /* an error object saying overloaded (Anthropic's
                             * overloaded_error), as its streamed event is */
};

/* The facts of one finished request. */
struct outcome_in {
    int forced;                  /* 1: a kind was decided while the request ran */
    enum rec_kind forced_kind;   /* that kind (a timeout, a cancellation, a bad event, ...) */
    enum outcome_xfer xfer;      /* how the transfer failed, NONE if it did not */
    int status_seen;             /* 1: a status line was read before it failed */
    int os_errno;                /* the errno behind xfer, 0 = not known */
    int fd_probe_errno;          /* errno of opening one more descriptor then, 0 = it opened */
    int http_status;             /* the last status line's code, 0 = none */
    int stream;                  /* 1: an SSE stream was asked for */
    int saw_done;                /* the stream's [DONE] was read */
    int saw_finish;              /* an event with a finish_reason was read */
    uint32_t sse_events;         /* SSE events of any kind read */
    uint64_t stream_bytes;       /* body bytes of a 200 stream */
    enum outcome_body body;      /* a non-stream 200 body; see outcome_reads_body */
    uint32_t usage_chunks_with_output; /* stream chunks carrying both usage and output */
    int64_t usage_completion_tokens;   /* the last usage's completion_tokens, -1 = none */
};

/* Why the kind is what it is: says which detail text the record gets. */
enum outcome_why {
    OUTCOME_WHY_FORCED,          /* forced_kind: its detail was written when it was decided */
    OUTCOME_WHY_XFER,            /* the transfer failed: the client's own words */
    OUTCOME_WHY_XFER_OUT_OF_FDS, /* transport_error: the client is out of file descriptors */
    OUTCOME_WHY_XFER_OUT_OF_PORTS, /* transport_error: the client is out of ephemeral ports */
    OUTCOME_WHY_HTTP_STATUS,     /* a status other than 200: the start of its body */
    OUTCOME_WHY_STREAM_DONE,     /* ok: the stream ended with [DONE] or a finish_reason */
    OUTCOME_WHY_STREAM_NOT_SSE,  /* malformed_event: a 200 body but not one SSE event */
    OUTCOME_WHY_STREAM_CUT,      /* stream_truncated: ended without [DONE] or finish_reason */
    OUTCOME_WHY_BODY_NOT_JSON,   /* malformed_event: the body is not the expected JSON */
    OUTCOME_WHY_BODY_ERROR,      /* server_error_event: the body is an error object */
    OUTCOME_WHY_BODY_OK          /* ok: a complete non-stream response */
};

struct outcome {
    enum rec_kind kind;
    enum outcome_why why;
    enum rec_tokens_source tokens_source; /* CHUNK_USAGE or USAGE: usage_completion_tokens;
                                             EVENTS: the record's counted events */
};

/* The record kind a failed transfer alone means: a timeout before any
 * status line is timeout_connect, after one timeout_total; a cut before a
 * status line is connect_error (the connection failed), after one
 * stream_truncated. REC_OK for OUTCOME_XFER_NONE. */
enum rec_kind outcome_xfer_kind(enum outcome_xfer xfer, int status_seen);

/* 1 when outcome_decide(in) reads in->body: a non-stream 200 response
 * whose kind nothing before the body decided. The caller decodes the body
 * only then (and takes its usage into usage_completion_tokens). */
int outcome_reads_body(const struct outcome_in *in);

/* Decide, in this order: a forced kind; a failed transfer (unless it cut a
 * stream already complete at [DONE]), relabelled transport_error when the
 * client itself was out of descriptors or ports; a status other than 200
 * (http_429, http_5xx, http_4xx, http_other); a stream (ok at [DONE] or a
 * finish_reason, malformed_event when bytes came but no event, else
 * stream_truncated); a non-stream body. tokens_source, whatever the kind:
 * CHUNK_USAGE when more than one output chunk carried usage, USAGE when any
 * usage came, EVENTS otherwise. */
struct outcome outcome_decide(const struct outcome_in *in);

#endif
