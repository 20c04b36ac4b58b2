/* tokenizer.c: the sim's word-and-4-byte-piece tokenizer, its cumulative
 * block hashes, and its synthetic output words. See tokenizer.h. */
#include "sim/tokenizer.h"

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME  1099511628211ULL
#define TOKEN_PIECE_BYTES 4

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* Tokens in a word of n bytes (n >= 1). */
static uint64_t word_tokens(size_t n)
{
    return (n + TOKEN_PIECE_BYTES - 1) / TOKEN_PIECE_BYTES;
}

uint32_t tokenizer_count(const char *text, size_t len)
{
    uint64_t total = 0;
    size_t i = 0;

    while (i < len) {
        while (i < len && is_space((unsigned char)text[i]))
            i++;
        size_t start = i;
        while (i < len && !is_space((unsigned char)text[i]))
            i++;
        if (i > start)
            total += word_tokens(i - start);
    }
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

static uint64_t fnv_byte(uint64_t h, unsigned char b)
{
    return (h ^ b) * FNV_PRIME;
}

/* Each token is hashed as one header byte, (word_start << 3) | length,
 * then its 1-4 bytes. The header makes the encoding prefix-free, so token
 * boundaries and word starts are part of the hash. */
uint32_t tokenizer_block_hashes(const char *text, size_t len, uint32_t block_tokens,
                                uint64_t *out, uint32_t max_out)
{
    uint64_t h = FNV_OFFSET;
    uint32_t in_block = 0, written = 0;
    size_t i = 0;

    if (block_tokens == 0 || max_out == 0)
        return 0;
    while (i < len) {
        while (i < len && is_space((unsigned char)text[i]))
            i++;
        int word_start = 1;
        while (i < len && !is_space((unsigned char)text[i])) {
            size_t n = 0;
            while (n < TOKEN_PIECE_BYTES && i + n < len &&
                   !is_space((unsigned char)text[i + n]))
                n++;
            h = fnv_byte(h, (unsigned char)((word_start << 3) | (int)n));
            for (size_t k = 0; k < n; k++)
                h = fnv_byte(h, (unsigned char)text[i + k]);
            i += n;
            word_start = 0;
            if (++in_block == block_tokens) {
                in_block = 0;
                out[written++] = h;
                if (written == max_out)
                    return written;
            }
        }
    }
    return written;
}

/* Header byte of an ID token: text tokens' headers are 1-4 and 9-12. */
#define ID_TOKEN_HEADER 0x20

uint32_t tokenizer_block_hashes_ids(const uint32_t *ids, size_t n, uint32_t block_tokens,
                                    uint64_t *out, uint32_t max_out)
{
    uint64_t h = FNV_OFFSET;
    uint32_t in_block = 0, written = 0;

    if (block_tokens == 0 || max_out == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        h = fnv_byte(h, ID_TOKEN_HEADER);
        for (int k = 0; k < 4; k++)
            h = fnv_byte(h, (unsigned char)(id >> (8 * k)));
        if (++in_block == block_tokens) {
            in_block = 0;
            out[written++] = h;
            if (written == max_out)
                break;
        }
    }
    return written;
}

/* splitmix64's output function: a well-mixed 64-bit value from any input. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

size_t tokenizer_output_token(uint64_t req_seed, uint32_t index, char *buf, size_t len)
{
    uint64_t r = mix64(req_seed ^ mix64((uint64_t)index + 0x9e3779b97f4a7c15ULL));
    size_t letters = 1 + (size_t)(r & 3);
    size_t n = 1 + letters;

    if (buf == NULL || len < n)
        return 0;
    r >>= 2;
    buf[0] = ' ';
    for (size_t k = 0; k < letters; k++) {
        buf[1 + k] = (char)('a' + (int)(r % 26));
        r /= 26;
    }
    if (len > n)
        buf[n] = '\0';
    return n;
}
