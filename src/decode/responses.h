/* responses.h: decoding OpenAI's Responses API (POST /v1/responses), one
 * SSE event (or one whole non-streamed body) at a time, into the same
 * struct oai_chunk the other decoders write, so the transport measures
 * every API by one contract (docs/apis.md).
 *
 * A stream is a sequence of named events whose data's "type" repeats the
 * name: response.created, response.in_progress, response.output_item.added,
 * response.content_part.added, response.output_text.delta (the tokens),
 * response.reasoning_text.delta and response.reasoning_summary_text.delta
 * (reasoning), ..., and one end: response.completed, response.incomplete or
 * response.failed, whose "response" carries the usage; an "error" event
 * may come instead. As for the other APIs, the decoder validates the JSON,
 * reads only what a load tester needs, allocates nothing and keeps no
 * pointer into the payload. */
#ifndef LL_RESPONSES_H
#define LL_RESPONSES_H

#include <stddef.h>

#include "decode/openai.h"

/* Decode one SSE event, its `event:` name event[0..event_len) (may be
 * empty) and its data[0..len), into *out (always fully written), through
 * the stream's memo m (NULL: none), which gives the same result for every
 * input, faster when the event is the stream's previous
 * output_text.delta with another delta (the OpenAI decoder's memo, struct
 * oai_memo; reset m per response). The
 * data's own "type" says what the event is; the event name is used only
 * when the data has none. What each type gives:
 *   response.output_text.delta, response.refusal.delta
 *                        content_bytes (the "delta" string)
 *   response.reasoning_text.delta, response.reasoning_summary_text.delta
 *                        reasoning_bytes
 *   response.function_call_arguments.delta, response.custom_tool_call_input
 *   .delta, and response.output_item.added of a function_call or
 *   custom_tool_call item
 *                        one tool_call_delta
 *   response.completed   done, has_finish ("completed"), the usage of its
 *                        "response": prompt_tokens (input_tokens),
 *                        cached_tokens (input_tokens_details.cached_tokens),
 *                        completion_tokens (output_tokens, reasoning
 *                        included)
 *   response.incomplete  the same, finish_reason "incomplete" (OpenAI ends
 *                        a response at max_output_tokens so: not an error)
 *   response.failed      done, has_error with response.error's "CODE:
 *                        MESSAGE", the usage
 *   error                has_error, "CODE: MESSAGE" from its own members
 *                        (or an "error" object's)
 *   anything else: nothing.
 * An error whose code or type contains "overloaded" sets overloaded.
 * Returns 0, or LL_E_PROTO when data is not a valid JSON object (the
 * caller records a malformed_event). Linear in len. */
int resp_decode_event(const char *event, size_t event_len, const char *data, size_t len,
                      struct oai_chunk *out, struct oai_memo *m);

/* Decode a whole non-streamed body: a response ({"object":"response",
 * "status":...,"output":[...],"usage":{...}}: output_text (and refusal)
 * parts of message items as content_bytes, reasoning items' text and
 * summary as reasoning_bytes, function_call and custom_tool_call items as
 * tool_call_deltas, the status "completed" or "incomplete" as
 * finish_reason, usage as in a stream; a status "failed" is an error), or
 * an error body {"error":{...}}. Returns 0, or LL_E_PROTO when body is not
 * a valid JSON object. */
int resp_decode_response(const char *body, size_t len, struct oai_chunk *out);

#endif
