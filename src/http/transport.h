/* transport.h: one worker's HTTP client, streaming responses decoded as
 * they are read, on our own epoll + timerfd loop.
 *
 * Two clients carry the requests (transport_client_choose picks one per
 * transport; docs/http-client.md): our own HTTP/1.1 connections (native.c)
 * for a plain http:// target, and libcurl's multi_socket API (curl.c) for
 * TLS, HTTP/2 and proxies. What a response means is decided once for both
 * (transport.c, outcome.c), so a record reads the same whichever carried it.
 *
 * A transport belongs to one thread. The thread submits requests and calls
 * transport_poll in a loop; finished requests come back through the done
 * callback as complete records (exactly one per submitted request, whatever
 * happens to it). Timestamps are taken when bytes are read (the moment
 * read() returns on the native path, on entry to libcurl's write callback),
 * before any parsing. */
#ifndef LL_TRANSPORT_H
#define LL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "decode/openai.h"
#include "measure/record.h"
#include "measure/stats.h"
#include "workload/chatbody.h"
#include "workload/endpoints.h"
#include "workload/extrabody.h"
#include "workload/workload.h"

struct curl_slist;

/* Which HTTP client carries the requests. AUTO takes the plain-HTTP/1.1
 * client written here (src/http/native.c, src/http/h1.c) for an http://
 * URL with no proxy in the environment and no --http2, and libcurl for
 * everything else (TLS, HTTP/2, proxies). */
enum transport_client {
    TRANSPORT_CLIENT_AUTO = 0,
    TRANSPORT_CLIENT_NATIVE, /* plain HTTP/1.1 only; an https:// URL is an error */
    TRANSPORT_CLIENT_CURL
};

struct transport_config {
    const char *base_url; /* API base, e.g. http://127.0.0.1:8000/v1 (with
                                      * several endpoints, the first's) */
    /* Several --url: their bases and which carries each request
     * (endpoints_for_spec); n < 2 = base_url alone, and records carry
     * no endpoint. The client is chosen for them all (native only when
     * every one can use it). */
    struct endpoints endpoints;
    enum oai_api api;                /* which endpoint and chunk format */
    int stream;                      /* 1 = SSE streaming, 0 = one JSON body */
    const char *model;               /* model name (JSON-escaped by the transport) */
    int ignore_eos;                  /* send "ignore_eos": true */
    int prompt_ids;                  /* completions: send the prompt as token IDs */
    struct chatbody_id_range prompt_id_range; /* ...drawn from these (--prompt-id-range) */
    /* Extra body fields (--extra-body, classes' extra_body), borrowed:
     * extra[1 + class_idx] for a request of a --workload class when
     * n_extra > 1, else extra[0]. NULL = none. */
    const struct extrabody *extra;
    size_t n_extra;
    const struct curl_slist *headers;/* extra request headers (borrowed; may be NULL) */
    int http2;                       /* negotiate HTTP/2 */
    enum transport_client client;    /* which HTTP client (AUTO by default) */
    int insecure;                    /* skip TLS verification */
    const char *cacert;              /* CA bundle path or NULL */
    uint64_t connect_timeout_ns;     /* 0 = libcurl's default, the kernel's on native */
    uint64_t first_token_timeout_ns; /* from sent to first output event; 0 = none */
    uint64_t idle_timeout_ns;        /* max gap between output events; 0 = none */
    uint64_t total_timeout_ns;       /* from sent to end; 0 = none */
    size_t max_line_bytes;           /* SSE line bound */
    uint64_t seed;                   /* prompt nonce seed */
    uint64_t run_start_ns;           /* CLOCK_MONOTONIC origin of record times */
    uint64_t warmup_ns;              /* requests scheduled before this add no ITL gaps */
    uint64_t cold_requests;          /* nor do the cold start's (record_in_cold_start) */
    int cold_by_session;             /* 1: ...counted by session (a session run) */
    int cancels;                     /* 1: some requests cancel after a drawn time */
    uint32_t worker;                 /* index written into records */
};

/* Called once per finished request. r is valid only during the call. */
typedef void transport_done_cb(void *ud, struct record *r);

/* Create a transport on the client transport_client_choose picks. stats
 * is borrowed and receives per-gap ITL samples on the hot path (the caller
 * adds whole records itself in the callback). Returns NULL with a reason
 * in err. Caller frees with transport_free. */
struct transport *transport_new(const struct transport_config *cfg, struct stats *stats,
                                transport_done_cb *done, void *ud, char *err, size_t errlen);

/* Finish every request still in flight as cancelled, through the done
 * callback, then free everything. NULL is fine. */
void transport_free(struct transport *t);

/* Start request spec now. sched_ns is its scheduled time relative to the
 * run start; late_ns its schedule lateness when the generator dispatched
 * it (the record's late_ns; LL_NO_TIME = not known); user is the
 * closed-loop user or -1. Calls done before it
 * returns when the request cannot be started: transport_error (no slot, or
 * libcurl refused it), or on the native client what connect() said at once
 * (connect_error, or transport_error when the client is out of descriptors
 * or ports). The native client sends it here; on libcurl it is on the wire
 * after the next transport_kick or transport_poll. */
void transport_submit(struct transport *t, const struct req_spec *spec, uint64_t sched_ns,
                      uint64_t late_ns, int64_t user);

/* Do now the costly part of building spec's body that does not depend on
 * when it is sent: encode its images (none: nothing to do). The driver
 * calls it for the next scheduled arrival before it sleeps until that
 * arrival's time, so encoding is not counted in its latency; a
 * transport_submit of the same request then reuses them (of any other, or
 * after another request's images were encoded, it encodes its own). The
 * transport holds one request's images. */
void transport_prepare(struct transport *t, const struct req_spec *spec);

/* Let libcurl start what was submitted (call after a batch of submits;
 * the native client sends in transport_submit, and this does nothing). */
void transport_kick(struct transport *t);

/* Wait for I/O until deadline_abs_ns (CLOCK_MONOTONIC; UINT64_MAX = no
 * deadline) or until something happens, process it, and return. Returns
 * after at most one epoll wait, so the caller re-plans after every batch
 * of events. */
void transport_poll(struct transport *t, uint64_t deadline_abs_ns);

/* Wake a transport_poll blocked in another thread. Async-signal-safe. */
void transport_wake(struct transport *t);

/* The client a transport made from cfg uses: TRANSPORT_CLIENT_NATIVE or
 * TRANSPORT_CLIENT_CURL, by cfg->client, then LLMLOAD_HTTP_CLIENT, then the
 * URLs (every endpoint's), --http2 and the proxy variables (docs/http-client.md). Returns
 * TRANSPORT_CLIENT_AUTO when native was asked for and cannot be used, with
 * the reason in *why_not_native (static text; NULL when native is used). */
enum transport_client transport_client_choose(const struct transport_config *cfg,
                                              const char **why_not_native);

/* Move the origin of record times (before any request was submitted). */
void transport_set_run_start(struct transport *t, uint64_t run_start_ns);

/* When the last transport_poll waited in epoll_wait (CLOCK_MONOTONIC):
 * a send that came due inside that interval found the worker asleep, and
 * its lateness up to the interval's end is the wake-up's, not the
 * worker's load (the driver's lateness diagnosis). Zeros before a poll. */
void transport_last_wait(const struct transport *t, uint64_t *from_abs_ns, uint64_t *until_abs_ns);

/* Requests currently in flight. */
uint32_t transport_inflight(const struct transport *t);

/* Finish every in-flight request now as kind (through the done callback). */
void transport_cancel_all(struct transport *t, enum rec_kind kind, const char *detail);

#endif
