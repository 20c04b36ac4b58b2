/* anthropic.h: decoding Anthropic's Messages API (POST /v1/messages), one
 * SSE event (or one whole non-streamed body) at a time, into the same
 * struct oai_chunk the OpenAI decoder writes, so the transport measures
 * every API by one contract (docs/apis.md). The decoders' shared contract
 * (memo, errors, cost, ownership) is in openai.h; here is what this API
 * gives.
 *
 * A stream is a sequence of named events: message_start (the input usage,
 * cached tokens included), content_block_start / content_block_delta /
 * content_block_stop (text_delta, thinking_delta, input_json_delta),
 * message_delta (the stop reason and the output usage), message_stop,
 * ping, and error events mid-stream. */
#ifndef LL_ANTHROPIC_H
#define LL_ANTHROPIC_H

#include <stddef.h>

#include "decode/openai.h"

/* anth_decode_event and anth_decode_response, by the named-event
 * decoders' contract (openai.h).
 *
 * An event: the memo's shortcut is for the stream's previous text_delta.
 * What each type gives:
 *   message_start        prompt_tokens (input_tokens + cache_read_input_tokens
 *                        + cache_creation_input_tokens), cached_tokens
 *                        (cache_read_input_tokens); its output_tokens is
 *                        not a count of output and is not read
 *   content_block_start  output when the block starts with text or thinking,
 *                        or is a tool_use block (one tool_call_delta)
 *   content_block_delta  text_delta: content_bytes; thinking_delta:
 *                        reasoning_bytes; input_json_delta: one tool_call_delta
 *   message_delta        has_finish, finish_reason (delta.stop_reason), usage
 *                        (output_tokens as completion_tokens, cumulative)
 *   message_stop         done
 *   error                has_error; error_message "TYPE: MESSAGE" (e.g.
 *                        "overloaded_error: Overloaded")
 *   ping, content_block_stop, anything else: nothing.
 *
 * A whole body: a message ({"type":"message", "content":[...],
 * "stop_reason":...,"usage":{...}}: text blocks as content_bytes, thinking
 * as reasoning_bytes, tool_use blocks as tool_call_deltas, output_tokens
 * as completion_tokens), or an error body (Anthropic's {"type":"error",
 * "error":{...}} or an OpenAI-style {"error":{...}}, as llama.cpp sends). */
OAI_DECLARE_NAMED_DECODERS(anth);

#endif
