/* decode_bench: nanoseconds per event for the client's decoding pipeline
 * (SSE parser -> OpenAI chunk decoder -> per-request accumulation) on a
 * realistic chunk: a content chunk as llama.cpp sends it, 241 bytes of JSON.
 *
 * Two shapes: one event per feed (how tokens usually arrive: one write per
 * token on the server, one read per event here) and many events per feed
 * (a reader that fell behind). Prints one table row per shape to stdout:
 * the median of 10 timed slices, in ns per event.
 * Usage: decode_bench [events] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openai.h"
#include "sse.h"
#include "util.h"

static const char chunk[] =
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" the\"}}],"
    "\"created\":1796012477,\"id\":\"chatcmpl-KYgUFPGToYBARJnFSsDhqnGb6GJTWy8Q\","
    "\"model\":\"stories260K.gguf\",\"system_fingerprint\":\"b0-unknown\","
    "\"object\":\"chat.completion.chunk\"}\n\n";

struct ctx {
    struct oai_stream st;
    uint64_t malformed;
};

static int on_event(void *ud, const struct sse_event *ev)
{
    struct ctx *c = ud;
    struct oai_chunk ch;
    if (oai_decode_chunk(OAI_API_CHAT, ev->data, ev->data_len, &ch) < 0) {
        c->malformed++;
        return 0;
    }
    oai_stream_add(&c->st, &ch);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Decode `events` events, fed events_per_feed at a time, in 10 timed
 * slices; returns the median slice's ns per event (a slice that shared its
 * core with another process does not move the median). */
static double run(const char *buf, size_t buf_len, size_t events_per_feed,
                  uint64_t events)
{
    struct sse_parser p;
    struct ctx c;
    uint64_t feeds = events / events_per_feed / 10;
    double slice_ns[10];

    if (feeds == 0)
        feeds = 1;
    sse_parser_init(&p, 0);
    oai_stream_init(&c.st);
    c.malformed = 0;
    for (int s = 0; s < 10; s++) {
        uint64_t t0 = ll_now_ns();
        for (uint64_t i = 0; i < feeds; i++) {
            if (sse_parser_feed(&p, buf, buf_len, on_event, &c) != 0)
                abort();
        }
        slice_ns[s] = (double)(ll_now_ns() - t0) / (double)(feeds * events_per_feed);
    }
    if (c.malformed || c.st.output_events != 10 * feeds * events_per_feed ||
        c.st.content_bytes != 4 * c.st.output_events) {
        fprintf(stderr, "decode_bench: wrong counts\n");
        exit(1);
    }
    sse_parser_free(&p);
    qsort(slice_ns, 10, sizeof(double), cmp_double);
    return (slice_ns[4] + slice_ns[5]) / 2;
}

int main(int argc, char **argv)
{
    uint64_t events = 2000000;
    size_t n = sizeof(chunk) - 1, batch = 64;
    char *many;

    if (argc > 1 && ll_parse_u64(argv[1], &events) != 0) {
        fprintf(stderr, "decode_bench: expected an event count, got \"%s\"\n", argv[1]);
        return 2;
    }
    many = ll_malloc(n * batch);
    for (size_t i = 0; i < batch; i++)
        memcpy(many + i * n, chunk, n);
    run(chunk, n, 1, events / 10);       /* warm up */
    printf("%-22s %10.1f ns/event\n", "one event per feed", run(chunk, n, 1, events));
    printf("%-22s %10.1f ns/event\n", "64 events per feed", run(many, n * batch, batch, events));
    free(many);
    return 0;
}
