/* fuzz_imghdr: the sim's reading of an image's size from its base64 text
 * (image_header_size: PNG's IHDR, a JPEG's first frame header).
 *
 * Input layout: byte 0's bit 0 picks the mode: clear, the rest is the
 * base64 text as a request would carry it; set, the rest is the image's
 * bytes, base64'd here first (image_base64), so the fuzzer works on the
 * binary headers themselves. Either way the reader must not crash or read
 * out of bounds, must say why when it refuses, and must give a non-zero
 * size when it accepts. In the second mode a PNG is checked against the
 * bytes: accepted exactly when they begin with the signature and an IHDR
 * chunk of non-zero sides, with those sides. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int raw = data[0] & 1;
    data++;
    size--;
    char *text;
    size_t len;
    if (raw) {
        len = image_base64_len(size);
        text = malloc(len ? len : 1);
        if (!text)
            return 0;
        if (image_base64(data, size, text) != len)
            abort();
    } else {
        /* A copy of exactly size bytes, so ASan sees any read past it. */
        len = size;
        text = malloc(len ? len : 1);
        if (!text)
            return 0;
        memcpy(text, data, len);
    }
    enum image_format f;
    uint32_t w = 7, h = 7;
    const char *why = NULL;
    int rc = image_header_size(text, len, &f, &w, &h, &why);
    if (rc == 0 && (w == 0 || h == 0))
        abort();
    if (rc != 0 && (!why || !why[0]))
        abort();
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (raw && size >= 2 && data[0] == 0x89 && data[1] == 'P') {
        int want = size >= 24 && memcmp(data, sig, 8) == 0 && memcmp(data + 12, "IHDR", 4) == 0 &&
                   be32(data + 16) != 0 && be32(data + 20) != 0;
        if ((rc == 0) != want)
            abort();
        if (want && (f != IMAGE_PNG || w != be32(data + 16) || h != be32(data + 20)))
            abort();
    }
    free(text);
    return 0;
}
