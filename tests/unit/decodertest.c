/* decodertest.c: the decoders' shared test helper (see decodertest.h). */
#include "decodertest.h"

#include <string.h>

#include "test.h"
#include "testutil.h"

void test_body_cases(test_body_decode_fn *decode, const struct test_body_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct oai_chunk c;
        int rc = decode(cases[i].body, strlen(cases[i].body), &c);
        if (rc != 0)
            fail_msg("decode of %s failed: %d", cases[i].body, rc);
        EXPECT_CHUNK(cases[i].body, &c, cases[i].expect);
    }
}
