/* native.c: the native HTTP/1.1 backend: a pool of kept-alive
 * connections per transport, on the transport's epoll loop (backend.h).
 *
 * For a plain http:// target libcurl costs most of the client's CPU (about
 * 90k instructions per streamed request, docs/http-client.md), so the
 * common case runs on connections written here: the address resolved once
 * at start, non-blocking connect, one sendmsg per request, level-triggered
 * reads into one shared buffer stamped when read() returns, and h1.c for
 * the framing. The decoding is the transport's (transport_header_line,
 * transport_body_bytes, transport_finish), the same as libcurl's
 * callbacks feed, so every record means the same whichever client carried
 * it. What it does not do (TLS, HTTP/2, proxies, ...) is libcurl's. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <curl/curl.h> /* struct curl_slist: the configured headers */

#include "http/backend.h"
#include "http/h1.h"
#include "http/transport.h"
#include "util/dlist.h"
#include "util/util.h"

#define NATIVE_RBUF_BYTES (64u << 10) /* one read */
#define NATIVE_MAX_ADDRS 4
#define NATIVE_HOST_BYTES 256
#define NATIVE_PORT_BYTES 16

/* One endpoint (--url; a run may have several, docs/run.md): its
 * addresses, request heads and kept-alive connections. */
struct nep {
    struct sockaddr_storage addr[NATIVE_MAX_ADDRS];
    socklen_t addr_len[NATIVE_MAX_ADDRS];
    int n_addr;
    char resolve_err[200];     /* set when the host did not resolve */
    char hostport[300];        /* for error details */
    char *head[OAI_API_COUNT]; /* request line and headers, by enum oai_api */
    size_t head_len[OAI_API_COUNT];
    struct tconn *idle; /* kept-alive connections, most recent first */
};

/* A connection. */
enum { CONN_CONNECTING, CONN_BUSY, CONN_IDLE, CONN_CLOSED };
struct tconn {
    struct nep *ep; /* the endpoint it is connected to */
    int fd;
    int state;
    int addr_idx;             /* which of the resolved addresses */
    uint32_t served;          /* responses completed on it */
    uint32_t ev;              /* epoll events registered, 0 = not registered */
    struct nreq *q;           /* the request on it, NULL when idle */
    size_t wr_off;            /* request bytes written so far */
    uint64_t start_abs_ns;    /* connect() time */
    struct h1_parser h1;
    struct tconn *next, *prev; /* idle list (doubly linked), or free list */
};

/* A request on a connection: the transport's slot, then ours. */
struct nreq {
    struct treq slot;
    struct tconn *conn;       /* the connection carrying it */
    char clen[48];            /* "Content-Length: N" and the blank line */
    size_t clen_len;
    int retried;              /* resent once on a fresh connection */
};

struct native {
    const struct transport_config *cfg;
    int epfd;
    struct nep *ep; /* n_ep endpoints */
    uint32_t n_ep;
    char *rbuf;               /* NATIVE_RBUF_BYTES, shared by all reads */
    struct tconn *conn_free;  /* released connection structs */
    uint64_t reads;           /* read() calls (read_ahead_frees) */
};

static void conn_watch(struct native *nat, struct tconn *c, uint32_t ev)
{
    if (c->ev == ev)
        return;
    struct epoll_event e = {.events = ev};
    e.data.ptr = c;
    if (epoll_ctl(nat->epfd, c->ev ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e) != 0) {
        ll_errorf("transport: epoll_ctl fd %d: %s", c->fd, strerror(errno));
        return; /* the request's timeouts end it */
    }
    c->ev = ev;
}

static void idle_remove(struct tconn *c)
{
    DLIST_UNLINK(c->ep->idle, c, prev, next);
    c->next = c->prev = NULL;
}

/* Close c and keep its struct for the next connection. The request on it,
 * if any, must already be detached (q->conn cleared) by the caller. */
static void conn_close(struct native *nat, struct tconn *c)
{
    if (c->state == CONN_IDLE)
        idle_remove(c);
    c->state = CONN_CLOSED;
    if (c->fd >= 0) {
        if (c->ev)
            epoll_ctl(nat->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->ev = 0;
    c->q = NULL;
    c->next = nat->conn_free;
    nat->conn_free = c;
}

/* Part c from its request (the caller closes or keeps c). */
static void conn_unlink(struct tconn *c)
{
    struct nreq *q = c->q;
    q->conn = NULL;
    q->slot.connecting_since_abs_ns = 0;
    c->q = NULL;
}

static void native_detach(struct native *nat, struct nreq *q)
{
    struct tconn *c = q->conn;
    if (!c)
        return;
    /* The response is unfinished: the connection cannot carry another. */
    conn_unlink(c);
    conn_close(nat, c);
}

/* Finish q (not on a connection) as kind. */
static void native_fail(struct native *nat, struct nreq *q, enum rec_kind kind,
                        const char *detail, uint64_t now_abs)
{
    transport_force_kind(&q->slot, kind, detail);
    transport_finish(&q->slot, now_abs);
}

/* A socket() or connect() failure with errno e: connect_error, or
 * transport_error when the client itself is out of descriptors or ports
 * (outcome_decide, as for libcurl). */
static void native_fail_errno(struct native *nat, struct nreq *q, const char *what, int e)
{
    char detail[200];
    snprintf(detail, sizeof detail, "%s %.80s: %.80s", what, nat->ep[q->slot.ep].hostport,
             strerror(e));
    struct xfer_error xe = {.xfer = OUTCOME_XFER_CONNECT, .detail = detail, .os_errno = e};
    transport_finish_failed(&q->slot, &xe, ll_now_ns());
}

static int conn_write(struct native *nat, struct tconn *c);
static void conn_write_failed(struct native *nat, struct tconn *c, int err);
static void native_connect(struct native *nat, struct nreq *q, int addr_idx);

static int h1_on_header(void *ud, const char *line, size_t len)
{
    return transport_header_line(ud, line, len);
}

static int h1_on_body(void *ud, const char *buf, size_t len)
{
    return transport_body_bytes(ud, buf, len);
}

static struct tconn *conn_get_struct(struct native *nat, struct nreq *q)
{
    struct tconn *c = nat->conn_free;
    if (c) {
        nat->conn_free = c->next;
        h1_parser_reset(&c->h1);
        c->h1.ud = &q->slot;
    } else {
        c = ll_calloc(1, sizeof *c);
        h1_parser_init(&c->h1, h1_on_header, h1_on_body, &q->slot);
        h1_parser_reset(&c->h1);
    }
    c->fd = -1;
    c->ev = 0;
    c->state = CONN_BUSY;
    c->served = 0;
    c->next = c->prev = NULL;
    return c;
}

static void conn_attach(struct tconn *c, struct nreq *q)
{
    c->q = q;
    c->wr_off = 0;
    c->h1.ud = &q->slot;
    q->conn = c;
}

/* connect() to address addr_idx failed with e: the next address, or the
 * request fails. */
static void connect_failed(struct native *nat, struct tconn *c, int e)
{
    struct nreq *q = c->q;
    int idx = c->addr_idx;
    int n_addr = c->ep->n_addr;
    conn_unlink(c);
    conn_close(nat, c);
    if (idx + 1 < n_addr && e != EMFILE && e != ENFILE && e != EADDRNOTAVAIL)
        native_connect(nat, q, idx + 1);
    else
        native_fail_errno(nat, q, "connect", e);
}

static void native_connect(struct native *nat, struct nreq *q, int addr_idx)
{
    struct nep *ep = &nat->ep[q->slot.ep];
    if (ep->resolve_err[0]) {
        native_fail(nat, q, REC_CONNECT_ERROR, ep->resolve_err, ll_now_ns());
        return;
    }
    const struct sockaddr *sa = (const struct sockaddr *)&ep->addr[addr_idx];
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        native_fail_errno(nat, q, "socket", errno);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct tconn *c = conn_get_struct(nat, q);
    c->ep = ep;
    c->fd = fd;
    c->addr_idx = addr_idx;
    c->start_abs_ns = ll_now_ns();
    conn_attach(c, q);
    if (connect(fd, sa, ep->addr_len[addr_idx]) == 0) {
        c->state = CONN_BUSY;
        conn_write(nat, c);
    } else if (errno == EINPROGRESS) {
        c->state = CONN_CONNECTING;
        q->slot.connecting_since_abs_ns = c->start_abs_ns; /* the transport's sweep */
        conn_watch(nat, c, EPOLLOUT);
    } else {
        connect_failed(nat, c, errno);
    }
}

/* The connection failed or closed (err 0: an orderly close) while q was on
 * it. */
static void conn_lost(struct native *nat, struct tconn *c, int err, uint64_t now_abs)
{
    struct nreq *q = c->q;
    if (!q) {
        conn_close(nat, c); /* an idle connection the server closed */
        return;
    }
    if (!err && h1_parser_eof(&c->h1) == H1_DONE) {
        /* A body framed by the close: complete. */
        conn_unlink(c);
        conn_close(nat, c);
        uint64_t last = q->slot.last_read_abs_ns;
        transport_finish(&q->slot, last > q->slot.sent_abs_ns ? last : now_abs);
        return;
    }
    int reused = c->served > 0;
    int nothing = c->h1.bytes_seen == 0;
    int status = h1_parser_status_seen(&c->h1);
    conn_unlink(c);
    conn_close(nat, c);
    if (reused && nothing && !q->retried) {
        /* A kept-alive connection the server had already closed (its idle
         * timeout raced our request): send it again on a fresh one, as
         * libcurl does. */
        q->retried = 1;
        native_connect(nat, q, 0);
        return;
    }
    char detail[200];
    const char *why = err ? strerror(err) : c->h1.error ? c->h1.error : "connection closed";
    if (!status) {
        snprintf(detail, sizeof detail, "%.80s: %.80s", nat->ep[q->slot.ep].hostport,
                 err ? why : "server closed the connection with no response");
        native_fail(nat, q, REC_CONNECT_ERROR, detail, now_abs);
    } else if (q->slot.saw_done) {
        transport_finish(&q->slot, now_abs); /* cut after [DONE]: the stream was complete */
    } else {
        snprintf(detail, sizeof detail, "%s", why);
        native_fail(nat, q, REC_STREAM_TRUNCATED, detail, now_abs);
    }
}

/* Write what is left of c's request. Returns 0, or -1 when c is gone. */
static int conn_write(struct native *nat, struct tconn *c)
{
    struct nreq *q = c->q;
    struct iovec iov[3] = {
        {.iov_base = c->ep->head[q->slot.api], .iov_len = c->ep->head_len[q->slot.api]},
        {.iov_base = q->clen, .iov_len = q->clen_len},
        {.iov_base = q->slot.body, .iov_len = q->slot.body_len},
    };
    size_t total = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
    while (c->wr_off < total) {
        size_t skip = c->wr_off;
        int first = 0;
        while (skip >= iov[first].iov_len) {
            skip -= iov[first].iov_len;
            first++;
        }
        struct iovec v[3];
        int n = 0;
        for (int i = first; i < 3; i++)
            v[n++] = iov[i];
        v[0].iov_base = (char *)v[0].iov_base + skip;
        v[0].iov_len -= skip;
        struct msghdr m = {.msg_iov = v, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                conn_watch(nat, c, EPOLLIN | EPOLLOUT);
                return 0;
            }
            conn_write_failed(nat, c, errno);
            return -1;
        }
        c->wr_off += (size_t)w;
    }
    conn_watch(nat, c, EPOLLIN);
    return 0;
}

/* The response on c ended at now_abs; extra: bytes followed it. */
static void conn_complete(struct native *nat, struct tconn *c, uint64_t now_abs, int extra)
{
    struct nreq *q = c->q;
    conn_unlink(c);
    c->served++;
    size_t total = c->ep->head_len[q->slot.api] + q->clen_len + q->slot.body_len;
    if (c->h1.keep_alive && !extra && c->wr_off == total) {
        h1_parser_reset(&c->h1);
        c->state = CONN_IDLE;
        DLIST_PUSH(c->ep->idle, c, prev, next);
    } else {
        conn_close(nat, c);
    }
    transport_finish(&q->slot, now_abs);
}

/* Do the n bytes that begin a response look like a TLS record (an alert,
 * 0x15, or a handshake, 0x16, then a 3.x version) rather than HTTP? Then
 * an http:// URL points at a TLS port: the server answered our request
 * in TLS, most often with an alert and a close. Without this check the
 * alert's few bytes, no line end among them, wait in the parser until the
 * close and read as "closed the connection with no response". */
static int looks_like_tls(const char *b, ssize_t n)
{
    return n >= 3 && (b[0] == 0x15 || b[0] == 0x16) && b[1] == 0x03 && (unsigned char)b[2] <= 4;
}

/* One read from c, decoded. Returns 1 when bytes were read and the
 * response goes on, 0 when there was nothing to read, -1 when the request
 * or the connection ended (c may be gone). */
static int conn_readable(struct native *nat, struct tconn *c)
{
    for (;;) {
        nat->reads++;
        ssize_t n = read(c->fd, nat->rbuf, NATIVE_RBUF_BYTES);
        uint64_t now = ll_now_ns(); /* the moment these bytes were read */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            conn_lost(nat, c, errno, now);
            return -1;
        }
        if (n == 0) {
            conn_lost(nat, c, 0, now);
            return -1;
        }
        struct nreq *q = c->q;
        if (!q) {
            conn_close(nat, c); /* bytes on an idle connection: not ours */
            return -1;
        }
        q->slot.read_abs_ns = now;
        q->slot.last_read_abs_ns = now;
        if (c->h1.bytes_seen == 0 && looks_like_tls(nat->rbuf, n)) {
            char detail[200];
            snprintf(detail, sizeof detail, "the server at %.80s answered in TLS: use https://",
                     c->ep->hostport);
            native_detach(nat, q);
            native_fail(nat, q, REC_TRANSPORT_ERROR, detail, now);
            return -1;
        }
        size_t used = 0;
        int rc = h1_parser_feed(&c->h1, nat->rbuf, (size_t)n, &used);
        if (rc == H1_DONE) {
            conn_complete(nat, c, now, used < (size_t)n);
            return -1;
        }
        if (rc == H1_STOPPED) {
            native_detach(nat, q);
            transport_finish(&q->slot, now);
            return -1;
        }
        if (rc < 0) {
            char detail[200];
            snprintf(detail, sizeof detail, "bad HTTP response: %s", c->h1.error);
            int in_body = h1_parser_in_body(&c->h1);
            native_detach(nat, q);
            native_fail(nat, q, in_body ? REC_STREAM_TRUNCATED : REC_TRANSPORT_ERROR, detail, now);
            return -1;
        }
        /* One read per event: epoll is level-triggered and says if more is
         * waiting, and a connection that never stops sending cannot starve
         * the others or the timeout sweep. */
        return 1;
    }
}

/* Sending the request failed with err. The server may have answered
 * already and closed without reading the rest (a 413 before a large
 * body): read what it sent first, as libcurl does, and call the
 * connection lost only when nothing decides the request. */
static void conn_write_failed(struct native *nat, struct tconn *c, int err)
{
    int rc;
    while ((rc = conn_readable(nat, c)) > 0) {
    }
    if (rc == 0)
        conn_lost(nat, c, err, ll_now_ns());
}

static void conn_event(struct native *nat, struct tconn *c, uint32_t ev)
{
    if (c->state == CONN_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            connect_failed(nat, c, err);
            return;
        }
        if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        c->state = CONN_BUSY;
        c->q->slot.connecting_since_abs_ns = 0;
        if (conn_write(nat, c) != 0)
            return;
        return; /* the response comes with a later event */
    }
    /* Reads first: an answer that came before the whole request went out
     * (an early error) decides the request, and a reset then does not. */
    if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) && conn_readable(nat, c) < 0)
        return;
    if ((ev & EPOLLOUT) && c->q)
        conn_write(nat, c);
}

/* Send q now: on a kept-alive connection when one is free, else on a new
 * one. */
static void native_submit(struct native *nat, struct nreq *q)
{
    static const char name[] = "Content-Length: ";
    size_t n = sizeof(name) - 1;
    memcpy(q->clen, name, n);
    n += ll_fmt_u64(q->clen + n, q->slot.body_len);
    memcpy(q->clen + n, "\r\n\r\n", 4);
    q->clen_len = n + 4;
    q->retried = 0;
    struct tconn *c = nat->ep[q->slot.ep].idle;
    if (c) {
        idle_remove(c);
        c->state = CONN_BUSY;
        conn_attach(c, q);
        conn_write(nat, c);
        return;
    }
    native_connect(nat, q, 0);
}

/* ---- the operations the transport calls (backend.h) -------------------- */

static int native_send(void *be, struct treq *slot)
{
    native_submit(be, (struct nreq *)slot);
    return 0; /* a failure finishes the request itself */
}

static void native_detach_op(void *be, struct treq *slot)
{
    native_detach(be, (struct nreq *)slot);
}

static void native_event(void *be, const struct epoll_event *ev)
{
    conn_event(be, ev->data.ptr, ev->events);
}

/* slot's connect ran past --timeout-connect: the host's next address gets
 * its own, if it has one. */
static int native_connect_expired(void *be, struct treq *slot)
{
    struct native *nat = be;
    struct tconn *c = ((struct nreq *)slot)->conn;
    if (c->addr_idx + 1 >= c->ep->n_addr)
        return 0;
    connect_failed(nat, c, ETIMEDOUT);
    return 1;
}

/* Does reading ahead free connections here? Where responses are short
 * next to the reads they take (at most 4 reads per finished request so
 * far), yes; a run of long streams (64 reads each, say) frees almost
 * nothing per read, and there reading first only delays the due sends. */
static int native_read_ahead_frees(void *be, uint64_t finished)
{
    const struct native *nat = be;
    return nat->reads <= 4 * finished + 256;
}

/* Build one API's request head: request line, Host, then the configured
 * headers in order. libcurl's conventions for the list hold: "Name:" with
 * nothing after it removes a header (here only Host can be removed),
 * "Name;" sends it empty. */
static char *native_head(const char *path, const char *host, const struct curl_slist *hdrs,
                         size_t *len_out)
{
    size_t cap = strlen(path) + strlen(host) + 64;
    for (const struct curl_slist *h = hdrs; h; h = h->next)
        cap += strlen(h->data) + 2;
    char *b = ll_malloc(cap);
    size_t at = (size_t)snprintf(b, cap, "POST %s HTTP/1.1\r\n", path);
    int own_host = 0;
    for (const struct curl_slist *h = hdrs; h; h = h->next)
        own_host |= strncasecmp(h->data, "host:", 5) == 0 || strncasecmp(h->data, "host;", 5) == 0;
    if (!own_host)
        at += (size_t)snprintf(b + at, cap - at, "Host: %s\r\n", host);
    for (const struct curl_slist *h = hdrs; h; h = h->next) {
        const char *d = h->data;
        size_t n = strlen(d);
        const char *colon = memchr(d, ':', n);
        const char *semi = memchr(d, ';', n);
        if (colon) {
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            if (*v == '\0')
                continue; /* "Name:": remove */
            if (strncasecmp(d, "content-length:", 15) == 0 ||
                strncasecmp(d, "transfer-encoding:", 18) == 0)
                continue; /* the body's framing is ours: Content-Length */
            at += (size_t)snprintf(b + at, cap - at, "%s\r\n", d);
        } else if (semi && semi[1] == '\0') {
            at += (size_t)snprintf(b + at, cap - at, "%.*s:\r\n", (int)(semi - d), d);
        }
    }
    *len_out = at;
    return b;
}

/* Split url, an endpoint's base (an http:// URL:
 * transport_client_choose checked), into host and port, keep "host[:port]"
 * in ep for error details, and point *path at what follows the authority.
 * Returns 0, or -1 with a reason in err. */
static int native_parse_url(struct nep *ep, const char *url, char host[NATIVE_HOST_BYTES],
                            char port[NATIVE_PORT_BYTES], const char **path, char *err,
                            size_t errlen)
{
    const char *auth = url + 7;
    const char *slash = strchr(auth, '/');
    size_t alen = slash ? (size_t)(slash - auth) : strlen(auth);
    size_t hlen;
    const char *after;
    *path = slash ? slash : "";
    if (alen && auth[0] == '[') {
        const char *rb = memchr(auth, ']', alen);
        if (!rb) {
            snprintf(err, errlen, "--url: unbalanced [ in the host");
            return -1;
        }
        hlen = (size_t)(rb - auth - 1);
        if (hlen >= NATIVE_HOST_BYTES) {
            snprintf(err, errlen, "--url: host name too long");
            return -1;
        }
        memcpy(host, auth + 1, hlen);
        after = rb + 1;
    } else {
        const char *colon = memchr(auth, ':', alen);
        hlen = colon ? (size_t)(colon - auth) : alen;
        if (hlen >= NATIVE_HOST_BYTES) {
            snprintf(err, errlen, "--url: host name too long");
            return -1;
        }
        memcpy(host, auth, hlen);
        after = auth + hlen;
    }
    host[hlen] = '\0';
    snprintf(port, NATIVE_PORT_BYTES, "80");
    if (after < auth + alen && *after == ':') {
        size_t plen = (size_t)(auth + alen - after - 1);
        if (plen == 0 || plen > 5 || strspn(after + 1, "0123456789") < plen ||
            strtoul(after + 1, NULL, 10) > 65535) {
            snprintf(err, errlen, "--url: bad port \"%.*s\"", (int)LL_MIN(plen, 16), after + 1);
            return -1;
        }
        memcpy(port, after + 1, plen);
        port[plen] = '\0';
    } else if (after < auth + alen) {
        snprintf(err, errlen, "--url: unexpected \"%.*s\" after the host",
                 (int)LL_MIN((size_t)(auth + alen - after), 16), after);
        return -1;
    }
    if (hlen == 0) {
        snprintf(err, errlen, "--url: no host");
        return -1;
    }
    snprintf(ep->hostport, sizeof ep->hostport, "%.*s", (int)alen, auth);
    return 0;
}

/* Resolve host once, for the whole run (up to NATIVE_MAX_ADDRS addresses,
 * tried in order). A failure is not an error here: every request then
 * ends as connect_error with ep->resolve_err, as on libcurl. */
static void native_resolve(struct nep *ep, const char *host, const char *port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(ep->resolve_err, sizeof ep->resolve_err, "could not resolve host %.80s: %.60s",
                 host, gai_strerror(rc));
        return;
    }
    for (struct addrinfo *a = res; a && ep->n_addr < NATIVE_MAX_ADDRS; a = a->ai_next) {
        if (a->ai_addrlen > sizeof ep->addr[0])
            continue;
        memcpy(&ep->addr[ep->n_addr], a->ai_addr, a->ai_addrlen);
        ep->addr_len[ep->n_addr++] = a->ai_addrlen;
    }
    freeaddrinfo(res);
    if (ep->n_addr == 0)
        snprintf(ep->resolve_err, sizeof ep->resolve_err, "no usable address for %.80s", host);
}

static void native_stop(void *be);

static void *native_start(const struct backend_env *env, char *err, size_t errlen)
{
    struct native *nat = ll_calloc(1, sizeof *nat);
    nat->cfg = env->cfg;
    nat->epfd = env->epfd;
    nat->n_ep = env->n_ep;
    nat->ep = ll_calloc(nat->n_ep, sizeof *nat->ep);
    nat->rbuf = ll_malloc(NATIVE_RBUF_BYTES);
    for (uint32_t e = 0; e < nat->n_ep; e++) {
        struct nep *ep = &nat->ep[e];
        char host[NATIVE_HOST_BYTES], port[NATIVE_PORT_BYTES];
        const char *path;
        if (native_parse_url(ep, env->base_url[e], host, port, &path, err, errlen) != 0) {
            native_stop(nat);
            return NULL;
        }
        native_resolve(ep, host, port);
        for (int a = 0; a < OAI_API_COUNT; a++) {
            char full[1200];
            snprintf(full, sizeof full, "%.*s%s", (int)ll_url_base_len(path), path,
                     oai_api_path((enum oai_api)a));
            ep->head[a] = native_head(full, ep->hostport, nat->cfg->headers, &ep->head_len[a]);
        }
    }
    return nat;
}

static void native_stop(void *be)
{
    struct native *nat = be;
    for (uint32_t e = 0; e < nat->n_ep; e++) {
        while (nat->ep[e].idle)
            conn_close(nat, nat->ep[e].idle);
    }
    while (nat->conn_free) {
        struct tconn *c = nat->conn_free;
        nat->conn_free = c->next;
        h1_parser_free(&c->h1);
        free(c);
    }
    for (uint32_t e = 0; e < nat->n_ep; e++) {
        for (int a = 0; a < OAI_API_COUNT; a++)
            free(nat->ep[e].head[a]);
    }
    free(nat->ep);
    free(nat->rbuf);
    free(nat);
}

const struct backend_ops backend_native = {
    .req_bytes = sizeof(struct nreq),
    .start = native_start,
    .stop = native_stop,
    .send = native_send,
    .detach = native_detach_op,
    .event = native_event,
    .connect_expired = native_connect_expired,
    .read_ahead_frees = native_read_ahead_frees,
};
