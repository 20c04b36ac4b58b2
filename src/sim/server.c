/* server.c: the sim's event loop.
 *
 * One iteration: epoll_wait, read the clock once (now), handle every ready
 * descriptor (accept, read and parse, signals, the timer), then service:
 * release slow-headers requests that are due, run the engine to now
 * (engine_advance calls back with token events that append SSE bytes to the
 * connections' output buffers), parse pipelined requests of connections
 * whose response just ended, and finally write each connection that has
 * new output with one send(). Every submit and advance of an iteration uses
 * the same now, so the engine sees a non-decreasing clock.
 *
 * Connections that die during an iteration are unlinked at once but freed
 * only at its end, because the epoll event array may still name them. */
#include "sim/server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sim/api.h"
#include "sim/http.h"
#include "sim/metrics.h"
#include "sim/simlog.h"
#include "util/dlist.h"
#include "util/util.h"

#define SERVER_READ_BYTES (64 * 1024)   /* one read() */
#define SERVER_IN_LIMIT_BYTES (256 * 1024) /* unparsed input held while busy */
#define SERVER_MAX_EVENTS 512
#define SERVER_SERVICE_ROUNDS 64
#define SERVER_KEEP_BUF_BYTES (64 * 1024) /* larger idle buffers are released */

struct conn {
    int fd;
    int busy;                       /* a request is in progress (api PENDING) */
    int closing;                    /* close once the output is written */
    int dead;                       /* closed; freed at the end of the iteration */
    int continue_sent;              /* "100 Continue" already sent for this request */
    uint32_t events;                /* epoll interest now registered */
    struct http_parser parser;
    struct http_buf in;             /* bytes read but not yet parsed */
    struct http_buf out;            /* bytes to write */
    struct api_req req;
    struct conn *prev, *next;       /* every live connection */
    struct conn *slow_prev, *slow_next; /* waiting for the slow-headers release */
    int in_slow;
    struct conn *dirty_next;        /* has output to write this iteration */
    int in_dirty;
    struct conn *resume_next;       /* response ended: parse what is pipelined */
    int in_resume;
    struct conn *dead_next;
};

struct server {
    struct server_config cfg;
    int epfd, lfd, tfd, sfd, reserve_fd;
    char tag_listen, tag_timer, tag_signal; /* epoll data.ptr markers */
    uint16_t port;
    uint64_t now_ns;
    uint64_t start_ns, end_ns;      /* end_ns UINT64_MAX = no --duration */
    uint64_t armed_ns;              /* what the timerfd is set to; 0 = disarmed */
    uint64_t next_log_flush_ns;
    int stop;
    struct engine *engine;
    struct faults faults;
    struct metrics metrics;
    struct gpu_model gpu; /* cfg.gpu, its clock set when the loop starts */
    struct simlog *log;
    struct api_ctx api;
    struct http_limits limits;
    struct conn *conns;
    struct conn *slow_head, *slow_tail;
    struct conn *dirty;
    struct conn *resume;
    struct conn *dead;
    uint64_t accepted_total;
    uint64_t dropped_overflow_total;
    int emfile_warned;
    sigset_t old_mask;
    char *rbuf;                     /* SERVER_READ_BYTES, shared by every read */
};

/* ---- connection lists ---- */

/* Put live c on the work list at *head (through its link *next) unless it
 * is there already (*in). */
static void conn_mark(struct conn **head, struct conn *c, int *in, struct conn **next)
{
    if (*in || c->dead)
        return;
    *in = 1;
    *next = *head;
    *head = c;
}

static void mark_dirty(struct server *s, struct conn *c)
{
    conn_mark(&s->dirty, c, &c->in_dirty, &c->dirty_next);
}

static void mark_resume(struct server *s, struct conn *c)
{
    conn_mark(&s->resume, c, &c->in_resume, &c->resume_next);
}

static void slow_push(struct server *s, struct conn *c)
{
    c->in_slow = 1;
    c->slow_next = NULL;
    c->slow_prev = s->slow_tail;
    if (s->slow_tail)
        s->slow_tail->slow_next = c;
    else
        s->slow_head = c;
    s->slow_tail = c;
}

static void slow_remove(struct server *s, struct conn *c)
{
    if (!c->in_slow)
        return;
    DLIST_UNLINK_TAIL(s->slow_head, s->slow_tail, c, slow_prev, slow_next);
    c->in_slow = 0;
    c->slow_prev = c->slow_next = NULL;
}

/* Close c now (cancelling its request, logged with error) and queue it for
 * freeing at the end of the iteration. */
static void conn_kill(struct server *s, struct conn *c, const char *error)
{
    if (c->dead)
        return;
    if (c->req.state != API_REQ_IDLE)
        api_abort(&s->api, &c->req, s->now_ns, error ? error : "client_gone");
    slow_remove(s, c);
    close(c->fd);
    c->fd = -1;
    DLIST_UNLINK(s->conns, c, prev, next);
    c->dead = 1;
    c->dead_next = s->dead;
    s->dead = c;
}

static void conn_free(struct conn *c)
{
    http_parser_free(&c->parser);
    http_buf_free(&c->in);
    http_buf_free(&c->out);
    api_req_free(&c->req);
    free(c);
}

/* Register what c waits for: input unless it is closing or its unparsed
 * input is at the bound, hang-ups unless closing (level-triggered RDHUP
 * would spin while we only write), output while bytes are pending. */
static void conn_set_events(struct server *s, struct conn *c)
{
    if (c->dead)
        return;
    uint32_t want = 0;
    if (!c->closing) {
        want |= EPOLLRDHUP;
        if (!(c->busy && http_buf_pending(&c->in) > SERVER_IN_LIMIT_BYTES))
            want |= EPOLLIN;
    }
    if (http_buf_pending(&c->out) > 0)
        want |= EPOLLOUT;
    if (want == c->events)
        return;
    struct epoll_event ev = {.events = want, .data.ptr = c};
    if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
        ll_errorf("sim: epoll_ctl: %s", strerror(errno));
        conn_kill(s, c, "client_gone");
        return;
    }
    c->events = want;
}

/* ---- requests ---- */

/* Act on an api_* result for c. */
static void conn_after_api(struct server *s, struct conn *c, int rc, int resume)
{
    mark_dirty(s, c);
    if (rc == API_PENDING) {
        c->busy = 1;
        if (c->req.state == API_REQ_SLOW_HEADERS && !c->in_slow)
            slow_push(s, c);
        return;
    }
    c->busy = 0;
    if (rc == API_CLOSE)
        c->closing = 1;
    else if (resume)
        mark_resume(s, c);
}

/* Parse and handle requests from data[0, len) while c is free to take one.
 * Returns the bytes used. */
static size_t conn_parse(struct server *s, struct conn *c, const char *data, size_t len)
{
    size_t off = 0;
    while (!c->busy && !c->closing && !c->dead && off < len) {
        size_t used = 0;
        int rc = http_parser_feed(&c->parser, data + off, len - off, &used);
        off += used;
        if (rc == HTTP_PARSE_MORE) {
            if (http_parser_in_body(&c->parser) && http_parser_expects_continue(&c->parser) &&
                !c->continue_sent) {
                http_buf_puts(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
                c->continue_sent = 1;
                mark_dirty(s, c);
            }
            break;
        }
        if (rc < 0) {
            int status = http_parser_error_status(&c->parser);
            const char *code = status == 413 ? "body_too_large" : "bad_request";
            char msg[96];
            snprintf(msg, sizeof(msg), "malformed HTTP request (%d %s)", status,
                     http_status_reason(status));
            api_write_error(&c->out, status, code, msg, 0);
            c->closing = 1;
            mark_dirty(s, c);
            break;
        }
        int arc = api_handle(&s->api, &c->req, http_parser_request(&c->parser), &c->out,
                             s->now_ns, c);
        http_parser_reset(&c->parser);
        c->continue_sent = 0;
        conn_after_api(s, c, arc, 0);
    }
    return off;
}

/* Parse what is buffered in c->in. */
static void conn_parse_buffered(struct server *s, struct conn *c)
{
    if (http_buf_pending(&c->in) == 0)
        return; /* nothing buffered (and c->in.data may be NULL) */
    size_t used = conn_parse(s, c, c->in.data + c->in.off, http_buf_pending(&c->in));
    http_buf_consume(&c->in, used);
    if (http_buf_pending(&c->in) == 0 && c->in.cap > SERVER_KEEP_BUF_BYTES)
        http_buf_free(&c->in);
}

static void conn_on_readable(struct server *s, struct conn *c)
{
    for (int i = 0; i < 4 && !c->dead; i++) {
        if (c->closing || (c->busy && http_buf_pending(&c->in) > SERVER_IN_LIMIT_BYTES))
            return; /* stop reading until the current response ends */
        ssize_t n = read(c->fd, s->rbuf, SERVER_READ_BYTES);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(s, c, "client_gone");
            return;
        }
        if (n == 0) {
            /* The client closed. A request still in progress has lost its
             * reader; otherwise finish writing what is queued. */
            if (c->busy)
                conn_kill(s, c, "client_gone");
            else if (http_buf_pending(&c->out) > 0)
                c->closing = 1;
            else
                conn_kill(s, c, NULL);
            return;
        }
        if (http_buf_pending(&c->in) == 0) {
            size_t used = conn_parse(s, c, s->rbuf, (size_t)n);
            if (!c->dead && used < (size_t)n)
                http_buf_append(&c->in, s->rbuf + used, (size_t)n - used);
        } else {
            http_buf_append(&c->in, s->rbuf, (size_t)n);
            conn_parse_buffered(s, c);
        }
        if (n < SERVER_READ_BYTES)
            return;
    }
}

/* Write c's output with one send() (more only if the kernel takes it all
 * and there is more). Drops a client whose unwritten output exceeds the
 * cap; closes a closing connection once everything is written. */
static void conn_flush(struct server *s, struct conn *c)
{
    while (!c->dead && http_buf_pending(&c->out) > 0) {
        ssize_t n = send(c->fd, c->out.data + c->out.off, http_buf_pending(&c->out),
                         MSG_NOSIGNAL);
        if (n > 0) {
            http_buf_consume(&c->out, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        conn_kill(s, c, "client_gone");
        return;
    }
    if (c->dead)
        return;
    if (http_buf_pending(&c->out) > s->cfg.conn_buffer_bytes) {
        s->dropped_overflow_total++;
        conn_kill(s, c, "buffer_overflow");
        return;
    }
    if (http_buf_pending(&c->out) == 0) {
        if (c->closing) {
            conn_kill(s, c, NULL);
            return;
        }
        if (c->out.cap > SERVER_KEEP_BUF_BYTES)
            http_buf_free(&c->out);
    }
    conn_set_events(s, c);
}

static void conn_on_event(struct server *s, struct conn *c, uint32_t events)
{
    if (c->dead)
        return;
    if (events & EPOLLERR) {
        conn_kill(s, c, "client_gone");
        return;
    }
    if (events & EPOLLOUT)
        conn_flush(s, c);
    if (c->dead)
        return;
    if ((events & EPOLLIN) && (c->events & EPOLLIN)) {
        conn_on_readable(s, c); /* reads the end of file too */
    } else if (events & (EPOLLHUP | EPOLLRDHUP)) {
        /* The peer hung up while we were not reading: only a request in
         * progress (its input stalled) can be here; it lost its reader. */
        if (c->busy || (events & EPOLLHUP))
            conn_kill(s, c, "client_gone");
    }
    if (!c->dead)
        mark_dirty(s, c);
}

/* ---- accept, timer, signals ---- */

static void server_accept(struct server *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE) {
                /* Out of descriptors: accept with the reserve one and close
                 * at once, so the client sees a close, not a hang. */
                if (!s->emfile_warned)
                    ll_errorf("sim: accept: %s (raise ulimit -n)", strerror(errno));
                s->emfile_warned = 1;
                if (s->reserve_fd >= 0) {
                    close(s->reserve_fd);
                    int x = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
                    if (x >= 0)
                        close(x);
                    s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                }
            } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
                ll_errorf("sim: accept: %s", strerror(errno));
            }
            return;
        }
        int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
            /* Not fatal: the stream still works, only with Nagle delays. */
        }
        struct conn *c = ll_calloc(1, sizeof(*c));
        c->fd = fd;
        http_parser_init(&c->parser, &s->limits);
        http_buf_init(&c->in);
        http_buf_init(&c->out);
        api_req_init(&c->req);
        c->events = EPOLLIN | EPOLLRDHUP;
        struct epoll_event ev = {.events = c->events, .data.ptr = c};
        if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            ll_errorf("sim: epoll_ctl: %s", strerror(errno));
            close(fd);
            conn_free(c);
            continue;
        }
        DLIST_PUSH(s->conns, c, prev, next);
        s->accepted_total++;
    }
}

static void on_engine_event(void *ud, const struct engine_event *ev)
{
    struct server *s = ud;
    struct conn *c = ev->ud;
    if (c->dead)
        return;
    /* Stamp with the clock now, not the loop's wake-up time: the log is
     * the tests' ground truth, and the bytes go out right after this
     * advance, not when the loop woke. */
    int rc = api_on_event(&s->api, &c->req, ev, &c->out, ll_now_ns());
    conn_after_api(s, c, rc, 1);
    /* Bound the memory even when one advance produces a lot (the instant
     * profile runs a whole request at once): write early, and drop a
     * client that cannot keep up. */
    if (http_buf_pending(&c->out) > s->cfg.conn_buffer_bytes)
        conn_flush(s, c);
}

/* Everything that is due at s->now_ns (see the file comment). */
static void server_service(struct server *s)
{
    for (int round = 0; round < SERVER_SERVICE_ROUNDS; round++) {
        while (s->slow_head && s->slow_head->req.release_ns <= s->now_ns) {
            struct conn *c = s->slow_head;
            slow_remove(s, c);
            int rc = api_release(&s->api, &c->req, &c->out, s->now_ns, c);
            conn_after_api(s, c, rc, 1);
        }
        engine_advance(s->engine, s->now_ns, on_engine_event, s);
        if (!s->resume)
            break;
        struct conn *list = s->resume;
        s->resume = NULL;
        while (list) {
            struct conn *c = list;
            list = c->resume_next;
            c->in_resume = 0;
            if (!c->dead && !c->busy)
                conn_parse_buffered(s, c);
        }
    }
    while (s->dirty) {
        struct conn *c = s->dirty;
        s->dirty = c->dirty_next;
        c->in_dirty = 0;
        if (!c->dead)
            conn_flush(s, c);
    }
    if (s->log && s->now_ns >= s->next_log_flush_ns) {
        simlog_flush(s->log);
        s->next_log_flush_ns = s->now_ns + LL_NS_PER_SEC;
    }
    if (s->now_ns >= s->end_ns)
        s->stop = 1;
    while (s->dead) {
        struct conn *c = s->dead;
        s->dead = c->dead_next;
        conn_free(c);
    }
}

/* Arm the timerfd at the earliest deadline. Returns 0 or LL_E_IO. */
static int server_arm_timer(struct server *s)
{
    uint64_t next = engine_next_ns(s->engine);
    if (s->slow_head)
        next = LL_MIN(next, s->slow_head->req.release_ns);
    if (s->log)
        next = LL_MIN(next, s->next_log_flush_ns);
    next = LL_MIN(next, s->end_ns);
    if (next == UINT64_MAX)
        next = 0; /* disarm */
    else if (next == 0)
        next = 1;
    if (next == s->armed_ns)
        return 0;
    struct itimerspec its = {0};
    its.it_value.tv_sec = (time_t)(next / LL_NS_PER_SEC);
    its.it_value.tv_nsec = (long)(next % LL_NS_PER_SEC);
    if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
        ll_errorf("sim: timerfd_settime: %s", strerror(errno));
        return LL_E_IO;
    }
    s->armed_ns = next;
    return 0;
}

int server_run(struct server *s)
{
    struct epoll_event evs[SERVER_MAX_EVENTS];
    s->start_ns = ll_now_ns();
    s->now_ns = s->start_ns;
    s->gpu.start_ns = s->start_ns;
    s->end_ns = s->cfg.duration_ns ? s->start_ns + s->cfg.duration_ns : UINT64_MAX;
    s->next_log_flush_ns = s->start_ns + LL_NS_PER_SEC;
    if (s->cfg.stall_for_ns > 0 && s->cfg.stall_from_first)
        engine_set_stall_after_first(s->engine, s->cfg.stall_at_ns, s->cfg.stall_for_ns);
    else if (s->cfg.stall_for_ns > 0)
        engine_set_stall(s->engine, s->start_ns + s->cfg.stall_at_ns,
                         s->start_ns + s->cfg.stall_at_ns + s->cfg.stall_for_ns);
    while (!s->stop) {
        if (server_arm_timer(s) < 0)
            return LL_E_IO;
        int n = epoll_wait(s->epfd, evs, SERVER_MAX_EVENTS, s->resume ? 0 : -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            ll_errorf("sim: epoll_wait: %s", strerror(errno));
            return LL_E_IO;
        }
        s->now_ns = ll_now_ns();
        /* Steps that ended by now come first (engine.h): a request read in
         * this pass must see the queue as the due step left it, or it can
         * get a spurious 429 at a step boundary. */
        engine_advance(s->engine, s->now_ns, on_engine_event, s);
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &s->tag_listen) {
                server_accept(s);
            } else if (p == &s->tag_timer) {
                uint64_t ticks;
                if (read(s->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
                    ll_errorf("sim: timerfd read: %s", strerror(errno));
                s->armed_ns = 0;
            } else if (p == &s->tag_signal) {
                struct signalfd_siginfo si;
                if (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                    s->stop = 1;
            } else {
                conn_on_event(s, p, evs[i].events);
            }
        }
        server_service(s);
    }
    return 0;
}

/* ---- setup and teardown ---- */

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            ll_errorf("sim: cannot raise the open-file limit: %s", strerror(errno));
    }
}

static int epoll_add(struct server *s, int fd, void *tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int server_listen(struct server *s, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    char port[8];
    snprintf(port, sizeof(port), "%u", (unsigned)s->cfg.port);
    int rc = getaddrinfo(s->cfg.host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "--host: cannot use \"%s\": %s", s->cfg.host, gai_strerror(rc));
        return LL_E_INVAL;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        goto fail;
    }
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
        snprintf(err, errlen, "setsockopt SO_REUSEADDR: %s", strerror(errno));
        goto fail;
    }
    if (bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
        snprintf(err, errlen, "bind %s:%u: %s", s->cfg.host, (unsigned)s->cfg.port,
                 strerror(errno));
        goto fail;
    }
    if (listen(fd, 4096) < 0) {
        snprintf(err, errlen, "listen: %s", strerror(errno));
        goto fail;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        snprintf(err, errlen, "getsockname: %s", strerror(errno));
        goto fail;
    }
    if (ss.ss_family == AF_INET6)
        s->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        s->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    freeaddrinfo(res);
    s->lfd = fd;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return LL_E_IO;
}

int server_new(const struct server_config *cfg, struct server **out, char *err, size_t errlen)
{
    struct server *s = ll_calloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->epfd = s->lfd = s->tfd = s->sfd = s->reserve_fd = -1;
    s->end_ns = UINT64_MAX;
    s->limits.max_head_bytes = cfg->max_head_bytes;
    s->limits.max_body_bytes = cfg->max_body_bytes;
    s->rbuf = ll_malloc(SERVER_READ_BYTES);
    s->faults = cfg->faults;
    metrics_init(&s->metrics);
    s->metrics.prompt_excludes_cached = cfg->prompt_excludes_cached;
    s->metrics.block_tokens = cfg->engine.block_tokens;
    s->metrics.kv_blocks =
        cfg->engine.block_tokens ? cfg->engine.kv_tokens / cfg->engine.block_tokens : 0;
    s->metrics.prefix_cache = cfg->engine.prefix_cache;
    api_ctx_init(&s->api);
    sigprocmask(SIG_SETMASK, NULL, &s->old_mask);

    raise_nofile();
    signal(SIGPIPE, SIG_IGN);
    int rc = server_listen(s, err, errlen);
    if (rc < 0)
        goto fail;
    rc = LL_E_IO;
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0) {
        snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
        goto fail;
    }
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s->tfd < 0) {
        snprintf(err, errlen, "timerfd_create: %s", strerror(errno));
        goto fail;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
        snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
        goto fail;
    }
    s->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (s->sfd < 0) {
        snprintf(err, errlen, "signalfd: %s", strerror(errno));
        goto fail;
    }
    if (epoll_add(s, s->lfd, &s->tag_listen) < 0 || epoll_add(s, s->tfd, &s->tag_timer) < 0 ||
        epoll_add(s, s->sfd, &s->tag_signal) < 0) {
        snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
        goto fail;
    }
    s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (cfg->log_path) {
        s->log = simlog_open(cfg->log_path, err, errlen);
        if (!s->log) {
            rc = LL_E_INVAL; /* a bad --log path: exit 2, as any bad flag */
            goto fail;
        }
    }
    s->engine = engine_new(&cfg->engine);
    if (!s->engine) {
        rc = LL_E_INVAL;
        if (engine_config_check(&cfg->engine, err, errlen) == 0)
            snprintf(err, errlen, "invalid engine configuration");
        goto fail;
    }
    s->api.engine = s->engine;
    s->api.faults = &s->faults;
    s->api.metrics = &s->metrics;
    s->gpu = cfg->gpu;
    s->gpu.start_ns = ll_now_ns(); /* server_run sets it again when serving starts */
    s->api.gpu = cfg->gpu_metrics ? &s->gpu : NULL;
    s->api.log = s->log;
    s->api.model_name = cfg->model_name;
    s->api.block_tokens = cfg->engine.prefix_cache ? cfg->engine.block_tokens : 0;
    s->api.default_max_tokens = cfg->default_max_tokens;
    s->api.tokens_per_event = cfg->tokens_per_event ? cfg->tokens_per_event : 1;
    s->api.role_chunk = cfg->role_chunk;
    s->api.slow_headers_delay_ns = cfg->slow_headers_delay_ns;
    s->api.seed = cfg->seed;
    s->api.tokenizer = cfg->tokenizer;
    s->api.no_usage = cfg->no_usage;
    s->api.context_tokens = cfg->context_tokens;
    s->api.total_slots = cfg->engine.max_num_seqs;
    if (cfg->vocab)
        s->api.vocab = cfg->vocab;
    s->api.embeddings_dim =
        cfg->embeddings_dim ? cfg->embeddings_dim : SERVER_DEFAULT_EMBEDDINGS_DIM;
    *out = s;
    return 0;
fail:
    server_free(s);
    *out = NULL;
    return rc;
}

uint16_t server_port(const struct server *s)
{
    return s->port;
}

int server_free(struct server *s)
{
    if (!s)
        return 0;
    s->now_ns = ll_now_ns();
    while (s->conns)
        conn_kill(s, s->conns, "client_gone");
    while (s->dead) {
        struct conn *c = s->dead;
        s->dead = c->dead_next;
        conn_free(c);
    }
    int rc = simlog_close(s->log);
    engine_free(s->engine);
    api_ctx_free(&s->api);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->tfd >= 0)
        close(s->tfd);
    if (s->sfd >= 0)
        close(s->sfd);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->reserve_fd >= 0)
        close(s->reserve_fd);
    sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
    free(s->rbuf);
    free(s);
    return rc < 0 ? LL_E_IO : 0;
}
