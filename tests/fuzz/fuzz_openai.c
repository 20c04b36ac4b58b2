/* fuzz_openai: the OpenAI chunk decoder and the JSON scanner under it, on
 * arbitrary bytes. Checks that nothing crashes, that jscan agrees with
 * jansson on what is valid JSON (where their documented limits allow a
 * comparison), and that every value the walkers hand out lies inside the
 * document and validates on its own; and that oai_decode_chunk_memo,
 * fed the input's lines as one stream, always agrees with a full decode. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "decode/openai.h"

static const char *g_doc;
static size_t g_len;

static void check_value(const struct jscan_value *v, int depth)
{
    struct jscan_value again, k, e;
    struct jscan_iter it;

    if (v->ptr < g_doc || v->ptr + v->len > g_doc + g_len || v->len == 0)
        abort();
    if (jscan_validate(v->ptr, v->len, JSCAN_DEPTH_LIMIT, &again) != 0 ||
        again.type != v->type || again.len != v->len)
        abort();
    if (v->type == JSCAN_STRING) {
        char buf[512];
        size_t n = 0;
        size_t want = jscan_string_decoded_len(v);
        int rc = jscan_string_unescape(v, buf, sizeof(buf), &n);
        if (want > v->len || (rc == 0 && n != want) || (rc != 0 && want < sizeof(buf) - 4))
            abort();
        if (rc == 0 && !jscan_string_equals(v, buf, n))
            abort();
    } else if (v->type == JSCAN_NUMBER) {
        double d;
        int64_t i;
        (void)jscan_number_double(v, &d);
        (void)jscan_number_int64(v, &i);
    }
    if (depth > 40 || jscan_iter_init(&it, v) != 0)
        return;
    if (v->type == JSCAN_OBJECT) {
        while (jscan_iter_next_member(&it, &k, &e)) {
            check_value(&k, depth + 1);
            check_value(&e, depth + 1);
            struct jscan_value found;
            if (jscan_object_get(v, k.ptr + 1, 0, &found) == 0 && found.type == JSCAN_INVALID)
                abort();
        }
    } else {
        while (jscan_iter_next_element(&it, &e))
            check_value(&e, depth + 1);
    }
}

/* The memo's shortcut against full decodes: the input as lines, each a
 * chunk of one stream, decoded both ways with the memo carried along; any
 * field that differs is a bug. */
static void memo_differential(enum oai_api api, const char *s, size_t size)
{
    struct oai_memo m;
    struct oai_chunk full, memo;

    oai_memo_reset(&m);
    for (size_t at = 0; at <= size;) {
        const char *nl = memchr(s + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (s + at)) : size - at;
        int rc_full = oai_decode_chunk(api, s + at, n, &full);
        int rc_memo = oai_decode_chunk_memo(api, s + at, n, &memo, &m);
        if (rc_full != rc_memo || full.done != memo.done || full.role_only != memo.role_only ||
            full.content_bytes != memo.content_bytes ||
            full.reasoning_bytes != memo.reasoning_bytes ||
            full.tool_call_deltas != memo.tool_call_deltas ||
            full.has_finish != memo.has_finish ||
            strcmp(full.finish_reason, memo.finish_reason) != 0 ||
            full.has_usage != memo.has_usage || full.prompt_tokens != memo.prompt_tokens ||
            full.completion_tokens != memo.completion_tokens ||
            full.cached_tokens != memo.cached_tokens || full.has_error != memo.has_error ||
            strcmp(full.error_message, memo.error_message) != 0)
            abort();
        at += n + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct oai_chunk c;
    struct jscan_value root, v;

    (void)oai_decode_chunk(OAI_API_CHAT, s, size, &c);
    if (c.finish_reason[sizeof(c.finish_reason) - 1] != '\0' ||
        c.error_message[sizeof(c.error_message) - 1] != '\0')
        abort();
    (void)oai_decode_chunk(OAI_API_COMPLETIONS, s, size, &c);
    (void)oai_decode_response(OAI_API_CHAT, s, size, &c);
    (void)oai_decode_response(OAI_API_COMPLETIONS, s, size, &c);
    memo_differential(OAI_API_CHAT, s, size);
    memo_differential(OAI_API_COMPLETIONS, s, size);

    int ours = jscan_validate(s, size, JSCAN_DEPTH_LIMIT, &root);

    /* The decoder's single-pass reader must accept exactly the valid JSON
     * objects (within its depth of JSCAN_DEFAULT_DEPTH), like the
     * validator. */
    {
        int rc = oai_decode_chunk(OAI_API_CHAT, s, size, &c);
        int is_done = size == 6 && memcmp(s, "[DONE]", 6) == 0;
        int valid_obj = jscan_validate(s, size, JSCAN_DEFAULT_DEPTH, &v) == 0 &&
                        v.type == JSCAN_OBJECT;
        if (!is_done && (rc == 0) != valid_obj)
            abort();
    }
    if (ours == 0) {
        g_doc = s;
        g_len = size;
        check_value(&root, 0);
        (void)jscan_path_get(&root, "choices.0.delta.content", &v);
    }

    /* Differential: jansson treats a NUL byte as the end of input, and
     * nests up to 2048 deep (we go to 1024), so compare only where those
     * do not matter. jansson also refuses numbers that overflow its types
     * and NUL in keys, which are valid JSON. */
    if (size <= 2048 && !memchr(s, '\0', size)) {
        json_error_t err;
        json_t *j = json_loadb(s, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        if (j && ours != 0)
            abort();
        if (!j && ours == 0 && !strstr(err.text, "too big") &&
            !strstr(err.text, "overflow") && !strstr(err.text, "NUL"))
            abort();
        json_decref(j);
    }
    return 0;
}
