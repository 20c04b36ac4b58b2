/* transport.c: libcurl multi_socket on our own epoll + timerfd loop.
 *
 * The wiring is the standard one: libcurl tells us which sockets to watch
 * (socket callback -> epoll_ctl) and when it next needs a timeout (timer
 * callback); we tell it what happened with curl_multi_socket_action.
 * libcurl's timeouts are milliseconds and it re-arms them on almost every
 * call, so we keep its deadline in a variable and hand it to epoll_wait's
 * millisecond timeout instead of a timerfd (a timerfd_settime per call cost
 * a tenth of the client's CPU). A timerfd carries the caller's deadline (the
 * next scheduled arrival) at nanosecond resolution on absolute time, and an
 * eventfd lets another thread wake us.
 *
 * Each request slot owns its easy handle, SSE parser and body buffer and is
 * reused, so after warm-up nothing is allocated per request, per chunk or
 * per token. First-token, idle and total timeouts are ours (libcurl only has
 * a total and a connect timeout); a sweep every TRANSPORT_SWEEP_NS checks
 * them, so they fire within that much of their deadline. */
#include "http/transport.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "workload/chatbody.h"
#include "http/h1.h"
#include "http/outcome.h"
#include "decode/sse.h"
#include "util/util.h"

#define TRANSPORT_SWEEP_NS (5 * LL_NS_PER_MS)
#define TRANSPORT_MAX_EVENTS 256
#define TRANSPORT_BEHIND_NS (2 * LL_NS_PER_MS) /* see transport_poll */
#define TRANSPORT_BEHIND_ROUNDS 16              /* batches read first, at most */
#define TRANSPORT_ERRBODY_BYTES 200
#define TRANSPORT_MAX_BODY_BYTES (8u << 20) /* non-stream responses */
#define TRANSPORT_AFTER_DONE_NS (1 * LL_NS_PER_SEC) /* wait for the close after [DONE] */
#define TRANSPORT_RBUF_BYTES (64u << 10) /* one read on the native path */
#define TRANSPORT_MAX_ADDRS 4

/* epoll data: the low 3 bits say what an event is for. A native
 * connection's pointer (16-byte aligned) has them 0. */
#define TAG_CONN 0u
#define TAG_CURL 1u  /* libcurl's socket, fd in the upper bits */
#define TAG_SCHED 2u /* the schedule timerfd */
#define TAG_WAKE 3u  /* the wake eventfd */

/* A connection of the native HTTP/1.1 path. */
enum { CONN_CONNECTING, CONN_BUSY, CONN_IDLE, CONN_CLOSED };
struct tconn {
    int fd;
    int state;
    int addr_idx;             /* which of the resolved addresses */
    uint32_t served;          /* responses completed on it */
    uint32_t ev;              /* epoll events registered, 0 = not registered */
    struct treq *q;           /* the request on it, NULL when idle */
    size_t wr_off;            /* request bytes written so far */
    uint64_t start_abs_ns;    /* connect() time */
    struct h1_parser h1;
    struct tconn *next, *prev; /* idle list (doubly linked), or free list */
};

struct treq {
    CURL *easy;               /* NULL on the native path */
    struct tconn *conn;       /* native path: the connection carrying it */
    char clen[48];            /* native path: "Content-Length: N" and the blank line */
    size_t clen_len, body_len;
    int retried;              /* native path: resent once on a fresh connection */
    struct transport *t;
    struct record rec;
    struct sse_parser sse;
    struct oai_memo memo;     /* the stream's last chunk, for oai_decode_chunk_memo */
    char *body;               /* request body, reused */
    size_t body_cap;
    char *resp;               /* non-stream response body, reused */
    size_t resp_len, resp_cap;
    char errbody[TRANSPORT_ERRBODY_BYTES];
    size_t errbody_len;
    uint64_t sent_abs_ns;
    uint64_t last_read_abs_ns;
    uint64_t read_abs_ns;     /* time of the read being decoded */
    int status_seen;
    char curl_err[CURL_ERROR_SIZE]; /* libcurl's own words for a failure (CURLOPT_ERRORBUFFER) */
    int64_t retry_at_s, date_s; /* a Retry-After HTTP-date, and the Date beside it */
    enum rec_kind forced;     /* a kind decided before libcurl finished */
    int has_forced;
    int saw_done, saw_finish;
    uint32_t usage_chunks_with_output;
    int64_t usage_completion_tokens;
    enum oai_api api;         /* this request's endpoint and chunk format */
    int abort;                /* 1: stop the transfer at the next write callback */
    uint64_t last_event_abs_ns;   /* last output event (the idle timeout counts from it) */
    uint64_t done_abs_ns;         /* when [DONE] arrived, 0 before */
    uint32_t sse_events;          /* SSE events of any kind in this response */
    uint64_t resp_len_seen;       /* body bytes of a 200 stream */
    uint64_t cancel_after_events; /* workload cancellation after N output events, 0 = none */
    uint64_t cancel_at_abs_ns;    /* workload cancellation at this time, 0 = none */
    struct treq *next, *prev; /* active list, or free list (next only) */
};

struct transport {
    struct transport_config cfg;
    char *model_json;         /* JSON-escaped model name */
    size_t model_json_len;
    char url[2][1024];        /* by enum oai_api */
    struct stats *stats;
    transport_done_cb *done;
    void *ud;
    CURLM *multi;
    int epfd, sched_tfd, wake_efd;
    uint64_t curl_deadline_abs_ns;  /* libcurl's next timeout; UINT64_MAX = none */
    uint64_t armed_deadline;
    uint64_t next_sweep_abs_ns;
    struct treq *active;      /* doubly linked */
    struct treq *free_list;
    uint32_t inflight;
    uint64_t wait_from_ns, wait_until_ns; /* the last poll's epoll_wait (transport_last_wait) */
    uint64_t reads, finished;       /* native: read() calls, requests finished */
    struct treq **all;        /* every slot ever made, for freeing */
    size_t n_all, cap_all;
    /* The native HTTP/1.1 path (t->native set). */
    int native;
    struct sockaddr_storage addr[TRANSPORT_MAX_ADDRS];
    socklen_t addr_len[TRANSPORT_MAX_ADDRS];
    int n_addr;
    char resolve_err[200];    /* set when the host did not resolve */
    char hostport[300];       /* for error details */
    char *head[2];            /* request line and headers, by enum oai_api */
    size_t head_len[2];
    char *rbuf;               /* TRANSPORT_RBUF_BYTES, shared by all reads */
    struct tconn *idle;       /* kept-alive connections, most recent first */
    struct tconn *conn_free;  /* released connection structs */
};

static uint64_t rel(const struct transport *t, uint64_t abs_ns)
{
    return abs_ns >= t->cfg.run_start_ns ? abs_ns - t->cfg.run_start_ns : 0;
}

/* ---- epoll wiring ------------------------------------------------------ */

static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    struct transport *t = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(t->epfd, EPOLL_CTL_DEL, s, NULL); /* may already be closed */
        return 0;
    }
    struct epoll_event ev = {0};
    if (what & CURL_POLL_IN)
        ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        ev.events |= EPOLLOUT;
    ev.data.u64 = ((uint64_t)(uint32_t)s << 3) | TAG_CURL;
    if (epoll_ctl(t->epfd, EPOLL_CTL_MOD, s, &ev) != 0) {
        if (errno != ENOENT || epoll_ctl(t->epfd, EPOLL_CTL_ADD, s, &ev) != 0) {
            ll_errorf("transport: epoll_ctl fd %d: %s", (int)s, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct transport *t = userp;
    if (timeout_ms < 0)
        t->curl_deadline_abs_ns = UINT64_MAX;
    else
        t->curl_deadline_abs_ns = ll_now_ns() + (uint64_t)timeout_ms * LL_NS_PER_MS;
    return 0;
}

/* Run libcurl's timeout handling while its deadline has passed. */
static void curl_timeouts(struct transport *t)
{
    int running;
    for (int i = 0; i < 8 && t->curl_deadline_abs_ns <= ll_now_ns(); i++) {
        t->curl_deadline_abs_ns = UINT64_MAX;
        curl_multi_socket_action(t->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

/* armed_deadline after the timerfd fired: it stays readable (we do not
 * read it) until the next timerfd_settime, which clears its count, so the
 * next arm_deadline must call it whatever the deadline. That saves a
 * read() per scheduled arrival. */
#define TFD_FIRED (UINT64_MAX - 1)

static void arm_deadline(struct transport *t, uint64_t deadline_abs_ns)
{
    if (deadline_abs_ns == t->armed_deadline)
        return;
    struct itimerspec its = {0};
    if (deadline_abs_ns != UINT64_MAX) {
        uint64_t d = deadline_abs_ns ? deadline_abs_ns : 1;
        its.it_value.tv_sec = (time_t)(d / LL_NS_PER_SEC);
        its.it_value.tv_nsec = (long)(d % LL_NS_PER_SEC);
    }
    timerfd_settime(t->sched_tfd, TFD_TIMER_ABSTIME, &its, NULL);
    t->armed_deadline = deadline_abs_ns;
}

/* ---- request body ------------------------------------------------------ */

static char *json_escape_dup(const char *s)
{
    size_t n = strlen(s);
    char *out = ll_malloc(n * 6 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'u';
            out[o++] = '0';
            out[o++] = '0';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

static void body_reserve(struct treq *q, size_t need)
{
    if (need <= q->body_cap)
        return;
    size_t cap = q->body_cap ? q->body_cap : 1024;
    while (cap < need)
        cap *= 2;
    q->body = ll_realloc(q->body, cap);
    q->body_cap = cap;
}

/* Append the n bytes at src to b at *at when they fit in cap; *at advances
 * either way, so a too-small buffer shows as *at >= cap. */
static void body_put(char *b, size_t cap, size_t *at, const char *src, size_t n)
{
    if (*at + n <= cap)
        memcpy(b + *at, src, n);
    *at += n;
}

#define BODY_LIT(b, cap, at, lit) body_put((b), (cap), (at), (lit), sizeof(lit) - 1)

/* Build the JSON body for spec into q->body; returns its length. Written
 * with memcpy rather than snprintf: this runs once per request, and three
 * snprintf calls were a tenth of the client's own CPU at 5,000 req/s. */
static size_t build_body(struct transport *t, struct treq *q, const struct req_spec *spec)
{
    int chat = q->api == OAI_API_CHAT;
    int ids = !chat && t->cfg.prompt_ids;
    char num[LL_U64_DIGITS_MAX];
    size_t num_len = ll_fmt_u64(num, spec->max_tokens);

    for (;;) {
        size_t cap = q->body_cap, at = 0;
        char *b = q->body;

        BODY_LIT(b, cap, &at, "{\"model\":\"");
        body_put(b, cap, &at, t->model_json, t->model_json_len);
        if (chat)
            BODY_LIT(b, cap, &at, "\",\"messages\":[");
        else if (ids)
            BODY_LIT(b, cap, &at, "\",\"prompt\":[");
        else
            BODY_LIT(b, cap, &at, "\",\"prompt\":\"");
        size_t room = at < cap ? cap - at : 0;
        char *dst = at < cap ? b + at : NULL;
        at += ids ? chatbody_prompt_ids(t->cfg.seed, spec, dst, room)
                  : chatbody_prompt(q->api, t->cfg.seed, spec, dst, room);
        if (chat || ids)
            BODY_LIT(b, cap, &at, "],\"max_tokens\":");
        else
            BODY_LIT(b, cap, &at, "\",\"max_tokens\":");
        body_put(b, cap, &at, num, num_len);
        if (t->cfg.stream)
            BODY_LIT(b, cap, &at, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
        else
            BODY_LIT(b, cap, &at, ",\"stream\":false");
        if (spec->ignore_eos)
            BODY_LIT(b, cap, &at, ",\"ignore_eos\":true");
        BODY_LIT(b, cap, &at, "}");
        if (at < cap)
            return at;
        body_reserve(q, at + 1);
    }
}

/* ---- response decoding ------------------------------------------------- */

static void set_forced(struct treq *q, enum rec_kind kind, const char *detail)
{
    if (q->has_forced)
        return;
    q->has_forced = 1;
    q->forced = kind;
    if (detail)
        snprintf(q->rec.detail, sizeof q->rec.detail, "%.119s", detail);
}

static void note_output(struct treq *q, int has_content)
{
    struct transport *t = q->t;
    uint64_t now = rel(t, q->read_abs_ns);
    struct record *r = &q->rec;
    r->events++;
    if (r->first_ns == LL_NO_TIME) {
        r->first_ns = now;
    } else {
        uint64_t gap = now - r->last_ns;
        if (r->sched_ns >= t->cfg.warmup_ns)
            stats_add_itl_gap(t->stats, gap);
        if (gap > r->max_gap_ns)
            r->max_gap_ns = gap;
    }
    if (has_content && r->first_content_ns == LL_NO_TIME)
        r->first_content_ns = now;
    r->last_ns = now;
    q->last_event_abs_ns = q->read_abs_ns;
    if (q->cancel_after_events && r->events >= q->cancel_after_events) {
        /* The workload's client walks away after this many tokens. */
        char detail[96];
        snprintf(detail, sizeof detail, "cancelled by the workload after %llu output events",
                 (unsigned long long)r->events);
        set_forced(q, REC_CANCELLED, detail);
        q->abort = 1;
    }
}

static void take_usage(struct treq *q, const struct oai_chunk *c, int carries_output)
{
    if (c->prompt_tokens >= 0)
        q->rec.prompt_tokens_server = c->prompt_tokens;
    if (c->cached_tokens >= 0)
        q->rec.cached_tokens = c->cached_tokens;
    if (c->completion_tokens >= 0)
        q->usage_completion_tokens = c->completion_tokens;
    if (carries_output)
        q->usage_chunks_with_output++;
}

static int on_sse_event(void *ud, const struct sse_event *ev)
{
    struct treq *q = ud;
    if (q->abort)
        return 1; /* cancelled: the rest of this read is not ours to count */
    q->sse_events++;
    if (q->saw_done)
        return 0; /* the stream ended at [DONE]: what follows is not output */
    struct oai_chunk c;
    if (oai_decode_chunk_memo(q->api, ev->data, ev->data_len, &c, &q->memo) != 0) {
        char detail[96];
        size_t n = ev->data_len < 60 ? ev->data_len : 60;
        snprintf(detail, sizeof detail, "bad event data: %.*s", (int)n, ev->data);
        set_forced(q, REC_MALFORMED_EVENT, detail);
        return 0;
    }
    if (c.done) {
        q->saw_done = 1;
        q->done_abs_ns = q->read_abs_ns;
        return 0;
    }
    if (c.has_error) {
        char detail[160];
        snprintf(detail, sizeof detail, "server error event: %.100s", c.error_message);
        set_forced(q, REC_SERVER_ERROR_EVENT, detail);
    }
    if (c.has_finish)
        q->saw_finish = 1;
    int out = c.content_bytes + c.reasoning_bytes + c.tool_call_deltas > 0;
    if (c.has_usage)
        take_usage(q, &c, out);
    if (out)
        note_output(q, c.content_bytes > 0);
    return 0;
}

/* Retry-After as an HTTP-date: the wait from the response's own Date
 * (the server's clock against the server's clock), or from our wall clock
 * where it sent none; a date already past is no wait. */
static void retry_after_date(struct treq *q)
{
    int64_t base = q->date_s ? q->date_s : (int64_t)time(NULL);
    q->rec.retry_after_ms = q->retry_at_s > base ? (q->retry_at_s - base) * 1000 : 0;
}

/* One response header line (or the status line), as libcurl or the h1
 * parser hands it over (with or without its line end). Returns 1 when the
 * transfer must stop. */
static int header_line(struct treq *q, const char *buf, size_t n)
{
    if (n > 5 && strncmp(buf, "HTTP/", 5) == 0) {
        /* Status line; a later one (after 1xx or a redirect) replaces it. */
        const char *sp = memchr(buf, ' ', n);
        if (sp && (size_t)(sp - buf) + 4 <= n) {
            int st = 0;
            for (int i = 1; i <= 3; i++) {
                char ch = sp[i];
                if (ch < '0' || ch > '9') {
                    st = 0;
                    break;
                }
                st = st * 10 + (ch - '0');
            }
            q->rec.http_status = st;
            q->status_seen = 1;
        }
    } else if (n >= 17 && strncasecmp(buf, "content-encoding:", 17) == 0) {
        /* We never ask for compression; a compressed stream would reach the
         * SSE decoder as garbage. */
        size_t i = 17;
        while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        if (!(n - i >= 8 && strncasecmp(buf + i, "identity", 8) == 0)) {
            char detail[96];
            size_t len = n - i;
            while (len && (buf[i + len - 1] == '\r' || buf[i + len - 1] == '\n'))
                len--;
            snprintf(detail, sizeof detail, "Content-Encoding %.*s was not asked for",
                     (int)LL_MIN(len, 40), buf + i);
            set_forced(q, REC_MALFORMED_EVENT, detail);
            q->abort = 1;
        }
    } else if (n > 12 && strncasecmp(buf, "retry-after:", 12) == 0) {
        size_t i = 12;
        while (i < n && (buf[i] == ' ' || buf[i] == '\t'))
            i++;
        int64_t secs = 0;
        int digits = 0;
        while (i < n && buf[i] >= '0' && buf[i] <= '9' && digits < 12) {
            secs = secs * 10 + (buf[i] - '0');
            i++;
            digits++;
        }
        if (digits)
            q->rec.retry_after_ms = secs * 1000;
        else if (ll_parse_http_date(buf + i, n - i, (int64_t)time(NULL), &q->retry_at_s) == 0)
            retry_after_date(q);
    } else if (q->rec.http_status != 200 && n > 5 && strncasecmp(buf, "date:", 5) == 0) {
        /* Only where a Retry-After may come (not on the hot path). */
        int64_t now = (int64_t)time(NULL);
        if (ll_parse_http_date(buf + 5, n - 5, now, &q->date_s) == 0 && q->retry_at_s)
            retry_after_date(q);
    }
    return q->abort;
}

static size_t on_header(char *buf, size_t size, size_t nmemb, void *ud)
{
    size_t n = size * nmemb;
    return header_line(ud, buf, n) ? 0 : n;
}

/* Response body bytes read at q->read_abs_ns. Returns 1 when the transfer
 * must stop (the kind is already decided). */
static int body_bytes(struct treq *q, const char *buf, size_t n)
{
    if (q->abort)
        return 1;
    if (q->rec.http_status != 200) {
        size_t room = sizeof q->errbody - 1 - q->errbody_len;
        size_t take = n < room ? n : room;
        memcpy(q->errbody + q->errbody_len, buf, take);
        q->errbody_len += take;
        return 0;
    }
    if (!q->t->cfg.stream) {
        if (q->rec.first_ns == LL_NO_TIME)
            q->rec.first_ns = rel(q->t, q->read_abs_ns);
        if (q->resp_len + n > TRANSPORT_MAX_BODY_BYTES) {
            set_forced(q, REC_MALFORMED_EVENT, "response body over 8 MiB");
            return 1;
        }
        if (q->resp_len + n > q->resp_cap) {
            size_t cap = q->resp_cap ? q->resp_cap : 4096;
            while (cap < q->resp_len + n)
                cap *= 2;
            q->resp = ll_realloc(q->resp, cap);
            q->resp_cap = cap;
        }
        memcpy(q->resp + q->resp_len, buf, n);
        q->resp_len += n;
        return 0;
    }
    q->resp_len_seen += n;
    int rc = sse_parser_feed(&q->sse, buf, n, on_sse_event, q);
    if (rc == LL_E_PROTO) {
        set_forced(q, REC_LINE_TOO_LONG, "SSE line over the limit");
        return 1; /* abort the transfer */
    }
    return q->abort;
}

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ud)
{
    uint64_t now = ll_now_ns(); /* first: the moment these bytes were read */
    struct treq *q = ud;
    q->last_read_abs_ns = now;
    q->read_abs_ns = now;
    size_t n = size * nmemb;
    return body_bytes(q, buf, n) ? 0 : n;
}

/* ---- slots ------------------------------------------------------------- */

static struct treq *slot_get(struct transport *t, char *err, size_t errlen)
{
    struct treq *q = t->free_list;
    if (q) {
        t->free_list = q->next;
        return q;
    }
    q = ll_calloc(1, sizeof *q);
    q->t = t;
    sse_parser_init(&q->sse, t->cfg.max_line_bytes);
    q->api = t->cfg.api;
    if (t->native)
        goto keep;
    q->easy = curl_easy_init();
    if (!q->easy) {
        snprintf(err, errlen, "curl_easy_init failed");
        sse_parser_free(&q->sse);
        free(q);
        return NULL;
    }
    CURL *e = q->easy;
    curl_easy_setopt(e, CURLOPT_URL, t->url[q->api]);
    curl_easy_setopt(e, CURLOPT_PRIVATE, q);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, q);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, q->curl_err);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->cfg.headers);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     t->cfg.http2 ? (long)CURL_HTTP_VERSION_2_0 : (long)CURL_HTTP_VERSION_1_1);
    if (t->cfg.insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (t->cfg.cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, t->cfg.cacert);
    if (t->cfg.connect_timeout_ns)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                         (long)((t->cfg.connect_timeout_ns + LL_NS_PER_MS - 1) / LL_NS_PER_MS));
keep:
    if (t->n_all == t->cap_all) {
        t->cap_all = t->cap_all ? t->cap_all * 2 : 64;
        t->all = ll_realloc(t->all, t->cap_all * sizeof *t->all);
    }
    t->all[t->n_all++] = q;
    return q;
}

static void active_add(struct transport *t, struct treq *q)
{
    q->prev = NULL;
    q->next = t->active;
    if (t->active)
        t->active->prev = q;
    t->active = q;
    t->inflight++;
}

static void active_remove(struct transport *t, struct treq *q)
{
    if (q->prev)
        q->prev->next = q->next;
    else
        t->active = q->next;
    if (q->next)
        q->next->prev = q->prev;
    t->inflight--;
}

/* ---- finishing --------------------------------------------------------- */

static void errbody_detail(struct treq *q)
{
    size_t n = q->errbody_len;
    char *d = q->rec.detail;
    size_t cap = sizeof q->rec.detail;
    int w = snprintf(d, cap, "HTTP %d: ", q->rec.http_status);
    size_t at = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < n && at + 1 < cap; i++) {
        unsigned char c = (unsigned char)q->errbody[i];
        d[at++] = (c >= 0x20 && c < 0x7f) ? (char)c : ' ';
    }
    d[at < cap ? at : cap - 1] = '\0';
}

/* How a transfer failed, in the words of the client that carried it. */
struct xfer_error {
    enum outcome_xfer xfer;  /* never OUTCOME_XFER_NONE */
    const char *detail;      /* the client's own words (copied into the record) */
    int os_errno;            /* the errno behind it, 0 = not known */
    int fd_probe_errno;      /* errno of opening one more descriptor now, 0 = it opened */
};

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

/* Can this process open one more descriptor? 0, or open's errno. */
static int fd_probe_errno(void)
{
    int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/* Decode a non-stream response's body into c. A complete response (not an
 * error object) gives the record its usage and its one output "event". */
static enum outcome_body take_body(struct treq *q, struct oai_chunk *c)
{
    struct record *r = &q->rec;
    if (oai_decode_response(q->api, q->resp ? q->resp : "", q->resp_len, c) != 0)
        return OUTCOME_BODY_NOT_JSON;
    if (c->has_error)
        return OUTCOME_BODY_ERROR;
    int out = c->content_bytes + c->reasoning_bytes + c->tool_call_deltas > 0;
    if (c->has_usage)
        take_usage(q, c, 0);
    if (out) {
        r->events = 1;
        r->first_content_ns = c->content_bytes ? r->first_ns : LL_NO_TIME;
        r->last_ns = r->end_ns;
    } else {
        r->first_ns = LL_NO_TIME;
    }
    return OUTCOME_BODY_OK;
}

/* The record's detail for outcome o (a forced kind wrote its own). The
 * client out of resources is not the server's failure: say which, and warn
 * once on stderr. */
static void outcome_detail(struct treq *q, const struct outcome *o, const struct xfer_error *xe,
                           const struct oai_chunk *c)
{
    static atomic_int warned;
    struct record *r = &q->rec;
    const char *what = NULL;
    switch (o->why) {
    case OUTCOME_WHY_FORCED:
    case OUTCOME_WHY_STREAM_DONE:
    case OUTCOME_WHY_BODY_OK:
        break;
    case OUTCOME_WHY_XFER:
        snprintf(r->detail, sizeof r->detail, "%.119s", xe->detail);
        break;
    case OUTCOME_WHY_XFER_OUT_OF_FDS:
        what = "client out of file descriptors (raise ulimit -n)";
        break;
    case OUTCOME_WHY_XFER_OUT_OF_PORTS:
        what = "client out of ephemeral ports (too many new connections)";
        break;
    case OUTCOME_WHY_HTTP_STATUS:
        errbody_detail(q);
        break;
    case OUTCOME_WHY_STREAM_NOT_SSE:
        snprintf(r->detail, sizeof r->detail,
                 "a 200 response with a body but no SSE event (not a stream)");
        break;
    case OUTCOME_WHY_STREAM_CUT:
        snprintf(r->detail, sizeof r->detail, "stream ended without [DONE] or finish_reason");
        break;
    case OUTCOME_WHY_BODY_NOT_JSON:
        snprintf(r->detail, sizeof r->detail, "response body is not the expected JSON");
        break;
    case OUTCOME_WHY_BODY_ERROR:
        snprintf(r->detail, sizeof r->detail, "server error: %.100s", c->error_message);
        break;
    }
    if (!what)
        return;
    snprintf(r->detail, sizeof r->detail, "%s", what);
    if (atomic_exchange(&warned, 1) == 0)
        ll_errorf("warning: %s; those requests are recorded as transport_error", what);
}

static void native_detach(struct transport *t, struct treq *q);
static void connect_failed(struct transport *t, struct tconn *c, int e);

/* Decide the record's kind and token counts (outcome_decide), hand it to
 * the caller, and return the slot. xe: how the transfer failed, NULL when
 * it did not. */
static void finish(struct transport *t, struct treq *q, const struct xfer_error *xe,
                   uint64_t now_abs)
{
    struct record *r = &q->rec;
    t->finished++;
    r->end_ns = rel(t, now_abs);
    if (t->cfg.stream && r->http_status == 200 && !q->has_forced)
        sse_parser_finish(&q->sse, on_sse_event, q);

    struct outcome_in in = {
        .forced = q->has_forced,
        .forced_kind = q->forced,
        .xfer = xe ? xe->xfer : OUTCOME_XFER_NONE,
        .status_seen = q->status_seen,
        .os_errno = xe ? xe->os_errno : 0,
        .fd_probe_errno = xe ? xe->fd_probe_errno : 0,
        .http_status = r->http_status,
        .stream = t->cfg.stream,
        .saw_done = q->saw_done,
        .saw_finish = q->saw_finish,
        .sse_events = q->sse_events,
        .stream_bytes = q->resp_len_seen,
        .usage_chunks_with_output = q->usage_chunks_with_output,
    };
    struct oai_chunk c;
    if (outcome_reads_body(&in))
        in.body = take_body(q, &c);
    in.usage_completion_tokens = q->usage_completion_tokens;
    struct outcome o = outcome_decide(&in);
    r->kind = o.kind;
    outcome_detail(q, &o, xe, &c);
    r->tokens_source = o.tokens_source;
    r->output_tokens = o.tokens_source == REC_TOKENS_EVENTS ? r->events
                                                            : (uint64_t)q->usage_completion_tokens;

    if (t->native)
        native_detach(t, q);
    else
        curl_multi_remove_handle(t->multi, q->easy);
    active_remove(t, q);
    t->done(t->ud, r);
    q->next = t->free_list;
    t->free_list = q;
}

static void drain_done(struct transport *t)
{
    CURLMsg *m;
    int left;
    uint64_t now = 0;
    while ((m = curl_multi_info_read(t->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct treq *q = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q);
        CURLcode res = m->data.result;
        if (!now)
            now = ll_now_ns();
        /* Prefer the time of the last read: the stream ended when its last
         * bytes arrived, not when we got round to noticing. */
        uint64_t end = q->last_read_abs_ns > q->sent_abs_ns ? q->last_read_abs_ns : now;
        if (res != CURLE_OK || end > now)
            end = now;
        if (res == CURLE_OK) {
            finish(t, q, NULL, end);
            continue;
        }
        /* libcurl's buffer says which ("SSL certificate problem: self-signed
         * certificate", "no alternative certificate subject name matches
         * target host name ..."), where its code's text says only the kind. */
        struct xfer_error xe = {
            .xfer = xfer_from_curl(res),
            .detail = q->curl_err[0] ? q->curl_err : curl_easy_strerror(res),
        };
        long os_errno = 0;
        curl_easy_getinfo(q->easy, CURLINFO_OS_ERRNO, &os_errno);
        xe.os_errno = (int)os_errno;
        /* libcurl does not always keep socket()'s errno: on a connect
         * failure without one, ask the kernel whether this process can open
         * one more descriptor. */
        if (os_errno == 0 && outcome_xfer_kind(xe.xfer, q->status_seen) == REC_CONNECT_ERROR)
            xe.fd_probe_errno = fd_probe_errno();
        finish(t, q, &xe, end);
    }
}

static void sweep(struct transport *t, uint64_t now)
{
    const struct transport_config *c = &t->cfg;
    struct treq *q = t->active;
    while (q) {
        struct treq *next = q->next;
        enum rec_kind kind = REC_OK;
        const char *why = NULL;
        if (q->done_abs_ns && now - q->done_abs_ns >= TRANSPORT_AFTER_DONE_NS) {
            /* [DONE] came but the server keeps the response open: the
             * stream was complete at [DONE], whatever timeout is near;
             * stop waiting for the close (an earlier verdict stands). */
            set_forced(q, REC_OK, NULL);
            finish(t, q, NULL, q->done_abs_ns);
            q = next;
            continue;
        }
        if (q->cancel_at_abs_ns && now >= q->cancel_at_abs_ns) {
            kind = REC_CANCELLED;
            why = "cancelled by the workload after its drawn time";
        } else if (c->connect_timeout_ns && q->conn && q->conn->state == CONN_CONNECTING &&
                   now - q->conn->start_abs_ns >= c->connect_timeout_ns) {
            if (q->conn->addr_idx + 1 < t->n_addr) {
                /* This address never answered: the host's next one gets
                 * its own --timeout-connect. */
                connect_failed(t, q->conn, ETIMEDOUT);
                q = next;
                continue;
            }
            kind = REC_TIMEOUT_CONNECT;
            why = "connect timeout";
        } else if (c->total_timeout_ns && now - q->sent_abs_ns >= c->total_timeout_ns) {
            kind = REC_TIMEOUT_TOTAL;
            why = "total timeout";
        } else if (c->first_token_timeout_ns && q->rec.first_ns == LL_NO_TIME &&
                   now - q->sent_abs_ns >= c->first_token_timeout_ns) {
            kind = REC_TIMEOUT_FIRST_TOKEN;
            why = "no output event before the first-token timeout";
        } else if (c->idle_timeout_ns && q->rec.first_ns != LL_NO_TIME && !q->done_abs_ns &&
                   now - q->last_event_abs_ns >= c->idle_timeout_ns) {
            /* Idle is the gap between output events (a drip of bytes that
             * carry no token does not keep a request alive); before the
             * first event the first-token timeout is the one that applies. */
            kind = REC_TIMEOUT_IDLE;
            why = "idle timeout: no output event for --timeout-idle";
        }
        if (why) {
            set_forced(q, kind, why);
            finish(t, q, NULL, now);
        }
        q = next;
    }
}

/* ---- the native HTTP/1.1 path ------------------------------------------ */
/*
 * For a plain http:// target libcurl costs most of the client's CPU (about
 * 90k instructions per streamed request, docs/http-client.md), so the
 * common case runs on a connection pool written here: non-blocking
 * connect, one sendmsg per request, level-triggered reads into one shared
 * buffer stamped when read() returns, and src/h1.c for the framing. The
 * decoding above (header_line, body_bytes, finish) is the same for both
 * clients, so every record means the same thing whichever carried it. */

static void conn_watch(struct transport *t, struct tconn *c, uint32_t ev)
{
    if (c->ev == ev)
        return;
    struct epoll_event e = {.events = ev};
    e.data.ptr = c;
    if (epoll_ctl(t->epfd, c->ev ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e) != 0) {
        ll_errorf("transport: epoll_ctl fd %d: %s", c->fd, strerror(errno));
        return; /* the request's timeouts end it */
    }
    c->ev = ev;
}

static void idle_remove(struct transport *t, struct tconn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        t->idle = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = c->prev = NULL;
}

/* Close c and keep its struct for the next connection. The request on it,
 * if any, must already be detached (q->conn cleared) by the caller. */
static void conn_close(struct transport *t, struct tconn *c)
{
    if (c->state == CONN_IDLE)
        idle_remove(t, c);
    c->state = CONN_CLOSED;
    if (c->fd >= 0) {
        if (c->ev)
            epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->ev = 0;
    c->q = NULL;
    c->next = t->conn_free;
    t->conn_free = c;
}

static void native_detach(struct transport *t, struct treq *q)
{
    struct tconn *c = q->conn;
    if (!c)
        return;
    /* The response is unfinished: the connection cannot carry another. */
    q->conn = NULL;
    c->q = NULL;
    conn_close(t, c);
}

/* Finish q (not on a connection) as kind. */
static void native_fail(struct transport *t, struct treq *q, enum rec_kind kind,
                        const char *detail, uint64_t now_abs)
{
    set_forced(q, kind, detail);
    finish(t, q, NULL, now_abs);
}

/* A socket() or connect() failure with errno e: connect_error, or
 * transport_error when the client itself is out of descriptors or ports
 * (outcome_decide, as for libcurl). */
static void native_fail_errno(struct transport *t, struct treq *q, const char *what, int e)
{
    char detail[200];
    snprintf(detail, sizeof detail, "%s %.80s: %.80s", what, t->hostport, strerror(e));
    struct xfer_error xe = {.xfer = OUTCOME_XFER_CONNECT, .detail = detail, .os_errno = e};
    finish(t, q, &xe, ll_now_ns());
}

static int conn_write(struct transport *t, struct tconn *c);
static void conn_write_failed(struct transport *t, struct tconn *c, int err);
static void native_connect(struct transport *t, struct treq *q, int addr_idx);

static int h1_on_header(void *ud, const char *line, size_t len)
{
    return header_line(ud, line, len);
}

static int h1_on_body(void *ud, const char *buf, size_t len)
{
    return body_bytes(ud, buf, len);
}

static struct tconn *conn_get_struct(struct transport *t, struct treq *q)
{
    struct tconn *c = t->conn_free;
    if (c) {
        t->conn_free = c->next;
        h1_parser_reset(&c->h1);
        c->h1.ud = q;
    } else {
        c = ll_calloc(1, sizeof *c);
        h1_parser_init(&c->h1, h1_on_header, h1_on_body, q);
        h1_parser_reset(&c->h1);
    }
    c->fd = -1;
    c->ev = 0;
    c->state = CONN_BUSY;
    c->served = 0;
    c->next = c->prev = NULL;
    return c;
}

static void conn_attach(struct tconn *c, struct treq *q)
{
    c->q = q;
    c->wr_off = 0;
    c->h1.ud = q;
    q->conn = c;
}

/* connect() to address addr_idx failed with e: the next address, or the
 * request fails. */
static void connect_failed(struct transport *t, struct tconn *c, int e)
{
    struct treq *q = c->q;
    int idx = c->addr_idx;
    q->conn = NULL;
    c->q = NULL;
    conn_close(t, c);
    if (idx + 1 < t->n_addr && e != EMFILE && e != ENFILE && e != EADDRNOTAVAIL)
        native_connect(t, q, idx + 1);
    else
        native_fail_errno(t, q, "connect", e);
}

static void native_connect(struct transport *t, struct treq *q, int addr_idx)
{
    if (t->resolve_err[0]) {
        native_fail(t, q, REC_CONNECT_ERROR, t->resolve_err, ll_now_ns());
        return;
    }
    const struct sockaddr *sa = (const struct sockaddr *)&t->addr[addr_idx];
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        native_fail_errno(t, q, "socket", errno);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct tconn *c = conn_get_struct(t, q);
    c->fd = fd;
    c->addr_idx = addr_idx;
    c->start_abs_ns = ll_now_ns();
    conn_attach(c, q);
    if (connect(fd, sa, t->addr_len[addr_idx]) == 0) {
        c->state = CONN_BUSY;
        conn_write(t, c);
    } else if (errno == EINPROGRESS) {
        c->state = CONN_CONNECTING;
        conn_watch(t, c, EPOLLOUT);
    } else {
        connect_failed(t, c, errno);
    }
}

/* The connection failed or closed (err 0: an orderly close) while q was on
 * it. */
static void conn_lost(struct transport *t, struct tconn *c, int err, uint64_t now_abs)
{
    struct treq *q = c->q;
    if (!q) {
        conn_close(t, c); /* an idle connection the server closed */
        return;
    }
    if (!err && h1_parser_eof(&c->h1) == H1_DONE) {
        /* A body framed by the close: complete. */
        q->conn = NULL;
        c->q = NULL;
        conn_close(t, c);
        finish(t, q, NULL, q->last_read_abs_ns > q->sent_abs_ns ? q->last_read_abs_ns
                                                                     : now_abs);
        return;
    }
    int reused = c->served > 0;
    int nothing = c->h1.bytes_seen == 0;
    int status = h1_parser_status_seen(&c->h1);
    q->conn = NULL;
    c->q = NULL;
    conn_close(t, c);
    if (reused && nothing && !q->retried) {
        /* A kept-alive connection the server had already closed (its idle
         * timeout raced our request): send it again on a fresh one, as
         * libcurl does. */
        q->retried = 1;
        native_connect(t, q, 0);
        return;
    }
    char detail[200];
    const char *why = err ? strerror(err) : c->h1.error ? c->h1.error : "connection closed";
    if (!status) {
        snprintf(detail, sizeof detail, "%.80s: %.80s", t->hostport,
                 err ? why : "server closed the connection with no response");
        native_fail(t, q, REC_CONNECT_ERROR, detail, now_abs);
    } else if (q->saw_done) {
        finish(t, q, NULL, now_abs); /* cut after [DONE]: the stream was complete */
    } else {
        snprintf(detail, sizeof detail, "%s", why);
        native_fail(t, q, REC_STREAM_TRUNCATED, detail, now_abs);
    }
}

/* Write what is left of c's request. Returns 0, or -1 when c is gone. */
static int conn_write(struct transport *t, struct tconn *c)
{
    struct treq *q = c->q;
    struct iovec iov[3] = {
        {.iov_base = t->head[q->api], .iov_len = t->head_len[q->api]},
        {.iov_base = q->clen, .iov_len = q->clen_len},
        {.iov_base = q->body, .iov_len = q->body_len},
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
                conn_watch(t, c, EPOLLIN | EPOLLOUT);
                return 0;
            }
            conn_write_failed(t, c, errno);
            return -1;
        }
        c->wr_off += (size_t)w;
    }
    conn_watch(t, c, EPOLLIN);
    return 0;
}

/* The response on c ended at now_abs; extra: bytes followed it. */
static void conn_complete(struct transport *t, struct tconn *c, uint64_t now_abs, int extra)
{
    struct treq *q = c->q;
    q->conn = NULL;
    c->q = NULL;
    c->served++;
    size_t total = t->head_len[q->api] + q->clen_len + q->body_len;
    if (c->h1.keep_alive && !extra && c->wr_off == total) {
        h1_parser_reset(&c->h1);
        c->state = CONN_IDLE;
        c->prev = NULL;
        c->next = t->idle;
        if (t->idle)
            t->idle->prev = c;
        t->idle = c;
    } else {
        conn_close(t, c);
    }
    finish(t, q, NULL, now_abs);
}

/* One read from c, decoded. Returns 1 when bytes were read and the
 * response goes on, 0 when there was nothing to read, -1 when the request
 * or the connection ended (c may be gone). */
static int conn_readable(struct transport *t, struct tconn *c)
{
    for (;;) {
        t->reads++;
        ssize_t n = read(c->fd, t->rbuf, TRANSPORT_RBUF_BYTES);
        uint64_t now = ll_now_ns(); /* the moment these bytes were read */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            conn_lost(t, c, errno, now);
            return -1;
        }
        if (n == 0) {
            conn_lost(t, c, 0, now);
            return -1;
        }
        struct treq *q = c->q;
        if (!q) {
            conn_close(t, c); /* bytes on an idle connection: not ours */
            return -1;
        }
        q->read_abs_ns = now;
        q->last_read_abs_ns = now;
        size_t used = 0;
        int rc = h1_parser_feed(&c->h1, t->rbuf, (size_t)n, &used);
        if (rc == H1_DONE) {
            conn_complete(t, c, now, used < (size_t)n);
            return -1;
        }
        if (rc == H1_STOPPED) {
            native_detach(t, q);
            finish(t, q, NULL, now);
            return -1;
        }
        if (rc < 0) {
            char detail[200];
            snprintf(detail, sizeof detail, "bad HTTP response: %s", c->h1.error);
            int in_body = h1_parser_in_body(&c->h1);
            native_detach(t, q);
            native_fail(t, q, in_body ? REC_STREAM_TRUNCATED : REC_TRANSPORT_ERROR, detail, now);
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
static void conn_write_failed(struct transport *t, struct tconn *c, int err)
{
    int rc;
    while ((rc = conn_readable(t, c)) > 0) {
    }
    if (rc == 0)
        conn_lost(t, c, err, ll_now_ns());
}

static void conn_event(struct transport *t, struct tconn *c, uint32_t ev)
{
    if (c->state == CONN_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            connect_failed(t, c, err);
            return;
        }
        if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        c->state = CONN_BUSY;
        if (conn_write(t, c) != 0)
            return;
        return; /* the response comes with a later event */
    }
    /* Reads first: an answer that came before the whole request went out
     * (an early error) decides the request, and a reset then does not. */
    if ((ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) && conn_readable(t, c) < 0)
        return;
    if ((ev & EPOLLOUT) && c->q)
        conn_write(t, c);
}

/* Send q now: on a kept-alive connection when one is free, else on a new
 * one. */
static void native_submit(struct transport *t, struct treq *q)
{
    static const char name[] = "Content-Length: ";
    size_t n = sizeof(name) - 1;
    memcpy(q->clen, name, n);
    n += ll_fmt_u64(q->clen + n, q->body_len);
    memcpy(q->clen + n, "\r\n\r\n", 4);
    q->clen_len = n + 4;
    q->retried = 0;
    struct tconn *c = t->idle;
    if (c) {
        idle_remove(t, c);
        c->state = CONN_BUSY;
        conn_attach(c, q);
        conn_write(t, c);
        return;
    }
    native_connect(t, q, 0);
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

/* Decide whether this transport takes the native path and prepare it.
 * Returns 1 (native), 0 (libcurl), or -1 with err set (native was asked
 * for and cannot be used). */
enum transport_client transport_client_choose(const struct transport_config *cfg,
                                              const char **why_not_native)
{
    enum transport_client want = cfg->client;
    const char *env = getenv("LLMLOAD_HTTP_CLIENT");
    if (want == TRANSPORT_CLIENT_AUTO && env && strcmp(env, "curl") == 0)
        want = TRANSPORT_CLIENT_CURL;
    else if (want == TRANSPORT_CLIENT_AUTO && env && strcmp(env, "native") == 0)
        want = TRANSPORT_CLIENT_NATIVE;
    *why_not_native = NULL;
    if (want == TRANSPORT_CLIENT_CURL)
        return TRANSPORT_CLIENT_CURL;
    const char *u = cfg->base_url;
    const char *why = NULL;
    static const char *const proxies[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0] && !why; i++) {
        const char *v = getenv(proxies[i]);
        if (v && *v)
            why = "a proxy is set in the environment";
    }
    if (strncasecmp(u, "http://", 7) != 0)
        why = "the URL is not http://";
    else if (cfg->http2)
        why = "--http2 was asked for";
    else if (strpbrk(u + 7, "@?#"))
        why = "the URL has user info, a query or a fragment";
    if (!why)
        return TRANSPORT_CLIENT_NATIVE;
    *why_not_native = why;
    return want == TRANSPORT_CLIENT_NATIVE ? TRANSPORT_CLIENT_AUTO : TRANSPORT_CLIENT_CURL;
}

static int native_setup(struct transport *t, char *err, size_t errlen)
{
    const struct transport_config *cfg = &t->cfg;
    const char *why;
    enum transport_client c = transport_client_choose(cfg, &why);
    if (c == TRANSPORT_CLIENT_CURL)
        return 0;
    if (c != TRANSPORT_CLIENT_NATIVE) {
        snprintf(err, errlen, "--http-client native: %s", why);
        return -1;
    }
    const char *u = cfg->base_url;
    const char *auth = u + 7;
    const char *slash = strchr(auth, '/');
    size_t alen = slash ? (size_t)(slash - auth) : strlen(auth);
    const char *path = slash ? slash : "";
    char host[256], port[16] = "80";
    size_t hlen;
    const char *after;
    if (alen && auth[0] == '[') {
        const char *rb = memchr(auth, ']', alen);
        if (!rb) {
            snprintf(err, errlen, "--url: unbalanced [ in the host");
            return -1;
        }
        hlen = (size_t)(rb - auth - 1);
        if (hlen >= sizeof host) {
            snprintf(err, errlen, "--url: host name too long");
            return -1;
        }
        memcpy(host, auth + 1, hlen);
        after = rb + 1;
    } else {
        const char *colon = memchr(auth, ':', alen);
        hlen = colon ? (size_t)(colon - auth) : alen;
        if (hlen >= sizeof host) {
            snprintf(err, errlen, "--url: host name too long");
            return -1;
        }
        memcpy(host, auth, hlen);
        after = auth + hlen;
    }
    host[hlen] = '\0';
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
    snprintf(t->hostport, sizeof t->hostport, "%.*s", (int)alen, auth);

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(t->resolve_err, sizeof t->resolve_err, "could not resolve host %.80s: %.60s", host,
                 gai_strerror(rc));
    } else {
        for (struct addrinfo *a = res; a && t->n_addr < TRANSPORT_MAX_ADDRS; a = a->ai_next) {
            if (a->ai_addrlen > sizeof t->addr[0])
                continue;
            memcpy(&t->addr[t->n_addr], a->ai_addr, a->ai_addrlen);
            t->addr_len[t->n_addr++] = a->ai_addrlen;
        }
        freeaddrinfo(res);
        if (t->n_addr == 0)
            snprintf(t->resolve_err, sizeof t->resolve_err, "no usable address for %.80s", host);
    }

    static const char *const api_path[2] = {"/chat/completions", "/completions"};
    for (int a = 0; a < 2; a++) {
        char full[1200];
        snprintf(full, sizeof full, "%s%s", path, api_path[a]);
        t->head[a] = native_head(full, t->hostport, cfg->headers, &t->head_len[a]);
    }
    t->rbuf = ll_malloc(TRANSPORT_RBUF_BYTES);
    return 1;
}

/* ---- public ------------------------------------------------------------ */

struct transport *transport_new(const struct transport_config *cfg, struct stats *stats,
                                transport_done_cb *done, void *ud, char *err, size_t errlen)
{
    struct transport *t = ll_calloc(1, sizeof *t);
    t->cfg = *cfg;
    t->stats = stats;
    t->done = done;
    t->ud = ud;
    t->epfd = t->sched_tfd = t->wake_efd = -1;
    t->armed_deadline = UINT64_MAX;
    t->curl_deadline_abs_ns = UINT64_MAX;
    t->model_json = json_escape_dup(cfg->model ? cfg->model : "");
    t->model_json_len = strlen(t->model_json);
    int n = snprintf(t->url[OAI_API_CHAT], sizeof t->url[0], "%s/chat/completions",
                     cfg->base_url);
    int m = snprintf(t->url[OAI_API_COMPLETIONS], sizeof t->url[0], "%s/completions",
                     cfg->base_url);
    if (n < 0 || (size_t)n >= sizeof t->url[0] || m < 0 || (size_t)m >= sizeof t->url[0]) {
        snprintf(err, errlen, "--url: too long");
        goto fail;
    }
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->sched_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    t->wake_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->epfd < 0 || t->sched_tfd < 0 || t->wake_efd < 0) {
        snprintf(err, errlen, "epoll/timerfd/eventfd: %s", strerror(errno));
        goto fail;
    }
    int fds[] = {t->sched_tfd, t->wake_efd};
    for (size_t i = 0; i < 2; i++) {
        struct epoll_event ev = {.events = EPOLLIN};
        ev.data.u64 = i == 0 ? TAG_SCHED : TAG_WAKE;
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
            goto fail;
        }
    }
    int nat = native_setup(t, err, errlen);
    if (nat < 0)
        goto fail;
    if (nat > 0) {
        t->native = 1;
        return t;
    }
    t->multi = curl_multi_init();
    if (!t->multi) {
        snprintf(err, errlen, "curl_multi_init failed");
        goto fail;
    }
    curl_multi_setopt(t->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(t->multi, CURLMOPT_SOCKETDATA, t);
    curl_multi_setopt(t->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(t->multi, CURLMOPT_TIMERDATA, t);
    /* Keep every connection we opened alive for reuse. */
    curl_multi_setopt(t->multi, CURLMOPT_MAXCONNECTS, 100000L);
    return t;
fail:
    transport_free(t);
    return NULL;
}

void transport_free(struct transport *t)
{
    if (!t)
        return;
    if (t->active)
        transport_cancel_all(t, REC_CANCELLED, "run ended with the request in flight");
    for (size_t i = 0; i < t->n_all; i++) {
        struct treq *q = t->all[i];
        curl_easy_cleanup(q->easy);
        sse_parser_free(&q->sse);
        free(q->body);
        free(q->resp);
        free(q);
    }
    free(t->all);
    while (t->idle)
        conn_close(t, t->idle);
    while (t->conn_free) {
        struct tconn *c = t->conn_free;
        t->conn_free = c->next;
        h1_parser_free(&c->h1);
        free(c);
    }
    free(t->head[0]);
    free(t->head[1]);
    free(t->rbuf);
    if (t->multi)
        curl_multi_cleanup(t->multi);
    int fds[] = {t->epfd, t->sched_tfd, t->wake_efd};
    for (size_t i = 0; i < 3; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
    }
    free(t->model_json);
    free(t);
}

void transport_submit(struct transport *t, const struct req_spec *spec, uint64_t sched_ns,
                      int64_t user)
{
    char err[128];
    struct treq *q = slot_get(t, err, sizeof err);
    if (!q) {
        struct record r;
        record_init(&r, spec->index);
        r.sched_ns = sched_ns;
        r.end_ns = rel(t, ll_now_ns());
        r.kind = REC_TRANSPORT_ERROR;
        r.user = user;
        chatbody_fill_record(&r, spec);
        r.worker = t->cfg.worker;
        snprintf(r.detail, sizeof r.detail, "%.119s", err);
        t->done(t->ud, &r);
        return;
    }
    record_init(&q->rec, spec->index);
    q->curl_err[0] = '\0';
    q->rec.sched_ns = sched_ns;
    q->rec.prompt_tokens = spec->prompt_tokens;
    q->rec.max_tokens = spec->max_tokens;
    q->rec.user = user;
    q->rec.worker = t->cfg.worker;
    q->errbody_len = 0;
    q->resp_len = 0;
    q->status_seen = 0;
    q->retry_at_s = q->date_s = 0;
    q->has_forced = 0;
    q->saw_done = q->saw_finish = 0;
    q->usage_chunks_with_output = 0;
    q->usage_completion_tokens = -1;
    q->rec.class_idx = spec->class_idx;
    q->rec.cls = spec->class_name;
    chatbody_fill_record(&q->rec, spec);
    q->abort = 0;
    q->done_abs_ns = 0;
    q->sse_events = 0;
    q->resp_len_seen = 0;
    enum oai_api api = spec->api >= 0 ? (enum oai_api)spec->api : t->cfg.api;
    if (api != q->api) {
        q->api = api;
        if (q->easy)
            curl_easy_setopt(q->easy, CURLOPT_URL, t->url[api]);
    }
    q->cancel_after_events = spec->cancel_kind == WL_CANCEL_AFTER_TOKENS
                                 ? LL_MAX(spec->cancel_after, 1)
                                 : 0;
    sse_parser_reset(&q->sse);
    oai_memo_reset(&q->memo);
    size_t len = build_body(t, q, spec);
    q->body_len = len;
    if (q->easy) {
        curl_easy_setopt(q->easy, CURLOPT_POSTFIELDS, q->body);
        curl_easy_setopt(q->easy, CURLOPT_POSTFIELDSIZE, (long)len);
    }
    uint64_t now = ll_now_ns();
    q->sent_abs_ns = now;
    q->last_read_abs_ns = now;
    q->last_event_abs_ns = now;
    q->cancel_at_abs_ns = spec->cancel_kind == WL_CANCEL_AFTER_TIME ? now + spec->cancel_after : 0;
    q->rec.sent_ns = rel(t, now);
    active_add(t, q);
    if (t->native) {
        native_submit(t, q);
        return;
    }
    CURLMcode mc = curl_multi_add_handle(t->multi, q->easy);
    if (mc != CURLM_OK) {
        active_remove(t, q);
        q->rec.kind = REC_TRANSPORT_ERROR;
        q->rec.end_ns = q->rec.sent_ns;
        snprintf(q->rec.detail, sizeof q->rec.detail, "curl_multi_add_handle: %s",
                 curl_multi_strerror(mc));
        t->done(t->ud, &q->rec);
        q->next = t->free_list;
        t->free_list = q;
    }
}

void transport_kick(struct transport *t)
{
    if (t->native)
        return; /* requests went out in transport_submit */
    curl_timeouts(t);
    drain_done(t);
}

/* Does reading ahead free connections here? Where responses are short
 * next to the reads they take (at most 4 reads per finished request so
 * far), yes; a run of long streams (64 reads each, say) frees almost
 * nothing per read, and there reading first only delays the due sends. */
static int read_ahead_frees(const struct transport *t)
{
    return t->native && t->reads <= 4 * t->finished + 256;
}

void transport_poll(struct transport *t, uint64_t deadline_abs_ns)
{
    struct epoll_event evs[TRANSPORT_MAX_EVENTS];
    if (!t->native) {
        curl_timeouts(t);
        drain_done(t);
    }
    arm_deadline(t, deadline_abs_ns);
    int need_sweep = t->inflight && (t->cfg.first_token_timeout_ns || t->cfg.idle_timeout_ns ||
                                     t->cfg.total_timeout_ns || t->cfg.cancels ||
                                     (t->native && t->cfg.connect_timeout_ns));
    uint64_t wake = t->curl_deadline_abs_ns;
    if (need_sweep)
        wake = LL_MIN(wake, t->next_sweep_abs_ns);
    int timeout_ms = -1;
    if (wake != UINT64_MAX) {
        uint64_t now = ll_now_ns();
        uint64_t ms = wake > now ? (wake - now + LL_NS_PER_MS - 1) / LL_NS_PER_MS : 0;
        timeout_ms = (int)LL_MIN(ms, 60000u);
    }
    int running, rounds = 0, broke;
    uint64_t buf;
again:
    broke = 0;
    if (!rounds)
        t->wait_from_ns = ll_now_ns();
    int n = epoll_wait(t->epfd, evs, TRANSPORT_MAX_EVENTS, rounds ? 0 : timeout_ms);
    if (!rounds)
        t->wait_until_ns = ll_now_ns();
    if (n < 0 && errno != EINTR) {
        ll_errorf("transport: epoll_wait: %s", strerror(errno));
        return;
    }
    for (int i = 0; i < n; i++) {
        /* A scheduled send is due: stop here and let the caller send it.
         * epoll is level-triggered, so the events not handled yet come
         * back from the next wait; a long batch of reads (hundreds of
         * streams each with an event) cannot make the schedule late.
         * Except when the schedule is already far behind (a stall, or a
         * rate past what this machine holds): there the due sends would
         * find every connection still holding an unread response and open
         * new ones, each connect() costlier than the last as they pile up,
         * so everything ready is read first (below: more batches while
         * they come full) and the sends reuse what it frees; only where
         * reading does free connections (read_ahead_frees). */
        if (i && (i & 7) == 0 && deadline_abs_ns != UINT64_MAX) {
            uint64_t now = ll_now_ns();
            if (now >= deadline_abs_ns &&
                (now - deadline_abs_ns < TRANSPORT_BEHIND_NS || !read_ahead_frees(t))) {
                broke = 1;
                break;
            }
        }
        uint64_t tag = evs[i].data.u64;
        if ((tag & 7u) == TAG_CONN) {
            conn_event(t, evs[i].data.ptr, evs[i].events);
        } else if (tag == TAG_SCHED) {
            t->armed_deadline = TFD_FIRED; /* re-armed or disarmed before the next wait */
        } else if (tag == TAG_WAKE) {
            if (read(t->wake_efd, &buf, sizeof buf) < 0 && errno != EAGAIN)
                ll_errorf("transport: eventfd read: %s", strerror(errno));
        } else {
            int fd = (int)(tag >> 3);
            int flags = 0;
            if (evs[i].events & EPOLLIN)
                flags |= CURL_CSELECT_IN;
            if (evs[i].events & EPOLLOUT)
                flags |= CURL_CSELECT_OUT;
            if (evs[i].events & (EPOLLERR | EPOLLHUP))
                flags |= CURL_CSELECT_ERR;
            curl_multi_socket_action(t->multi, fd, flags, &running);
        }
    }
    if (!broke && n == TRANSPORT_MAX_EVENTS && deadline_abs_ns != UINT64_MAX &&
        read_ahead_frees(t) && ++rounds < TRANSPORT_BEHIND_ROUNDS &&
        ll_now_ns() >= deadline_abs_ns + TRANSPORT_BEHIND_NS)
        goto again;
    if (!t->native) {
        curl_timeouts(t);
        drain_done(t);
    }
    if (need_sweep) {
        uint64_t now = ll_now_ns();
        if (now >= t->next_sweep_abs_ns) {
            sweep(t, now);
            t->next_sweep_abs_ns = now + TRANSPORT_SWEEP_NS;
        }
    }
}

void transport_wake(struct transport *t)
{
    uint64_t one = 1;
    ssize_t w = write(t->wake_efd, &one, sizeof one);
    (void)w;
}

void transport_set_run_start(struct transport *t, uint64_t run_start_ns)
{
    t->cfg.run_start_ns = run_start_ns;
}

void transport_last_wait(const struct transport *t, uint64_t *from_abs_ns, uint64_t *until_abs_ns)
{
    *from_abs_ns = t->wait_from_ns;
    *until_abs_ns = t->wait_until_ns;
}

uint32_t transport_inflight(const struct transport *t)
{
    return t->inflight;
}

void transport_cancel_all(struct transport *t, enum rec_kind kind, const char *detail)
{
    uint64_t now = ll_now_ns();
    while (t->active) {
        struct treq *q = t->active;
        set_forced(q, kind, detail);
        finish(t, q, NULL, now);
    }
}
