/* transport.c: one worker's HTTP client, the part shared by its backends
 * (backend.h): the request slots, each request's body, the epoll + timerfd
 * loop, our timeouts, and the decoding of each response into its record.
 *
 * A backend moves bytes (curl.c: libcurl's multi_socket API; native.c:
 * our own HTTP/1.1 connections) and hands what it reads to
 * transport_header_line and transport_body_bytes, stamped the moment it was
 * read; what the bytes mean is decided here, once for both, and a finished
 * request's kind by outcome_decide. The loop: a timerfd carries the
 * caller's deadline (the next scheduled arrival) at nanosecond resolution
 * on absolute time, an eventfd lets another thread wake us, and every other
 * epoll event is the backend's.
 *
 * Each request slot owns its SSE parser and body buffer (and the backend's
 * part, e.g. libcurl's easy handle) and is reused, so after warm-up nothing
 * is allocated per request, per chunk or per token. First-token, idle and
 * total timeouts, the native client's connect timeout and the workload's
 * cancellations are ours: a sweep every TRANSPORT_SWEEP_NS checks them, so
 * they fire within that much of their deadline. */
#include "http/transport.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h> /* struct curl_slist: the configured headers */

#include "decode/anthropic.h"
#include "decode/embeddings.h"
#include "decode/responses.h"
#include "decode/sse.h"
#include "http/backend.h"
#include "http/body.h"
#include "http/outcome.h"
#include "util/dlist.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/image.h"

#define TRANSPORT_SWEEP_NS (5 * LL_NS_PER_MS)
#define TRANSPORT_MAX_EVENTS 256
#define TRANSPORT_BEHIND_NS (2 * LL_NS_PER_MS) /* see transport_poll */
#define TRANSPORT_BEHIND_ROUNDS 16             /* batches read first, at most */
#define TRANSPORT_AFTER_DONE_NS (1 * LL_NS_PER_SEC) /* wait for the close after [DONE] */

/* Slots of the per-group image table: a group's shared images are
 * encoded once while it keeps its slot, so at most this many groups'
 * base64 text is held per worker (two 1920x1080 PNGs a group: 172 KB,
 * 11 MB in all). Direct-mapped: a group that lands on a taken slot
 * evicts its holder, which is encoded again when it comes back. */
#define TRANSPORT_GROUP_IMAGES 64

/* One group's shared images: its base64 texts end to end, image k's
 * ending at ends[k]. valid 0 = an empty slot. */
struct group_images {
    int valid;
    int64_t group;
    const struct image_cfg *cfg; /* the settings they were made from (a class's) */
    uint64_t draw;
    uint32_t n;
    char *b64;
    size_t len, cap;
    size_t ends[IMAGE_PER_REQUEST_MAX];
};

struct transport {
    struct transport_config cfg;
    const struct backend_ops *ops; /* the client carrying the requests */
    void *be;                 /* its state */
    char *model_json;         /* JSON-escaped model name */
    struct body_params body;  /* what every request body shares (body.h) */
    char (*url)[OAI_API_COUNT][1024]; /* by endpoint, then enum oai_api; n_ep of them */
    uint32_t n_ep;                    /* endpoints (1 without several --url) */
    struct stats *stats;
    transport_done_cb *done;
    void *ud;
    int epfd, sched_tfd, wake_efd;
    uint64_t armed_deadline;
    uint64_t next_sweep_abs_ns;
    struct treq *active;      /* doubly linked */
    struct treq *free_list;
    uint32_t inflight;
    uint64_t wait_from_ns, wait_until_ns; /* the last poll's epoll_wait (transport_last_wait) */
    uint64_t finished;        /* requests finished (the native client's read-ahead) */
    struct treq **all;        /* every slot ever made, for freeing */
    size_t n_all, cap_all;
    /* The images of the request being built (encode_images): the encoder's
     * scratch, their base64 texts end to end, and where each ends. */
    struct image_buf img;
    char *img_b64;
    size_t img_b64_cap;
    size_t img_ends[2 * IMAGE_PER_REQUEST_MAX]; /* the group's, then the request's own */
    struct req_image_data img_prep;             /* what img_b64 holds: request img_prep_index's */
    uint64_t img_prep_index, img_prep_draw;
    int img_prep_ok;
    /* Prefix groups' shared images, base64'd once per group while the
     * group keeps its slot (group_images_get). */
    struct group_images groups[TRANSPORT_GROUP_IMAGES];
};

static uint64_t rel(const struct transport *t, uint64_t abs_ns)
{
    return abs_ns >= t->cfg.run_start_ns ? abs_ns - t->cfg.run_start_ns : 0;
}

/* ---- the schedule timer ----------------------------------------------- */

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

struct esc_out {
    char *p;
    size_t at;
};

static void esc_put(void *ud, const char *p, size_t n)
{
    struct esc_out *o = ud;
    memcpy(o->p + o->at, p, n);
    o->at += n;
}

static char *json_escape_dup(const char *s)
{
    size_t n = strlen(s);
    struct esc_out o = {ll_malloc(n * 6 + 1), 0}; /* every byte may take 6 */
    ll_json_escape_runs(s, n, esc_put, &o);
    o.p[o.at] = '\0';
    return o.p;
}

/* The extra fields of spec's class: [1 + class] when the run has classes
 * of its own, else [0] (which may be empty). */
static const struct extrabody *extra_for(const struct transport *t, const struct req_spec *spec)
{
    if (!t->cfg.extra)
        return NULL;
    size_t i = spec->class_idx >= 0 ? (size_t)spec->class_idx + 1 : 0;
    return i < t->cfg.n_extra ? &t->cfg.extra[i] : &t->cfg.extra[0];
}

/* Encode spec's images (image.h: pixels, PNG or JPEG, base64) into
 * t->img_b64 and describe them in *d: its prefix group's shared images
 * first (the group's tag: the same bytes in every request of the group;
 * copied from the group's slot, group_images_get), then its own. This is the one costly step of an image request
 * (bench/image.sh: milliseconds for a 512x512 PNG), done once per
 * request, never per token, and ahead of its send time where the driver
 * knows it (transport_prepare). Returns 0, or -1 with the encoder's
 * reason in err. */
/* The shared images of spec's prefix group, from its slot of the table,
 * encoded into it first when the slot holds another group (or nothing).
 * Returns the slot, or NULL with the encoder's reason in err. */
static struct group_images *group_images_get(struct transport *t, const struct req_spec *spec,
                                             char *err, size_t errlen)
{
    const struct image_cfg *c = spec->image_cfg;
    uint64_t key = rng_mix64((uint64_t)spec->prefix_id ^ ((uint64_t)(uintptr_t)c << 16));
    struct group_images *g = &t->groups[key % TRANSPORT_GROUP_IMAGES];
    if (g->valid && g->group == spec->prefix_id && g->cfg == c &&
        g->draw == spec->prefix_image_draw && g->n == spec->prefix_images)
        return g;
    g->valid = 0;
    g->len = 0;
    for (uint32_t k = 0; k < spec->prefix_images; k++) {
        uint32_t w, h;
        image_pick_size(c, spec->prefix_image_draw, k, &w, &h);
        uint64_t tag = image_group_tag(t->body.seed, (uint64_t)spec->prefix_id, k);
        if (image_encode_tag(c->format, tag, w, h, &t->img, err, errlen) < 0)
            return NULL;
        g->b64 = ll_grow(g->b64, &g->cap, g->len + image_base64_len(t->img.len), 4096);
        g->len += image_base64(t->img.data, t->img.len, g->b64 + g->len);
        g->ends[k] = g->len;
    }
    g->group = spec->prefix_id;
    g->cfg = c;
    g->draw = spec->prefix_image_draw;
    g->n = spec->prefix_images;
    g->valid = 1;
    return g;
}

static int encode_images(struct transport *t, const struct req_spec *spec, struct req_image_data *d,
                         char *err, size_t errlen)
{
    const struct image_cfg *c = spec->image_cfg;
    size_t at = 0;
    uint32_t n = spec->prefix_images + spec->images;
    if (spec->prefix_images > 0) {
        const struct group_images *g = group_images_get(t, spec, err, errlen);
        if (!g)
            return -1;
        t->img_b64 = ll_grow(t->img_b64, &t->img_b64_cap, g->len, 4096);
        memcpy(t->img_b64, g->b64, g->len);
        memcpy(t->img_ends, g->ends, g->n * sizeof g->ends[0]);
        at = g->len;
    }
    for (uint32_t k = spec->prefix_images; k < n; k++) {
        uint32_t w, h;
        uint32_t own = k - spec->prefix_images;
        image_pick_size(c, spec->image_draw, own, &w, &h);
        uint64_t tag = image_tag(t->body.seed, spec->index, own);
        if (image_encode_tag(c->format, tag, w, h, &t->img, err, errlen) < 0)
            return -1;
        t->img_b64 = ll_grow(t->img_b64, &t->img_b64_cap, at + image_base64_len(t->img.len), 4096);
        at += image_base64(t->img.data, t->img.len, t->img_b64 + at);
        t->img_ends[k] = at;
    }
    *d = (struct req_image_data){.mime = image_format_mime(c->format),
                                 .b64 = t->img_b64,
                                 .ends = t->img_ends,
                                 .n = n,
                                 .n_prefix = spec->prefix_images};
    return 0;
}

/* Whether spec carries images (its own or its group's). */
static int has_images(const struct req_spec *spec)
{
    return spec->image_cfg && spec->images + spec->prefix_images > 0;
}

/* Encode spec's images into t->img_prep unless they are there already
 * (transport_prepare did it). Returns 0, or -1 with the reason in err. */
static int images_ready(struct transport *t, const struct req_spec *spec, char *err, size_t errlen)
{
    if (t->img_prep_ok && t->img_prep_index == spec->index && t->img_prep_draw == spec->image_draw)
        return 0;
    t->img_prep_ok = 0;
    if (encode_images(t, spec, &t->img_prep, err, errlen) < 0)
        return -1;
    t->img_prep_ok = 1;
    t->img_prep_index = spec->index;
    t->img_prep_draw = spec->image_draw;
    return 0;
}

void transport_prepare(struct transport *t, const struct req_spec *spec)
{
    char err[96];
    if (has_images(spec))
        (void)images_ready(t, spec, err, sizeof err); /* a failure shows again at the send */
}

/* Build the JSON body for spec into q->body (body.c); returns its length,
 * or 0 when its images could not be encoded (the reason in q->rec.detail). */
static size_t build_body(struct transport *t, struct treq *q, const struct req_spec *spec)
{
    struct req_spec with_images;
    if (has_images(spec)) {
        char err[96];
        if (images_ready(t, spec, err, sizeof err) < 0) {
            snprintf(q->rec.detail, sizeof q->rec.detail, "%.119s", err);
            return 0;
        }
        with_images = *spec;
        with_images.image_data = &t->img_prep;
        spec = &with_images;
    }
    const struct extrabody *x = extra_for(t, spec);
    for (;;) {
        size_t n = body_write(&t->body, q->api, spec, x, q->body, q->body_cap);
        if (n < q->body_cap)
            return n;
        q->body = ll_grow(q->body, &q->body_cap, n + 1, 1024);
    }
}

/* ---- slots ------------------------------------------------------------- */

static struct treq *slot_get(struct transport *t, char *err, size_t errlen)
{
    struct treq *q = t->free_list;
    if (q) {
        t->free_list = q->next;
        return q;
    }
    q = ll_calloc(1, t->ops->req_bytes);
    q->t = t;
    q->cfg = &t->cfg;
    q->stats = t->stats;
    sse_parser_init(&q->sse, t->cfg.max_line_bytes);
    q->api = t->cfg.api;
    q->ep = 0;
    if (t->ops->slot_init && t->ops->slot_init(t->be, q, err, errlen) != 0) {
        sse_parser_free(&q->sse);
        free(q);
        return NULL;
    }
    if (t->n_all == t->cap_all) {
        t->cap_all = t->cap_all ? t->cap_all * 2 : 64;
        t->all = ll_realloc(t->all, t->cap_all * sizeof *t->all);
    }
    t->all[t->n_all++] = q;
    return q;
}

static void active_add(struct transport *t, struct treq *q)
{
    DLIST_PUSH(t->active, q, prev, next);
    t->inflight++;
}

static void active_remove(struct transport *t, struct treq *q)
{
    DLIST_UNLINK(t->active, q, prev, next);
    t->inflight--;
}

/* ---- finishing --------------------------------------------------------- */

/* Headers whose values are public protocol words, never a secret. */
static int header_is_public(const char *line, size_t name_len)
{
    static const char *const names[] = {"Content-Type", "Accept", "Expect", "User-Agent"};
    for (size_t i = 0; i < LL_ARRAY_LEN(names); i++)
        if (strlen(names[i]) == name_len && strncasecmp(line, names[i], name_len) == 0)
            return 1;
    return 0;
}

/* Mask with '*' every occurrence in d of word w[0..n), and a prefix of it
 * of 4 bytes or more that ends d (a detail cut by its length bound). */
static void mask_word(char *d, const char *w, size_t n)
{
    size_t len = strlen(d);
    for (size_t i = 0; i < len; i++) {
        size_t m = len - i < n ? len - i : n;
        if ((m == n || m >= 4) && memcmp(d + i, w, m) == 0) {
            memset(d + i, '*', m);
            i += m - 1;
        }
    }
}

/* A server's error message may echo what it was sent: mask in r's detail
 * every word of 4 bytes or more of every request header's value (an API
 * key, a Bearer token, a cookie, a short password: 8 let "pw12345"
 * through) but the few public ones and the scheme words "Bearer" and
 * "Basic", so no request header reaches requests.jsonl or a summary.
 * Runs only for a record that has a detail. */
static void mask_header_values(const struct transport *t, struct record *r)
{
    if (r->detail[0] == '\0')
        return;
    for (const struct curl_slist *h = t->cfg.headers; h; h = h->next) {
        const char *colon = strchr(h->data, ':');
        if (!colon || header_is_public(h->data, (size_t)(colon - h->data)))
            continue;
        for (const char *p = colon + 1; *p;) {
            p += strspn(p, " \t");
            size_t n = strcspn(p, " \t");
            int scheme = (n == 6 && strncasecmp(p, "Bearer", 6) == 0) ||
                         (n == 5 && strncasecmp(p, "Basic", 5) == 0);
            if (n >= 4 && !scheme)
                mask_word(r->detail, p, n);
            p += n;
        }
    }
}

/* Hand record r to the caller, its detail masked first. */
static void hand_over(struct transport *t, struct record *r)
{
    mask_header_values(t, r);
    t->done(t->ud, r);
}

/* The record's detail for outcome o (a forced kind wrote its own). The
 * client out of resources is not the server's failure: say which, and warn
 * once on stderr. */
static void set_detail(struct treq *q, const struct outcome *o, const struct xfer_error *xe,
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
    case OUTCOME_WHY_HTTP_STATUS: transport_errbody_detail(q); break;
    case OUTCOME_WHY_STREAM_NOT_SSE:
        snprintf(r->detail, sizeof r->detail,
                 "a 200 response with a body but no SSE event (not a stream)");
        break;
    case OUTCOME_WHY_STREAM_CUT:
        snprintf(r->detail, sizeof r->detail, "%s",
                 q->api == OAI_API_ANTHROPIC   ? "stream ended without message_stop or stop_reason"
                 : q->api == OAI_API_RESPONSES ? "stream ended without response.completed"
                                               : "stream ended without [DONE] or finish_reason");
        break;
    case OUTCOME_WHY_BODY_NOT_JSON:
        if (!r->detail[0]) /* take_body may have said why */
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

/* Decide q's record: the last of the stream's bytes decoded, then kind,
 * detail and token counts (outcome_decide). xe: how the transfer failed,
 * NULL when it did not. */
static void decide(struct transport *t, struct treq *q, const struct xfer_error *xe)
{
    struct record *r = &q->rec;
    if (t->cfg.stream && r->http_status == 200 && !q->has_forced)
        sse_parser_finish(&q->sse, transport_on_sse_event, q);
    if (t->cfg.stream && r->http_status == 200)
        transport_stream_error(q);

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
        in.body = transport_take_body(q, &c);
    in.usage_completion_tokens = q->usage_completion_tokens;
    struct outcome o = outcome_decide(&in);
    r->kind = o.kind;
    /* An embeddings answer is not output: no first token, whatever came
     * (the first byte's time served the timeouts while it came). */
    if (q->api == OAI_API_EMBEDDINGS)
        r->first_ns = LL_NO_TIME;
    set_detail(q, &o, xe, &c);
    r->tokens_source = o.tokens_source;
    r->output_tokens = o.tokens_source == REC_TOKENS_EVENTS ? r->events
                                                            : (uint64_t)q->usage_completion_tokens;
}

/* Decide q's record, hand it to the caller, and return the slot. */
static void finish(struct transport *t, struct treq *q, const struct xfer_error *xe,
                   uint64_t end_abs_ns)
{
    t->finished++;
    /* A stream that read its end event ([DONE], message_stop,
     * response.completed) ended then, whatever came after: libcurl notices
     * the end at the last body byte, our client at the read that brings
     * the chunked terminator, and a server that pauses before it (or
     * closes late) would add its pause to E2E on one client only. */
    if (q->done_abs_ns && q->done_abs_ns < end_abs_ns)
        end_abs_ns = q->done_abs_ns;
    q->rec.end_ns = rel(t, end_abs_ns);
    decide(t, q, xe);
    t->ops->detach(t->be, q);
    active_remove(t, q);
    hand_over(t, &q->rec);
    q->next = t->free_list;
    t->free_list = q;
}

void transport_finish(struct treq *q, uint64_t end_abs_ns)
{
    finish(q->t, q, NULL, end_abs_ns);
}

void transport_finish_failed(struct treq *q, const struct xfer_error *xe, uint64_t end_abs_ns)
{
    finish(q->t, q, xe, end_abs_ns);
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
            transport_force_kind(q, REC_OK, NULL);
            finish(t, q, NULL, q->done_abs_ns);
            q = next;
            continue;
        }
        if (q->cancel_at_abs_ns && now >= q->cancel_at_abs_ns) {
            kind = REC_CANCELLED;
            why = "cancelled by the workload after its drawn time";
        } else if (c->connect_timeout_ns && q->connecting_since_abs_ns &&
                   now - q->connecting_since_abs_ns >= c->connect_timeout_ns) {
            if (t->ops->connect_expired(t->be, q)) {
                /* This address never answered: the host's next one gets
                 * its own --timeout-connect. */
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
            transport_force_kind(q, kind, why);
            finish(t, q, NULL, now);
        }
        q = next;
    }
}

/* ---- public ------------------------------------------------------------ */

/* Endpoint e's API base: the e-th --url of several, else base_url. */
static const char *endpoint_base(const struct transport_config *cfg, uint32_t e)
{
    return cfg->endpoints.n > 1 ? cfg->endpoints.url[e] : cfg->base_url;
}

/* Which backend carries a transport's requests (transport.h). The native
 * client does plain HTTP/1.1 only: anything else is libcurl's. */
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
    const char *why = NULL;
    static const char *const proxies[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof proxies[0] && !why; i++) {
        const char *v = getenv(proxies[i]);
        if (v && *v)
            why = "a proxy is set in the environment";
    }
    uint32_t n_ep = cfg->endpoints.n > 1 ? cfg->endpoints.n : 1;
    for (uint32_t e = 0; e < n_ep && !why; e++) {
        const char *u = endpoint_base(cfg, e);
        if (strncasecmp(u, "http://", 7) != 0)
            why = "the URL is not http://";
        else if (strpbrk(u + 7, "@?#"))
            why = "the URL has user info, a query or a fragment";
    }
    if (!why && cfg->http2)
        why = "--http2 was asked for";
    if (!why)
        return TRANSPORT_CLIENT_NATIVE;
    *why_not_native = why;
    return want == TRANSPORT_CLIENT_NATIVE ? TRANSPORT_CLIENT_AUTO : TRANSPORT_CLIENT_CURL;
}

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
    t->model_json = json_escape_dup(cfg->model ? cfg->model : "");
    t->body = (struct body_params){.model_json = t->model_json,
                                   .model_json_len = strlen(t->model_json),
                                   .seed = cfg->seed,
                                   .stream = cfg->stream,
                                   .prompt_ids = cfg->prompt_ids,
                                   .prompt_id_range = cfg->prompt_id_range};
    t->n_ep = cfg->endpoints.n > 1 ? cfg->endpoints.n : 1;
    t->url = ll_calloc(t->n_ep, sizeof *t->url);
    for (uint32_t e = 0; e < t->n_ep; e++) {
        const char *base = endpoint_base(cfg, e);
        for (int a = 0; a < OAI_API_COUNT; a++) {
            int n = snprintf(t->url[e][a], sizeof t->url[e][a], "%.*s%s",
                             (int)ll_url_base_len(base), base, oai_api_path((enum oai_api)a));
            if (n < 0 || (size_t)n >= sizeof t->url[e][a]) {
                snprintf(err, errlen, "--url: too long");
                goto fail;
            }
        }
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
        ev.data.u64 = i == 0 ? BACKEND_TAG_SCHED : BACKEND_TAG_WAKE;
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fds[i], &ev) != 0) {
            snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
            goto fail;
        }
    }
    const char *why;
    enum transport_client client = transport_client_choose(cfg, &why);
    if (client == TRANSPORT_CLIENT_AUTO) {
        snprintf(err, errlen, "--http-client native: %s", why);
        goto fail;
    }
    t->ops = client == TRANSPORT_CLIENT_NATIVE ? &backend_native : &backend_curl;
    struct backend_env env = {.cfg = &t->cfg, .epfd = t->epfd, .n_ep = t->n_ep};
    for (uint32_t e = 0; e < t->n_ep; e++) {
        env.base_url[e] = endpoint_base(cfg, e);
        for (int a = 0; a < OAI_API_COUNT; a++)
            env.url[e][a] = t->url[e][a];
    }
    t->be = t->ops->start(&env, err, errlen);
    if (!t->be)
        goto fail;
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
        if (t->ops->slot_free)
            t->ops->slot_free(t->be, q);
        sse_parser_free(&q->sse);
        free(q->body);
        free(q->resp);
        free(q);
    }
    free(t->all);
    image_buf_free(&t->img);
    free(t->img_b64);
    for (size_t i = 0; i < TRANSPORT_GROUP_IMAGES; i++)
        free(t->groups[i].b64);
    if (t->be)
        t->ops->stop(t->be);
    int fds[] = {t->epfd, t->sched_tfd, t->wake_efd};
    for (size_t i = 0; i < 3; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
    }
    free(t->model_json);
    free(t->url);
    free(t);
}

/* What an embeddings record carries beyond chatbody_fill_record's: its
 * inputs, and the prompt tokens of all of them. */
static void fill_inputs(struct record *r, enum oai_api api, const struct req_spec *spec)
{
    if (api != OAI_API_EMBEDDINGS)
        return;
    r->inputs = spec->inputs ? spec->inputs : 1;
    r->max_tokens = 0; /* nothing to generate: no output limit is sent */
    uint64_t total = (uint64_t)r->inputs * spec->prompt_tokens;
    r->prompt_tokens = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

/* The record of a request no slot could be made for. */
static void submit_failed(struct transport *t, const struct req_spec *spec, uint64_t sched_ns,
                          int64_t user, const char *err)
{
    struct record r;
    record_init(&r, spec->index);
    r.sched_ns = sched_ns;
    r.end_ns = rel(t, ll_now_ns());
    r.kind = REC_TRANSPORT_ERROR;
    r.user = user;
    chatbody_fill_record(&r, spec);
    fill_inputs(&r, spec->api >= 0 ? (enum oai_api)spec->api : t->cfg.api, spec);
    r.worker = t->cfg.worker;
    r.endpoint = t->n_ep > 1 ? (int32_t)endpoints_for_spec(&t->cfg.endpoints, spec) : -1;
    snprintf(r.detail, sizeof r.detail, "%.119s", err);
    hand_over(t, &r);
}

/* Make slot q ready for request spec: a fresh record, the decoding state
 * reset, the body built. */
static void slot_start(struct transport *t, struct treq *q, const struct req_spec *spec,
                       uint64_t sched_ns, int64_t user)
{
    record_init(&q->rec, spec->index);
    q->rec.sched_ns = sched_ns;
    q->rec.prompt_tokens = spec->prompt_tokens;
    q->rec.max_tokens = spec->max_tokens;
    q->rec.user = user;
    q->rec.worker = t->cfg.worker;
    /* Decided once, here: a cold start's request adds no ITL gap
     * (note_output); the driver labels its record the same way. */
    q->rec.cold = t->cfg.cold_requests &&
                  record_in_cold_start(spec->index, t->cfg.cold_by_session ? spec->session : -1,
                                       t->cfg.cold_requests);
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
    q->connecting_since_abs_ns = 0;
    enum oai_api api = spec->api >= 0 ? (enum oai_api)spec->api : t->cfg.api;
    uint32_t ep = endpoints_for_spec(&t->cfg.endpoints, spec);
    q->rec.endpoint = t->n_ep > 1 ? (int32_t)ep : -1;
    if (api != q->api || ep != q->ep) {
        q->api = api;
        q->ep = ep;
        if (t->ops->set_api)
            t->ops->set_api(t->be, q);
    }
    fill_inputs(&q->rec, api, spec);
    q->cancel_after_events = spec->cancel_kind == WL_CANCEL_AFTER_TOKENS
                                 ? LL_MAX(spec->cancel_after, 1)
                                 : 0;
    sse_parser_reset(&q->sse);
    oai_memo_reset(&q->memo);
    q->body_len = build_body(t, q, spec);
    q->rec.request_bytes = q->body_len;
}

void transport_submit(struct transport *t, const struct req_spec *spec, uint64_t sched_ns,
                      uint64_t late_ns, int64_t user)
{
    char err[128];
    struct treq *q = slot_get(t, err, sizeof err);
    if (!q) {
        submit_failed(t, spec, sched_ns, user, err);
        return;
    }
    slot_start(t, q, spec, sched_ns, user);
    q->rec.late_ns = late_ns;
    uint64_t now = ll_now_ns();
    q->sent_abs_ns = now;
    q->last_read_abs_ns = now;
    q->last_event_abs_ns = now;
    q->cancel_at_abs_ns = spec->cancel_kind == WL_CANCEL_AFTER_TIME ? now + spec->cancel_after : 0;
    q->rec.sent_ns = rel(t, now);
    active_add(t, q);
    if (q->body_len > 0 && t->ops->send(t->be, q) == 0)
        return;
    /* It could not even be started (the backend wrote why). */
    active_remove(t, q);
    q->rec.kind = REC_TRANSPORT_ERROR;
    q->rec.end_ns = q->rec.sent_ns;
    hand_over(t, &q->rec);
    q->next = t->free_list;
    t->free_list = q;
}

void transport_kick(struct transport *t)
{
    if (t->ops->service) /* the native client sent its requests in transport_submit */
        t->ops->service(t->be);
}

static int read_ahead_frees(const struct transport *t)
{
    return t->ops->read_ahead_frees && t->ops->read_ahead_frees(t->be, t->finished);
}

/* epoll_wait's timeout for the next wait: until the backend's own
 * deadline, or the next timeout sweep, whichever is first. -1: none. */
static int poll_timeout_ms(const struct transport *t, uint64_t backend_due_abs_ns, int need_sweep)
{
    uint64_t wake = backend_due_abs_ns;
    if (need_sweep)
        wake = LL_MIN(wake, t->next_sweep_abs_ns);
    if (wake == UINT64_MAX)
        return -1;
    uint64_t now = ll_now_ns();
    uint64_t ms = wake > now ? (wake - now + LL_NS_PER_MS - 1) / LL_NS_PER_MS : 0;
    return (int)LL_MIN(ms, 60000u);
}

/* Handle n events (n < 0: none). Returns 1 when it stopped early because
 * a scheduled send is due, 0 when it handled them all. */
static int poll_dispatch(struct transport *t, const struct epoll_event *evs, int n,
                         uint64_t deadline_abs_ns)
{
    uint64_t buf;
    for (int i = 0; i < n; i++) {
        /* A scheduled send is due: stop here and let the caller send it.
         * epoll is level-triggered, so the events not handled yet come
         * back from the next wait; a long batch of reads (hundreds of
         * streams each with an event) cannot make the schedule late.
         * Except when the schedule is already far behind (a stall, or a
         * rate past what this machine holds): there the due sends would
         * find every connection still holding an unread response and open
         * new ones, each connect() costlier than the last as they pile up,
         * so everything ready is read first (transport_poll: more batches
         * while they come full) and the sends reuse what it frees; only
         * where reading does free connections (read_ahead_frees). */
        if (i && (i & 7) == 0 && deadline_abs_ns != UINT64_MAX) {
            uint64_t now = ll_now_ns();
            if (now >= deadline_abs_ns &&
                (now - deadline_abs_ns < TRANSPORT_BEHIND_NS || !read_ahead_frees(t)))
                return 1;
        }
        uint64_t tag = evs[i].data.u64;
        if (tag == BACKEND_TAG_SCHED) {
            t->armed_deadline = TFD_FIRED; /* re-armed or disarmed before the next wait */
        } else if (tag == BACKEND_TAG_WAKE) {
            if (read(t->wake_efd, &buf, sizeof buf) < 0 && errno != EAGAIN)
                ll_errorf("transport: eventfd read: %s", strerror(errno));
        } else {
            t->ops->event(t->be, &evs[i]);
        }
    }
    return 0;
}

void transport_poll(struct transport *t, uint64_t deadline_abs_ns)
{
    struct epoll_event evs[TRANSPORT_MAX_EVENTS];
    uint64_t backend_due = t->ops->service ? t->ops->service(t->be) : UINT64_MAX;
    arm_deadline(t, deadline_abs_ns);
    int need_sweep = t->inflight && (t->cfg.first_token_timeout_ns || t->cfg.idle_timeout_ns ||
                                     t->cfg.total_timeout_ns || t->cfg.cancels ||
                                     (t->ops->connect_expired && t->cfg.connect_timeout_ns));
    int timeout_ms = poll_timeout_ms(t, backend_due, need_sweep);
    for (int rounds = 0;;) {
        if (!rounds)
            t->wait_from_ns = ll_now_ns();
        int n = epoll_wait(t->epfd, evs, TRANSPORT_MAX_EVENTS, rounds ? 0 : timeout_ms);
        if (!rounds)
            t->wait_until_ns = ll_now_ns();
        if (n < 0 && errno != EINTR) {
            ll_errorf("transport: epoll_wait: %s", strerror(errno));
            return;
        }
        if (poll_dispatch(t, evs, n, deadline_abs_ns))
            break;
        /* Far behind and the batch came full: read the next one first. */
        if (!(n == TRANSPORT_MAX_EVENTS && deadline_abs_ns != UINT64_MAX &&
              read_ahead_frees(t) && ++rounds < TRANSPORT_BEHIND_ROUNDS &&
              ll_now_ns() >= deadline_abs_ns + TRANSPORT_BEHIND_NS))
            break;
    }
    if (t->ops->service)
        t->ops->service(t->be);
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
        transport_force_kind(q, kind, detail);
        finish(t, q, NULL, now);
    }
}
