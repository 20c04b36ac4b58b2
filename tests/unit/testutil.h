/* testutil.h: helpers shared by the unit tests, linked into every unit
 * test binary (tests/unit/testutil.c).
 *
 * Like test.h's macros, each helper runs inside a cmocka test and fails
 * it with a message naming what was looked for, rather than returning an
 * error for the caller to check. */
#ifndef LL_TESTUTIL_H
#define LL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decode/openai.h"
#include "sim/engine.h"
#include "workload/workload.h"

/* buf = "$LLMLOAD_DATA/dir/name", or "tests/data/dir/name" when the
 * variable is unset (run from the repository root). Fails the test when it
 * does not fit len. Returns buf. */
const char *test_data_path(const char *dir, const char *name, char *buf, size_t len);

/* err contains want; otherwise fails the test naming input (what was
 * refused), err and want. */
void assert_message_has(const char *err, const char *want, const char *input);

/* A parser's refusal of input: rc must be non-zero, out (what it returned
 * through its out-parameter) NULL, and err one line that contains each of
 * a, b and c that is not NULL. Fails the test naming what was wrong and the
 * input. */
void assert_rejected(int rc, const void *out, const char *err, const char *input,
                     const char *a, const char *b, const char *c);

/* Load tests/data/workload/<name> with load, a loader of the shape
 * load(path, out, err, errlen) returning 0 or an error; fails the test
 * with the loader's message when it refuses. A macro because each
 * loader's out-parameter has its own type. */
#define ASSERT_LOADS(load, name, out)                                                              \
    do {                                                                                           \
        char path_[512], err_[1024] = "";                                                          \
        test_data_path("workload", (name), path_, sizeof path_);                                   \
        if (load(path_, (out), err_, sizeof err_))                                                 \
            fail_msg("%s", err_);                                                                  \
    } while (0)

/* parse, a parser of the shape parse(name, text, len, &out, err, errlen)
 * whose out is a type *, must refuse text: assert_rejected with a and b.
 * out starts as a stale pointer, so a parser that leaves it set is caught.
 * A macro because each parser's out-parameter has its own type. */
#define ASSERT_PARSE_REFUSED(parse, name, type, text, a, b)                                        \
    do {                                                                                           \
        type *out_ = (type *)1;                                                                    \
        char err_[512] = "";                                                                       \
        int rc_ = parse((name), (text), strlen(text), &out_, err_, sizeof err_);                   \
        assert_rejected(rc_, out_, err_, (text), (a), (b), NULL);                                  \
    } while (0)

/* A loader's answer for path, a file that does not exist: rc LL_E_IO, out
 * (what it returned through its out-parameter) NULL, and err naming the
 * file, "path: cannot open". */
void assert_load_missing(int rc, const void *out, const char *err, const char *path);

/* splitmix64: a small seeded source of test values. *state is the seed,
 * then the state; returns the next value. */
uint64_t test_splitmix64(uint64_t *state);

/* A captured HTTP response in tests/data/sse/name: its status into
 * *status, and its body, chunked framing undone, returned (NUL-ended, the
 * caller frees) with its length in *len. */
char *test_capture_body(const char *name, int *status, size_t *len);

/* One API's event decoder, through the memo m or (m NULL) without
 * (anth_decode_event, say). */
typedef int test_event_decode_fn(const char *event, size_t event_len, const char *data, size_t len,
                                 struct oai_chunk *out, struct oai_memo *m);

/* What a stream decoded to: every event's chunk added to st. */
struct test_stream_acc {
    test_event_decode_fn *decode;
    int memo_on;
    struct oai_memo memo;
    struct oai_stream st;
    int malformed; /* events the decoder refused */
};

/* The streamed capture name, decoded by decode whole, cut at every offset and
 * byte by byte, with and without the memo (which must never change an
 * event's answer): each time no event may be malformed and the stream must
 * hold want (test_stream_expect). With the memo, the whole stream must take
 * the shortcut memo_hits times. */
void test_capture_splits(const char *name, test_event_decode_fn *decode, uint64_t memo_hits,
                         const char *want);

/* An error event (named event, decoded by decode) whose message is 299
 * bytes with two-byte UTF-8 characters at byte 96: its data is before,
 * the message, then after. The message is cut to fit error_message,
 * never inside a character, after prefix (the code and its ": "). */
void test_long_error_cut(test_event_decode_fn *decode, const char *event, const char *before,
                         const char *after, const char *prefix);

/* Each of bad[0..n), and "", "[DONE]" and "[1]", refused (LL_E_PROTO) by
 * decode as an event named event, leaving nothing decoded, and by
 * decode_response as a body. */
void test_event_refusals(test_event_decode_fn *decode,
                         int (*decode_response)(const char *body, size_t len,
                                                struct oai_chunk *out),
                         const char *event, const char *const *bad, size_t n);

/* decode(name, data) with no memo, which must succeed: the chunk. Fails
 * the test naming data and the code otherwise. */
struct oai_chunk test_event_ok(test_event_decode_fn *decode, const char *name, const char *data);

/* A captured response that is not streamed, tests/data/sse/name: its
 * status must be status, decode_response must take its body whole and
 * refuse (LL_E_PROTO) every shorter prefix, and the chunk must hold expect
 * (EXPECT_CHUNK). */
void test_capture_response(const char *name,
                           int (*decode_response)(const char *body, size_t len,
                                                  struct oai_chunk *out),
                           int status, const char *expect);

/* One event a decoder must accept, and what its chunk must say
 * (EXPECT_CHUNK's "field=value;..."). */
struct test_event_case {
    const char *event, *data, *expect;
};

/* Each of cases[0..n) decoded by decode (without the memo) and checked; a
 * failure names the case's data and the field. */
void test_event_cases(test_event_decode_fn *decode, const struct test_event_case *cases, size_t n);

/* Each of seq[0..n) (unnamed events) decoded by decode through one memo and
 * without: the two must agree in rc and, when 0, in every byte. Returns
 * the memo's hits, for the caller's bound. */
uint64_t test_memo_agrees(test_event_decode_fn *decode, const char *const *seq, size_t n);

/* ---- checking fields by name -------------------------------------------
 * A test that checks a few fields of a struct at a time names them in a
 * string, "field=value;field=value", against a table of the struct's
 * fields (TEST_FIELD); fields not named are not checked. */

/* One checkable field: its name, where it lies and how to read it, or
 * (get not NULL) a figure computed from the whole struct. */
struct test_field {
    const char *name;
    size_t off, size;
    char kind; /* 'i' signed integer, 'u' unsigned, 'd' double, 's' char array */
    int64_t (*get)(const void *obj);         /* an integer figure, or NULL */
    const char *(*get_str)(const void *obj); /* a string figure, or NULL */
};

/* A field's kind ('i', 'u', 'd' or 's', as struct test_field says) from
 * its C type; a char array decays to char *. */
#define TEST_FIELD_KIND(x)                                                                         \
    _Generic((x),                                                                                  \
        char *: 's',                                                                               \
        double: 'd',                                                                               \
        signed char: 'i',                                                                          \
        short: 'i',                                                                                \
        int: 'i',                                                                                  \
        long: 'i',                                                                                 \
        long long: 'i',                                                                            \
        _Bool: 'u',                                                                                \
        unsigned char: 'u',                                                                        \
        unsigned short: 'u',                                                                       \
        unsigned int: 'u',                                                                         \
        unsigned long: 'u',                                                                        \
        unsigned long long: 'u')

/* The table entry of field f of struct type, its kind from its C type. */
#define TEST_FIELD(type, f)                                                                        \
    {                                                                                              \
        .name = #f, .off = offsetof(type, f), .size = sizeof(((type *)0)->f),                      \
        .kind = TEST_FIELD_KIND(((type *)0)->f)                                                    \
    }

/* Check in obj every field that expect names ("name=value" separated by
 * ';': integers in decimal, doubles compared exactly, strings as written,
 * so a string to check cannot hold a ';') against fields[0..n). A name not
 * in fields fails the test. A failure names file:line, what, the field and
 * both values. Use through EXPECT_FIELDS. */
void test_expect_fields(const char *file, int line, const char *what, const void *obj,
                        const struct test_field *fields, size_t n, const char *expect);

#define EXPECT_FIELDS(what, obj, fields, expect)                                                   \
    test_expect_fields(__FILE__, __LINE__, (what), (obj), (fields),                                \
                       sizeof(fields) / sizeof((fields)[0]), (expect))

/* struct oai_chunk's fields, and "output" for oai_chunk_carries_output. */
extern const struct test_field test_chunk_fields[15];

/* EXPECT_FIELDS on a struct oai_chunk. */
#define EXPECT_CHUNK(what, c, expect) EXPECT_FIELDS((what), (c), test_chunk_fields, (expect))

/* struct oai_stream's fields, and oai_stream_output_tokens's answer as
 * "output_tokens" and "tokens_source" (its oai_tokens_source_name). */
extern const struct test_field test_stream_fields[19];

/* A whole stream: st is done, has a finish and no error, and holds every
 * figure that expect names (test_stream_fields); a failure names what (the
 * capture, say) and the field. */
void test_stream_expect(const char *what, const struct oai_stream *st, const char *expect);

/* An engine configuration whose step times are easy to add up by hand:
 * a step is 1000 ns + 10 ns per prefill token + 100 ns per decoding
 * sequence; 4 sequences, 4096 KV tokens in blocks of 16, prefill chunks
 * of 512, a natural length of 1000 tokens (no spread), no queue limit, no
 * prefix cache, seed 7. */
struct engine_config test_engine_cfg(void);

/* body (a NUL-terminated Prometheus exposition) parsed; fails the test
 * when it does not parse. The caller frees it with prom_scrape_free. */
struct prom_scrape *test_prom_parse(const char *body);

/* A workload of fixed request sizes: *w zeroed but for seed and the
 * prompt and output token distributions, parsed from the specs given
 * (which must parse). */
void test_workload_fixed(struct workload *w, uint64_t seed, const char *prompt_tokens,
                         const char *output_tokens);

/* qsort comparators, ascending: of uint64_t and of double (NaN not
 * ordered). */
int test_cmp_u64(const void *a, const void *b);
int test_cmp_double(const void *a, const void *b);

/* h's p-quantile (prom_histogram_quantile; the caller includes
 * metrics/prom.h) is found and within 1e-12 of want. A macro, so that a
 * failure names the caller's line. */
#define ASSERT_QUANTILE(h, p, want)                                         \
    do {                                                                    \
        double q_;                                                          \
        assert_int_equal(prom_histogram_quantile((h), (p), &q_), 0);        \
        ASSERT_NEAR(q_, (want), 1e-12);                                     \
    } while (0)

/* A memory stream for a writer under test to print into. */
struct test_mem {
    FILE *f;     /* open between test_mem_open and test_mem_close */
    char *buf;   /* what was written, after test_mem_close */
    size_t len;  /* its length in bytes */
};

/* Open m->f; fails the test when it cannot. */
void test_mem_open(struct test_mem *m);

/* Close m->f (which must succeed) and return what was written to it,
 * NUL-terminated (caller frees; also in m->buf, its length in m->len). */
char *test_mem_close(struct test_mem *m);

/* ---- reading SVG back ------------------------------------------------------
 * The chart writer (svg.c) and the HTML report (report_html.c) are checked
 * by reading their output back: the data-* attributes must carry exactly
 * the values given. */

/* The <svg> element of doc that holds id="id": its start, and its length
 * through "</svg>" in *len. NULL when absent. */
const char *svgtest_chart_find(const char *doc, const char *id, size_t *len);

/* The value of attribute name in the tag starting at tag (up to its '>'),
 * copied into out (outlen bytes with the NUL). Returns 1 if found and it
 * fits, else 0. */
int svgtest_attr(const char *tag, const char *name, char *out, size_t outlen);

/* The numeric value of attribute name in the tag at tag; fails the test
 * when it is missing or not a number. */
double svgtest_num(const char *tag, const char *name);

/* Every element in [s, s+len) that starts with prefix and (when series is
 * not NULL) has data-series == series: its numeric attributes a and b
 * into xs and ys, the first max of them. Returns the count (which may
 * exceed max). */
size_t svgtest_collect(const char *s, size_t len, const char *prefix, const char *series,
                       const char *a, const char *b, double *xs, double *ys, size_t max);

/* One input a parser must refuse, and what its message must say. */
struct bad_input {
    const char *in, *why;
};

/* One parse of in for test_refusals: the parser's return code, its
 * message in err (errlen bytes). ctx is the caller's (the object parsed
 * into, say); the function may check what a refusal leaves in it. */
typedef int test_parse_fn(void *ctx, const char *in, char *err, size_t errlen);

/* Each of bad[0..n) refused by parse: return code want_rc and a message of
 * one line that contains its why. A failure names the input. */
void test_refusals(test_parse_fn *parse, void *ctx, int want_rc, const struct bad_input *bad,
                   size_t n);

/* doc contains each of has[] and none of lacks[] (both NULL-terminated;
 * either may be NULL). A failure names the string. */
void assert_page(const char *doc, const char *const *has, const char *const *lacks);

/* A strict well-formedness check of an HTML page, the subset of XML that
 * report.html and compare.html use: every element closed in order (HTML
 * void elements excepted), attribute values quoted, no '<' inside them,
 * every '&' a complete entity. Fails the test naming the offset. */
void assert_well_formed(const char *doc);

/* dupunita: helpers from the duplicates clean-up (issue 14). */

/* A new file made from the mkstemp template path (which it completes),
 * open for writing. Fails the test when it cannot be made. The caller
 * closes it and unlinks path. */
FILE *test_temp_file(char *path);

#endif
