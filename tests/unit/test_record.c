/* test_record.c: record names, the requests.jsonl line written and read
 * back, derived latencies. */
#include "test.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "measure/record.h"
#include "util/util.h"

/* r's line as record_write_jsonl writes it, in memory (free it); its
 * length in *len. */
static char *jsonl_of(const struct record *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(record_write_jsonl(f, r), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Write r through record_write_jsonl into memory and parse it back. The
 * line must be exactly one line ending in '\n'. Caller decrefs. */
static json_t *roundtrip(const struct record *r)
{
    size_t len = 0;
    char *buf = jsonl_of(r, &len);
    assert_true(len > 2);
    assert_int_equal(buf[len - 1], '\n');
    assert_null(memchr(buf, '\n', len - 1));
    json_error_t jerr;
    json_t *j = json_loadb(buf, len, 0, &jerr);
    if (j == NULL)
        fail_msg("line does not parse: %s at %d: %s", jerr.text, jerr.position, buf);
    free(buf);
    assert_true(json_is_object(j));
    return j;
}

static json_int_t int_field(json_t *j, const char *key)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_integer(v))
        fail_msg("field %s is not an integer", key);
    return json_integer_value(v);
}

static const char *str_field(json_t *j, const char *key)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_string(v))
        fail_msg("field %s is not a string", key);
    return json_string_value(v);
}

static void assert_null_field(json_t *j, const char *key)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_null(v))
        fail_msg("field %s is %s, expected null", key,
                 v == NULL ? "missing" : "not null");
}

static const char *const all_fields[] = {
    "id",
    "kind",
    "http_status",
    "sched_ns",
    "sent_ns",
    "late_ns",
    "first_ns",
    "first_content_ns",
    "last_ns",
    "end_ns",
    "max_gap_ns",
    "prompt_tokens",
    "prompt_tokens_server",
    "cached_tokens",
    "max_tokens",
    "ignore_eos",
    "output_tokens",
    "tokens_source",
    "events",
    "finish_reason",
    "retry_after_ms",
    "worker",
    "user",
    "warmup",
    "detail",
};

static void test_kind_names(void **state)
{
    static const char *const names[REC_KIND_COUNT] = {
        "ok",
        "http_429",
        "http_5xx",
        "http_4xx",
        "http_other",
        "timeout_connect",
        "timeout_first_token",
        "timeout_idle",
        "timeout_total",
        "connect_error",
        "stream_truncated",
        "malformed_event",
        "line_too_long",
        "server_error_event",
        "cancelled",
        "client_dropped",
        "transport_error",
        "overloaded_event",
    };
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        assert_string_equal(rec_kind_name((enum rec_kind)k), names[k]);
        assert_int_equal(rec_kind_from_name(names[k]), k);
    }
    assert_int_equal(rec_kind_from_name("OK"), -1);
    assert_int_equal(rec_kind_from_name(""), -1);
    assert_int_equal(rec_kind_from_name(NULL), -1);
    assert_int_equal(rec_kind_from_name("http_429 "), -1);
    assert_string_equal(rec_kind_name(REC_KIND_COUNT), "unknown");
    assert_string_equal(rec_tokens_source_name(REC_TOKENS_USAGE), "usage");
    assert_string_equal(rec_tokens_source_name(REC_TOKENS_CHUNK_USAGE), "chunk_usage");
    assert_string_equal(rec_tokens_source_name(REC_TOKENS_EVENTS), "events");
}

static void test_init(void **state)
{
    struct record r;
    memset(&r, 0x5A, sizeof(r));
    record_init(&r, 42);
    assert_int_equal(r.id, 42);
    assert_int_equal(r.kind, REC_OK);
    assert_int_equal(r.http_status, 0);
    assert_true(r.sched_ns == LL_NO_TIME && r.sent_ns == LL_NO_TIME &&
                r.first_ns == LL_NO_TIME && r.first_content_ns == LL_NO_TIME &&
                r.last_ns == LL_NO_TIME && r.end_ns == LL_NO_TIME);
    assert_int_equal(r.max_gap_ns, 0);
    assert_int_equal(r.prompt_tokens, 0);
    assert_int_equal(r.prompt_tokens_server, -1);
    assert_int_equal(r.cached_tokens, -1);
    assert_int_equal(r.output_tokens, 0);
    assert_int_equal(r.events, 0);
    assert_int_equal(r.retry_after_ms, -1);
    assert_int_equal(r.user, -1);
    assert_int_equal(r.worker, 0);
    assert_string_equal(r.detail, "");
}

/* An ok record with id, with every always-present field set; values
 * distinct so that a swapped field would show. */
static struct record full_record(uint64_t id)
{
    struct record r;
    record_init(&r, id);
    r.http_status = 200;
    r.sched_ns = 1000000000ULL;
    r.sent_ns = 1000050000ULL;
    r.late_ns = 40000ULL;
    r.first_ns = 1250000000ULL;
    r.first_content_ns = 1260000000ULL;
    r.last_ns = 2250000000ULL;
    r.end_ns = 2250100000ULL;
    r.max_gap_ns = 30000000ULL;
    r.prompt_tokens = 512;
    r.prompt_tokens_server = 515;
    r.cached_tokens = 256;
    r.max_tokens = 128;
    r.output_tokens = 101;
    r.tokens_source = REC_TOKENS_USAGE;
    r.events = 99;
    snprintf(r.finish_reason, sizeof r.finish_reason, "length");
    r.worker = 3;
    r.user = 12;
    return r;
}

/* A full ok record: every field present. */
static void test_jsonl_full(void **state)
{
    struct record r = full_record(7);

    json_t *j = roundtrip(&r);
    assert_int_equal(json_object_size(j), LL_ARRAY_LEN(all_fields));
    for (size_t i = 0; i < LL_ARRAY_LEN(all_fields); i++)
        assert_non_null(json_object_get(j, all_fields[i]));
    assert_int_equal(int_field(j, "id"), 7);
    assert_string_equal(str_field(j, "kind"), "ok");
    assert_int_equal(int_field(j, "http_status"), 200);
    assert_int_equal(int_field(j, "sched_ns"), 1000000000LL);
    assert_int_equal(int_field(j, "sent_ns"), 1000050000LL);
    assert_int_equal(int_field(j, "late_ns"), 40000LL);
    assert_int_equal(int_field(j, "first_ns"), 1250000000LL);
    assert_int_equal(int_field(j, "first_content_ns"), 1260000000LL);
    assert_int_equal(int_field(j, "last_ns"), 2250000000LL);
    assert_int_equal(int_field(j, "end_ns"), 2250100000LL);
    assert_int_equal(int_field(j, "max_gap_ns"), 30000000LL);
    assert_int_equal(int_field(j, "prompt_tokens"), 512);
    assert_int_equal(int_field(j, "prompt_tokens_server"), 515);
    assert_int_equal(int_field(j, "cached_tokens"), 256);
    assert_int_equal(int_field(j, "max_tokens"), 128);
    assert_int_equal(int_field(j, "output_tokens"), 101);
    assert_string_equal(str_field(j, "tokens_source"), "usage");
    assert_int_equal(int_field(j, "events"), 99);
    assert_string_equal(str_field(j, "finish_reason"), "length");
    assert_true(json_is_false(json_object_get(j, "ignore_eos")));
    assert_null_field(j, "retry_after_ms");
    assert_int_equal(int_field(j, "worker"), 3);
    assert_int_equal(int_field(j, "user"), 12);
    assert_true(json_is_false(json_object_get(j, "warmup")));
    /* "cold" is written only when true: older readers see no change. */
    assert_null(json_object_get(j, "cold"));
    assert_null_field(j, "detail");
    json_decref(j);

    r.warmup = 1;
    r.ignore_eos = 1;
    r.cold = 1;
    j = roundtrip(&r);
    assert_true(json_is_true(json_object_get(j, "cold")));
    assert_true(json_is_true(json_object_get(j, "warmup")));
    assert_true(json_is_true(json_object_get(j, "ignore_eos")));
    json_decref(j);
}

#ifndef LL_FORMATS_MD
#error "the Makefile passes LL_FORMATS_MD, the path of docs/formats.md"
#endif

/* The keys docs/formats.md documents for requests.jsonl, in its order: the
 * first `code` of each table row between "## requests.jsonl" and the next
 * heading. Puts at most cap of them in keys (pointers into text, each cut
 * at its closing backtick) and returns how many. */
static size_t documented_keys(char *text, char **keys, size_t cap)
{
    char *p = strstr(text, "\n## requests.jsonl\n");
    if (p == NULL)
        fail_msg("%s has no \"## requests.jsonl\" section", LL_FORMATS_MD);
    size_t n = 0;
    for (p = strchr(p + 1, '\n'); p != NULL && p[1] != '#'; p = strchr(p + 1, '\n')) {
        if (strncmp(p + 1, "| `", 3) != 0)
            continue;
        char *key = p + 4, *end = strchr(key, '`');
        assert_non_null(end);
        assert_true(n < cap);
        *end = '\0';
        keys[n++] = key;
        p = end;
    }
    return n;
}

/* requests.jsonl's keys as record.c writes them are the ones
 * docs/formats.md's table documents, in its order ("Every line has every
 * field below, in this order"). The record has every byte 0x01, so each
 * field that is written only when set (images, cold, step, session, ...)
 * is set, a field added later included. */
static void test_keys_documented(void **state)
{
    size_t len = 0;
    char *doc = test_read_path(LL_FORMATS_MD, &len);
    char *keys[64];
    size_t n = documented_keys(doc, keys, LL_ARRAY_LEN(keys));
    assert_true(n > 0);

    struct record r;
    memset(&r, 0x01, sizeof r);
    r.kind = REC_OK;
    r.tokens_source = REC_TOKENS_USAGE;
    r.cls = "chat";
    snprintf(r.finish_reason, sizeof r.finish_reason, "stop");
    snprintf(r.detail, sizeof r.detail, "detail");
    char *line = jsonl_of(&r, &len);
    json_t *j = roundtrip(&r);
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v)
    {
        size_t i = 0;
        while (i < n && strcmp(keys[i], key) != 0)
            i++;
        if (i == n)
            fail_msg("requests.jsonl key \"%s\" is written (src/measure/record.c) but not "
                     "in %s's requests.jsonl table",
                     key, LL_FORMATS_MD);
    }
    const char *at = line;
    for (size_t i = 0; i < n; i++) {
        char quoted[80];
        snprintf(quoted, sizeof quoted, "\"%s\":", keys[i]);
        if (json_object_get(j, keys[i]) == NULL)
            fail_msg("requests.jsonl key \"%s\" is in %s's table but never written "
                     "(src/measure/record.c)",
                     keys[i], LL_FORMATS_MD);
        const char *k = strstr(line, quoted);
        if (k < at)
            fail_msg("requests.jsonl key \"%s\" is written before \"%s\", not in the "
                     "table's order: %s",
                     keys[i], keys[i - 1], line);
        at = k;
    }
    assert_int_equal(json_object_size(j), n);
    json_decref(j);
    free(line);
    free(doc);
}

/* The first n by schedule index, or by session in a session run. */
static void test_cold_start_rule(void **state)
{
    assert_false(record_in_cold_start(0, -1, 0));
    assert_true(record_in_cold_start(0, -1, 3));
    assert_true(record_in_cold_start(2, -1, 3));
    assert_false(record_in_cold_start(3, -1, 3));
    /* Session 1's turns (ids 1000, 1001...) are cold with n = 2. */
    assert_true(record_in_cold_start(1001, 1, 2));
    assert_false(record_in_cold_start(2, 2, 2));
}

/* A request that never got anywhere: every optional is null. */
static void test_jsonl_nulls(void **state)
{
    struct record r;
    record_init(&r, 3);
    r.kind = REC_CLIENT_DROPPED;
    r.sched_ns = 5000;
    r.end_ns = 5000;
    r.prompt_tokens = 10;
    snprintf(r.detail, sizeof(r.detail), "dropped: cap of 8 reached");

    json_t *j = roundtrip(&r);
    assert_string_equal(str_field(j, "kind"), "client_dropped");
    assert_null_field(j, "http_status");
    assert_int_equal(int_field(j, "sched_ns"), 5000);
    assert_null_field(j, "sent_ns");
    assert_null_field(j, "late_ns");
    assert_null_field(j, "first_ns");
    assert_null_field(j, "first_content_ns");
    assert_null_field(j, "last_ns");
    assert_int_equal(int_field(j, "end_ns"), 5000);
    assert_int_equal(int_field(j, "max_gap_ns"), 0);
    assert_null_field(j, "prompt_tokens_server");
    assert_null_field(j, "cached_tokens");
    assert_null_field(j, "retry_after_ms");
    assert_null_field(j, "user");
    assert_null_field(j, "finish_reason");
    assert_true(json_is_false(json_object_get(j, "ignore_eos")));
    assert_string_equal(str_field(j, "tokens_source"), "events");
    assert_string_equal(str_field(j, "detail"), "dropped: cap of 8 reached");
    json_decref(j);

    r.kind = REC_HTTP_429;
    r.http_status = 429;
    r.retry_after_ms = 2000;
    r.end_ns = UINT64_C(9223372036854775807); /* 292 years: the most JSON readers hold */
    j = roundtrip(&r);
    assert_string_equal(str_field(j, "kind"), "http_429");
    assert_int_equal(int_field(j, "http_status"), 429);
    assert_int_equal(int_field(j, "retry_after_ms"), 2000);
    assert_true(int_field(j, "end_ns") == INT64_MAX);
    json_decref(j);
}

static void test_jsonl_escaping(void **state)
{
    struct record r;
    record_init(&r, 1);
    r.kind = REC_SERVER_ERROR_EVENT;
    /* quote, backslash, newline, tab, CR, a control byte, DEL, valid UTF-8
     * (é, €), and a stray continuation byte. */
    const char raw[] = "say \"hi\"\\ \n\t\r\x01\x7f \xc3\xa9\xe2\x82\xac \x80!";
    memcpy(r.detail, raw, sizeof(raw));
    json_t *j = roundtrip(&r);
    assert_string_equal(str_field(j, "detail"),
                        "say \"hi\"\\ \n\t\r\x01\x7f \xc3\xa9\xe2\x82\xac \xef\xbf\xbd!");
    json_decref(j);

    /* A detail cut in the middle of a 3-byte sequence, filling the whole
     * array without a terminating NUL: the writer must stop at the array
     * end and replace the half sequence. */
    memset(r.detail, 'a', sizeof(r.detail));
    r.detail[sizeof(r.detail) - 2] = (char)0xe2;
    r.detail[sizeof(r.detail) - 1] = (char)0x82;
    j = roundtrip(&r);
    const char *d = str_field(j, "detail");
    size_t n = strlen(d);
    assert_int_equal(n, sizeof(r.detail) - 2 + 2 * 3);
    assert_memory_equal(d + n - 6, "\xef\xbf\xbd\xef\xbf\xbd", 6);
    assert_int_equal(d[0], 'a');
    json_decref(j);

    /* The server's finish_reason, its own words: escaped the same way,
     * even when it fills the array with no NUL. */
    snprintf(r.finish_reason, sizeof r.finish_reason, "a\"b\\c\n\xc3");
    j = roundtrip(&r);
    assert_string_equal(str_field(j, "finish_reason"), "a\"b\\c\n\xef\xbf\xbd");
    json_decref(j);
    memset(r.finish_reason, 'z', sizeof r.finish_reason);
    j = roundtrip(&r);
    assert_int_equal(strlen(str_field(j, "finish_reason")), sizeof r.finish_reason);
    json_decref(j);
    r.finish_reason[0] = '\0';

    /* Overlong encoding of '/' and a UTF-16 surrogate are not UTF-8. */
    snprintf(r.detail, sizeof(r.detail), "\xc0\xaf|\xed\xa0\x80");
    j = roundtrip(&r);
    assert_string_equal(str_field(j, "detail"),
                        "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    json_decref(j);
}

static void test_jsonl_write_error(void **state)
{
    struct record r;
    record_init(&r, 1);
    FILE *f = fopen("/dev/full", "w");
    if (f == NULL)
        skip();
    setvbuf(f, NULL, _IONBF, 0);
    assert_int_equal(record_write_jsonl(f, &r), LL_E_IO);
    fclose(f);
}

static void test_derived(void **state)
{
    struct record r;
    record_init(&r, 0);
    assert_true(record_ttft_ns(&r) == LL_NO_TIME);
    assert_true(record_ttft_server_ns(&r) == LL_NO_TIME);
    assert_true(record_e2e_ns(&r) == LL_NO_TIME);
    assert_true(record_tpot_ns(&r) == LL_NO_TIME);

    r.sched_ns = 1000;
    r.sent_ns = 1500;
    r.first_ns = 11000;
    r.last_ns = 51000;
    r.end_ns = 52000;
    r.output_tokens = 5;
    r.events = 1; /* one event (a non-streamed body): no pace to measure */
    assert_true(record_tpot_ns(&r) == LL_NO_TIME);
    r.events = 5;
    assert_int_equal(record_ttft_ns(&r), 10000);
    assert_int_equal(record_ttft_server_ns(&r), 9500);
    assert_int_equal(record_e2e_ns(&r), 51000);
    assert_int_equal(record_tpot_ns(&r), 10000); /* 40000 / 4 */

    r.output_tokens = 1;
    assert_true(record_tpot_ns(&r) == LL_NO_TIME);
    r.output_tokens = 2;
    assert_int_equal(record_tpot_ns(&r), 40000);
    r.output_tokens = 0;
    assert_true(record_tpot_ns(&r) == LL_NO_TIME);

    /* Never sent: server TTFT undefined, the rest still defined. */
    r.output_tokens = 4;
    r.sent_ns = LL_NO_TIME;
    assert_true(record_ttft_server_ns(&r) == LL_NO_TIME);
    assert_int_equal(record_ttft_ns(&r), 10000);
    assert_int_equal(record_tpot_ns(&r), 13333); /* 40000 / 3, truncated */

    /* Out of order (a corrupt record) is undefined, not a huge number. */
    r.first_ns = 500;
    assert_true(record_ttft_ns(&r) == LL_NO_TIME);
    r.end_ns = 999;
    assert_true(record_e2e_ns(&r) == LL_NO_TIME);
    r.first_ns = 60000;
    assert_true(record_tpot_ns(&r) == LL_NO_TIME);
    assert_true(record_itl_req_ns(&r) == LL_NO_TIME);
}

/* ITL per request: the mean gap between output events, whatever the
 * token count (events carry several tokens: TPOT differs). */
static void test_itl_req(void **state)
{
    struct record r;
    record_init(&r, 0);
    assert_true(record_itl_req_ns(&r) == LL_NO_TIME);
    r.sched_ns = 0;
    r.first_ns = 10000;
    r.last_ns = 50000;
    r.output_tokens = 9;
    r.events = 1;
    assert_true(record_itl_req_ns(&r) == LL_NO_TIME);
    r.events = 5;
    assert_int_equal(record_itl_req_ns(&r), 10000); /* 40000 / 4 gaps */
    assert_int_equal(record_tpot_ns(&r), 5000);     /* 40000 / 8 tokens */
    r.events = 4;
    assert_int_equal(record_itl_req_ns(&r), 13333);
    r.last_ns = LL_NO_TIME;
    assert_true(record_itl_req_ns(&r) == LL_NO_TIME);
}

/* ---- the hand-rolled formatter against printf ------------------------------ */

/* A value that stresses a decimal formatter: the edges (0, 1, each power
 * of ten and its neighbours, the type's extremes) half of the time, else a
 * random number of a random bit length. */
static uint64_t edgy_u64(uint64_t *st)
{
    uint64_t x = test_splitmix64(st);
    switch (x % 4) {
    case 0: {
        uint64_t p = 1;
        for (unsigned k = (unsigned)(x >> 8) % 20; k > 0; k--)
            p *= 10;
        return p + (uint64_t)((int)((x >> 16) % 3) - 1);   /* p - 1, p, p + 1 */
    }
    case 1: {
        static const uint64_t fixed[] = { 0, 1, 9, 10, 99, 100, UINT64_MAX,
                                          UINT64_MAX - 1, INT64_MAX,
                                          (uint64_t)INT64_MAX + 1 };
        return fixed[(x >> 8) % LL_ARRAY_LEN(fixed)];
    }
    default: {
        unsigned bits = (unsigned)(x >> 8) % 65;
        uint64_t y = test_splitmix64(st);
        return bits == 64 ? y : y & ((1ULL << bits) - 1);
    }
    }
}

/* The line as the printf-based writer formatted it, for details made of
 * characters that need no escaping. */
static size_t reference_line(const struct record *r, char *buf, size_t cap)
{
    size_t n = 0;
#define REF(...) do { \
        int k_ = snprintf(buf + n, cap - n, __VA_ARGS__); \
        assert_true(k_ >= 0 && (size_t)k_ < cap - n); \
        n += (size_t)k_; \
    } while (0)
#define REF_TIME(key, v) do { \
        if ((v) == LL_NO_TIME) REF(",\"%s\":null", key); \
        else REF(",\"%s\":%" PRIu64, key, (uint64_t)(v)); \
    } while (0)
#define REF_OPT(key, v) do { \
        if ((v) < 0) REF(",\"%s\":null", key); \
        else REF(",\"%s\":%" PRId64, key, (int64_t)(v)); \
    } while (0)
    REF("{\"id\":%" PRIu64 ",\"kind\":\"%s\"", r->id, rec_kind_name(r->kind));
    if (r->http_status > 0)
        REF(",\"http_status\":%d", r->http_status);
    else
        REF(",\"http_status\":null");
    REF_TIME("sched_ns", r->sched_ns);
    REF_TIME("sent_ns", r->sent_ns);
    REF_TIME("late_ns", r->late_ns);
    REF_TIME("first_ns", r->first_ns);
    REF_TIME("first_content_ns", r->first_content_ns);
    REF_TIME("last_ns", r->last_ns);
    REF_TIME("end_ns", r->end_ns);
    REF(",\"max_gap_ns\":%" PRIu64, r->max_gap_ns);
    REF(",\"prompt_tokens\":%" PRIu32, r->prompt_tokens);
    REF_OPT("prompt_tokens_server", r->prompt_tokens_server);
    REF_OPT("cached_tokens", r->cached_tokens);
    REF(",\"max_tokens\":%" PRIu32, r->max_tokens);
    REF(",\"ignore_eos\":%s", r->ignore_eos ? "true" : "false");
    if (r->images)
        REF(",\"images\":%" PRIu32, r->images);
    if (r->request_bytes)
        REF(",\"request_bytes\":%" PRIu64, r->request_bytes);
    REF(",\"output_tokens\":%" PRIu64, r->output_tokens);
    REF(",\"tokens_source\":\"%s\"", rec_tokens_source_name(r->tokens_source));
    REF(",\"events\":%" PRIu64, r->events);
    if (r->finish_reason[0] == '\0')
        REF(",\"finish_reason\":null");
    else
        REF(",\"finish_reason\":\"%s\"", r->finish_reason);
    REF_OPT("retry_after_ms", r->retry_after_ms);
    REF(",\"worker\":%" PRIu32, r->worker);
    REF_OPT("user", r->user);
    REF(",\"warmup\":%s", r->warmup ? "true" : "false");
    if (r->cold)
        REF(",\"cold\":true");
    if (r->step >= 0)
        REF(",\"step\":%d", (int)r->step);
    if (r->detail[0] == '\0')
        REF(",\"detail\":null}\n");
    else
        REF(",\"detail\":\"%s\"}\n", r->detail);
#undef REF
#undef REF_TIME
#undef REF_OPT
    return n;
}

/* record_write_jsonl formats numbers by hand; its bytes must be exactly
 * what printf made of 20,000 records of edge and random values. */
static void test_jsonl_matches_printf(void **state)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789 :._-/";
    uint64_t st = 42;
    char want[2048];
    char *got = NULL;
    size_t got_len = 0;

    for (int i = 0; i < 20000; i++) {
        struct record r;
        record_init(&r, edgy_u64(&st));
        r.kind = (enum rec_kind)(test_splitmix64(&st) % (REC_KIND_COUNT + 2));
        r.http_status = (int)(int32_t)edgy_u64(&st);
        r.sched_ns = edgy_u64(&st);
        r.sent_ns = edgy_u64(&st);
        r.late_ns = edgy_u64(&st);
        r.first_ns = edgy_u64(&st);
        r.first_content_ns = edgy_u64(&st);
        r.last_ns = edgy_u64(&st);
        r.end_ns = edgy_u64(&st);
        r.max_gap_ns = edgy_u64(&st);
        r.prompt_tokens = (uint32_t)edgy_u64(&st);
        r.prompt_tokens_server = (int64_t)edgy_u64(&st);
        r.cached_tokens = (int64_t)edgy_u64(&st);
        r.max_tokens = (uint32_t)edgy_u64(&st);
        r.output_tokens = edgy_u64(&st);
        r.tokens_source = (enum rec_tokens_source)(test_splitmix64(&st) % 4);
        r.events = edgy_u64(&st);
        r.ignore_eos = (int)(test_splitmix64(&st) % 2);
        r.images = (uint32_t)edgy_u64(&st);
        r.request_bytes = edgy_u64(&st);
        size_t flen =
            test_splitmix64(&st) % 2 == 0 ? 0 : test_splitmix64(&st) % sizeof(r.finish_reason);
        for (size_t k = 0; k < flen; k++)
            r.finish_reason[k] = alphabet[test_splitmix64(&st) % (sizeof(alphabet) - 1)];
        r.finish_reason[flen] = '\0';
        r.retry_after_ms = (int64_t)edgy_u64(&st);
        r.worker = (uint32_t)edgy_u64(&st);
        r.user = (int64_t)edgy_u64(&st);
        r.warmup = (int)(test_splitmix64(&st) % 2);
        r.cold = (int)(test_splitmix64(&st) % 2);
        r.step = (int32_t)edgy_u64(&st);
        size_t dlen = test_splitmix64(&st) % 3 == 0 ? 0 : test_splitmix64(&st) % sizeof(r.detail);
        for (size_t k = 0; k < dlen; k++)
            r.detail[k] = alphabet[test_splitmix64(&st) % (sizeof(alphabet) - 1)];
        r.detail[dlen] = '\0';

        size_t want_len = reference_line(&r, want, sizeof(want));
        FILE *f = open_memstream(&got, &got_len);
        assert_non_null(f);
        assert_int_equal(record_write_jsonl(f, &r), 0);
        assert_int_equal(fclose(f), 0);
        if (got_len != want_len || memcmp(got, want, want_len) != 0)
            fail_msg("record %d differs:\n got  %.*s want %s", i, (int)got_len, got, want);
        free(got);
        got = NULL;
    }
}

/* ---- reading lines back --------------------------------------------------- */

/* Write r with record_write_jsonl and parse the line back into *back,
 * its class into cls (REC_CLASS_NAME_MAX bytes). */
static void write_and_read(const struct record *r, struct record *back, char *cls)
{
    char err[200] = "";
    size_t len = 0;
    char *buf = jsonl_of(r, &len);
    memset(back, 0xA5, sizeof *back); /* nothing may survive from before */
    if (record_parse_jsonl(buf, len, back, cls, REC_CLASS_NAME_MAX, err, sizeof err) != 0)
        fail_msg("line does not read back: %s: %s", err, buf);
    free(buf);
}

/* Every field of the wire format equal. class_idx is not in the line (the
 * class's name is): it reads back as -1. */
static void assert_same_record(const struct record *a, const struct record *b)
{
    assert_int_equal(b->id, a->id);
    assert_int_equal(b->kind, a->kind);
    assert_int_equal(b->http_status, a->http_status);
    assert_int_equal(b->sched_ns, a->sched_ns);
    assert_int_equal(b->sent_ns, a->sent_ns);
    assert_int_equal(b->late_ns, a->late_ns);
    assert_int_equal(b->first_ns, a->first_ns);
    assert_int_equal(b->first_content_ns, a->first_content_ns);
    assert_int_equal(b->last_ns, a->last_ns);
    assert_int_equal(b->end_ns, a->end_ns);
    assert_int_equal(b->max_gap_ns, a->max_gap_ns);
    assert_int_equal(b->prompt_tokens, a->prompt_tokens);
    assert_int_equal(b->prompt_tokens_server, a->prompt_tokens_server);
    assert_int_equal(b->cached_tokens, a->cached_tokens);
    assert_int_equal(b->max_tokens, a->max_tokens);
    assert_int_equal(b->output_tokens, a->output_tokens);
    assert_int_equal(b->tokens_source, a->tokens_source);
    assert_int_equal(b->events, a->events);
    assert_int_equal(b->ignore_eos, a->ignore_eos);
    assert_int_equal(b->images, a->images);
    assert_int_equal(b->request_bytes, a->request_bytes);
    assert_string_equal(b->finish_reason, a->finish_reason);
    assert_int_equal(b->retry_after_ms, a->retry_after_ms);
    assert_int_equal(b->worker, a->worker);
    assert_int_equal(b->user, a->user);
    assert_int_equal(b->warmup, a->warmup);
    assert_int_equal(b->cold, a->cold);
    assert_int_equal(b->step, a->step);
    assert_int_equal(b->class_idx, -1);
    if (a->cls == NULL) {
        assert_null(b->cls);
    } else {
        assert_non_null(b->cls);
        assert_string_equal(b->cls, a->cls);
    }
    assert_int_equal(b->session, a->session);
    assert_int_equal(b->turn, a->turn);
    assert_int_equal(b->endpoint, a->endpoint);
    assert_int_equal(b->inputs, a->inputs);
    assert_string_equal(b->detail, a->detail);
}

/* A record with every field set, written then read back: equal, field for
 * field; then every kind and every tokens source on their own. */
static void test_read_back_full(void **state)
{
    struct record r = full_record(12345), back;
    char cls[REC_CLASS_NAME_MAX];
    /* And the optional fields an ok record lacks. */
    r.kind = REC_TIMEOUT_IDLE;
    r.tokens_source = REC_TOKENS_CHUNK_USAGE;
    r.retry_after_ms = 1500;
    r.warmup = 1;
    r.step = 5;
    r.class_idx = 1;
    r.cls = "long \"ctx\"";
    r.session = 4;
    r.turn = 2;
    r.endpoint = 3;
    r.ignore_eos = 1;
    r.images = 3;
    r.request_bytes = 123456789012ULL;
    r.inputs = 4;
    snprintf(r.finish_reason, sizeof r.finish_reason, "content_filter");
    snprintf(r.detail, sizeof r.detail, "idle \"30s\" \\ after\ttoken 12, caf\xc3\xa9");
    write_and_read(&r, &back, cls);
    assert_same_record(&r, &back);
    assert_ptr_equal(back.cls, cls);

    for (int k = 0; k < REC_KIND_COUNT; k++) {
        r.kind = (enum rec_kind)k;
        write_and_read(&r, &back, cls);
        assert_same_record(&r, &back);
    }
    enum rec_tokens_source srcs[] = {REC_TOKENS_USAGE, REC_TOKENS_CHUNK_USAGE,
                                     REC_TOKENS_EVENTS};
    for (size_t i = 0; i < LL_ARRAY_LEN(srcs); i++) {
        r.tokens_source = srcs[i];
        write_and_read(&r, &back, cls);
        assert_same_record(&r, &back);
    }
}

/* The optional fields absent or null (a request never sent: every time
 * but sched_ns null, no usage, no class, step, session or turn): read
 * back as record_init leaves them. */
static void test_read_back_absent(void **state)
{
    struct record r, back;
    char cls[REC_CLASS_NAME_MAX];
    record_init(&r, 0);
    r.kind = REC_CLIENT_DROPPED;
    r.sched_ns = 0;
    write_and_read(&r, &back, cls);
    assert_same_record(&r, &back);
    assert_int_equal(back.sent_ns, LL_NO_TIME);
    assert_int_equal(back.prompt_tokens_server, -1);
    assert_int_equal(back.step, -1);
    assert_null(back.cls);
    assert_int_equal(back.session, -1);
    assert_int_equal(back.turn, -1);
    assert_int_equal(back.endpoint, -1);
    assert_string_equal(back.finish_reason, "");
    assert_int_equal(back.ignore_eos, 0);

    /* Without a buffer for it, the class is not kept. */
    char err[200];
    const char *line = "{\"id\":1,\"kind\":\"ok\",\"sched_ns\":5,\"class\":\"a\"}";
    assert_int_equal(record_parse_jsonl(line, strlen(line), &back, NULL, 0, err, sizeof err),
                     0);
    assert_null(back.cls);
    assert_int_equal(back.sched_ns, 5);
    /* A line from before finish_reason and ignore_eos were kept. */
    assert_string_equal(back.finish_reason, "");
    assert_int_equal(back.ignore_eos, 0);
    /* A reason longer than a record keeps is cut to its 31 bytes; one
     * that is not a string is none. */
    const char *longer = "{\"id\":1,\"kind\":\"ok\",\"sched_ns\":5,\"ignore_eos\":true,"
                         "\"finish_reason\":\"a_very_long_finish_reason_indeed_longer\"}";
    assert_int_equal(record_parse_jsonl(longer, strlen(longer), &back, NULL, 0, err, sizeof err),
                     0);
    assert_string_equal(back.finish_reason, "a_very_long_finish_reason_indee");
    assert_int_equal(back.ignore_eos, 1);
    const char *num = "{\"id\":1,\"kind\":\"ok\",\"sched_ns\":5,\"finish_reason\":3}";
    assert_int_equal(record_parse_jsonl(num, strlen(num), &back, NULL, 0, err, sizeof err), 0);
    assert_string_equal(back.finish_reason, "");
    /* A class that does not fit its buffer is dropped, not cut. */
    char small[2];
    assert_int_equal(record_parse_jsonl(line, strlen(line), &back, small, sizeof small, err,
                                        sizeof err), 0);
    assert_string_equal(back.cls, "a");
    assert_int_equal(record_parse_jsonl(line, strlen(line), &back, small, 1, err, sizeof err),
                     0);
    assert_null(back.cls);
}

static const struct bad_input bad_lines[] = {
    {"nope", "not JSON"},
    {"{\"id\":1}", "a record needs \"id\" and \"kind\""},
    {"[1,2]", "a record needs \"id\" and \"kind\""},
    {"{\"id\":1,\"kind\":\"fine\",\"sched_ns\":0}", "unknown kind \"fine\""},
    /* the file's text quoted as one printable line (fuzz_record) */
    {"{\"id\":1,\"kind\":\"c\\ncelled\",\"sched_ns\":0}", "unknown kind \"c?celled\""},
    {"{\"id\":1,\"kind\":\"ok\",\"sched_ns\":null}", "\"sched_ns\" is null"},
    {"{\"id\":1,\"kind\":\"ok\"}", "\"sched_ns\" is null"},
    {"{\"id\":1,\"kind\":\"ok\",\"sched_ns\":0,\"end_ns\":-4}", "a time field"},
    {"{\"id\":1,\"kind\":\"ok\",\"sched_ns\":\"0\"}", "a time field"},
};

/* record_parse_jsonl of in into ctx, a struct record. */
static int parse_line(void *ctx, const char *in, char *err, size_t errlen)
{
    return record_parse_jsonl(in, strlen(in), ctx, NULL, 0, err, errlen);
}

/* Lines the reader refuses, each with its reason. */
static void test_read_bad_lines(void **state)
{
    struct record r;
    test_refusals(parse_line, &r, LL_E_INVAL, bad_lines, LL_ARRAY_LEN(bad_lines));
}

/* What record_read_file hands its callback. */
struct seen {
    size_t n;
    uint64_t ids[8];
    char cls[8][REC_CLASS_NAME_MAX];
};

static void see_record(void *ud, const struct record *r)
{
    struct seen *s = ud;
    assert_true(s->n < LL_ARRAY_LEN(s->ids));
    s->ids[s->n] = r->id;
    snprintf(s->cls[s->n], sizeof s->cls[s->n], "%s", r->cls ? r->cls : "-");
    s->n++;
}

/* A file of records read whole, from an offset, with a blank line
 * skipped; a bad line stops it with path:line; a missing file is LL_E_IO. */
static void test_read_file(void **state)
{
    char path[] = "/tmp/test_record_XXXXXX";
    FILE *f = test_temp_file(path);
    long second = 0;
    for (uint64_t i = 0; i < 3; i++) {
        struct record r;
        record_init(&r, 10 + i);
        r.sched_ns = i * 1000;
        r.cls = i == 1 ? "b" : NULL;
        assert_int_equal(record_write_jsonl(f, &r), 0);
        if (i == 0) {
            assert_int_equal(fputc('\n', f), '\n');
            second = ftell(f);
        }
    }
    assert_int_equal(fflush(f), 0);

    struct seen s = {0};
    char err[300] = "";
    assert_int_equal(record_read_file(path, 0, see_record, &s, err, sizeof err), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.ids[0], 10);
    assert_int_equal(s.ids[2], 12);
    assert_string_equal(s.cls[0], "-");
    assert_string_equal(s.cls[1], "b");

    memset(&s, 0, sizeof s);
    assert_int_equal(record_read_file(path, (uint64_t)second, see_record, &s, err, sizeof err),
                     0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.ids[0], 11);

    assert_true(fputs("{\"id\":13}\n", f) >= 0);
    assert_int_equal(fclose(f), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(record_read_file(path, 0, see_record, &s, err, sizeof err), LL_E_INVAL);
    assert_int_equal(s.n, 3);
    char want[200];
    snprintf(want, sizeof want, "%s:5: a record needs", path);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("error \"%s\", expected it to start \"%s\"", err, want);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(record_read_file(path, 0, see_record, &s, err, sizeof err), LL_E_IO);
    assert_non_null(strstr(err, "No such file"));
}

/* A request's line twice in one file is refused, naming both lines: it
 * would count twice in every figure. One id in two steps is two requests;
 * in one step it is not, whatever else the lines say. */
static void test_read_repeated(void **state)
{
    (void)state;
    char path[] = "/tmp/test_record_XXXXXX";
    FILE *f = test_temp_file(path);
    static const struct {
        uint64_t id;
        int32_t step;
    } lines[] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}};
    for (size_t i = 0; i < LL_ARRAY_LEN(lines); i++) {
        struct record r;
        record_init(&r, lines[i].id);
        r.sched_ns = 0;
        r.step = lines[i].step;
        assert_int_equal(record_write_jsonl(f, &r), 0);
    }
    assert_int_equal(fflush(f), 0);
    struct seen s = {0};
    char err[300] = "";
    if (record_read_file(path, 0, see_record, &s, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(s.n, 5);

    /* Step 1's id 0 again at line 6, step 0's id 1 at line 7 (a later
     * repeat: the first one is named). */
    struct record r;
    record_init(&r, 0);
    r.step = 1;
    r.sched_ns = 5; /* not the same line: the same request */
    assert_int_equal(record_write_jsonl(f, &r), 0);
    record_init(&r, 1);
    r.sched_ns = 0;
    r.step = 0;
    assert_int_equal(record_write_jsonl(f, &r), 0);
    assert_int_equal(fclose(f), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(record_read_file(path, 0, see_record, &s, err, sizeof err), LL_E_INVAL);
    char want[300];
    snprintf(want, sizeof want,
             "%s:6: request id 0 of step 1 again (first at line 3): one line per request; "
             "was a file appended to another?",
             path);
    assert_string_equal(err, want);

    /* Outside a sweep: no step in the words. */
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 2; i++) {
        record_init(&r, 7);
        r.sched_ns = 0;
        assert_int_equal(record_write_jsonl(f, &r), 0);
    }
    assert_int_equal(fclose(f), 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(record_read_file(path, 0, see_record, &s, err, sizeof err), LL_E_INVAL);
    snprintf(want, sizeof want, "%s:2: request id 7 again (first at line 1)", path);
    assert_non_null(strstr(err, want));
    assert_int_equal(unlink(path), 0);
}

UNIT_TESTS(test_kind_names, test_init, test_jsonl_full, test_keys_documented, test_cold_start_rule,
           test_jsonl_nulls, test_jsonl_escaping, test_jsonl_write_error, test_derived,
           test_itl_req, test_jsonl_matches_printf, test_read_back_full, test_read_back_absent,
           test_read_bad_lines, test_read_file, test_read_repeated)
