/* responses.h: decoding OpenAI's Responses API (POST /v1/responses), one
 * SSE event (or one whole non-streamed body) at a time, into the same
 * struct oai_chunk the other decoders write, so the transport measures
 * every API by one contract (docs/apis.md). The decoders' shared contract
 * (memo, errors, cost, ownership) is in openai.h; here is what this API
 * gives.
 *
 * A stream is a sequence of named events whose data's "type" repeats the
 * name: response.created, response.in_progress, response.output_item.added,
 * response.content_part.added, response.output_text.delta (the tokens),
 * response.reasoning_text.delta and response.reasoning_summary_text.delta
 * (reasoning), ..., and one end: response.completed, response.incomplete or
 * response.failed, whose "response" carries the usage; an "error" event
 * may come instead. */
#ifndef LL_RESPONSES_H
#define LL_RESPONSES_H

#include <stddef.h>

#include "decode/openai.h"

/* resp_decode_event and resp_decode_response, by the named-event
 * decoders' contract (openai.h).
 *
 * An event: the memo's shortcut is for the stream's previous
 * output_text.delta. What each type gives:
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
 *
 * A whole body: a response ({"object":"response", "status":...,
 * "output":[...],"usage":{...}}: output_text (and refusal) parts of message
 * items as content_bytes, reasoning items' text and summary as
 * reasoning_bytes, function_call and custom_tool_call items as
 * tool_call_deltas, the status "completed" or "incomplete" as
 * finish_reason; a status "failed" is an error), or an error body
 * {"error":{...}}. */
OAI_DECLARE_NAMED_DECODERS(resp);

#endif
