/* record.h: one record per scheduled request, whatever happened to it.
 *
 * This is the in-memory form of a line of requests.jsonl (docs/formats.md
 * documents every field); record.c writes the line and reads it back, so
 * one file owns the wire format. Times are CLOCK_MONOTONIC nanoseconds
 * relative to the run start; LL_NO_TIME marks a time that never happened
 * (written as null). Latencies are derived from these, never stored. */
#ifndef LL_RECORD_H
#define LL_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LL_NO_TIME UINT64_MAX

/* What happened to a request. "ok" or one error kind; the JSON names are
 * rec_kind_name(). Order is part of nothing public: names are. */
enum rec_kind {
    REC_OK,
    REC_HTTP_429,
    REC_HTTP_5XX,
    REC_HTTP_4XX,
    REC_HTTP_OTHER, /* 1xx/3xx or anything unexpected */
    REC_TIMEOUT_CONNECT,
    REC_TIMEOUT_FIRST_TOKEN,
    REC_TIMEOUT_IDLE,
    REC_TIMEOUT_TOTAL,
    REC_CONNECT_ERROR,
    REC_STREAM_TRUNCATED,   /* the stream closed before [DONE] / finish */
    REC_MALFORMED_EVENT,    /* an event whose data is not the expected JSON */
    REC_LINE_TOO_LONG,      /* an SSE line over the decoder's bound */
    REC_SERVER_ERROR_EVENT, /* an error object inside the stream */
    REC_CANCELLED,          /* cancelled by the client (Ctrl-C grace expired, workload) */
    REC_CLIENT_DROPPED,     /* never sent: --on-cap drop, --max-inflight, spend guard */
    REC_TRANSPORT_ERROR,    /* any other libcurl failure (TLS, DNS, resources) */
    REC_OVERLOADED_EVENT,   /* the stream said the server is overloaded (Anthropic's
                              * overloaded_error event) */
    REC_KIND_COUNT
};

/* The JSON name of a kind ("ok", "http_429", ...). Static string. */
const char *rec_kind_name(enum rec_kind k);
/* The kind named s, or -1. */
int rec_kind_from_name(const char *s);

enum rec_tokens_source {
    REC_TOKENS_USAGE,        /* the final usage object */
    REC_TOKENS_CHUNK_USAGE,  /* per-chunk (continuous) usage */
    REC_TOKENS_EVENTS,       /* counted content-bearing events */
};
const char *rec_tokens_source_name(enum rec_tokens_source s);

/* Bytes of a record's finish_reason, NUL included: as the decoder's
 * (struct oai_chunk), which keeps at most 31 bytes of the server's string
 * (15 before "incomplete:max_output_tokens" and Anthropic's
 * "model_context_window_exceeded" had to fit). */
#define REC_FINISH_REASON_MAX 32

struct record {
    uint64_t id;                 /* schedule index, 0-based */
    enum rec_kind kind;
    int http_status;             /* 0 when no response status was read */
    uint64_t sched_ns;           /* when the schedule said to send */
    uint64_t sent_ns;            /* handed to the transport (LL_NO_TIME if never) */
    uint64_t late_ns;            /* schedule lateness of its send: when the generator
                                  * dispatched it minus sched_ns (a wait for a slot at
                                  * --max-concurrency is client queue, not lateness);
                                  * LL_NO_TIME if never sent or not recorded */
    uint64_t first_ns;           /* first output-bearing event (content, reasoning or tool call) */
    uint64_t first_content_ns;   /* first event with visible content text */
    uint64_t last_ns;            /* last output-bearing event */
    uint64_t end_ns;             /* stream closed or error known */
    uint64_t max_gap_ns;         /* largest gap between output events (0 if < 2) */
    uint32_t prompt_tokens;      /* requested (what we built) */
    int64_t prompt_tokens_server;/* usage.prompt_tokens, -1 if not reported */
    int64_t cached_tokens;       /* usage.prompt_tokens_details.cached_tokens, -1 if none */
    uint32_t max_tokens;         /* requested output cap */
    int ignore_eos;              /* 1: the request asked for exactly max_tokens ("ignore_eos") */
    uint32_t images;             /* images the request carried (written only when > 0) */
    uint64_t request_bytes;      /* bytes of the request's body as sent (0: none built) */
    uint64_t output_tokens;      /* from tokens_source */
    enum rec_tokens_source tokens_source;
    uint64_t events;             /* output-bearing events received */
    char finish_reason[REC_FINISH_REASON_MAX]; /* the API's own finish_reason (the first one
                                  * the response carried), "" when none came (written as null) */
    int64_t retry_after_ms;      /* a 429's Retry-After, -1 if none */
    uint32_t worker;             /* worker thread that ran it */
    int64_t user;                /* closed loop: the user index, else -1 */
    int warmup;                  /* 1 = scheduled in the warm-up (written, not summarised) */
    int cold;                    /* 1 = one of the first --cold-start requests (summarised
                                  * apart, never in the warm figures); written only when 1 */
    int32_t step;                /* sweep step index, -1 outside a sweep (then not written) */
    int32_t class_idx;           /* traffic class index, -1 without classes */
    const char *cls;             /* its name (borrowed from the workload), NULL = none */
    int64_t session;             /* session index, -1 outside sessions (then not written) */
    int32_t turn;                /* 0-based turn in the session, -1 = none (not written) */
    int32_t endpoint;            /* which --url carried it (0-based) when the run has
                                  * several, -1 = one (then not written) */
    uint32_t inputs;             /* openai-embeddings: the inputs the request carried (its
                                  * prompt_tokens are all of theirs); 0 for every other API
                                  * (then not written) */
    char detail[120];            /* short error detail, "" when ok */
};

/* Reset r to an empty record for schedule index id: every time LL_NO_TIME,
 * counts zero, optional numbers -1, kind REC_OK. */
void record_init(struct record *r, uint64_t id);

/* Bytes of a class name in a record, NUL included (as WL_NAME_MAX): the
 * writer writes at most this many bytes of r->cls, and the reader keeps a
 * "class" only when it is shorter than its buffer (at most this size). */
#define REC_CLASS_NAME_MAX 64

/* Write r as one JSON line (with '\n') to f. Returns 0 or LL_E_IO.
 * Allocates nothing. */
int record_write_jsonl(FILE *f, const struct record *r);

/* Parse one requests.jsonl line (len bytes, a trailing newline allowed)
 * into r, the inverse of record_write_jsonl. "id", "kind" and a non-null
 * "sched_ns" are required, and a time must be a non-negative integer or
 * null. Any other field that is absent, null or out of its type's range
 * keeps record_init's value (0 for counts, -1 for the optional numbers),
 * except tokens_source: "usage" when absent or unknown. class_idx is not
 * in the line and stays -1. When cls is not NULL, the line's "class" is copied into cls
 * (cls_len bytes) if it fits, NUL included, and r->cls points at cls;
 * otherwise r->cls is NULL. Returns 0, or LL_E_INVAL with a reason in err
 * (errlen bytes). Allocates only inside the call (jansson). */
int record_parse_jsonl(const char *line, size_t len, struct record *r, char *cls,
                       size_t cls_len, char *err, size_t errlen);

/* Called by record_read_file once per record, in file order. r and r->cls
 * are borrowed for the call only. */
typedef void record_read_cb(void *ud, const struct record *r);

/* Read the requests.jsonl file at path from byte offset from (0 = the
 * start) to its end, calling cb(ud, r) for each record; blank lines are
 * skipped. Returns 0, or LL_E_IO (open, seek or read) / LL_E_INVAL (a line
 * that does not parse, or one request's id, of one step, on two lines)
 * with "path: reason" or "path:line: reason" in err (line numbers count
 * from the offset). Records before a bad line have been passed to cb (a
 * repeated one: every record). */
int record_read_file(const char *path, uint64_t from, record_read_cb *cb, void *ud,
                     char *err, size_t errlen);

/* The words of a request's line seen twice in the requests.jsonl at path,
 * into err: "path:LINE: request id ID of step STEP again (first at line
 * FIRST_LINE): ..." (no step when step < 0). record_read_file and a
 * merge's reading of its parts say it alike. */
void record_repeat_text(char *err, size_t errlen, const char *path, uint32_t line, uint64_t id,
                        int64_t step, uint32_t first_line);

/* Whether the request of schedule index id (session: its session index
 * in a session run, else -1) is one of the first cold_n of a run or step, the
 * cold start (--cold-start): id < cold_n, or in a session run, session <
 * cold_n (every turn of the first cold_n sessions). 0 when cold_n is 0. */
int record_in_cold_start(uint64_t id, int64_t session, uint64_t cold_n);

/* Derived latencies, LL_NO_TIME when undefined. */
uint64_t record_ttft_ns(const struct record *r);        /* first - sched */
uint64_t record_ttft_server_ns(const struct record *r); /* first - sent */
uint64_t record_e2e_ns(const struct record *r);         /* end - sched */
uint64_t record_tpot_ns(const struct record *r);        /* (last-first)/(out-1), out >= 2, events >= 2 */
uint64_t record_itl_req_ns(const struct record *r);     /* (last-first)/(events-1), events >= 2:
                                                          * the request's mean gap (ITL per request) */

#endif
