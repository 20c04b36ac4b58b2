/* fuzz_anthropic: the Anthropic Messages decoder on arbitrary bytes, through
 * fuzz_event_decoder (fuzzutil.h): no crash, strings NUL-terminated,
 * exactly the valid JSON objects accepted, and anth_decode_event through a memo,
 * fed the input's lines as one stream, always agreeing with a full
 * decode. */
#include <stddef.h>
#include <stdint.h>

#include "decode/anthropic.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_event_decoder(data, size, anth_decode_event, anth_decode_response, "message_stop");
    return 0;
}
