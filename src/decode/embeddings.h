/* embeddings.h: decoding OpenAI's embeddings answer (POST /v1/embeddings,
 * as OpenAI, vLLM, TEI and llama.cpp --embeddings send it) into the same
 * struct oai_chunk the other decoders write (docs/apis.md).
 *
 * The endpoint never streams: one body,
 *
 *   {"object":"list","data":[{"object":"embedding","embedding":[...],"index":0},...],
 *    "model":"M","usage":{"prompt_tokens":5,"total_tokens":5}}
 *
 * of which a load tester needs the number of embeddings (one per input
 * sent) and the usage; the vectors are validated as they are skipped.
 * As for the other APIs the decoder allocates nothing and keeps no pointer
 * into the body. */
#ifndef LL_EMBEDDINGS_H
#define LL_EMBEDDINGS_H

#include <stddef.h>

#include "decode/openai.h"

/* Decode a whole body into *out (always fully written): embeddings (the
 * entries of "data", whatever their shape), has_usage and prompt_tokens
 * (usage.prompt_tokens; an embedding has no output, so completion_tokens
 * stays -1), or an error body ({"error":{"message":...}} or a string
 * "error"): has_error with its message. Nothing else is read: no
 * content, no finish_reason. Returns 0, or LL_E_PROTO when body is not
 * one valid JSON object. Linear in len. */
int emb_decode_response(const char *body, size_t len, struct oai_chunk *out);

#endif
