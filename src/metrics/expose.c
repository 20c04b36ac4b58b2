/* expose.c: the --expose /metrics server.
 *
 * The page is rendered in expose_update (on the driver's thread, once per
 * live interval) into a string under a mutex; the serving thread copies
 * it for each request. Rolling quantiles come from a ring of the last
 * EXPOSE_WINDOW_UPDATES interval histograms, merged at render time; the
 * _sum and _count of each summary are totals since the start. */
#include "metrics/expose.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "measure/hist.h"
#include "measure/record.h"
#include "util/strbuf.h"
#include "util/util.h"

enum { EX_TTFT, EX_E2E, EX_LATE, EX_N };

struct ex_conn;

static const char *const ex_name[EX_N] = {
    "llmload_ttft_seconds",
    "llmload_e2e_seconds",
    "llmload_schedule_lateness_seconds",
};
static const char *const ex_help[EX_N] = {
    "Time to first token, from the scheduled send time, of ok requests (warm-up included).",
    "End-to-end latency, from the scheduled send time, of ok requests (warm-up included).",
    "How late the generator sent each request after its scheduled time (warm-up included).",
};
static const double ex_quantiles[] = {0.5, 0.9, 0.99};

struct exposer {
    int listen_fd;
    int stop_fd;                        /* eventfd: the thread's stop signal */
    int port;
    char addr[80]; /* as bound: "[::1]:9400" */
    double offered_rate_per_s;
    pthread_t th;
    int thread_started;

    pthread_mutex_t lock;               /* guards page */
    struct strbuf page;

    /* Owned by the updating thread. */
    struct hist *ring[EX_N][EXPOSE_WINDOW_UPDATES];
    struct hist *merged;
    double total_sum_s[EX_N];           /* seconds, since the start */
    uint64_t total_count[EX_N];
    uint64_t ring_t_ns[EXPOSE_WINDOW_UPDATES + 1];   /* the achieved-rate window */
    uint64_t ring_sent[EXPOSE_WINDOW_UPDATES + 1];
    size_t updates;

    /* Owned by the serving thread. */
    struct ex_conn *conns;     /* EXPOSE_MAX_CONNS slots */
    uint64_t accept_resume_ns; /* ll_now_ns() clock; 0: accepting */
};

/* ---- rendering ---------------------------------------------------------- */

static void put_head(struct strbuf *b, const char *name, const char *type, const char *help)
{
    strbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_u64(struct strbuf *b, const char *name, uint64_t v)
{
    strbuf_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void put_num(struct strbuf *b, const char *name, const char *labels, double v)
{
    strbuf_printf(b, "%s%s ", name, labels ? labels : "");
    if (isnan(v))
        strbuf_puts(b, "NaN");
    else if (isinf(v))
        strbuf_puts(b, v > 0 ? "+Inf" : "-Inf");
    else
        strbuf_put_num(b, v);
    strbuf_puts(b, "\n");
}

static void render(struct exposer *e, const struct driver_live *v, struct strbuf *b)
{
    put_head(b, "llmload_requests_scheduled_total", "counter",
             "Requests the schedule has released (warm-up included).");
    put_u64(b, "llmload_requests_scheduled_total", v->scheduled);
    put_head(b, "llmload_requests_sent_total", "counter",
             "Requests handed to the transport (warm-up included).");
    put_u64(b, "llmload_requests_sent_total", v->sent);
    put_head(b, "llmload_requests_completed_total", "counter",
             "Requests finished, by kind (ok or the error kind; warm-up included).");
    for (int k = 0; k < REC_KIND_COUNT; k++)
        strbuf_printf(b, "llmload_requests_completed_total{kind=\"%s\"} %llu\n",
                      rec_kind_name((enum rec_kind)k), (unsigned long long)v->done_by_kind[k]);
    put_head(b, "llmload_output_tokens_total", "counter",
             "Output tokens received (warm-up included).");
    put_u64(b, "llmload_output_tokens_total", v->output_tokens);
    put_head(b, "llmload_requests_in_flight", "gauge",
             "Requests in the system: sent or waiting for a slot, not finished.");
    put_u64(b, "llmload_requests_in_flight", v->inflight);
    if (e->offered_rate_per_s > 0) {
        put_head(b, "llmload_offered_rate", "gauge",
                 "The open-loop schedule's mean rate over the window, requests per second.");
        put_num(b, "llmload_offered_rate", NULL, e->offered_rate_per_s);
    }

    /* Achieved send rate over the window of past updates. */
    size_t slots = EXPOSE_WINDOW_UPDATES + 1;
    size_t have = LL_MIN(e->updates, slots);
    double rate = NAN;
    if (have >= 2) {
        size_t newest = (e->updates - 1) % slots, oldest = (e->updates - have) % slots;
        uint64_t dt = e->ring_t_ns[newest] - e->ring_t_ns[oldest];
        if (dt > 0)
            rate = (double)(e->ring_sent[newest] - e->ring_sent[oldest]) * 1e9 / (double)dt;
    }
    put_head(b, "llmload_achieved_rate", "gauge",
             "Requests sent per second over the rolling window.");
    put_num(b, "llmload_achieved_rate", NULL, rate);

    for (int x = 0; x < EX_N; x++) {
        hist_reset(e->merged);
        for (size_t i = 0; i < EXPOSE_WINDOW_UPDATES; i++)
            hist_merge(e->merged, e->ring[x][i]);
        put_head(b, ex_name[x], "summary", ex_help[x]);
        for (size_t q = 0; q < LL_ARRAY_LEN(ex_quantiles); q++) {
            char labels[32];
            snprintf(labels, sizeof labels, "{quantile=\"%g\"}", ex_quantiles[q]);
            double val = hist_count(e->merged)
                             ? (double)hist_percentile(e->merged, 100 * ex_quantiles[q]) / 1e9
                             : NAN;
            put_num(b, ex_name[x], labels, val);
        }
        char name[64];
        snprintf(name, sizeof name, "%s_sum", ex_name[x]);
        put_num(b, name, NULL, e->total_sum_s[x]);
        snprintf(name, sizeof name, "%s_count", ex_name[x]);
        put_u64(b, name, e->total_count[x]);
    }
    put_head(b, "llmload_run_elapsed_seconds", "gauge", "Time since the run started.");
    put_num(b, "llmload_run_elapsed_seconds", NULL, (double)v->t_ns / 1e9);
    put_head(b, "llmload_run_finished", "gauge", "1 once every request has finished.");
    put_u64(b, "llmload_run_finished", (uint64_t)(v->final != 0));
}

void expose_update(struct exposer *e, const struct driver_live *v)
{
    if (!e || !v)
        return;
    size_t slot = e->updates % EXPOSE_WINDOW_UPDATES;
    const struct hist *in[EX_N] = {v->ttft, v->e2e, v->lateness};
    for (int x = 0; x < EX_N; x++) {
        hist_reset(e->ring[x][slot]);
        if (!in[x])
            continue;
        hist_merge(e->ring[x][slot], in[x]);
        uint64_t n = hist_count(in[x]);
        e->total_count[x] += n;
        e->total_sum_s[x] += hist_mean(in[x]) * (double)n / 1e9;
    }
    size_t rs = e->updates % (EXPOSE_WINDOW_UPDATES + 1);
    e->ring_t_ns[rs] = v->t_ns;
    e->ring_sent[rs] = v->sent;
    e->updates++;

    struct strbuf b;
    strbuf_init(&b);
    render(e, v, &b);
    pthread_mutex_lock(&e->lock);
    struct strbuf old = e->page;
    e->page = b;
    pthread_mutex_unlock(&e->lock);
    strbuf_free(&old);
}

char *expose_render(struct exposer *e, size_t *len)
{
    pthread_mutex_lock(&e->lock);
    char *copy = ll_malloc(e->page.len + 1);
    memcpy(copy, e->page.data, e->page.len);
    copy[e->page.len] = '\0';
    if (len)
        *len = e->page.len;
    pthread_mutex_unlock(&e->lock);
    return copy;
}

/* ---- serving ------------------------------------------------------------ */

/* One client connection, non-blocking: its request head is read into req
 * until the blank line, then out holds the whole answer until it is sent.
 * The connection is closed after its answer, or at deadline_ns whatever
 * state it is in, so a client that trickles one byte at a time holds its
 * slot for EXPOSE_CONN_DEADLINE_NS at most. */
struct ex_conn {
    int fd;               /* -1: the slot is free */
    uint64_t deadline_ns; /* ll_now_ns() clock */
    size_t len;           /* bytes of req read */
    char req[EXPOSE_MAX_REQUEST_BYTES + 1];
    char *out;               /* the answer (NULL while reading) */
    size_t out_len, out_off; /* bytes, and bytes sent */
};

/* How long accept waits after running out of descriptors: accept4 fails
 * again at once while the queued connection is still there, so without a
 * pause the loop would spin. */
#define EXPOSE_ACCEPT_BACKOFF_NS 100000000ull

/* The answer to one request head: a new string (caller frees), its length
 * in *len. */
static char *answer(struct exposer *e, const char *req, size_t *len)
{
    struct strbuf b;
    strbuf_init(&b);
    const char *status = NULL;
    int get = strncmp(req, "GET ", 4) == 0, head = strncmp(req, "HEAD ", 5) == 0;
    const char *path = req + (get ? 4 : 5);
    size_t plen = strcspn(path, " ?\r\n");
    if (!get && !head)
        status = "405 Method Not Allowed";
    else if (!(plen == 8 && memcmp(path, "/metrics", 8) == 0))
        status = "404 Not Found";
    if (status) {
        strbuf_printf(&b,
                      "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\n\r\n%s\n",
                      status, strlen(status) + 1, status);
    } else {
        size_t blen;
        char *body = expose_render(e, &blen);
        strbuf_printf(&b,
                      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
                      "charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                      blen);
        if (get)
            strbuf_add(&b, body, blen);
        free(body);
    }
    *len = b.len;
    return b.data;
}

static void conn_close(struct ex_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
    c->len = c->out_len = c->out_off = 0;
}

/* Read what the client has sent; once the head is complete (or too long),
 * make the answer. */
static void conn_read(struct exposer *e, struct ex_conn *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->req + c->len, EXPOSE_MAX_REQUEST_BYTES - c->len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            conn_close(c);
            return;
        }
        c->len += (size_t)n;
        c->req[c->len] = '\0';
        if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n")) {
            c->out = answer(e, c->req, &c->out_len);
            return;
        }
        if (c->len == EXPOSE_MAX_REQUEST_BYTES) {
            static const char too_long[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                           "Content-Type: text/plain\r\nContent-Length: 36\r\n"
                                           "Connection: close\r\n\r\n"
                                           "431 Request Header Fields Too Large\n";
            c->out = ll_strdup(too_long);
            c->out_len = sizeof too_long - 1;
            return;
        }
    }
}

/* Send what the socket takes of the answer; close once all is sent or the
 * client has gone. */
static void conn_write(struct ex_conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0)
            break; /* the client went away: nothing to tell anyone */
        c->out_off += (size_t)n;
    }
    conn_close(c);
}

/* Accept what is queued into free slots. Out of descriptors, pause
 * accepting for EXPOSE_ACCEPT_BACKOFF_NS. */
static void accept_some(struct exposer *e, uint64_t now_ns)
{
    for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++) {
        struct ex_conn *c = &e->conns[i];
        if (c->fd >= 0)
            continue;
        int fd = accept4(e->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                e->accept_resume_ns = now_ns + EXPOSE_ACCEPT_BACKOFF_NS;
            return; /* EAGAIN, or a reset before accept: the client retries */
        }
        c->fd = fd;
        c->deadline_ns = now_ns + EXPOSE_CONN_DEADLINE_NS;
    }
}

/* Milliseconds until the nearest deadline (a connection's, or the end of
 * an accept pause), rounded up; -1 when there is none. */
static int poll_timeout_ms(const struct exposer *e, uint64_t now_ns)
{
    uint64_t next = UINT64_MAX;
    if (e->accept_resume_ns > now_ns)
        next = e->accept_resume_ns;
    for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++)
        if (e->conns[i].fd >= 0 && e->conns[i].deadline_ns < next)
            next = e->conns[i].deadline_ns;
    if (next == UINT64_MAX)
        return -1;
    if (next <= now_ns)
        return 0;
    return (int)((next - now_ns + 999999) / 1000000);
}

/* The serving thread: one poll over the stop signal, the listening socket
 * (while a slot is free and accepting is not paused) and every open
 * connection, so a slow or idle client neither blocks another nor keeps
 * expose_free waiting. */
static void *expose_main(void *arg)
{
    struct exposer *e = arg;
    for (;;) {
        struct pollfd p[2 + EXPOSE_MAX_CONNS];
        size_t slot_of[2 + EXPOSE_MAX_CONNS];
        nfds_t np = 0;
        uint64_t now = ll_now_ns();
        p[np++] = (struct pollfd){.fd = e->stop_fd, .events = POLLIN};
        int free_slot = 0;
        for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++) {
            struct ex_conn *c = &e->conns[i];
            if (c->fd < 0) {
                free_slot = 1;
                continue;
            }
            slot_of[np] = i;
            p[np++] = (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
        }
        nfds_t listen_at = 0;
        if (free_slot && now >= e->accept_resume_ns) {
            listen_at = np;
            p[np++] = (struct pollfd){.fd = e->listen_fd, .events = POLLIN};
        }
        int n = poll(p, np, poll_timeout_ms(e, now));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            ll_errorf("--expose: poll: %s", strerror(errno));
            return NULL;
        }
        if (p[0].revents)
            return NULL;
        if (listen_at && (p[listen_at].revents & (POLLERR | POLLHUP | POLLNVAL)))
            return NULL;
        now = ll_now_ns();
        for (nfds_t k = 1; k < np; k++) {
            if (k == listen_at || !p[k].revents)
                continue;
            struct ex_conn *c = &e->conns[slot_of[k]];
            if (c->out)
                conn_write(c);
            else
                conn_read(e, c);
            if (c->fd >= 0 && c->out && c->out_off == 0)
                conn_write(c); /* the answer is ready: most fit the socket at once */
        }
        for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++)
            if (e->conns[i].fd >= 0 && now >= e->conns[i].deadline_ns)
                conn_close(&e->conns[i]);
        if (listen_at && (p[listen_at].revents & POLLIN))
            accept_some(e, now);
    }
}

/* Split "HOST:PORT" or "[V6]:PORT" into host and port strings. */
static int split_addr(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon, *h = s;
    size_t n;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return LL_E_INVAL;
        h = s + 1;
        n = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return LL_E_INVAL;
        n = (size_t)(colon - s);
    }
    size_t pl = strlen(colon + 1);
    if (n == 0 || n >= hlen || pl == 0 || pl >= plen)
        return LL_E_INVAL;
    memcpy(host, h, n);
    host[n] = '\0';
    memcpy(port, colon + 1, pl + 1);
    uint64_t v;
    if (ll_parse_u64(port, &v) != 0 || v > 65535)
        return LL_E_INVAL;
    return 0;
}

/* Split and resolve addr_port (numeric only): 0 and *ai (caller frees
 * with freeaddrinfo), or LL_E_INVAL with the reason in err. */
static int resolve_addr(const char *addr_port, struct addrinfo **ai, char *err, size_t errlen)
{
    char host[128], port[16];
    if (!addr_port || split_addr(addr_port, host, sizeof host, port, sizeof port) != 0) {
        snprintf(err, errlen, "expected ADDR:PORT (e.g. 127.0.0.1:9400), got \"%s\"",
                 addr_port ? addr_port : "");
        return LL_E_INVAL;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
    int g = getaddrinfo(host, port, &hints, ai);
    if (g != 0) {
        snprintf(err, errlen, "\"%s\": expected a numeric address (%s)", addr_port,
                 gai_strerror(g));
        return LL_E_INVAL;
    }
    return 0;
}

int expose_check(const char *addr_port, char *err, size_t errlen)
{
    struct addrinfo *ai = NULL;
    if (resolve_addr(addr_port, &ai, err, errlen) != 0)
        return LL_E_INVAL;
    freeaddrinfo(ai);
    return 0;
}

struct exposer *expose_new(const char *addr_port, double offered_rate_per_s, char *err,
                           size_t errlen)
{
    struct addrinfo *ai = NULL;
    if (resolve_addr(addr_port, &ai, err, errlen) != 0)
        return NULL;
    struct exposer *e = ll_calloc(1, sizeof *e);
    e->listen_fd = -1;
    e->stop_fd = -1;
    e->offered_rate_per_s = offered_rate_per_s;
    pthread_mutex_init(&e->lock, NULL);
    strbuf_init(&e->page);
    e->merged = hist_new();
    e->conns = ll_calloc(EXPOSE_MAX_CONNS, sizeof *e->conns);
    for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++)
        e->conns[i].fd = -1;
    for (int x = 0; x < EX_N; x++)
        for (size_t i = 0; i < EXPOSE_WINDOW_UPDATES; i++)
            e->ring[x][i] = hist_new();

    e->listen_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (e->listen_fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        goto fail;
    }
    int one = 1;
    setsockopt(e->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(e->listen_fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        snprintf(err, errlen, "bind %s: %s", addr_port, strerror(errno));
        goto fail;
    }
    if (listen(e->listen_fd, 64) != 0) {
        snprintf(err, errlen, "listen %s: %s", addr_port, strerror(errno));
        goto fail;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(e->listen_fd, (struct sockaddr *)&ss, &sl) != 0) {
        snprintf(err, errlen, "getsockname: %s", strerror(errno));
        goto fail;
    }
    e->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    char host[INET6_ADDRSTRLEN];
    int g = getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, NULL, 0, NI_NUMERICHOST);
    if (g != 0) {
        snprintf(err, errlen, "getnameinfo: %s", gai_strerror(g));
        goto fail;
    }
    snprintf(e->addr, sizeof e->addr, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host,
             e->port);
    e->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (e->stop_fd < 0) {
        snprintf(err, errlen, "eventfd: %s", strerror(errno));
        goto fail;
    }
    /* A page before the first update: every counter at zero. */
    struct driver_live zero;
    memset(&zero, 0, sizeof zero);
    strbuf_clear(&e->page);
    render(e, &zero, &e->page);

    if (ll_thread_start_nosig(&e->th, expose_main, e, err, errlen) < 0)
        goto fail;
    e->thread_started = 1;
    freeaddrinfo(ai);
    return e;

fail:
    freeaddrinfo(ai);
    expose_free(e);
    return NULL;
}

int expose_port(const struct exposer *e)
{
    return e ? e->port : -1;
}

const char *expose_addr(const struct exposer *e)
{
    return e->addr;
}

void expose_free(struct exposer *e)
{
    if (!e)
        return;
    if (e->thread_started) {
        uint64_t one = 1;
        if (write(e->stop_fd, &one, sizeof one) != (ssize_t)sizeof one)
            shutdown(e->listen_fd, SHUT_RDWR); /* poll then reports a hang-up */
        pthread_join(e->th, NULL);
    }
    if (e->conns)
        for (size_t i = 0; i < EXPOSE_MAX_CONNS; i++)
            conn_close(&e->conns[i]);
    free(e->conns);
    if (e->stop_fd >= 0)
        close(e->stop_fd);
    if (e->listen_fd >= 0)
        close(e->listen_fd);
    for (int x = 0; x < EX_N; x++)
        for (size_t i = 0; i < EXPOSE_WINDOW_UPDATES; i++)
            hist_free(e->ring[x][i]);
    hist_free(e->merged);
    strbuf_free(&e->page);
    pthread_mutex_destroy(&e->lock);
    free(e);
}
