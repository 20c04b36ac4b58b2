/* fuzz_http.c: libFuzzer target for the sim's HTTP request parser.
 *
 * The first byte seeds the split sizes; the rest is a stream of (possibly
 * pipelined) requests. I parse it twice, once whole and once in pieces of
 * pseudo-random size, and require the same sequence of outcomes (status,
 * method, path, body) from both: splitting must never change the result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/http.h"
#include "util/util.h"

#include "fuzzutil.h"

#define MAX_OUTCOMES 64

struct outcome {
    int rc;
    int status;
    int method;
    size_t path_len;
    uint64_t body_hash;
    size_t body_len;
    int keep_alive;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = FUZZ_HASH_SEED;
    fuzz_hash_mix(&h, s, n);
    return h;
}

/* Parse data in pieces whose sizes come from seed (seed 0: whole). */
static size_t parse_all(const char *data, size_t size, uint32_t seed, struct outcome *out)
{
    static const struct http_limits lim = {.max_head_bytes = 2048, .max_body_bytes = 4096};
    struct http_parser p;
    http_parser_init(&p, &lim);
    size_t n_out = 0, off = 0;
    uint32_t x = seed | 1;
    while (off < size && n_out < MAX_OUTCOMES) {
        size_t piece = size - off;
        if (seed) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            piece = LL_MIN(piece, (size_t)(x % 17) + 1);
        }
        size_t used = 0;
        int rc = http_parser_feed(&p, data + off, piece, &used);
        fuzz_check_used(used, piece, rc == HTTP_PARSE_MORE);
        off += used;
        if (rc == HTTP_PARSE_MORE)
            continue;
        struct outcome *o = &out[n_out++];
        memset(o, 0, sizeof(*o));
        o->rc = rc;
        o->status = http_parser_error_status(&p);
        if (rc == HTTP_PARSE_DONE) {
            const struct http_request *r = http_parser_request(&p);
            if (!r || strlen(r->path) != r->path_len || r->body[r->body_len] != '\0')
                abort();
            o->method = (int)r->method;
            o->path_len = r->path_len;
            o->body_len = r->body_len;
            o->body_hash = hash_bytes(r->body, r->body_len);
            o->keep_alive = r->keep_alive;
        } else {
            if (o->status < 400 || o->status > 505)
                abort();
            break; /* the server closes after an error */
        }
        http_parser_reset(&p);
    }
    http_parser_free(&p);
    return n_out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t seed = data[0] + 1u;
    static struct outcome whole[MAX_OUTCOMES], split[MAX_OUTCOMES];
    size_t nw = parse_all((const char *)data + 1, size - 1, 0, whole);
    size_t ns = parse_all((const char *)data + 1, size - 1, seed, split);
    if (nw != ns || memcmp(whole, split, nw * sizeof(whole[0])) != 0)
        abort();
    return 0;
}
