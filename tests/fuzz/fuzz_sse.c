/* fuzz_sse: the SSE decoder on arbitrary bytes, fed whole and cut at
 * pseudo-random places (and byte by byte for short inputs). Checks that
 * nothing crashes, that every way of cutting gives the same events and the
 * same result, that no event exceeds the line bound, and that the parser's
 * buffers stay within it.
 *
 * Input layout: byte 0 picks the line bound, bytes 1-2 seed the cuts, the
 * rest is the stream. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sse.h"

#include "fuzzutil.h"

struct digest {
    uint64_t h;
    size_t events;
    size_t max_line;
};

static void mix(struct digest *d, const void *p, size_t n)
{
    fuzz_hash_mix(&d->h, p, n);
}

static int digest_cb(void *ud, const struct sse_event *ev)
{
    struct digest *d = ud;
    if (ev->data_len > d->max_line || ev->event_len > d->max_line ||
        ev->id_len > d->max_line)
        abort();
    mix(d, &ev->data_len, sizeof(ev->data_len));
    mix(d, ev->data, ev->data_len);
    mix(d, &ev->event_len, sizeof(ev->event_len));
    mix(d, ev->event, ev->event_len);
    mix(d, &ev->id_len, sizeof(ev->id_len));
    mix(d, ev->id, ev->id_len);
    mix(d, &ev->unterminated, sizeof(ev->unterminated));
    d->events++;
    return 0;
}

/* Feed s[0..len) in pieces whose sizes come from the generator (all at once
 * when seed is 0, byte by byte when it is 1). */
static struct digest run(struct sse_parser *p, const char *s, size_t len,
                         size_t max_line, uint32_t seed)
{
    struct digest d = { FUZZ_HASH_SEED, 0, max_line };
    size_t pos = 0;
    int rc = 0;

    sse_parser_reset(p);
    while (pos < len && rc == 0) {
        size_t n;
        if (seed == 0) {
            n = len - pos;
        } else if (seed == 1) {
            n = 1;
        } else {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 64;
            if (n > len - pos)
                n = len - pos;
        }
        rc = sse_parser_feed(p, s + pos, n, digest_cb, &d);
        pos += n;
    }
    if (rc == 0)
        rc = sse_parser_finish(p, digest_cb, &d);
    mix(&d, &rc, sizeof(rc));
    if (p->line_cap > 2 * max_line + 512 || p->data_cap > 2 * max_line + 512)
        abort();
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sse_parser p;

    if (size < 3)
        return 0;
    size_t max_line = data[0] < 8 ? SSE_DEFAULT_MAX_LINE : 4 + (size_t)data[0];
    uint32_t seed = 2 + ((uint32_t)data[1] << 8 | data[2]);
    const char *s = (const char *)data + 3;
    size_t len = size - 3;

    sse_parser_init(&p, max_line);
    struct digest whole = run(&p, s, len, max_line, 0);
    struct digest cut = run(&p, s, len, max_line, seed);
    if (whole.h != cut.h || whole.events != cut.events)
        abort();
    if (len <= 4096) {
        struct digest bytes = run(&p, s, len, max_line, 1);
        if (whole.h != bytes.h || whole.events != bytes.events)
            abort();
    }
    sse_parser_free(&p);
    return 0;
}
