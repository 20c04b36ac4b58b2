/* curl.c: the libcurl backend: libcurl's multi_socket API on the
 * transport's epoll loop (backend.h), for TLS, HTTP/2, proxies and
 * everything the native client does not do (docs/http-client.md).
 *
 * The wiring is the standard one: libcurl tells us which sockets to watch
 * (socket callback -> epoll_ctl) and when it next needs a timeout (timer
 * callback); we tell it what happened with curl_multi_socket_action.
 * libcurl's timeouts are milliseconds and it re-arms them on almost every
 * call, so we keep its deadline in a variable that the loop hands to
 * epoll_wait's millisecond timeout (service), instead of a timerfd (a
 * timerfd_settime per call cost a tenth of the client's CPU).
 *
 * Each slot owns its easy handle, set up once; libcurl's write and header
 * callbacks stamp the time and feed the transport's decoding. Of our
 * timeouts libcurl applies only the connect timeout
 * (CURLOPT_CONNECTTIMEOUT_MS); first-token, idle and total timeouts are the
 * transport's sweep. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/backend.h"
#include "http/fetch.h"
#include "http/transport.h"
#include "util/util.h"

/* A request on libcurl: the transport's slot, then the easy handle. */
struct creq {
    struct treq slot;
    CURL *easy;
    char err[CURL_ERROR_SIZE]; /* libcurl's own words for a failure (CURLOPT_ERRORBUFFER) */
};

struct curl_be {
    struct backend_env env;
    CURLM *multi;
    uint64_t deadline_abs_ns; /* libcurl's next timeout; UINT64_MAX = none */
};

/* ---- epoll wiring ------------------------------------------------------ */

static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    struct curl_be *cb = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(cb->env.epfd, EPOLL_CTL_DEL, s, NULL); /* may already be closed */
        return 0;
    }
    struct epoll_event ev = {0};
    if (what & CURL_POLL_IN)
        ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        ev.events |= EPOLLOUT;
    ev.data.u64 = ((uint64_t)(uint32_t)s << 3) | BACKEND_TAG_CURL;
    if (epoll_ctl(cb->env.epfd, EPOLL_CTL_MOD, s, &ev) != 0) {
        if (errno != ENOENT || epoll_ctl(cb->env.epfd, EPOLL_CTL_ADD, s, &ev) != 0) {
            ll_errorf("transport: epoll_ctl fd %d: %s", (int)s, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct curl_be *cb = userp;
    if (timeout_ms < 0)
        cb->deadline_abs_ns = UINT64_MAX;
    else
        cb->deadline_abs_ns = ll_now_ns() + (uint64_t)timeout_ms * LL_NS_PER_MS;
    return 0;
}

/* Run libcurl's timeout handling while its deadline has passed. */
static void curl_timeouts(struct curl_be *cb)
{
    int running;
    for (int i = 0; i < 8 && cb->deadline_abs_ns <= ll_now_ns(); i++) {
        cb->deadline_abs_ns = UINT64_MAX;
        curl_multi_socket_action(cb->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

static void curl_event(void *be, const struct epoll_event *ev)
{
    struct curl_be *cb = be;
    int fd = (int)(ev->data.u64 >> 3);
    int flags = 0, running;
    if (ev->events & EPOLLIN)
        flags |= CURL_CSELECT_IN;
    if (ev->events & EPOLLOUT)
        flags |= CURL_CSELECT_OUT;
    if (ev->events & (EPOLLERR | EPOLLHUP))
        flags |= CURL_CSELECT_ERR;
    curl_multi_socket_action(cb->multi, fd, flags, &running);
}

/* ---- libcurl's callbacks ----------------------------------------------- */

static size_t on_header(char *buf, size_t size, size_t nmemb, void *ud)
{
    size_t n = size * nmemb;
    return transport_header_line(ud, buf, n) ? 0 : n;
}

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ud)
{
    uint64_t now = ll_now_ns(); /* first: the moment these bytes were read */
    struct treq *q = ud;
    q->last_read_abs_ns = now;
    q->read_abs_ns = now;
    size_t n = size * nmemb;
    return transport_body_bytes(q, buf, n) ? 0 : n;
}

/* ---- finished transfers ------------------------------------------------ */

static enum outcome_xfer xfer_from_curl(CURLcode res)
{
    switch (res) {
    case CURLE_OK:
        return OUTCOME_XFER_NONE;
    case CURLE_OPERATION_TIMEDOUT:
        return OUTCOME_XFER_TIMEOUT;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return OUTCOME_XFER_CONNECT;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return OUTCOME_XFER_CUT;
    default:
        return OUTCOME_XFER_OTHER;
    }
}

/* Can this process open one more descriptor? 0, or the errno why not. */
static int fd_probe_errno(void)
{
    int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/* Finish cq, whose transfer libcurl ended with res. */
static void transfer_done(struct creq *cq, CURLcode res, uint64_t end_abs_ns)
{
    if (res == CURLE_OK) {
        transport_finish(&cq->slot, end_abs_ns);
        return;
    }
    /* libcurl's buffer says which ("SSL certificate problem: self-signed
     * certificate", "no alternative certificate subject name matches
     * target host name ..."), where its code's text says only the kind. */
    struct xfer_error xe = {
        .xfer = xfer_from_curl(res),
        .detail = cq->err[0] ? cq->err : curl_easy_strerror(res),
    };
    long os_errno = 0;
    curl_easy_getinfo(cq->easy, CURLINFO_OS_ERRNO, &os_errno);
    xe.os_errno = (int)os_errno;
    /* libcurl does not always keep socket()'s errno: on a connect failure
     * without one, ask the kernel whether this process can open one more
     * descriptor (outcome_decide tells the client's limits from the
     * server's failure). */
    if (os_errno == 0 && outcome_xfer_kind(xe.xfer, cq->slot.status_seen) == REC_CONNECT_ERROR)
        xe.fd_probe_errno = fd_probe_errno();
    transport_finish_failed(&cq->slot, &xe, end_abs_ns);
}

static void drain_done(struct curl_be *cb)
{
    CURLMsg *m;
    int left;
    uint64_t now = 0;
    while ((m = curl_multi_info_read(cb->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct creq *cq = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&cq);
        CURLcode res = m->data.result;
        if (!now)
            now = ll_now_ns();
        /* Prefer the time of the last read: the stream ended when its last
         * bytes arrived, not when we got round to noticing. */
        const struct treq *q = &cq->slot;
        uint64_t end = q->last_read_abs_ns > q->sent_abs_ns ? q->last_read_abs_ns : now;
        if (res != CURLE_OK || end > now)
            end = now;
        transfer_done(cq, res, end);
    }
}

static uint64_t curl_service(void *be)
{
    struct curl_be *cb = be;
    curl_timeouts(cb);
    drain_done(cb);
    return cb->deadline_abs_ns;
}

/* ---- slots and requests ------------------------------------------------ */

static int curl_slot_init(void *be, struct treq *q, char *err, size_t errlen)
{
    struct curl_be *cb = be;
    struct creq *cq = (struct creq *)q;
    const struct transport_config *cfg = cb->env.cfg;
    cq->easy = curl_easy_init();
    if (!cq->easy) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    CURL *e = cq->easy;
    curl_easy_setopt(e, CURLOPT_URL, cb->env.url[q->ep][q->api]);
    curl_easy_setopt(e, CURLOPT_PRIVATE, cq);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, q);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cq->err);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, cfg->headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     cfg->http2 ? (long)CURL_HTTP_VERSION_2_0 : (long)CURL_HTTP_VERSION_1_1);
    fetch_setopt_tls(e, cfg->insecure, cfg->cacert);
    if (cfg->connect_timeout_ns)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                         (long)((cfg->connect_timeout_ns + LL_NS_PER_MS - 1) / LL_NS_PER_MS));
    return 0;
}

static void curl_slot_free(void *be, struct treq *q)
{
    (void)be;
    curl_easy_cleanup(((struct creq *)q)->easy);
}

static void curl_set_api(void *be, struct treq *q)
{
    struct curl_be *cb = be;
    curl_easy_setopt(((struct creq *)q)->easy, CURLOPT_URL, cb->env.url[q->ep][q->api]);
}

static int curl_send(void *be, struct treq *q)
{
    struct curl_be *cb = be;
    struct creq *cq = (struct creq *)q;
    cq->err[0] = '\0';
    curl_easy_setopt(cq->easy, CURLOPT_POSTFIELDS, q->body);
    curl_easy_setopt(cq->easy, CURLOPT_POSTFIELDSIZE, (long)q->body_len);
    CURLMcode mc = curl_multi_add_handle(cb->multi, cq->easy);
    if (mc == CURLM_OK)
        return 0;
    snprintf(q->rec.detail, sizeof q->rec.detail, "curl_multi_add_handle: %s",
             curl_multi_strerror(mc));
    return -1;
}

static void curl_detach(void *be, struct treq *q)
{
    struct curl_be *cb = be;
    curl_multi_remove_handle(cb->multi, ((struct creq *)q)->easy);
}

/* ---- start and stop ---------------------------------------------------- */

static void curl_stop(void *be)
{
    struct curl_be *cb = be;
    curl_multi_cleanup(cb->multi);
    free(cb);
}

static void *curl_start(const struct backend_env *env, char *err, size_t errlen)
{
    struct curl_be *cb = ll_calloc(1, sizeof *cb);
    cb->env = *env;
    cb->deadline_abs_ns = UINT64_MAX;
    cb->multi = curl_multi_init();
    if (!cb->multi) {
        snprintf(err, errlen, "curl_multi_init failed");
        free(cb);
        return NULL;
    }
    curl_multi_setopt(cb->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(cb->multi, CURLMOPT_SOCKETDATA, cb);
    curl_multi_setopt(cb->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(cb->multi, CURLMOPT_TIMERDATA, cb);
    /* Keep every connection we opened alive for reuse. */
    curl_multi_setopt(cb->multi, CURLMOPT_MAXCONNECTS, 100000L);
    return cb;
}

/* No connect_expired (libcurl times connects out itself:
 * CURLOPT_CONNECTTIMEOUT_MS) and no read_ahead_frees. */
const struct backend_ops backend_curl = {
    .req_bytes = sizeof(struct creq),
    .start = curl_start,
    .stop = curl_stop,
    .slot_init = curl_slot_init,
    .slot_free = curl_slot_free,
    .set_api = curl_set_api,
    .send = curl_send,
    .detach = curl_detach,
    .event = curl_event,
    .service = curl_service,
};
