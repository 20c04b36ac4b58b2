/* embeddings.c: an embeddings answer (embeddings.h). One pass over the
 * body with jcur.h's cursor: "data" is counted element by element (each
 * vector validated as it is skipped), "usage" and "error" are read, the
 * rest skipped. A body is a few KB per input (64 to 4096 floats as text),
 * decoded once a request, so unlike the stream decoders this has no memo. */
#include "decode/embeddings.h"

#include <string.h>

#include "decode/jcur.h"
#include "decode/jscan.h"
#include "util/util.h"

/* What usage holds: prompt_tokens (total_tokens repeats it). */
static const struct count_key usage_keys[] = {
    COUNT_KEY("prompt_tokens", struct oai_chunk, prompt_tokens),
};

/* "data": each element is one embedding. Anything but an array counts
 * none. */
static int read_data(struct cur *c, struct oai_chunk *out)
{
    return cur_count_array(c, &out->embeddings);
}

/* A member of an "error" object: its message is kept. */
static int error_member(struct cur *c, const struct key *k, void *ud)
{
    struct oai_chunk *out = ud;
    struct jscan_value v;
    int escaped;

    if (!KEY_IS(k, "message"))
        return cur_skip(c);
    if (cur_value(c, &v, &escaped) < 0)
        return -1;
    if (v.type == JSCAN_STRING)
        jscan_string_unescape(&v, out->error_message, sizeof out->error_message, NULL);
    return 0;
}

/* "error": an object (OpenAI's, llama.cpp's, vLLM's) or a bare string
 * (TEI's {"error":"...","error_type":"..."}); null is no error. The last
 * message counts, as in error_member. */
static int read_error(struct cur *c, struct oai_chunk *out)
{
    return read_error_into(c, &out->has_error, out->error_message, sizeof out->error_message, 1,
                           error_member, out);
}

static int top_member(struct cur *c, const struct key *k, void *ud)
{
    struct oai_chunk *out = ud;
    if (KEY_IS(k, "data"))
        return read_data(c, out);
    if (KEY_IS(k, "usage"))
        return read_usage_into(c, &out->has_usage, usage_keys, LL_ARRAY_LEN(usage_keys), out);
    if (KEY_IS(k, "error"))
        return read_error(c, out);
    return cur_skip(c);
}

int emb_decode_response(const char *body, size_t len, struct oai_chunk *out)
{
    oai_chunk_clear(out);
    if (!body)
        return LL_E_PROTO;
    struct cur c = {.p = body, .end = body + len};
    if (cur_peek(&c) != '{' || cur_object(&c, top_member, out) < 0 || cur_peek(&c) != -1) {
        oai_chunk_clear(out);
        return LL_E_PROTO;
    }
    return 0;
}
