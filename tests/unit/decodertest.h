/* decodertest.h: a helper the decoders' unit tests share (test_anthropic,
 * test_responses, test_openai), linked into every unit test binary
 * (tests/unit/decodertest.c) as testutil.c is. */
#ifndef LL_DECODERTEST_H
#define LL_DECODERTEST_H

#include <stddef.h>

#include "decode/openai.h"

/* A decoder of a whole body (or an error event's data) into one chunk:
 * anth_decode_response, resp_decode_response, oai_decode_error_event. */
typedef int test_body_decode_fn(const char *body, size_t len, struct oai_chunk *out);

/* One body a decoder must take, and what its chunk must say
 * (EXPECT_CHUNK's "field=value;..."). */
struct test_body_case {
    const char *body, *expect;
};

/* Each of cases[0..n) decoded whole by decode, which must return 0, and
 * its chunk checked; a failure names the case's body and the field. */
void test_body_cases(test_body_decode_fn *decode, const struct test_body_case *cases, size_t n);

#endif
