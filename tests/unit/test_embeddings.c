/* Unit tests for embeddings.c: llama.cpp's real /v1/embeddings answers
 * (one input, a batch of two) byte for byte, every prefix of them refused,
 * error bodies, and the shapes a server may vary (members in any order,
 * whitespace, no usage, data not an array, trailing junk). */
#include "test.h"
#include "testutil.h"

#include <string.h>

#include "decode/embeddings.h"
#include "decode/openai.h"
#include "util/util.h"

/* A capture decodes to its usage and one embedding per input; each of its
 * prefixes (a body cut at that offset) is not a JSON object. */
static void check_capture(const char *name, uint32_t embeddings, int64_t prompt_tokens)
{
    int status;
    size_t len;
    struct oai_chunk c;
    char *body = test_capture_body(name, &status, &len);

    assert_int_equal(status, 200);
    assert_int_equal(emb_decode_response(body, len, &c), 0);
    assert_int_equal(c.embeddings, embeddings);
    assert_int_equal(c.has_usage, 1);
    assert_int_equal(c.prompt_tokens, prompt_tokens);
    assert_int_equal(c.completion_tokens, -1);
    assert_int_equal(c.cached_tokens, -1);
    assert_int_equal(c.has_error, 0);
    assert_false(oai_chunk_carries_output(&c));
    assert_int_equal(c.has_finish + c.done, 0);
    for (size_t k = 0; k < len; k++) {
        assert_int_equal(emb_decode_response(body, k, &c), LL_E_PROTO);
        assert_int_equal(c.embeddings, 0); /* nothing half-decoded is left */
        assert_int_equal(c.has_usage, 0);
    }
    free(body);
}

static void test_captures(void **state)
{
    check_capture("embeddings.http", 1, 5);
    check_capture("embeddings-batch.http", 2, 11);
}

static struct oai_chunk dec(const char *body)
{
    struct oai_chunk c;
    int rc = emb_decode_response(body, strlen(body), &c);
    if (rc != 0)
        fail_msg("decode of %s failed: %d", body, rc);
    return c;
}

static void test_shapes(void **state)
{
    struct oai_chunk c;

    /* Usage first, whitespace anywhere, an embedding as base64 text. */
    c = dec(" { \"usage\" : { \"total_tokens\" : 9 , \"prompt_tokens\" : 7 } ,\n"
            "\"data\" : [ {\"embedding\":\"AAAA\",\"index\":0} , {\"index\":1,\"embedding\":"
            "[1e-3,-2.5E+2,0]} , {\"index\":2,\"embedding\":[]} ] }\n");
    assert_int_equal(c.embeddings, 3);
    assert_int_equal(c.prompt_tokens, 7);
    /* No usage: the count stays unknown. */
    c = dec("{\"data\":[{\"embedding\":[0.5]}]}");
    assert_int_equal(c.embeddings, 1);
    assert_int_equal(c.has_usage, 0);
    assert_int_equal(c.prompt_tokens, -1);
    c = dec("{\"data\":[],\"usage\":null}");
    assert_int_equal(c.embeddings, 0);
    assert_int_equal(c.has_usage, 0);
    /* "data" of another type counts nothing; a nested "data" is not ours. */
    c = dec("{\"data\":{\"embedding\":[1]},\"x\":{\"data\":[1,2]}}");
    assert_int_equal(c.embeddings, 0);
    /* A negative or fractional count is unknown, not an error. */
    c = dec("{\"data\":[{}],\"usage\":{\"prompt_tokens\":-3}}");
    assert_int_equal(c.prompt_tokens, -1);
    c = dec("{\"data\":[{}],\"usage\":{\"prompt_tokens\":2.5}}");
    assert_int_equal(c.prompt_tokens, -1);
}

static void test_errors_and_malformed(void **state)
{
    struct oai_chunk c;
    int status;
    size_t len;

    /* llama.cpp's 400 as it sends it on every endpoint. */
    char *body = test_capture_body("error-context-too-long.http", &status, &len);
    assert_int_equal(status, 400);
    assert_int_equal(emb_decode_response(body, len, &c), 0);
    assert_int_equal(c.has_error, 1);
    assert_non_null(strstr(c.error_message, "exceeds the available context size"));
    free(body);

    /* TEI's: the error a string. null is no error. */
    c = dec("{\"error\":\"Input validation error: inputs cannot be empty\","
            "\"error_type\":\"Validation\"}");
    assert_int_equal(c.has_error, 1);
    assert_string_equal(c.error_message, "Input validation error: inputs cannot be empty");
    c = dec("{\"error\":null,\"data\":[1]}");
    assert_int_equal(c.has_error, 0);
    assert_int_equal(c.embeddings, 1);
    /* A long message is cut, NUL-terminated. */
    char big[600];
    int n = snprintf(big, sizeof big, "{\"error\":{\"message\":\"%0400d\"}}", 0);
    assert_true(n > 0 && (size_t)n < sizeof big);
    c = dec(big);
    assert_int_equal(strlen(c.error_message), sizeof c.error_message - 1);

    static const char *const bad[] = {
        "",
        "   ",
        "[]",
        "null",
        "{\"data\":[1,]}",
        "{\"data\":[1]}}",
        "{\"data\":[1]} x",
        "{\"data\":[1]}{}",
        "{\"usage\":{\"prompt_tokens\":5}",
        "{\"data\":[nan]}",
        "{\"data\":[\"\xff\"]}",
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        assert_int_equal(emb_decode_response(bad[i], strlen(bad[i]), &c), LL_E_PROTO);
        assert_int_equal(c.embeddings + c.has_usage + c.has_error, 0);
    }
    assert_int_equal(emb_decode_response(NULL, 0, &c), LL_E_PROTO);
}

UNIT_TESTS(test_captures, test_shapes, test_errors_and_malformed)
