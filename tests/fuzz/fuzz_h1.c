/* fuzz_h1: the HTTP/1.1 response parser on arbitrary bytes.
 *
 * Input layout: bytes 0-1 pick a split position (little-endian, modulo the
 * stream's length + 1), byte 2 picks a header line at which the header
 * callback says stop (0 and values over 15: never), the rest is a stream of
 * responses on one connection. I parse the stream whole, as two feeds split
 * at that position, in pieces of pseudo-random size, and byte by byte (short
 * inputs), resetting after each complete response and calling
 * h1_parser_eof at the end, and require:
 *   - no crash, no leak, nothing undefined (ASan, UBSan);
 *   - *used <= the bytes fed, and all of them on H1_MORE; progress on H1_DONE;
 *   - body pieces non-empty and inside the bytes being fed (no copy, so no
 *     framing bytes either), their total never more than the input;
 *   - a complete response has a final status (200..999) and keep_alive 0/1,
 *     and one framed by the close has keep_alive 0;
 *   - every error comes with p->error;
 *   - the same digest of outcomes (results, statuses, keep_alive, header
 *     lines, body bytes, where each response ended) however the bytes were
 *     split. Where an error is found is not compared: a line over the bound
 *     may be refused before its end when it arrives in pieces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/h1.h"
#include "util/util.h"

#include "fuzzutil.h"

#define MAX_RESPONSES 64

struct digest {
    uint64_t h;
    size_t body_bytes;           /* all body bytes, all responses */
    int header_lines;            /* this response */
    int stop_at;                 /* header line to stop at (1-based), 0 never */
    const char *piece;           /* the bytes being fed now */
    size_t piece_len;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    fuzz_hash_mix(&d->h, p, n);
}

static void mix_int(struct digest *d, long long v)
{
    mix(d, &v, sizeof v);
}

static int on_header(void *ud, const char *line, size_t len)
{
    struct digest *d = ud;
    if (len > H1_MAX_LINE_BYTES)
        abort();
    mix_int(d, 'H');
    mix_int(d, (long long)len);
    mix(d, line, len);
    d->header_lines++;
    return d->stop_at != 0 && d->header_lines == d->stop_at;
}

/* Body bytes are mixed one by one, so the digest does not depend on how
 * they were cut into pieces. */
static int on_body(void *ud, const char *buf, size_t len)
{
    struct digest *d = ud;
    uintptr_t lo = (uintptr_t)d->piece, b = (uintptr_t)buf;
    if (len == 0 || b < lo || b + len > lo + d->piece_len)
        abort();
    mix(d, buf, len);
    d->body_bytes += len;
    return 0;
}

static void check_complete(const struct h1_parser *p)
{
    if (p->status < 200 || p->status > 999 || (p->keep_alive != 0 && p->keep_alive != 1) ||
        p->error != NULL)
        abort();
}

/* Feed s[0..len): whole (mode 0), split at cut (mode 1), in pseudo-random
 * pieces from seed (mode 2) or byte by byte (mode 3). */
static uint64_t run(const char *s, size_t len, int mode, size_t cut, uint32_t seed, int stop_at)
{
    struct digest d = {FUZZ_HASH_SEED, 0, 0, stop_at, NULL, 0};
    struct h1_parser p;
    size_t off = 0, start = 0;
    int responses = 0, rc = H1_MORE;

    h1_parser_init(&p, on_header, on_body, &d);
    while (off < len) {
        size_t n = len - off;
        if (mode == 1 && off < cut)
            n = cut - off;
        else if (mode == 2) {
            seed = seed * 1103515245u + 12345u;
            n = LL_MIN(n, (size_t)1 + (seed >> 16) % 97);
        } else if (mode == 3)
            n = 1;
        size_t end = off + n;
        while (off < end) {
            size_t used = SIZE_MAX;
            d.piece = s + off;
            d.piece_len = end - off;
            rc = h1_parser_feed(&p, s + off, end - off, &used);
            fuzz_check_used(used, end - off, rc == H1_MORE);
            off += used;
            if (rc == H1_MORE)
                continue;
            mix_int(&d, rc);
            if (rc == H1_DONE) {
                if (used == 0 || off == start)
                    abort();
                check_complete(&p);
                mix_int(&d, p.status);
                mix_int(&d, p.keep_alive);
                mix_int(&d, (long long)(off - start)); /* where it ended */
                if (++responses == MAX_RESPONSES)
                    goto out;
                start = off;
                d.header_lines = 0;
                h1_parser_reset(&p);
                continue;
            }
            if (rc == H1_STOPPED) {
                if (p.error)
                    abort();
                mix_int(&d, (long long)(off - start));
            } else if (rc != LL_E_PROTO || p.error == NULL) {
                abort();
            }
            goto out;
        }
    }
    rc = h1_parser_eof(&p);
    mix_int(&d, 1000 + rc);
    if (rc == H1_DONE) {
        check_complete(&p);
        if (p.keep_alive != 0)
            abort();
        mix_int(&d, p.status);
    } else if (rc != LL_E_PROTO || p.error == NULL) {
        abort();
    }
out:
    if (d.body_bytes > len)
        abort();
    if (p.line_cap > H1_MAX_LINE_BYTES + 1)
        abort();
    h1_parser_free(&p);
    return d.h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const char *s = (const char *)data + 3;
    size_t len = size - 3;
    size_t cut = ((size_t)data[0] | (size_t)data[1] << 8) % (len + 1);
    int stop_at = data[2] <= 15 ? data[2] : 0;
    uint32_t seed = (uint32_t)data[0] << 16 | (uint32_t)data[1] << 8 | data[2];

    uint64_t whole = run(s, len, 0, 0, 0, stop_at);
    if (run(s, len, 1, cut, 0, stop_at) != whole)
        abort();
    if (run(s, len, 2, 0, seed, stop_at) != whole)
        abort();
    if (len <= 4096 && run(s, len, 3, 0, 0, stop_at) != whole)
        abort();
    return 0;
}
