/* respdecode.c: a response as the transport reads it (backend.h: what
 * the transport lends its backends): the status and header lines, the
 * SSE events of each API decoded into the record (first token, the token
 * pace, usage, finish reason, errors mid-stream), a body not streamed, and
 * the error body's detail. Per token, nothing is allocated: the slot's
 * record and parser are reused. */
#include "http/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decode/anthropic.h"
#include "decode/embeddings.h"
#include "decode/responses.h"
#include "decode/sse.h"
#include "http/outcome.h"
#include "http/transport.h"
#include "measure/stats.h"
#include "util/util.h"

#define TRANSPORT_MAX_BODY_BYTES (8u << 20) /* non-stream responses */

/* abs_ns on the run's clock (from its start). */
static uint64_t rel(const struct transport_config *cfg, uint64_t abs_ns)
{
    return abs_ns >= cfg->run_start_ns ? abs_ns - cfg->run_start_ns : 0;
}

/* ---- response decoding ------------------------------------------------- */

void transport_force_kind(struct treq *q, enum rec_kind kind, const char *detail)
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
    uint64_t now = rel(q->cfg, q->read_abs_ns);
    struct record *r = &q->rec;
    r->events++;
    if (r->first_ns == LL_NO_TIME) {
        r->first_ns = now;
    } else {
        uint64_t gap = now - r->last_ns;
        if (r->sched_ns >= q->cfg->warmup_ns && !r->cold)
            stats_add_itl_gap(q->stats, gap);
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
        transport_force_kind(q, REC_CANCELLED, detail);
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

/* The response's first finish_reason, as the API wrote it. */
_Static_assert(sizeof(((struct oai_chunk *)0)->finish_reason) == REC_FINISH_REASON_MAX,
               "a record keeps the decoder's finish_reason whole");

static void take_finish(struct treq *q, const struct oai_chunk *c)
{
    if (!q->rec.finish_reason[0] && c->finish_reason[0])
        memcpy(q->rec.finish_reason, c->finish_reason, sizeof q->rec.finish_reason);
}

int transport_on_sse_event(void *ud, const struct sse_event *ev)
{
    struct treq *q = ud;
    if (q->abort)
        return 1; /* cancelled: the rest of this read is not ours to count */
    q->sse_events++;
    if (q->saw_done)
        return 0; /* the stream ended at [DONE]: what follows is not output */
    struct oai_chunk c;
    int rc = q->api == OAI_API_ANTHROPIC
                 ? anth_decode_event(ev->event, ev->event_len, ev->data, ev->data_len, &c, &q->memo)
             : q->api == OAI_API_RESPONSES
                 ? resp_decode_event(ev->event, ev->event_len, ev->data, ev->data_len, &c, &q->memo)
                 : oai_decode_chunk_memo(q->api, ev->data, ev->data_len, &c, &q->memo);
    if ((rc != 0 || !c.has_error) && ev->event_len == 5 && memcmp(ev->event, "error", 5) == 0)
        rc = oai_decode_error_event(ev->data, ev->data_len, &c); /* an error, whatever it says */
    if (rc != 0) {
        char detail[96];
        size_t n = ev->data_len < 60 ? ev->data_len : 60;
        snprintf(detail, sizeof detail, "bad event data: %.*s", (int)n, ev->data);
        transport_force_kind(q, REC_MALFORMED_EVENT, detail);
        return 0;
    }
    if (c.has_error) {
        char detail[160];
        snprintf(detail, sizeof detail, "server error event: %.100s", c.error_message);
        transport_force_kind(q, c.overloaded ? REC_OVERLOADED_EVENT : REC_SERVER_ERROR_EVENT,
                             detail);
    }
    if (c.has_finish) {
        q->saw_finish = 1;
        take_finish(q, &c);
    }
    int out = c.content_bytes + c.reasoning_bytes + c.tool_call_deltas > 0;
    if (c.has_usage)
        take_usage(q, &c, out);
    if (out)
        note_output(q, c.content_bytes > 0);
    if (c.done) {
        /* The stream's end ([DONE], message_stop, or the Responses API's
         * response.completed, which carries the usage and the status). */
        q->saw_done = 1;
        q->done_abs_ns = q->read_abs_ns;
    }
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
int transport_header_line(struct treq *q, const char *buf, size_t n)
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
            transport_force_kind(q, REC_MALFORMED_EVENT, detail);
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

/* Response body bytes read at q->read_abs_ns. Returns 1 when the transfer
 * must stop (the kind is already decided). */
/* A plain (non-stream) body of api decoded into c: the one dispatch for a
 * non-stream answer and for a 200 stream that brought no SSE event. */
static int decode_plain_body(enum oai_api api, const char *body, size_t len, struct oai_chunk *c)
{
    return api == OAI_API_ANTHROPIC    ? anth_decode_response(body, len, c)
           : api == OAI_API_RESPONSES  ? resp_decode_response(body, len, c)
           : api == OAI_API_EMBEDDINGS ? emb_decode_response(body, len, c)
                                       : oai_decode_response(api, body, len, c);
}

/* Keep the body's first bytes in q->errbody, as many as fit. */
static void keep_errbody(struct treq *q, const char *buf, size_t n)
{
    size_t room = sizeof q->errbody - 1 - q->errbody_len;
    size_t take = n < room ? n : room;
    memcpy(q->errbody + q->errbody_len, buf, take);
    q->errbody_len += take;
}

int transport_body_bytes(struct treq *q, const char *buf, size_t n)
{
    if (q->abort)
        return 1;
    if (q->rec.http_status != 200) {
        keep_errbody(q, buf, n);
        return 0;
    }
    if (!q->cfg->stream) {
        if (q->rec.first_ns == LL_NO_TIME)
            q->rec.first_ns = rel(q->cfg, q->read_abs_ns);
        if (q->resp_len + n > TRANSPORT_MAX_BODY_BYTES) {
            transport_force_kind(q, REC_MALFORMED_EVENT, "response body over 8 MiB");
            return 1;
        }
        q->resp = ll_grow(q->resp, &q->resp_cap, q->resp_len + n, 4096);
        memcpy(q->resp + q->resp_len, buf, n);
        q->resp_len += n;
        return 0;
    }
    q->resp_len_seen += n;
    if (q->sse_events == 0) /* until the first event: a JSON error is no stream */
        keep_errbody(q, buf, n);
    int rc = sse_parser_feed(&q->sse, buf, n, transport_on_sse_event, q);
    if (rc == LL_E_PROTO) {
        transport_force_kind(q, REC_LINE_TOO_LONG, "SSE line over the limit");
        return 1; /* abort the transfer */
    }
    return q->abort;
}

void transport_stream_error(struct treq *q)
{
    struct oai_chunk c;
    if (q->has_forced || q->sse_events != 0 || q->errbody_len == 0)
        return;
    int rc = decode_plain_body(q->api, q->errbody, q->errbody_len, &c);
    if (rc != 0 || !c.has_error)
        return;
    char detail[160];
    snprintf(detail, sizeof detail, "server error: %.100s", c.error_message);
    transport_force_kind(q, c.overloaded ? REC_OVERLOADED_EVENT : REC_SERVER_ERROR_EVENT, detail);
}

void transport_errbody_detail(struct treq *q)
{
    size_t n = q->errbody_len;
    char *d = q->rec.detail;
    size_t cap = sizeof q->rec.detail;
    /* 529 is Anthropic's "overloaded": a 5xx (http_5xx), named. */
    int w = snprintf(d, cap, q->rec.http_status == 529 ? "HTTP %d (overloaded): " : "HTTP %d: ",
                     q->rec.http_status);
    size_t at = w > 0 ? (size_t)w : 0;
    /* Well-formed UTF-8 as it is (a curly quote was three spaces), a
     * control character (C1's too) as a space, any other byte as U+FFFD
     * (docs/formats.md); never a character cut by the bound. */
    const unsigned char *b = (const unsigned char *)q->errbody;
    for (size_t i = 0, k; i < n && at + 1 < cap; i += k) {
        k = b[i] < 0x80 ? 1 : ll_utf8_len(b + i, n - i);
        if (k == 0) {
            if (at + 3 >= cap)
                break;
            memcpy(d + at, "\xef\xbf\xbd", 3);
            at += 3;
            k = 1;
        } else if (k == 1 || (b[i] == 0xC2 && b[i + 1] < 0xA0)) {
            d[at++] = k == 1 && b[i] >= 0x20 && b[i] < 0x7f ? (char)b[i] : ' ';
        } else if (at + k < cap) {
            memcpy(d + at, b + i, k);
            at += k;
        } else {
            break;
        }
    }
    d[at < cap ? at : cap - 1] = '\0';
}

/* Decode a non-stream response's body into c. A complete response (not an
 * error object) gives the record its usage and its one output "event". */
enum outcome_body transport_take_body(struct treq *q, struct oai_chunk *c)
{
    struct record *r = &q->rec;
    const char *body = q->resp ? q->resp : "";
    int rc = decode_plain_body(q->api, body, q->resp_len, c);
    if (rc != 0)
        return OUTCOME_BODY_NOT_JSON;
    if (c->has_error)
        return c->overloaded ? OUTCOME_BODY_OVERLOADED : OUTCOME_BODY_ERROR;
    if (q->api == OAI_API_EMBEDDINGS) {
        /* One embedding per input, or the answer is not the one asked
         * for; its usage is the prompt's, and it has no output. */
        if (c->embeddings != r->inputs) {
            snprintf(r->detail, sizeof r->detail, "%u embeddings in the answer to %u inputs",
                     c->embeddings, r->inputs);
            return OUTCOME_BODY_NOT_JSON;
        }
        if (c->has_usage)
            take_usage(q, c, 0);
        if (c->prompt_tokens >= 0)
            q->usage_completion_tokens = 0;
        return OUTCOME_BODY_OK;
    }
    int out = c->content_bytes + c->reasoning_bytes + c->tool_call_deltas > 0;
    if (c->has_usage)
        take_usage(q, c, 0);
    if (c->has_finish)
        take_finish(q, c);
    if (out) {
        r->events = 1;
        r->first_content_ns = c->content_bytes ? r->first_ns : LL_NO_TIME;
        r->last_ns = r->end_ns;
    } else {
        r->first_ns = LL_NO_TIME;
    }
    return OUTCOME_BODY_OK;
}
