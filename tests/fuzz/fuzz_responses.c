/* fuzz_responses: the OpenAI Responses decoder on arbitrary bytes. Checks
 * that nothing crashes, that its strings stay NUL-terminated, that it
 * accepts exactly the valid JSON objects (as the validator says), and that
 * resp_decode_event_memo, fed the input's lines as one stream, always
 * agrees with a full decode. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "decode/responses.h"

static void same_or_abort(const struct oai_chunk *a, const struct oai_chunk *b)
{
    if (a->done != b->done || a->role_only != b->role_only ||
        a->content_bytes != b->content_bytes || a->reasoning_bytes != b->reasoning_bytes ||
        a->tool_call_deltas != b->tool_call_deltas || a->has_finish != b->has_finish ||
        strcmp(a->finish_reason, b->finish_reason) != 0 || a->has_usage != b->has_usage ||
        a->prompt_tokens != b->prompt_tokens || a->completion_tokens != b->completion_tokens ||
        a->cached_tokens != b->cached_tokens || a->has_error != b->has_error ||
        strcmp(a->error_message, b->error_message) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct oai_chunk c, full, memo;
    struct jscan_value v;

    int rc = resp_decode_event("", 0, s, size, &c);
    if (c.finish_reason[sizeof(c.finish_reason) - 1] != '\0' ||
        c.error_message[sizeof(c.error_message) - 1] != '\0')
        abort();
    int valid_obj = jscan_validate(s, size, JSCAN_DEFAULT_DEPTH, &v) == 0 && v.type == JSCAN_OBJECT;
    if ((rc == 0) != valid_obj)
        abort();
    (void)resp_decode_event("response.completed", 18, s, size, &c);
    (void)resp_decode_response(s, size, &c);
    if (c.error_message[sizeof(c.error_message) - 1] != '\0')
        abort();

    /* The input's lines as one stream, both ways, the memo carried along. */
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t at = 0; at <= size;) {
        const char *nl = memchr(s + at, '\n', size - at);
        size_t n = nl ? (size_t)(nl - (s + at)) : size - at;
        int rc_full = resp_decode_event("", 0, s + at, n, &full);
        int rc_memo = resp_decode_event_memo("", 0, s + at, n, &memo, &m);
        if (rc_full != rc_memo)
            abort();
        if (rc_full == 0)
            same_or_abort(&full, &memo);
        at += n + 1;
    }
    return 0;
}
