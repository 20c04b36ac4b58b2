/* outcome.c: a finished request's kind and tokens_source, from what the
 * transport saw (outcome.h). Pure functions, fed by transport.c's finish
 * for both HTTP clients, so a record means the same whichever carried it. */
#include "http/outcome.h"

#include <errno.h>

enum rec_kind outcome_xfer_kind(enum outcome_xfer xfer, int status_seen)
{
    switch (xfer) {
    case OUTCOME_XFER_NONE:
        return REC_OK;
    case OUTCOME_XFER_TIMEOUT:
        return status_seen ? REC_TIMEOUT_TOTAL : REC_TIMEOUT_CONNECT;
    case OUTCOME_XFER_CONNECT:
        return REC_CONNECT_ERROR;
    case OUTCOME_XFER_CUT:
        /* Reset or closed: before a status line that is the connection
         * failing (docs/formats.md), after it the stream was cut. */
        return status_seen ? REC_STREAM_TRUNCATED : REC_CONNECT_ERROR;
    case OUTCOME_XFER_OTHER:
        break;
    }
    return REC_TRANSPORT_ERROR;
}

/* Does the failed transfer decide the kind? Not when it only cut the
 * connection after [DONE]: that stream was complete. */
static int xfer_decides(const struct outcome_in *in)
{
    if (in->xfer == OUTCOME_XFER_NONE)
        return 0;
    return !(in->saw_done && outcome_xfer_kind(in->xfer, in->status_seen) == REC_STREAM_TRUNCATED);
}

int outcome_reads_body(const struct outcome_in *in)
{
    return !in->forced && !xfer_decides(in) && in->http_status == 200 && !in->stream;
}

static enum rec_kind kind_from_status(int status)
{
    if (status == 429)
        return REC_HTTP_429;
    if (status >= 500 && status <= 599)
        return REC_HTTP_5XX;
    if (status >= 400 && status <= 499)
        return REC_HTTP_4XX;
    return REC_HTTP_OTHER;
}

/* The failed transfer's kind, unless the client itself ran out of
 * resources, which is not the server's failure. libcurl does not always
 * keep socket()'s errno, so where it gave none on a connect failure the
 * caller's probe (can this process open one more descriptor?) answers. */
static void xfer_outcome(const struct outcome_in *in, struct outcome *o)
{
    o->kind = outcome_xfer_kind(in->xfer, in->status_seen);
    o->why = OUTCOME_WHY_XFER;
    int e = in->os_errno;
    if (e == 0 && o->kind == REC_CONNECT_ERROR &&
        (in->fd_probe_errno == EMFILE || in->fd_probe_errno == ENFILE))
        e = in->fd_probe_errno;
    if (e == EMFILE || e == ENFILE)
        o->why = OUTCOME_WHY_XFER_OUT_OF_FDS;
    else if (e == EADDRNOTAVAIL)
        o->why = OUTCOME_WHY_XFER_OUT_OF_PORTS;
    if (o->why != OUTCOME_WHY_XFER)
        o->kind = REC_TRANSPORT_ERROR;
}

static void stream_outcome(const struct outcome_in *in, struct outcome *o)
{
    if (in->saw_done || in->saw_finish) {
        o->kind = REC_OK;
        o->why = OUTCOME_WHY_STREAM_DONE;
    } else if (in->sse_events == 0 && in->stream_bytes) {
        o->kind = REC_MALFORMED_EVENT;
        o->why = OUTCOME_WHY_STREAM_NOT_SSE;
    } else {
        o->kind = REC_STREAM_TRUNCATED;
        o->why = OUTCOME_WHY_STREAM_CUT;
    }
}

static void body_outcome(const struct outcome_in *in, struct outcome *o)
{
    switch (in->body) {
    case OUTCOME_BODY_NOT_JSON:
        o->kind = REC_MALFORMED_EVENT;
        o->why = OUTCOME_WHY_BODY_NOT_JSON;
        return;
    case OUTCOME_BODY_ERROR:
        o->kind = REC_SERVER_ERROR_EVENT;
        o->why = OUTCOME_WHY_BODY_ERROR;
        return;
    case OUTCOME_BODY_OVERLOADED:
        o->kind = REC_OVERLOADED_EVENT;
        o->why = OUTCOME_WHY_BODY_ERROR;
        return;
    case OUTCOME_BODY_OK:
        break;
    }
    o->kind = REC_OK;
    o->why = OUTCOME_WHY_BODY_OK;
}

struct outcome outcome_decide(const struct outcome_in *in)
{
    struct outcome o = {.kind = REC_OK, .why = OUTCOME_WHY_FORCED};
    if (in->forced) {
        o.kind = in->forced_kind;
        o.why = OUTCOME_WHY_FORCED;
    } else if (xfer_decides(in)) {
        xfer_outcome(in, &o);
    } else if (in->http_status != 200) {
        o.kind = kind_from_status(in->http_status);
        o.why = OUTCOME_WHY_HTTP_STATUS;
    } else if (in->stream) {
        stream_outcome(in, &o);
    } else {
        body_outcome(in, &o);
    }

    if (in->usage_chunks_with_output > 1 && in->usage_completion_tokens >= 0)
        o.tokens_source = REC_TOKENS_CHUNK_USAGE;
    else if (in->usage_completion_tokens >= 0)
        o.tokens_source = REC_TOKENS_USAGE;
    else
        o.tokens_source = REC_TOKENS_EVENTS;
    return o;
}
