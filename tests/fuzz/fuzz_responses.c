/* fuzz_responses: the OpenAI Responses decoder on arbitrary bytes, through
 * fuzz_event_decoder (fuzzutil.h): no crash, strings NUL-terminated,
 * exactly the valid JSON objects accepted, and resp_decode_event through a memo,
 * fed the input's lines as one stream, always agreeing with a full
 * decode. */
#include <stddef.h>
#include <stdint.h>

#include "decode/responses.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_event_decoder(data, size, resp_decode_event, resp_decode_response, "response.completed");
    return 0;
}
