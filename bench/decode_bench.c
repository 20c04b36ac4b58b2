/* decode_bench: the cost of the client's per-event and per-request hot
 * path, in two forms.
 *
 * Timed (the default): nanoseconds per event for the decoding pipeline
 * (SSE parser -> OpenAI chunk decoder -> per-request accumulation) on a
 * realistic chunk: a content chunk as llama.cpp sends it, 241 bytes of JSON.
 * Two shapes: one event per feed (how tokens usually arrive: one write per
 * token on the server, one read per event here) and many events per feed
 * (a reader that fell behind). Prints one table row per shape to stdout:
 * the median of 10 timed slices, in ns per event.
 *
 * Counted (`--calls NAME N`): calls one function N times on one fixed input
 * and nothing else, for callgrind, whose instruction counts do not depend
 * on what else the machine is doing. NAME is one of the payloads below
 * (oai_decode_chunk on it) or "record" (record_write_jsonl of a typical
 * finished request to /dev/null through stdio, fwrite included), or
 * "response": one whole 16-token streamed response as `llmload sim` sends
 * it (headers, chunked framing, SSE events, [DONE]) through the HTTP/1.1
 * parser, the SSE parser and the memo decoder, as the client reads it when
 * it arrives in one piece. bench/decode.sh --instr runs each under
 * callgrind and divides.
 *
 * Usage: decode_bench [events]
 *        decode_bench --calls NAME N
 *        decode_bench --list */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/anthropic.h"
#include "decode/embeddings.h"
#include "decode/openai.h"
#include "decode/responses.h"
#include "decode/sse.h"
#include "http/h1.h"
#include "measure/record.h"
#include "util/util.h"

static const char chunk[] =
    "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" the\"}}],"
    "\"created\":1796012477,\"id\":\"chatcmpl-KYgUFPGToYBARJnFSsDhqnGb6GJTWy8Q\","
    "\"model\":\"stories260K.gguf\",\"system_fingerprint\":\"b0-unknown\","
    "\"object\":\"chat.completion.chunk\"}\n\n";

/* The same token as Anthropic's Messages API streams it (llama.cpp's
 * shape, tests/data/sse/messages-stream.http): a named event. */
static const char anth_chunk[] =
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
    "\"text\":\" the\"}}\n\n";

/* The same token as OpenAI's Responses API streams it (llama.cpp's shape,
 * tests/data/sse/responses-stream.http): a named event. */
static const char resp_chunk[] =
    "event: response.output_text.delta\n"
    "data: {\"type\":\"response.output_text.delta\","
    "\"item_id\":\"msg_1sNsCB6YMqmx6CwgdkzyL6ADQxSPd0Mj\",\"delta\":\" the\"}\n\n";

/* Payloads for the counted mode: what `llmload sim` and llama.cpp send. */
struct payload {
    const char *name;
    enum oai_api api;
    const char *json;
};

static const struct payload payloads[] = {
    {"sim_content", OAI_API_CHAT,
     "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
     "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" bujj\"},"
     "\"logprobs\":null,\"finish_reason\":null}]}"},
    {"sim_role", OAI_API_CHAT,
     "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
     "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
     "\"logprobs\":null,\"finish_reason\":null}]}"},
    {"sim_finish", OAI_API_CHAT,
     "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
     "\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},"
     "\"logprobs\":null,\"finish_reason\":\"length\"}]}"},
    {"sim_usage", OAI_API_CHAT,
     "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1796013597,"
     "\"model\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":128,"
     "\"completion_tokens\":16,\"total_tokens\":144,"
     "\"prompt_tokens_details\":{\"cached_tokens\":0}}}"},
    {"llamacpp_content", OAI_API_CHAT,
     "{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\" the\"}}],"
     "\"created\":1796012477,\"id\":\"chatcmpl-KYgUFPGToYBARJnFSsDhqnGb6GJTWy8Q\","
     "\"model\":\"stories260K.gguf\",\"system_fingerprint\":\"b0-unknown\","
     "\"object\":\"chat.completion.chunk\"}"},
    {"llamacpp_text", OAI_API_COMPLETIONS,
     "{\"choices\":[{\"text\":\" there\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}],"
     "\"created\":1796012477,\"model\":\"stories260K.gguf\",\"system_fingerprint\":\"b0-unknown\","
     "\"object\":\"text_completion\",\"id\":\"chatcmpl-cASKosDnApvATuXQura8BraFBjaLHDPb\"}"},
    {"vllm_content", OAI_API_CHAT,
     "{\"id\":\"chatcmpl-9f2c4a1e7b3d4c8e9a0b1c2d3e4f5a6b\",\"object\":\"chat.completion.chunk\","
     "\"created\":1796013597,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\","
     "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" the\"},\"logprobs\":null,"
     "\"finish_reason\":null}]}"},
    /* Anthropic Messages (anth_decode_event; the data's type names the
     * event), as llama.cpp sends them. */
    {"messages_delta", OAI_API_ANTHROPIC,
     "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
     "\"text\":\" the\"}}"},
    {"messages_start", OAI_API_ANTHROPIC,
     "{\"type\":\"message_start\",\"message\":{\"id\":\"chatcmpl-"
     "MasE1N06XNGJJu7rHCoFSUzniEqMIPGb\","
     "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"stories260K.gguf\","
     "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"cache_read_input_tokens\":19,"
     "\"input_tokens\":27,\"output_tokens\":0}}}"},
    {"messages_delta_usage", OAI_API_ANTHROPIC,
     "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\","
     "\"stop_sequence\":null},\"usage\":{\"output_tokens\":12}}"},
    /* OpenAI Responses (resp_decode_event), as llama.cpp sends them. */
    {"responses_delta", OAI_API_RESPONSES,
     "{\"type\":\"response.output_text.delta\","
     "\"item_id\":\"msg_1sNsCB6YMqmx6CwgdkzyL6ADQxSPd0Mj\",\"delta\":\" the\"}"},
    {"responses_completed", OAI_API_RESPONSES,
     "{\"type\":\"response.completed\",\"response\":{\"id\":"
     "\"resp_Mnh9nweSTfkkBWiGqLlxa36XG7pYagxl\",\"object\":\"response\",\"created_at\":"
     "1796153472,\"status\":\"completed\",\"model\":\"stories260K.gguf\",\"output\":[{"
     "\"type\":\"message\",\"status\":\"completed\",\"id\":"
     "\"msg_1sNsCB6YMqmx6CwgdkzyL6ADQxSPd0Mj\",\"content\":[{\"type\":\"output_text\","
     "\"annotations\":[],\"logprobs\":[],\"text\":\"One day, a little bird cam\"}],"
     "\"role\":\"assistant\"}],\"usage\":{\"input_tokens\":46,\"output_tokens\":12,"
     "\"total_tokens\":58,\"input_tokens_details\":{\"cached_tokens\":45}}}}"},
};

/* One payload, by its API's decoder (memo: through the stream memo). */
static int decode_payload(enum oai_api api, const char *data, size_t len, struct oai_chunk *c,
                          struct oai_memo *memo)
{
    if (api == OAI_API_ANTHROPIC)
        return anth_decode_event("", 0, data, len, c, memo);
    if (api == OAI_API_RESPONSES)
        return resp_decode_event("", 0, data, len, c, memo);
    return memo ? oai_decode_chunk_memo(api, data, len, c, memo)
                : oai_decode_chunk(api, data, len, c);
}

struct ctx {
    enum oai_api api;
    struct oai_stream st;
    uint64_t malformed;
    struct oai_memo *memo;       /* NULL: every chunk decoded in full */
};

static int on_event(void *ud, const struct sse_event *ev)
{
    struct ctx *c = ud;
    struct oai_chunk ch;
    int rc;
    if (c->api == OAI_API_ANTHROPIC)
        rc = anth_decode_event(ev->event, ev->event_len, ev->data, ev->data_len, &ch, c->memo);
    else if (c->api == OAI_API_RESPONSES)
        rc = resp_decode_event(ev->event, ev->event_len, ev->data, ev->data_len, &ch, c->memo);
    else
        rc = decode_payload(c->api, ev->data, ev->data_len, &ch, c->memo);
    if (rc < 0) {
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
static double run(enum oai_api api, const char *buf, size_t buf_len, size_t events_per_feed,
                  uint64_t events, struct oai_memo *memo)
{
    struct sse_parser p;
    struct ctx c;
    uint64_t feeds = events / events_per_feed / 10;
    double slice_ns[10];

    if (feeds == 0)
        feeds = 1;
    sse_parser_init(&p, 0);
    oai_stream_init(&c.st);
    c.api = api;
    c.malformed = 0;
    c.memo = memo;
    if (memo)
        oai_memo_reset(memo);
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

/* A finished 16-token streamed request as the driver writes it. */
static void typical_record(struct record *r, uint64_t id)
{
    record_init(r, id);
    r->http_status = 200;
    r->sched_ns = 1250000000ULL + id * 5000000ULL;
    r->sent_ns = r->sched_ns + 41234;
    r->first_ns = r->sent_ns + 2873456;
    r->first_content_ns = r->first_ns;
    r->last_ns = r->first_ns + 15 * 1012345;
    r->end_ns = r->last_ns + 98765;
    r->max_gap_ns = 1203456;
    r->prompt_tokens = 128;
    r->prompt_tokens_server = 128;
    r->cached_tokens = 0;
    r->max_tokens = 16;
    r->output_tokens = 16;
    r->tokens_source = REC_TOKENS_USAGE;
    r->events = 16;
    r->worker = 1;
}

/* A 16-token streamed chat response as `llmload sim` writes it (its shape
 * captured with curl --raw at fe99946; the Server version, model and
 * `created` fixed here), into buf; returns its length. */
static size_t sim_response(char *buf, size_t cap)
{
    static const char *const tokens[16] = {" bujj", " wh", " gzz", " q", " the", " lo",
                                           " xv", " pa", " mmr", " e", " to", " kq",
                                           " sun", " ab", " c", " w"};
    static const char head[] = "HTTP/1.1 200 OK\r\nServer: llmload-sim/fe99946\r\n"
                               "Content-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n";
    static const char pre[] = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
                              "\"created\":1796044401,\"model\":\"x\",\"choices\":[";
    char ev[512];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "%s", head);
    for (int i = 0; i < 19; i++) {
        int el;
        if (i < 16)
            el = snprintf(ev, sizeof ev,
                          "data: %s{\"index\":0,\"delta\":{\"content\":\"%s\"},"
                          "\"logprobs\":null,\"finish_reason\":null}]}\n\n",
                          pre, tokens[i]);
        else if (i == 16)
            el = snprintf(ev, sizeof ev,
                          "data: %s{\"index\":0,\"delta\":{},\"logprobs\":null,"
                          "\"finish_reason\":\"length\"}]}\n\n",
                          pre);
        else if (i == 17)
            el = snprintf(ev, sizeof ev,
                          "data: %s],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":16,"
                          "\"total_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n",
                          pre);
        else
            el = snprintf(ev, sizeof ev, "data: [DONE]\n\n");
        n += (size_t)snprintf(buf + n, cap - n, "%x\r\n%s\r\n", el, ev);
    }
    n += (size_t)snprintf(buf + n, cap - n, "0\r\n\r\n");
    return n;
}

struct resp_ctx {
    struct sse_parser sse;
    struct ctx c;
    int done;
};

static int resp_on_sse(void *ud, const struct sse_event *ev)
{
    struct resp_ctx *r = ud;
    if (ev->data_len == 6 && memcmp(ev->data, "[DONE]", 6) == 0) {
        r->done = 1;
        return 0;
    }
    return on_event(&r->c, ev);
}

static int resp_on_body(void *ud, const char *buf, size_t len)
{
    struct resp_ctx *r = ud;
    return sse_parser_feed(&r->sse, buf, len, resp_on_sse, r) != 0;
}

/* One response through the client's parsers (what --calls response
 * counts). Returns its output tokens, 0 on a parse failure. */
__attribute__((noinline)) static uint64_t feed_response(struct h1_parser *h, struct resp_ctx *r,
                                                        const char *buf, size_t len)
{
    size_t used;
    h1_parser_reset(h);
    sse_parser_reset(&r->sse);
    oai_stream_init(&r->c.st);
    oai_memo_reset(r->c.memo);
    r->done = 0;
    if (h1_parser_feed(h, buf, len, &used) != H1_DONE || used != len || !r->done)
        return 0;
    return r->c.st.output_events;
}

static int run_response(uint64_t n)
{
    static char buf[8192];
    size_t len = sim_response(buf, sizeof buf);
    struct h1_parser h;
    struct resp_ctx r = {0};
    struct oai_memo m;
    uint64_t sum = 0;
    r.c.memo = &m;
    sse_parser_init(&r.sse, 0);
    h1_parser_init(&h, NULL, resp_on_body, &r);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t ev = feed_response(&h, &r, buf, len);
        if (ev != 16 || r.c.malformed) {
            fprintf(stderr, "decode_bench: the response decoded to %llu events\n",
                    (unsigned long long)ev);
            return 1;
        }
        sum += ev;
    }
    h1_parser_free(&h);
    sse_parser_free(&r.sse);
    fprintf(stderr, "response: %zu bytes, %llu events\n", len, (unsigned long long)sum);
    return 0;
}

/* The counted mode: n calls of one function, checked so the compiler can
 * drop none of them. */
static int run_calls(const char *name, uint64_t n)
{
    if (strcmp(name, "response") == 0)
        return run_response(n);
    if (strcmp(name, "record") == 0) {
        struct record r;
        FILE *f = fopen("/dev/null", "w");   /* a real FILE, as the driver's */
        if (!f) {
            perror("decode_bench: /dev/null");
            return 1;
        }
        typical_record(&r, 0);
        for (uint64_t i = 0; i < n; i++) {
            r.id = i;
            if (record_write_jsonl(f, &r) != 0) {
                fprintf(stderr, "decode_bench: record_write_jsonl failed\n");
                return 1;
            }
        }
        if (fclose(f) != 0) {
            perror("decode_bench: fclose");
            return 1;
        }
        return 0;
    }
    /* NAME+memo: the same payload through the stream memo, as the client
     * decodes every chunk after a stream's first. */
    size_t name_len = strlen(name);
    int memo = name_len > 5 && strcmp(name + name_len - 5, "+memo") == 0;
    struct oai_memo m;
    oai_memo_reset(&m);
    for (size_t k = 0; k < LL_ARRAY_LEN(payloads); k++) {
        const struct payload *pl = &payloads[k];
        if (strncmp(name, pl->name, memo ? name_len - 5 : name_len + 1) != 0 ||
            strlen(pl->name) != (memo ? name_len - 5 : name_len))
            continue;
        size_t len = strlen(pl->json);
        uint64_t sum = 0;
        struct oai_chunk c;
        for (uint64_t i = 0; i < n; i++) {
            int rc = decode_payload(pl->api, pl->json, len, &c, memo ? &m : NULL);
            if (rc != 0) {
                fprintf(stderr, "decode_bench: %s does not decode\n", name);
                return 1;
            }
            sum += c.content_bytes + c.reasoning_bytes + (uint64_t)c.has_finish +
                   (uint64_t)c.has_usage;
        }
        fprintf(stderr, "%s: %zu bytes, checksum %llu\n", name, len,
                (unsigned long long)sum);
        return 0;
    }
    fprintf(stderr, "decode_bench: unknown payload \"%s\" (see --list)\n", name);
    return 2;
}

/* OpenAI embeddings: one whole body an answer (never a stream), with
 * `inputs` vectors of `dim` floats as llama.cpp writes them. Returns the
 * median slice's ns per body, in 10 slices of bodies/10. */
/* One API's token, len bytes at chunk: the table's rows for it fed one
 * event at a time, then batch at a time through memo. The rows are named
 * "api_name: ...". */
static void named_event_rows(const char *api_name, enum oai_api api, const char *chunk, size_t len,
                             size_t batch, uint64_t events, struct oai_memo *memo)
{
    char label[64];
    char *many = ll_malloc(len * batch);
    for (size_t i = 0; i < batch; i++)
        memcpy(many + i * len, chunk, len);
    snprintf(label, sizeof label, "%s: one event per feed", api_name);
    printf("%-30s %10.1f ns/event\n", label, run(api, chunk, len, 1, events, NULL));
    snprintf(label, sizeof label, "%s: 64 per feed, memo", api_name);
    printf("%-30s %10.1f ns/event\n", label, run(api, many, len * batch, batch, events, memo));
    free(many);
}

static double run_embeddings(size_t inputs, size_t dim, uint64_t bodies, size_t *body_len)
{
    size_t cap = 64 + inputs * (64 + dim * 24), n = 0;
    char *b = ll_malloc(cap);
    n += (size_t)snprintf(b + n, cap - n,
                          "{\"model\":\"stories260K\",\"object\":\"list\","
                          "\"usage\":{\"prompt_tokens\":%zu,\"total_tokens\":%zu},"
                          "\"data\":[",
                          inputs * 5, inputs * 5);
    for (size_t i = 0; i < inputs; i++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"embedding\":[", i ? "," : "");
        for (size_t k = 0; k < dim; k++)
            n += (size_t)snprintf(b + n, cap - n, "%s%.8f", k ? "," : "",
                                  (double)((int)((k * 7919 + i) % 2001) - 1000) / 13717.0);
        n += (size_t)snprintf(b + n, cap - n, "],\"index\":%zu,\"object\":\"embedding\"}", i);
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *body_len = n;
    double slice_ns[10];
    uint64_t per = bodies / 10 ? bodies / 10 : 1;
    for (int s = 0; s < 10; s++) {
        uint64_t t0 = ll_now_ns();
        for (uint64_t i = 0; i < per; i++) {
            struct oai_chunk c;
            if (emb_decode_response(b, n, &c) != 0 || c.embeddings != inputs)
                abort();
        }
        slice_ns[s] = (double)(ll_now_ns() - t0) / (double)per;
    }
    free(b);
    qsort(slice_ns, 10, sizeof(double), cmp_double);
    return (slice_ns[4] + slice_ns[5]) / 2;
}

int main(int argc, char **argv)
{
    uint64_t events = 2000000;
    size_t n = sizeof(chunk) - 1, batch = 64;
    char *many;

    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t k = 0; k < LL_ARRAY_LEN(payloads); k++)
            printf("%s %zu\n", payloads[k].name, strlen(payloads[k].json));
        for (size_t k = 0; k < LL_ARRAY_LEN(payloads); k++)
            printf("%s+memo %zu\n", payloads[k].name, strlen(payloads[k].json));
        printf("record 0\n");
        printf("response %zu\n", sim_response((char[8192]){0}, 8192));
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "--calls") == 0) {
        uint64_t calls;
        if (argc != 4 || ll_parse_u64(argv[3], &calls) != 0) {
            fprintf(stderr, "decode_bench: usage: decode_bench --calls NAME N\n");
            return 2;
        }
        return run_calls(argv[2], calls);
    }
    if (argc > 1 && ll_parse_u64(argv[1], &events) != 0) {
        fprintf(stderr, "decode_bench: expected an event count, got \"%s\"\n", argv[1]);
        return 2;
    }
    many = ll_malloc(n * batch);
    for (size_t i = 0; i < batch; i++)
        memcpy(many + i * n, chunk, n);
    struct oai_memo memo;
    const enum oai_api chat = OAI_API_CHAT;
    run(chat, chunk, n, 1, events / 10, NULL); /* warm up */
    printf("%-30s %10.1f ns/event\n", "one event per feed", run(chat, chunk, n, 1, events, NULL));
    printf("%-30s %10.1f ns/event\n", "64 events per feed",
           run(chat, many, n * batch, batch, events, NULL));
    printf("%-30s %10.1f ns/event\n", "64 per feed, the stream memo",
           run(chat, many, n * batch, batch, events, &memo));
    /* Anthropic Messages and OpenAI Responses: the same token as a named
     * content_block_delta, and as a named response.output_text.delta. */
    named_event_rows("messages", OAI_API_ANTHROPIC, anth_chunk, sizeof(anth_chunk) - 1, batch,
                     events, &memo);
    named_event_rows("responses", OAI_API_RESPONSES, resp_chunk, sizeof(resp_chunk) - 1, batch,
                     events, &memo);
    /* OpenAI embeddings: a body an answer; the sim's 8 floats, and one
     * input of a 1024-float model (the vectors are validated as they are
     * skipped: the cost is per byte). */
    static const size_t emb_dims[][2] = {{1, 8}, {1, 1024}, {8, 1024}};
    for (size_t k = 0; k < LL_ARRAY_LEN(emb_dims); k++) {
        size_t len;
        uint64_t bodies = events / (emb_dims[k][0] * emb_dims[k][1] / 8 + 1) / 10 + 10;
        double ns = run_embeddings(emb_dims[k][0], emb_dims[k][1], bodies, &len);
        char what[64];
        snprintf(what, sizeof what, "embeddings: %zu x %zu floats", emb_dims[k][0], emb_dims[k][1]);
        printf("%-30s %10.1f ns/body (%zu bytes, %.2f ns/byte)\n", what, ns, len, ns / (double)len);
    }
    free(many);
    return 0;
}
