/* anthropic.h: decoding Anthropic's Messages API (POST /v1/messages), one
 * SSE event (or one whole non-streamed body) at a time, into the same
 * struct oai_chunk the OpenAI decoder writes, so the transport measures
 * every API by one contract (docs/apis.md).
 *
 * A stream is a sequence of named events: message_start (the input usage,
 * cached tokens included), content_block_start / content_block_delta /
 * content_block_stop (text_delta, thinking_delta, input_json_delta),
 * message_delta (the stop reason and the output usage), message_stop,
 * ping, and error events mid-stream. As for OpenAI, the decoder validates
 * the JSON, reads only what a load tester needs, allocates nothing and
 * keeps no pointer into the payload. */
#ifndef LL_ANTHROPIC_H
#define LL_ANTHROPIC_H

#include <stddef.h>

#include "decode/openai.h"

/* Decode one SSE event, its `event:` name event[0..event_len) (may be
 * empty) and its data[0..len), into *out (always fully written), through
 * the stream's memo m (NULL: none), which gives the same result for every
 * input, faster when the event is the stream's previous text_delta with
 * another text (the OpenAI decoder's memo, struct oai_memo; reset m per
 * response). The
 * data's own "type" says what the event is; the event name is used only
 * when the data has none. What each type gives:
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
 * Returns 0, or LL_E_PROTO when data is not a valid JSON object (the
 * caller records a malformed_event). Linear in len. */
int anth_decode_event(const char *event, size_t event_len, const char *data, size_t len,
                      struct oai_chunk *out, struct oai_memo *m);

/* Decode a whole non-streamed body: a message ({"type":"message",
 * "content":[...],"stop_reason":...,"usage":{...}}: text blocks as
 * content_bytes, thinking as reasoning_bytes, tool_use blocks as
 * tool_call_deltas, usage as in a stream with output_tokens as
 * completion_tokens), or an error body (Anthropic's {"type":"error",
 * "error":{...}} or an OpenAI-style {"error":{...}}, as llama.cpp sends).
 * Returns 0, or LL_E_PROTO when body is not a valid JSON object. */
int anth_decode_response(const char *body, size_t len, struct oai_chunk *out);

#endif
