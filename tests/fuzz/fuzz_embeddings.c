/* fuzz_embeddings: the embeddings decoder on arbitrary bytes: no crash,
 * its message NUL-terminated, exactly the valid JSON objects accepted (as
 * jscan_validate says), and a refused body leaves nothing decoded. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/embeddings.h"
#include "decode/jscan.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct oai_chunk c;
    struct jscan_value root;
    int rc = emb_decode_response(s, size, &c);
    int valid =
        jscan_validate(s, size, JSCAN_DEFAULT_DEPTH, &root) == 0 && root.type == JSCAN_OBJECT;
    if ((rc == 0) != valid)
        abort();
    if (memchr(c.error_message, '\0', sizeof c.error_message) == NULL)
        abort();
    if (rc != 0 && (c.embeddings || c.has_usage || c.has_error || c.prompt_tokens != -1))
        abort();
    return 0;
}
