/* Unit tests for outcome.c: a finished request's kind and tokens_source.
 *
 * Three ways in. A table of named cases, situations the clients meet (most
 * of them produced end to end by tests/integration/test_hostile.c), with
 * the answer written out by hand. Then every combination of the inputs, each
 * over the values that fall on either side of every comparison the rule
 * makes, checked against the rule as transport.c's finish() wrote it before
 * it moved here (old_decide below, kept in that shape on purpose: it is the
 * behaviour the move must not change). Then outcome_reads_body against what
 * outcome_decide does, and every forced kind passing through untouched. */
#include "test.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "http/outcome.h"
#include "measure/record.h"

/* ---- the rule before the move ------------------------------------------- */

/* transport.c's kind_from_curl, with libcurl's codes grouped as the libcurl
 * backend now groups them (xfer_from_curl). */
static enum rec_kind old_kind_from_curl(enum outcome_xfer x, int status_seen)
{
    switch (x) {
    case OUTCOME_XFER_TIMEOUT:
        return status_seen ? REC_TIMEOUT_TOTAL : REC_TIMEOUT_CONNECT;
    case OUTCOME_XFER_CONNECT:
        return REC_CONNECT_ERROR;
    case OUTCOME_XFER_CUT:
        return status_seen ? REC_STREAM_TRUNCATED : REC_CONNECT_ERROR;
    default:
        return REC_TRANSPORT_ERROR;
    }
}

static enum rec_kind old_kind_from_status(int status)
{
    if (status == 429)
        return REC_HTTP_429;
    if (status >= 500 && status <= 599)
        return REC_HTTP_5XX;
    if (status >= 400 && status <= 499)
        return REC_HTTP_4XX;
    return REC_HTTP_OTHER;
}

/* finish() and client_resource_error() before the move, branch for branch. */
static struct outcome old_decide(const struct outcome_in *in)
{
    struct outcome o;
    if (in->forced) {
        o.kind = in->forced_kind;
        o.why = OUTCOME_WHY_FORCED;
    } else if (in->xfer != OUTCOME_XFER_NONE &&
               !(in->saw_done &&
                 old_kind_from_curl(in->xfer, in->status_seen) == REC_STREAM_TRUNCATED)) {
        o.kind = old_kind_from_curl(in->xfer, in->status_seen);
        o.why = OUTCOME_WHY_XFER;
        long os_errno = in->os_errno;
        if (os_errno == 0 && o.kind == REC_CONNECT_ERROR) {
            if (in->fd_probe_errno == EMFILE || in->fd_probe_errno == ENFILE)
                os_errno = in->fd_probe_errno;
        }
        if (os_errno == EMFILE || os_errno == ENFILE) {
            o.kind = REC_TRANSPORT_ERROR;
            o.why = OUTCOME_WHY_XFER_OUT_OF_FDS;
        } else if (os_errno == EADDRNOTAVAIL) {
            o.kind = REC_TRANSPORT_ERROR;
            o.why = OUTCOME_WHY_XFER_OUT_OF_PORTS;
        }
    } else if (in->http_status != 200) {
        o.kind = old_kind_from_status(in->http_status);
        o.why = OUTCOME_WHY_HTTP_STATUS;
    } else if (in->stream) {
        if (in->saw_done || in->saw_finish) {
            o.kind = REC_OK;
            o.why = OUTCOME_WHY_STREAM_DONE;
        } else if (in->sse_events == 0 && in->stream_bytes) {
            o.kind = REC_MALFORMED_EVENT;
            o.why = OUTCOME_WHY_STREAM_NOT_SSE;
        } else {
            o.kind = REC_STREAM_TRUNCATED;
            o.why = OUTCOME_WHY_STREAM_CUT;
        }
    } else if (in->body == OUTCOME_BODY_NOT_JSON) {
        o.kind = REC_MALFORMED_EVENT;
        o.why = OUTCOME_WHY_BODY_NOT_JSON;
    } else if (in->body == OUTCOME_BODY_ERROR) {
        o.kind = REC_SERVER_ERROR_EVENT;
        o.why = OUTCOME_WHY_BODY_ERROR;
    } else if (in->body == OUTCOME_BODY_OVERLOADED) {
        o.kind = REC_OVERLOADED_EVENT;
        o.why = OUTCOME_WHY_BODY_ERROR;
    } else {
        o.kind = REC_OK;
        o.why = OUTCOME_WHY_BODY_OK;
    }
    if (in->usage_chunks_with_output > 1 && in->usage_completion_tokens >= 0)
        o.tokens_source = REC_TOKENS_CHUNK_USAGE;
    else if (in->usage_completion_tokens >= 0)
        o.tokens_source = REC_TOKENS_USAGE;
    else
        o.tokens_source = REC_TOKENS_EVENTS;
    return o;
}

static int is_body_why(enum outcome_why w)
{
    return w == OUTCOME_WHY_BODY_NOT_JSON || w == OUTCOME_WHY_BODY_ERROR ||
           w == OUTCOME_WHY_BODY_OK;
}

static void describe(const struct outcome_in *in, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "forced=%d/%s xfer=%d seen=%d os=%d probe=%d status=%d stream=%d done=%d "
             "finish=%d events=%u bytes=%llu body=%d chunks=%u usage=%lld",
             in->forced, rec_kind_name(in->forced_kind), (int)in->xfer, in->status_seen,
             in->os_errno, in->fd_probe_errno, in->http_status, in->stream, in->saw_done,
             in->saw_finish, in->sse_events, (unsigned long long)in->stream_bytes, (int)in->body,
             in->usage_chunks_with_output, (long long)in->usage_completion_tokens);
}

static void expect_same(const struct outcome_in *in, struct outcome got, struct outcome want)
{
    if (got.kind == want.kind && got.why == want.why && got.tokens_source == want.tokens_source)
        return;
    char d[400];
    describe(in, d, sizeof d);
    fail_msg("%s: got kind %s why %d tokens %s, want kind %s why %d tokens %s", d,
             rec_kind_name(got.kind), (int)got.why, rec_tokens_source_name(got.tokens_source),
             rec_kind_name(want.kind), (int)want.why, rec_tokens_source_name(want.tokens_source));
}

/* ---- named cases ---------------------------------------------------------- */

/* Fields of a 200 stream whose status line was read, for the cases below. */
#define STREAM_200 .http_status = 200, .status_seen = 1, .stream = 1
#define NO_USAGE .usage_completion_tokens = -1

static void test_named_cases(void **state)
{
    const struct {
        const char *name;
        struct outcome_in in;
        enum rec_kind kind;
        enum outcome_why why;
        enum rec_tokens_source tokens;
    } cases[] = {
        {"complete stream with usage",
         {STREAM_200, .saw_done = 1, .saw_finish = 1, .sse_events = 18, .stream_bytes = 2400,
          .usage_completion_tokens = 16},
         REC_OK,
         OUTCOME_WHY_STREAM_DONE,
         REC_TOKENS_USAGE},
        {"finish_reason, no [DONE], no usage",
         {STREAM_200, .saw_finish = 1, .sse_events = 17, .stream_bytes = 2000, NO_USAGE},
         REC_OK,
         OUTCOME_WHY_STREAM_DONE,
         REC_TOKENS_EVENTS},
        {"usage on every output chunk",
         {STREAM_200, .saw_done = 1, .sse_events = 17, .stream_bytes = 2000,
          .usage_chunks_with_output = 16, .usage_completion_tokens = 16},
         REC_OK,
         OUTCOME_WHY_STREAM_DONE,
         REC_TOKENS_CHUNK_USAGE},
        {"usage on one output chunk",
         {STREAM_200, .saw_done = 1, .sse_events = 2, .stream_bytes = 200,
          .usage_chunks_with_output = 1, .usage_completion_tokens = 1},
         REC_OK,
         OUTCOME_WHY_STREAM_DONE,
         REC_TOKENS_USAGE},
        {"cut mid-stream (libcurl)",
         {STREAM_200, .xfer = OUTCOME_XFER_CUT, .sse_events = 5, .stream_bytes = 600, NO_USAGE},
         REC_STREAM_TRUNCATED,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"cut after [DONE] (libcurl)",
         {STREAM_200, .xfer = OUTCOME_XFER_CUT, .saw_done = 1, .sse_events = 18,
          .stream_bytes = 2400, .usage_completion_tokens = 16},
         REC_OK,
         OUTCOME_WHY_STREAM_DONE,
         REC_TOKENS_USAGE},
        {"timeout after [DONE] still a timeout",
         {STREAM_200, .xfer = OUTCOME_XFER_TIMEOUT, .saw_done = 1, .sse_events = 18,
          .stream_bytes = 2400, NO_USAGE},
         REC_TIMEOUT_TOTAL,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"closed cleanly before [DONE]",
         {STREAM_200, .sse_events = 5, .stream_bytes = 600, NO_USAGE},
         REC_STREAM_TRUNCATED,
         OUTCOME_WHY_STREAM_CUT,
         REC_TOKENS_EVENTS},
        {"a 200 that is not a stream",
         {STREAM_200, .stream_bytes = 300, NO_USAGE},
         REC_MALFORMED_EVENT,
         OUTCOME_WHY_STREAM_NOT_SSE,
         REC_TOKENS_EVENTS},
        {"a 200 with an empty body",
         {STREAM_200, NO_USAGE},
         REC_STREAM_TRUNCATED,
         OUTCOME_WHY_STREAM_CUT,
         REC_TOKENS_EVENTS},
        {"429",
         {.http_status = 429, .status_seen = 1, .stream = 1, NO_USAGE},
         REC_HTTP_429,
         OUTCOME_WHY_HTTP_STATUS,
         REC_TOKENS_EVENTS},
        {"503",
         {.http_status = 503, .status_seen = 1, .stream = 1, NO_USAGE},
         REC_HTTP_5XX,
         OUTCOME_WHY_HTTP_STATUS,
         REC_TOKENS_EVENTS},
        {"404",
         {.http_status = 404, .status_seen = 1, NO_USAGE},
         REC_HTTP_4XX,
         OUTCOME_WHY_HTTP_STATUS,
         REC_TOKENS_EVENTS},
        {"302",
         {.http_status = 302, .status_seen = 1, .stream = 1, NO_USAGE},
         REC_HTTP_OTHER,
         OUTCOME_WHY_HTTP_STATUS,
         REC_TOKENS_EVENTS},
        {"connection refused",
         {.xfer = OUTCOME_XFER_CONNECT, .os_errno = ECONNREFUSED, .stream = 1, NO_USAGE},
         REC_CONNECT_ERROR,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"reset before the status line",
         {.xfer = OUTCOME_XFER_CUT, .os_errno = ECONNRESET, .stream = 1, NO_USAGE},
         REC_CONNECT_ERROR,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"libcurl's connect timeout",
         {.xfer = OUTCOME_XFER_TIMEOUT, .stream = 1, NO_USAGE},
         REC_TIMEOUT_CONNECT,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"TLS failure",
         {.xfer = OUTCOME_XFER_OTHER, .stream = 1, NO_USAGE},
         REC_TRANSPORT_ERROR,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"out of descriptors (errno)",
         {.xfer = OUTCOME_XFER_CONNECT, .os_errno = EMFILE, .stream = 1, NO_USAGE},
         REC_TRANSPORT_ERROR,
         OUTCOME_WHY_XFER_OUT_OF_FDS,
         REC_TOKENS_EVENTS},
        {"out of descriptors (probe)",
         {.xfer = OUTCOME_XFER_CONNECT, .fd_probe_errno = ENFILE, .stream = 1, NO_USAGE},
         REC_TRANSPORT_ERROR,
         OUTCOME_WHY_XFER_OUT_OF_FDS,
         REC_TOKENS_EVENTS},
        {"probe ignored past the status line",
         {STREAM_200, .xfer = OUTCOME_XFER_CUT, .fd_probe_errno = EMFILE, NO_USAGE},
         REC_STREAM_TRUNCATED,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"probe ignored when libcurl gave an errno",
         {.xfer = OUTCOME_XFER_CONNECT,
          .os_errno = ECONNREFUSED,
          .fd_probe_errno = EMFILE,
          .stream = 1,
          NO_USAGE},
         REC_CONNECT_ERROR,
         OUTCOME_WHY_XFER,
         REC_TOKENS_EVENTS},
        {"out of ephemeral ports",
         {.xfer = OUTCOME_XFER_CONNECT, .os_errno = EADDRNOTAVAIL, .stream = 1, NO_USAGE},
         REC_TRANSPORT_ERROR,
         OUTCOME_WHY_XFER_OUT_OF_PORTS,
         REC_TOKENS_EVENTS},
        {"idle timeout (forced) wins over the cut",
         {STREAM_200, .forced = 1, .forced_kind = REC_TIMEOUT_IDLE, .xfer = OUTCOME_XFER_CUT,
          .sse_events = 3, .stream_bytes = 400, NO_USAGE},
         REC_TIMEOUT_IDLE,
         OUTCOME_WHY_FORCED,
         REC_TOKENS_EVENTS},
        {"cancelled by the workload, usage so far",
         {STREAM_200, .forced = 1, .forced_kind = REC_CANCELLED, .xfer = OUTCOME_XFER_OTHER,
          .sse_events = 5, .stream_bytes = 600, .usage_chunks_with_output = 4,
          .usage_completion_tokens = 4},
         REC_CANCELLED,
         OUTCOME_WHY_FORCED,
         REC_TOKENS_CHUNK_USAGE},
        {"bad event data",
         {STREAM_200, .forced = 1, .forced_kind = REC_MALFORMED_EVENT, .saw_done = 1,
          .sse_events = 3, .stream_bytes = 400, NO_USAGE},
         REC_MALFORMED_EVENT,
         OUTCOME_WHY_FORCED,
         REC_TOKENS_EVENTS},
        {"[DONE] then held open (forced ok)",
         {STREAM_200, .forced = 1, .forced_kind = REC_OK, .saw_done = 1, .sse_events = 18,
          .stream_bytes = 2400, .usage_completion_tokens = 16},
         REC_OK,
         OUTCOME_WHY_FORCED,
         REC_TOKENS_USAGE},
        {"non-stream ok",
         {.http_status = 200, .body = OUTCOME_BODY_OK, .usage_completion_tokens = 16},
         REC_OK,
         OUTCOME_WHY_BODY_OK,
         REC_TOKENS_USAGE},
        {"non-stream not JSON",
         {.http_status = 200, .body = OUTCOME_BODY_NOT_JSON, NO_USAGE},
         REC_MALFORMED_EVENT,
         OUTCOME_WHY_BODY_NOT_JSON,
         REC_TOKENS_EVENTS},
        {"non-stream error object",
         {.http_status = 200, .body = OUTCOME_BODY_ERROR, NO_USAGE},
         REC_SERVER_ERROR_EVENT,
         OUTCOME_WHY_BODY_ERROR,
         REC_TOKENS_EVENTS},
        {"non-stream overloaded",
         {.http_status = 200, .body = OUTCOME_BODY_OVERLOADED, NO_USAGE},
         REC_OVERLOADED_EVENT,
         OUTCOME_WHY_BODY_ERROR,
         REC_TOKENS_EVENTS},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct outcome o = outcome_decide(&cases[k].in);
        if (o.kind != cases[k].kind || o.why != cases[k].why || o.tokens_source != cases[k].tokens)
            fail_msg("%s: got %s why %d tokens %s, want %s why %d tokens %s", cases[k].name,
                     rec_kind_name(o.kind), (int)o.why, rec_tokens_source_name(o.tokens_source),
                     rec_kind_name(cases[k].kind), (int)cases[k].why,
                     rec_tokens_source_name(cases[k].tokens));
        /* The rule before the move agrees with the answer written here. */
        expect_same(&cases[k].in, old_decide(&cases[k].in), o);
    }
}

/* ---- every combination ---------------------------------------------------- */

/* Each input over the values on either side of every comparison made on it:
 * status 200, 429, the ends of 4xx and 5xx and their neighbours; errno 0,
 * the three resource errnos and another; counts 0 and 1 (and 2 where "more
 * than one" is asked); no forced kind, and each kind forced. About 40
 * million combinations, half a second at -O2. */
static void test_every_combination(void **state)
{
    static const enum outcome_xfer xfers[] = {OUTCOME_XFER_NONE, OUTCOME_XFER_TIMEOUT,
                                              OUTCOME_XFER_CONNECT, OUTCOME_XFER_CUT,
                                              OUTCOME_XFER_OTHER};
    static const int errnos[] = {0, EMFILE, ENFILE, EADDRNOTAVAIL, ECONNRESET};
    static const int probes[] = {0, EMFILE, ENFILE, EBADF};
    static const int statuses[] = {0, 199, 200, 201, 399, 400, 428, 429, 430, 499, 500, 599, 600};
    static const enum outcome_body bodies[] = {OUTCOME_BODY_NOT_JSON, OUTCOME_BODY_ERROR,
                                               OUTCOME_BODY_OK, OUTCOME_BODY_OVERLOADED};
    static const uint32_t chunks[] = {0, 1, 2};
    static const int64_t usage[] = {-1, 0, 7};
#define N(a) (sizeof(a) / sizeof((a)[0]))
    unsigned long n = 0, reads = 0;
    for (int f = -1; f < REC_KIND_COUNT; f++)
    for (size_t x = 0; x < N(xfers); x++)
    for (int seen = 0; seen < 2; seen++)
    for (size_t e = 0; e < N(errnos); e++)
    for (size_t p = 0; p < N(probes); p++)
    for (size_t s = 0; s < N(statuses); s++)
    for (int bits = 0; bits < 32; bits++)
    for (size_t b = 0; b < N(bodies); b++)
    for (size_t c = 0; c < N(chunks); c++)
    for (size_t u = 0; u < N(usage); u++) {
        struct outcome_in in = {
            .forced = f >= 0,
            .forced_kind = f >= 0 ? (enum rec_kind)f : REC_OK,
            .xfer = xfers[x],
            .status_seen = seen,
            .os_errno = errnos[e],
            .fd_probe_errno = probes[p],
            .http_status = statuses[s],
            .stream = bits & 1,
            .saw_done = (bits >> 1) & 1,
            .saw_finish = (bits >> 2) & 1,
            .sse_events = (bits >> 3) & 1,
            .stream_bytes = (bits >> 4) & 1,
            .body = bodies[b],
            .usage_chunks_with_output = chunks[c],
            .usage_completion_tokens = usage[u],
        };
        struct outcome o = outcome_decide(&in);
        expect_same(&in, o, old_decide(&in));
        /* The body is read exactly where the decision reaches it. */
        if (outcome_reads_body(&in) != is_body_why(o.why)) {
            char d[400];
            describe(&in, d, sizeof d);
            fail_msg("%s: outcome_reads_body %d, but why %d", d, outcome_reads_body(&in),
                     (int)o.why);
        }
        reads += (unsigned long)outcome_reads_body(&in);
        n++;
    }
#undef N
    /* forced x xfer x seen x errno x probe x status x 5 bits x body (4) x chunks x usage */
    assert_int_equal(n, (REC_KIND_COUNT + 1ul) * 5 * 2 * 5 * 4 * 13 * 32 * 4 * 3 * 3);
    assert_true(reads > 0);
}

/* A forced kind wins over everything else, whatever it is. */
static void test_forced_kinds_pass_through(void **state)
{
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        struct outcome_in in = {STREAM_200, .saw_done = 1, .sse_events = 3, .stream_bytes = 400,
                                .usage_completion_tokens = 2};
        in.forced = 1;
        in.forced_kind = (enum rec_kind)k;
        for (int x = OUTCOME_XFER_NONE; x <= OUTCOME_XFER_OTHER; x++) {
            in.xfer = (enum outcome_xfer)x;
            in.os_errno = x == OUTCOME_XFER_CONNECT ? EMFILE : 0;
            for (int status = 200; status <= 500; status += 300) {
                in.http_status = status;
                struct outcome o = outcome_decide(&in);
                assert_int_equal(o.kind, k);
                assert_int_equal(o.why, OUTCOME_WHY_FORCED);
                assert_int_equal(o.tokens_source, REC_TOKENS_USAGE);
                assert_false(outcome_reads_body(&in));
                expect_same(&in, o, old_decide(&in));
            }
        }
    }
}

static void test_xfer_kind(void **state)
{
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_NONE, 0), REC_OK);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_NONE, 1), REC_OK);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_TIMEOUT, 0), REC_TIMEOUT_CONNECT);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_TIMEOUT, 1), REC_TIMEOUT_TOTAL);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_CONNECT, 0), REC_CONNECT_ERROR);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_CONNECT, 1), REC_CONNECT_ERROR);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_CUT, 0), REC_CONNECT_ERROR);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_CUT, 1), REC_STREAM_TRUNCATED);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_OTHER, 0), REC_TRANSPORT_ERROR);
    assert_int_equal(outcome_xfer_kind(OUTCOME_XFER_OTHER, 1), REC_TRANSPORT_ERROR);
}

UNIT_TESTS(test_named_cases, test_every_combination, test_forced_kinds_pass_through, test_xfer_kind)
