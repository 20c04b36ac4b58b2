/* fetch.h: one blocking HTTP request, for the few requests llmload makes
 * outside a load run: the target's GET BASE/models before a run, the
 * probes of `llmload calibrate`, and the scraper's GET of a server's
 * /metrics. The load itself goes through transport.h, never through here.
 *
 * A fetcher wraps one libcurl easy handle on its own multi handle, so
 * requests made one after the other through it reuse its connection, and
 * a request can be abandoned the moment a descriptor becomes readable (a
 * signalfd: Ctrl-C during a probe ends it at once, not at its timeout). It is not thread-safe: one thread
 * at a time (the scraper owns one in its own thread). Every request is
 * made from the options given to it alone, nothing carries over but the
 * connection. libcurl must be initialised (curl_global_init) before the
 * first fetch_new when more than one thread may be running. */
#ifndef LL_FETCH_H
#define LL_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

/* How to make one request. Zero-initialise, then set what applies. */
struct fetch_opts {
    const struct curl_slist *headers; /* request headers, borrowed; NULL: none of ours */
    const char *cacert;               /* CA bundle file for TLS, or NULL for the system's */
    int insecure;                     /* 1: check neither the certificate nor the host name */
    uint64_t timeout_ns;              /* the whole request, ns; 0: none (ms resolution) */
    uint64_t connect_timeout_ns;      /* TCP and TLS set-up, ns; 0: libcurl's default */
    size_t max_body_bytes;            /* a longer body fails with LL_E_FULL; 0: no bound */
    const char *user_agent;           /* User-Agent to send, or NULL for none */
    int accept_encoding;              /* 1: offer every encoding libcurl can decode */
    const int *cancel_fds;            /* abandon the request as soon as one is readable */
    size_t n_cancel_fds;              /* at most FETCH_MAX_CANCEL_FDS; 0: none */
};

#define FETCH_MAX_CANCEL_FDS 4

/* What came back. Zero-initialise before the first request; the body's
 * buffer is kept and reused by the next request made with the same
 * response. Release with fetch_response_free. */
struct fetch_response {
    long status;                      /* HTTP status code; 0 when no response came */
    char *body;                       /* body_len bytes and a NUL; NULL before any byte */
    size_t body_len;                  /* bytes */
    size_t body_cap;                  /* bytes allocated at body */
    size_t max_body_bytes;            /* the bound of the request in progress */
    int body_over;                    /* the body passed max_body_bytes */
    char server[128];                 /* the Server header's value, "" when none */
    int tls_failed;                   /* 1: the TLS handshake or the peer's certificate
                                       * failed (the server answered, in TLS) */
};

struct fetcher;

/* A fetcher, or NULL when libcurl cannot make an easy handle. Caller frees
 * with fetch_free. */
struct fetcher *fetch_new(void);

/* Free f and close its connection. NULL does nothing. */
void fetch_free(struct fetcher *f);

/* One request to url: a GET, or a POST of post_body (a NUL-terminated
 * string, sent as it is; the caller's headers say its type) when it is
 * not NULL. Blocks until the response ends, fails or times out. Returns
 * 0 when a response came, whatever its status (r->status, r->body,
 * r->server); LL_E_FULL when the body passed opts->max_body_bytes (err:
 * "body larger than N bytes"); LL_E_IO when no response came (err:
 * libcurl's words from its error buffer, e.g. "SSL certificate problem:
 * self-signed certificate", else its code's, e.g. "Couldn't connect to
 * server"); LL_E_INTR when
 * one of opts->cancel_fds became readable first (err: "interrupted"; the
 * descriptor is not read); LL_E_INVAL for a NULL argument or too many
 * cancel descriptors. err (errlen bytes) names no URL: the caller adds it. */
int fetch_request(struct fetcher *f, const char *url, const char *post_body,
                  const struct fetch_opts *opts, struct fetch_response *r, char *err,
                  size_t errlen);

/* fetch_request, and its answer read as JSON: the parsed body (caller
 * decrefs) when a 2xx response came whose body is JSON, else NULL with
 * "url: reason" in err ("url: HTTP 404", "url: response is not JSON (...)",
 * or fetch_request's reason) and *rc LL_E_INTR when abandoned, else
 * LL_E_IO. r holds the response either way (its status is 0 when none
 * came; its Server header), for the caller to free. */
json_t *fetch_json(struct fetcher *f, const char *url, const char *post_body,
                   const struct fetch_opts *opts, struct fetch_response *r, int *rc, char *err,
                   size_t errlen);

/* Does the server at url (an https:// URL) answer in plain HTTP? A TLS
 * client hello sent to a plain-HTTP server gets a 400 in plain text (the
 * TLS library then fails with "wrong version number") or nothing at all
 * (llama.cpp's server, `llmload sim`: it waits for the end of a request
 * line that never comes), and then every request of a run waits out its
 * connect timeout and reads as a slow server. So: one TLS handshake with
 * url's host and port (within opts->connect_timeout_ns, which must not be
 * 0), and only where it got no answer in time or bytes that are not
 * TLS (a certificate refused or a TLS alert is a TLS server), one plain GET of
 * http://HOST:PORT/ within that time or 1 s, whichever is shorter; an
 * HTTP status line back means yes. A TLS server that also answers plain HTTP (nginx's "400 The plain
 * HTTP request was sent to HTTPS port") completes the handshake first, so
 * it is never asked. opts: its TLS settings, connect timeout and cancel
 * descriptors only. hostport gets "HOST:PORT" from url. Returns 1 (yes),
 * 0 (no, or no answer, or url cannot be parsed), or LL_E_INTR when a
 * cancel descriptor became readable first. Blocks for a connect timeout
 * and 1 s at most. */
int fetch_plain_http_at(const char *url, const struct fetch_opts *opts, char *hostport,
                        size_t hostport_len);

/* What --insecure and --cacert mean for a libcurl handle, set on e: with
 * insecure, neither the certificate nor the host name is checked; cacert
 * (borrowed; NULL: the system's) is the CA bundle. The load's handles
 * (curl.c) and the fetcher's share it. */
void fetch_setopt_tls(CURL *e, int insecure, const char *cacert);

/* Free the body r holds and zero it. Safe on a zeroed response, and twice. */
void fetch_response_free(struct fetch_response *r);

#endif
