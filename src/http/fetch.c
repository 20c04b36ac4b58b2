/* fetch.c: one blocking HTTP request on a libcurl easy handle (fetch.h).
 * Three callers had three set-ups of their own (the /models probe,
 * calibrate, the scraper), and calibrate's forgot --cacert and --insecure;
 * here the TLS options, timeouts and body bound are set in one place. */
#include "http/fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/json.h"
#include "util/util.h"

struct fetcher {
    CURL *curl;
    CURLM *multi; /* holds the connection between requests */
    /* libcurl's own words for the last failure ("SSL certificate problem:
     * self-signed certificate"), where curl_easy_strerror has only the
     * code's ("SSL peer certificate or SSH remote key was not OK"). */
    char why[CURL_ERROR_SIZE];
};

struct fetcher *fetch_new(void)
{
    CURL *c = curl_easy_init();
    CURLM *m = c ? curl_multi_init() : NULL;
    if (!m) {
        curl_easy_cleanup(c);
        return NULL;
    }
    struct fetcher *f = ll_calloc(1, sizeof *f);
    f->curl = c;
    f->multi = m;
    return f;
}

void fetch_free(struct fetcher *f)
{
    if (!f)
        return;
    curl_easy_cleanup(f->curl);
    curl_multi_cleanup(f->multi);
    free(f);
}

void fetch_setopt_tls(CURL *e, int insecure, const char *cacert)
{
    if (insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, cacert);
}

void fetch_response_free(struct fetch_response *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

static size_t body_write(char *buf, size_t size, size_t n, void *ud)
{
    struct fetch_response *r = ud;
    size_t add = size * n;
    if (r->max_body_bytes && r->body_len + add > r->max_body_bytes) {
        r->body_over = 1;
        return 0; /* libcurl aborts the transfer */
    }
    r->body = ll_grow(r->body, &r->body_cap, r->body_len + add + 1, 16 * 1024);
    memcpy(r->body + r->body_len, buf, add);
    r->body_len += add;
    r->body[r->body_len] = '\0';
    return add;
}

/* Keep the Server header's value, trimmed, at most 127 bytes. */
static size_t header_line(char *buf, size_t size, size_t n, void *ud)
{
    struct fetch_response *r = ud;
    size_t len = size * n;
    if (len > 7 && strncasecmp(buf, "server:", 7) == 0) {
        size_t i = 7;
        while (i < len && buf[i] == ' ')
            i++;
        size_t end = len;
        while (end > i && (buf[end - 1] == '\r' || buf[end - 1] == '\n'))
            end--;
        size_t take = LL_MIN(end - i, sizeof r->server - 1);
        memcpy(r->server, buf + i, take);
        r->server[take] = '\0';
    }
    return len;
}

/* ns to libcurl's ms, at least 1 (0 would mean no timeout). */
static long ms_of(uint64_t ns)
{
    uint64_t ms = ns / LL_NS_PER_MS;
    return ms > 0 ? (long)LL_MIN(ms, (uint64_t)0x7fffffff) : 1L;
}

/* Run the transfer set up on f->curl to its end on f->multi, watching the
 * cancel descriptors between libcurl's steps. Returns 0 with the
 * transfer's result in *cc, or LL_E_INTR when a cancel descriptor became
 * readable first (the transfer is dropped). */
static int perform(struct fetcher *f, const struct fetch_opts *opts, CURLcode *cc)
{
    struct curl_waitfd w[FETCH_MAX_CANCEL_FDS];
    size_t nw = opts->n_cancel_fds;
    int running = 1, rc = 0;
    *cc = CURLE_OK;
    if (curl_multi_add_handle(f->multi, f->curl) != CURLM_OK) {
        *cc = CURLE_FAILED_INIT;
        return 0;
    }
    for (;;) {
        if (curl_multi_perform(f->multi, &running) != CURLM_OK) {
            *cc = CURLE_RECV_ERROR;
            break;
        }
        if (!running)
            break;
        for (size_t i = 0; i < nw; i++)
            w[i] = (struct curl_waitfd){.fd = opts->cancel_fds[i], .events = CURL_WAIT_POLLIN};
        if (curl_multi_wait(f->multi, w, (unsigned)nw, 1000, NULL) != CURLM_OK) {
            *cc = CURLE_RECV_ERROR;
            break;
        }
        for (size_t i = 0; i < nw; i++)
            if (w[i].revents)
                rc = LL_E_INTR;
        if (rc)
            break;
    }
    int left;
    CURLMsg *m;
    while ((m = curl_multi_info_read(f->multi, &left)))
        if (m->msg == CURLMSG_DONE && m->easy_handle == f->curl)
            *cc = m->data.result;
    curl_multi_remove_handle(f->multi, f->curl);
    return rc;
}

/* Do libcurl's words (why) say the peer answered with bytes that are no
 * TLS record? OpenSSL's "wrong version number" (a plain server's
 * "HTTP/1.1 400" read as a TLS record) and "packet length too long" (other
 * bytes); GnuTLS's "unexpected TLS packet" and "TLS packet with unexpected
 * length". */
static int why_not_tls_record(const char *why)
{
    return strstr(why, "wrong version number") || strstr(why, "packet length too long") ||
           strstr(why, "unexpected TLS packet") || strstr(why, "TLS packet with unexpected length");
}

/* Which TLS failure cc is, read with libcurl's words (why): a peer that
 * does not speak TLS fails the handshake (CURLE_SSL_CONNECT_ERROR) with
 * OpenSSL's "wrong version number" (a plain server's "HTTP/1.1 400" read
 * as a TLS record; "packet length too long" for other bytes), GnuTLS's
 * "unexpected TLS packet"; a certificate for another host name fails the
 * verification with "no alternative certificate subject name matches
 * target host name" (OpenSSL) or "does not match target host name". Any
 * other handshake or certificate failure is a question of trust. */
static enum fetch_tls tls_failed(CURLcode cc, const char *why)
{
    switch (cc) {
    case CURLE_SSL_CONNECT_ERROR:
        if (why_not_tls_record(why))
            return FETCH_TLS_NOT_TLS;
        return FETCH_TLS_TRUST;
    case CURLE_PEER_FAILED_VERIFICATION:
        if (strstr(why, "subject name matches target host") ||
            strstr(why, "does not match target host name"))
            return FETCH_TLS_HOST;
        return FETCH_TLS_TRUST;
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS: return FETCH_TLS_TRUST;
    default: return FETCH_TLS_NONE;
    }
}

int fetch_request(struct fetcher *f, const char *url, const char *post_body,
                  const struct fetch_opts *opts, struct fetch_response *r, char *err,
                  size_t errlen)
{
    if (!f || !url || !opts || !r || opts->n_cancel_fds > FETCH_MAX_CANCEL_FDS ||
        (opts->n_cancel_fds && !opts->cancel_fds)) {
        snprintf(err, errlen, "fetch: a NULL argument or too many cancel descriptors");
        return LL_E_INVAL;
    }
    CURL *c = f->curl;
    r->status = 0;
    r->body_len = 0;
    if (r->body)
        r->body[0] = '\0';
    r->max_body_bytes = opts->max_body_bytes;
    r->body_over = 0;
    r->tls_failed = FETCH_TLS_NONE;
    r->server[0] = '\0';
    curl_easy_reset(c); /* keeps the connection, forgets the last request's options */
    f->why[0] = '\0';
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, f->why);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (opts->headers)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, opts->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_line);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    if (opts->timeout_ns)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms_of(opts->timeout_ns));
    if (opts->connect_timeout_ns)
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms_of(opts->connect_timeout_ns));
    fetch_setopt_tls(c, opts->insecure, opts->cacert);
    if (opts->user_agent)
        curl_easy_setopt(c, CURLOPT_USERAGENT, opts->user_agent);
    if (opts->accept_encoding)
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    if (post_body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body);
    CURLcode cc;
    if (perform(f, opts, &cc) == LL_E_INTR) {
        snprintf(err, errlen, "interrupted");
        return LL_E_INTR;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    r->tls_failed = tls_failed(cc, f->why);
    if (r->body_over) {
        snprintf(err, errlen, "body larger than %zu bytes", opts->max_body_bytes);
        return LL_E_FULL;
    }
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s", f->why[0] ? f->why : curl_easy_strerror(cc));
        return LL_E_IO;
    }
    return 0;
}

/* "HOST:PORT" of url into buf ("" when libcurl cannot parse it), and
 * url with its scheme made http:// and its path "/" into plain (caller
 * frees with curl_free; NULL when it cannot be parsed). */
static char *plain_url_of(const char *url, char *hostport, size_t len)
{
    char *plain = NULL, *host = NULL, *port = NULL;
    hostport[0] = '\0';
    CURLU *u = curl_url();
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        goto out;
    snprintf(hostport, len, "%s:%s", host, port);
    if (curl_url_set(u, CURLUPART_SCHEME, "http", 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_PORT, port, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_PATH, "/", 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK)
        goto out;
    curl_url_get(u, CURLUPART_URL, &plain, 0);
out:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return plain;
}

/* Did a TLS handshake that ended with cc (libcurl's words in why) find a
 * peer that does not speak TLS? A handshake with no answer in time, or
 * bytes that are no TLS record (why_not_tls_record) or a close before any
 * (OpenSSL: "unexpected eof").
 * Not a certificate refused, nor a TLS alert: that server spoke TLS, and
 * one that also answers plain HTTP (nginx) must not read as plain. */
static int not_tls(CURLcode cc, const char *why)
{
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return 1;
    if (cc != CURLE_SSL_CONNECT_ERROR && cc != CURLE_RECV_ERROR && cc != CURLE_GOT_NOTHING)
        return 0;
    return why_not_tls_record(why) || strstr(why, "unexpected eof");
}

int fetch_plain_http_at(const char *url, const struct fetch_opts *opts, char *hostport,
                        size_t hostport_len)
{
    char why[CURL_ERROR_SIZE] = "";
    char *plain = plain_url_of(url, hostport, hostport_len);
    struct fetcher *f = fetch_new();
    int rc = 0;
    if (!plain || !f)
        goto out;
    /* The TLS handshake alone: a server that completes it speaks TLS. */
    curl_easy_setopt(f->curl, CURLOPT_ERRORBUFFER, why);
    curl_easy_setopt(f->curl, CURLOPT_URL, url);
    curl_easy_setopt(f->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(f->curl, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(f->curl, CURLOPT_CONNECTTIMEOUT_MS, ms_of(opts->connect_timeout_ns));
    fetch_setopt_tls(f->curl, opts->insecure, opts->cacert);
    CURLcode cc;
    if (perform(f, opts, &cc) == LL_E_INTR) {
        rc = LL_E_INTR;
        goto out;
    }
    if (!not_tls(cc, why))
        goto out; /* it spoke TLS, or nothing is there: not this question */
    /* On a fresh handle: CONNECT_ONLY's connection is not one to reuse. */
    fetch_free(f);
    f = fetch_new();
    struct fetch_opts po = *opts;
    po.headers = NULL;
    /* An HTTP server answers a GET at once; 1 s keeps a TLS server that
     * is merely slow from costing the run more than its handshake did. */
    po.timeout_ns = LL_MIN(opts->connect_timeout_ns, LL_NS_PER_SEC);
    po.connect_timeout_ns = po.timeout_ns;
    po.max_body_bytes = 4096;
    struct fetch_response r = {0};
    int frc = fetch_request(f, plain, NULL, &po, &r, why, sizeof why);
    if (frc == LL_E_INTR)
        rc = LL_E_INTR;
    else if (r.status > 0)
        rc = 1;
    fetch_response_free(&r);
out:
    fetch_free(f);
    curl_free(plain);
    return rc;
}

json_t *fetch_json(struct fetcher *f, const char *url, const char *post_body,
                   const struct fetch_opts *opts, struct fetch_response *r, int *rc, char *err,
                   size_t errlen)
{
    char why[256];
    json_t *j = NULL;
    int frc = fetch_request(f, url, post_body, opts, r, why, sizeof why);
    *rc = frc == LL_E_INTR ? LL_E_INTR : LL_E_IO;
    if (frc != 0) {
        snprintf(err, errlen, "%s: %s", url, why);
    } else if (r->status < 200 || r->status > 299) {
        snprintf(err, errlen, "%s: HTTP %ld", url, r->status);
    } else {
        json_error_t je;
        j = ll_json_loadb(r->body ? r->body : "", r->body_len, 0, &je);
        if (!j) {
            snprintf(err, errlen, "%s: response is not JSON (%s)", url, je.text);
        }
    }
    return j;
}
