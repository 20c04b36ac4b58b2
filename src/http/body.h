/* body.h: the JSON body of one request, for every API (docs/apis.md):
 *
 *   openai-chat         {"model":M,"messages":[...],"max_tokens":N,"stream":true,
 *                        "stream_options":{"include_usage":true}[,"ignore_eos":true]...}
 *   openai-completions  the same with "prompt":"..." (or "prompt":[ids] under --prompt-ids)
 *   anthropic-messages  {"model":M,"messages":[...],"max_tokens":N,"stream":true...}
 *   openai-responses    {"model":M,"input":[...],"max_output_tokens":N,"stream":true...}
 *   openai-embeddings   {"model":M,"input":["...",...]}: spec->inputs texts (--batch)
 *
 * then the extra fields (--extra-body, a class's extra_body: extrabody.h),
 * appended as the bytes they were serialized to before the load; a member
 * the extra body overrides is left out here. Nothing is allocated. */
#ifndef LL_HTTP_BODY_H
#define LL_HTTP_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "decode/openai.h"
#include "workload/chatbody.h"
#include "workload/extrabody.h"
#include "workload/workload.h"

/* What every body of one transport shares. */
struct body_params {
    const char *model_json; /* the model name, JSON-escaped */
    size_t model_json_len;
    uint64_t seed;  /* the prompt content's seed */
    int stream;     /* 1: SSE ("stream":true, and usage asked for) */
    int prompt_ids; /* completions: the prompt as token IDs */
    struct chatbody_id_range prompt_id_range;
};

/* Write the body of spec for api, with the extra fields x (NULL = none),
 * into buf: at most len bytes (no NUL; buf may be NULL when len is 0).
 * Returns the bytes the body needs: when that exceeds len, call again
 * with a bigger buffer. */
size_t body_write(const struct body_params *p, enum oai_api api, const struct req_spec *spec,
                  const struct extrabody *x, char *buf, size_t len);

#endif
