/* apiwrite.c: the bytes of `llmload sim`'s responses (see api_int.h): the
 * status line and headers, each API's error body, each API's SSE events
 * (OpenAI chat and completions chunks, Anthropic's named events, the
 * Responses events) and the end of a stream, and the whole bodies of a
 * request not streamed and of embeddings. Every event is built from a
 * fixed template into ctx->json, one reused scratch buffer, and then
 * framed into the connection's output buffer, so a token costs a few
 * memcpys and no allocation. Moved from api.c, which drives a request
 * through the engine and calls these. */
#include "sim/api.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/api_int.h"
#include "util/rng.h"
#include "util/util.h"
#include "workload/tokenizer.h"

static const char SERVER_HEADER[] = "Server: llmload-sim/" LL_VERSION "\r\n";

/* splitmix64 of z: the sim's draws of token text and embeddings. */
static uint64_t mix64(uint64_t z)
{
    return rng_splitmix64(&z);
}

uint64_t api_token_seed(uint64_t seed, uint64_t request_num)
{
    return mix64(seed ^ mix64(request_num));
}

/* ---- response heads and errors ---- */

/* content_length >= 0: Content-Length; -1: chunked; -2: close-delimited. */
void apiwrite_head(struct http_buf *out, int status, const char *content_type,
                   int64_t content_length, int keep_alive, const char *extra)
{
    http_buf_puts(out, "HTTP/1.1 ");
    http_buf_u64(out, (uint64_t)status);
    http_buf_puts(out, " ");
    http_buf_puts(out, http_status_reason(status));
    http_buf_puts(out, "\r\n");
    http_buf_append(out, SERVER_HEADER, sizeof(SERVER_HEADER) - 1);
    if (content_type) {
        http_buf_puts(out, "Content-Type: ");
        http_buf_puts(out, content_type);
        http_buf_puts(out, "\r\n");
    }
    if (content_length >= 0) {
        http_buf_puts(out, "Content-Length: ");
        http_buf_u64(out, (uint64_t)content_length);
        http_buf_puts(out, "\r\n");
    } else if (content_length == -1) {
        http_buf_puts(out, "Transfer-Encoding: chunked\r\n");
    }
    if (!keep_alive)
        http_buf_puts(out, "Connection: close\r\n");
    if (extra)
        http_buf_puts(out, extra);
    http_buf_puts(out, "\r\n");
}

void apiwrite_error(struct http_buf *out, int status, const char *code, const char *message,
                    int keep_alive, const char *extra)
{
    struct http_buf body;
    http_buf_init(&body);
    http_buf_puts(&body, "{\"error\":{\"message\":\"");
    http_buf_json_escape(&body, message, strlen(message));
    http_buf_puts(&body, "\",\"type\":\"");
    http_buf_puts(&body, status >= 500 ? "server_error" : "invalid_request_error");
    http_buf_puts(&body, "\",\"param\":null,\"code\":\"");
    http_buf_json_escape(&body, code, strlen(code));
    http_buf_puts(&body, "\"}}\n");
    apiwrite_head(out, status, "application/json", (int64_t)body.len, keep_alive, extra);
    http_buf_append(out, body.data, body.len);
    http_buf_free(&body);
}

void api_write_error(struct http_buf *out, int status, const char *code, const char *message,
                     int keep_alive)
{
    apiwrite_error(out, status, code, message, keep_alive,
                   status == 429 ? "Retry-After: 1\r\n" : NULL);
}

/* Anthropic's error body: {"type":"error","error":{"type":T,"message":M}},
 * T by status as the API names them. */
void apiwrite_anth_error(struct http_buf *out, int status, const char *message, int keep_alive)
{
    const char *type = status == 429   ? "rate_limit_error"
                       : status == 529 ? "overloaded_error"
                       : status >= 500 ? "api_error"
                       : status == 404 ? "not_found_error"
                                       : "invalid_request_error";
    struct http_buf body;
    http_buf_init(&body);
    http_buf_puts(&body, "{\"type\":\"error\",\"error\":{\"type\":\"");
    http_buf_puts(&body, type);
    http_buf_puts(&body, "\",\"message\":\"");
    http_buf_json_escape(&body, message, strlen(message));
    http_buf_puts(&body, "\"}}\n");
    apiwrite_head(out, status, "application/json", (int64_t)body.len, keep_alive,
                  status == 429 ? "Retry-After: 1\r\n" : NULL);
    http_buf_append(out, body.data, body.len);
    http_buf_free(&body);
}

/* ---- SSE events ---- */

/* {"id":"..","object":"..","created":N,"model":"..", */
void apiwrite_obj_head(struct http_buf *b, const struct api_req *r, const char *object)
{
    http_buf_puts(b, "{\"id\":\"");
    http_buf_puts(b, r->id);
    http_buf_puts(b, "\",\"object\":\"");
    http_buf_puts(b, object);
    http_buf_puts(b, "\",\"created\":");
    http_buf_u64(b, r->created_s);
    http_buf_puts(b, ",\"model\":\"");
    http_buf_append(b, r->model.data, r->model.len);
    http_buf_puts(b, "\",");
}

const char *apiwrite_chunk_object(const struct api_req *r)
{
    return r->chat ? "chat.completion.chunk" : "text_completion";
}

/* apiwrite_obj_head for a stream's chunk: the same bytes in every event of a
 * response, written once when the request is read (r->chunk_head) and
 * copied after that. */
static void put_chunk_head(struct http_buf *b, const struct api_req *r)
{
    http_buf_append(b, r->chunk_head.data, r->chunk_head.len);
}

/* A chunk's size line ("%zx\r\n") for a chunk of n bytes. */
static void chunk_size_line(struct http_buf *out, size_t n)
{
    char hex[24];
    size_t i = sizeof hex - 2;
    hex[i] = '\r';
    hex[i + 1] = '\n';
    do {
        hex[--i] = "0123456789abcdef"[n & 15];
        n >>= 4;
    } while (n);
    http_buf_append(out, hex + i, sizeof hex - i);
}

/* Frame ctx->json (or raw) as one SSE event: "data: X\n\n", inside one
 * HTTP chunk when the response is chunked. */
static void emit_data(const struct api_req *r, struct http_buf *out, const char *data, size_t n)
{
    if (r->chunked)
        chunk_size_line(out, n + 8); /* "data: " and "\n\n" */
    http_buf_append(out, "data: ", 6);
    http_buf_append(out, data, n);
    http_buf_append(out, r->chunked ? "\n\n\r\n" : "\n\n", r->chunked ? 4 : 2);
}

/* emit_data for a named event: "event: NAME\ndata: X\n\n" (Anthropic's). */
static void emit_event(const struct api_req *r, struct http_buf *out, const char *name,
                       const char *data, size_t n)
{
    size_t name_len = strlen(name);
    if (r->chunked)
        chunk_size_line(out, n + name_len + 16); /* "event: " "\n" "data: " and "\n\n" */
    http_buf_append(out, "event: ", 7);
    http_buf_append(out, name, name_len);
    http_buf_append(out, "\ndata: ", 7);
    http_buf_append(out, data, n);
    http_buf_append(out, r->chunked ? "\n\n\r\n" : "\n\n", r->chunked ? 4 : 2);
}

/* Anthropic's usage: input_tokens is the prompt less what the cache
 * served, which is cache_read_input_tokens. */
static void put_anth_usage(struct http_buf *b, const struct api_req *r, uint32_t output)
{
    http_buf_puts(b, "\"usage\":{\"input_tokens\":");
    http_buf_u64(b, r->prompt_tokens - LL_MIN(r->cached_tokens, r->prompt_tokens));
    http_buf_puts(b, ",\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":");
    http_buf_u64(b, r->cached_tokens);
    http_buf_puts(b, ",\"output_tokens\":");
    http_buf_u64(b, output);
    http_buf_puts(b, "}");
}

/* Writes an API's usage object ("usage":{...}) for r, output tokens
 * produced so far. */
typedef void usage_writer(struct http_buf *b, const struct api_req *r, uint32_t output);

/* The end of a body or event object: ,"usage":{...} in the API's shape
 * (usage, with output tokens) unless --no-usage, then close (the braces
 * that end it). The one place --no-usage leaves the usage out. */
static void put_usage_close(struct http_buf *b, const struct api_ctx *ctx, const struct api_req *r,
                            usage_writer *usage, uint32_t output, const char *close)
{
    if (!ctx->no_usage) {
        http_buf_puts(b, ",");
        usage(b, r, output);
    }
    http_buf_puts(b, close);
}

/* message_start and the text block's content_block_start, once. */
static void anth_start(struct api_ctx *ctx, struct api_req *r, struct http_buf *out)
{
    if (r->anth_started)
        return;
    r->anth_started = 1;
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"message_start\",\"message\":{\"id\":\"");
    http_buf_puts(b, r->id);
    http_buf_puts(b, "\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"");
    http_buf_append(b, r->model.data, r->model.len);
    http_buf_puts(b, "\",\"stop_reason\":null,\"stop_sequence\":null");
    put_usage_close(b, ctx, r, put_anth_usage, 0, "}}");
    emit_event(r, out, "message_start", b->data, b->len);
    static const char block[] = "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{"
                                "\"type\":\"text\",\"text\":\"\"}}";
    emit_event(r, out, "content_block_start", block, sizeof block - 1);
}

static void put_tokens(struct http_buf *b, const struct api_req *r, uint32_t from, uint32_t to)
{
    char tok[TOKENIZER_OUTPUT_TOKEN_MAX_BYTES + 1];
    for (uint32_t i = from; i < to; i++) {
        size_t n = tokenizer_output_token(r->token_seed, i, tok, sizeof(tok));
        http_buf_json_escape(b, tok, n);
    }
}

/* ---- OpenAI Responses (/v1/responses) ---- */

/* The Responses usage: input_tokens is the whole prompt, of which
 * input_tokens_details.cached_tokens the cache served. */
static void put_resp_usage(struct http_buf *b, const struct api_req *r, uint32_t output)
{
    http_buf_puts(b, "\"usage\":{\"input_tokens\":");
    http_buf_u64(b, r->prompt_tokens);
    http_buf_puts(b, ",\"input_tokens_details\":{\"cached_tokens\":");
    http_buf_u64(b, r->cached_tokens);
    http_buf_puts(b, "},\"output_tokens\":");
    http_buf_u64(b, output);
    http_buf_puts(b, ",\"output_tokens_details\":{\"reasoning_tokens\":");
    http_buf_u64(b, LL_MIN(output, r->reasoning_tokens)); /* of output_tokens, as OpenAI counts */
    http_buf_puts(b, "},\"total_tokens\":");
    http_buf_u64(b, (uint64_t)r->prompt_tokens + output);
    http_buf_puts(b, "}");
}

/* The response object, as response.created (status in_progress, no
 * output) or whole (a body, response.completed): status "completed", or
 * "incomplete" when max_output_tokens ended it (as OpenAI says it). */
static void put_resp_object(struct http_buf *b, const struct api_ctx *ctx, const struct api_req *r,
                            int whole, int finish_length)
{
    http_buf_puts(b, "{\"id\":\"");
    http_buf_puts(b, r->id);
    http_buf_puts(b, "\",\"object\":\"response\",\"created_at\":");
    http_buf_u64(b, r->created_s);
    http_buf_puts(b, ",\"status\":\"");
    http_buf_puts(b, !whole ? "in_progress" : finish_length ? "incomplete" : "completed");
    http_buf_puts(b, "\",\"model\":\"");
    http_buf_append(b, r->model.data, r->model.len);
    http_buf_puts(b, "\"");
    if (!whole) {
        http_buf_puts(b, ",\"output\":[]}");
        return;
    }
    if (finish_length)
        http_buf_puts(b, ",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}");
    uint32_t k = LL_MIN(r->produced_tokens, r->reasoning_tokens);
    http_buf_puts(b, ",\"output\":[");
    if (r->reasoning_tokens) {
        http_buf_puts(b, "{\"type\":\"reasoning\",\"id\":\"rs_");
        http_buf_puts(b, r->id + 5);
        http_buf_puts(b, "\",\"summary\":[],\"content\":[{\"type\":\"reasoning_text\",\"text\":\"");
        put_tokens(b, r, 0, k);
        http_buf_puts(b, "\"}]},");
    }
    http_buf_puts(b, "{\"type\":\"message\",\"id\":\"msg_");
    http_buf_puts(b, r->id + 5);
    http_buf_puts(b, "\",\"status\":\"");
    http_buf_puts(b, finish_length ? "incomplete" : "completed");
    http_buf_puts(b, "\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
                     "\"annotations\":[],\"text\":\"");
    put_tokens(b, r, k, r->produced_tokens);
    http_buf_puts(b, "\"}]}]");
    put_usage_close(b, ctx, r, put_resp_usage, r->produced_tokens, "}");
}

/* response.created, response.in_progress, the message's
 * response.output_item.added and response.content_part.added, once. */
static void resp_start(struct api_ctx *ctx, struct api_req *r, struct http_buf *out)
{
    if (r->resp_started)
        return;
    r->resp_started = 1;
    static const char *const names[2] = {"response.created", "response.in_progress"};
    struct http_buf *b = &ctx->json;
    for (int i = 0; i < 2; i++) {
        http_buf_clear(b);
        http_buf_puts(b, "{\"type\":\"");
        http_buf_puts(b, names[i]);
        http_buf_puts(b, "\",\"response\":");
        put_resp_object(b, ctx, r, 0, 0);
        http_buf_puts(b, "}");
        emit_event(r, out, names[i], b->data, b->len);
    }
    if (r->reasoning_tokens) {
        http_buf_clear(b);
        http_buf_puts(b, "{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{"
                         "\"type\":\"reasoning\",\"id\":\"rs_");
        http_buf_puts(b, r->id + 5);
        http_buf_puts(b, "\",\"summary\":[],\"content\":[]}}");
        emit_event(r, out, "response.output_item.added", b->data, b->len);
    }
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"response.output_item.added\",\"output_index\":");
    http_buf_puts(b, r->reasoning_tokens ? "1" : "0");
    http_buf_puts(b, ",\"item\":{\"type\":\"message\",\"id\":\"msg_");
    http_buf_puts(b, r->id + 5);
    http_buf_puts(b, "\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}");
    emit_event(r, out, "response.output_item.added", b->data, b->len);
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"response.content_part.added\",\"item_id\":\"msg_");
    http_buf_puts(b, r->id + 5);
    http_buf_puts(b, "\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":"
                     "\"output_text\",\"annotations\":[],\"text\":\"\"}}");
    emit_event(r, out, "response.content_part.added", b->data, b->len);
}

/* The end of a Responses stream: the text's done events, then
 * response.completed (or response.incomplete) with the usage. */
static void resp_finish(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                        int finish_length)
{
    struct http_buf *b = &ctx->json;
    resp_start(ctx, r, out);
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"response.output_text.done\",\"item_id\":\"msg_");
    http_buf_puts(b, r->id + 5);
    http_buf_puts(b, "\",\"output_index\":0,\"content_index\":0,\"text\":\"");
    put_tokens(b, r, LL_MIN(r->produced_tokens, r->reasoning_tokens), r->produced_tokens);
    http_buf_puts(b, "\"}");
    emit_event(r, out, "response.output_text.done", b->data, b->len);
    const char *name = finish_length ? "response.incomplete" : "response.completed";
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"");
    http_buf_puts(b, name);
    http_buf_puts(b, "\",\"response\":");
    put_resp_object(b, ctx, r, 1, finish_length);
    http_buf_puts(b, "}");
    emit_event(r, out, name, b->data, b->len);
}

/* One content (or reasoning) event carrying output tokens [from, to). */
static void emit_tokens(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, uint32_t from,
                        uint32_t to, int reasoning)
{
    struct http_buf *b = &ctx->json;
    if (r->anth) {
        anth_start(ctx, r, out);
        http_buf_clear(b);
        http_buf_puts(b, "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                         "\"text_delta\",\"text\":\"");
        put_tokens(b, r, from, to);
        http_buf_puts(b, "\"}}");
        emit_event(r, out, "content_block_delta", b->data, b->len);
        return;
    }
    if (r->resp) {
        const char *name =
            reasoning ? "response.reasoning_text.delta" : "response.output_text.delta";
        resp_start(ctx, r, out);
        http_buf_clear(b);
        http_buf_puts(b, "{\"type\":\"");
        http_buf_puts(b, name);
        http_buf_puts(b, reasoning ? "\",\"item_id\":\"rs_" : "\",\"item_id\":\"msg_");
        http_buf_puts(b, r->id + 5);
        http_buf_puts(b, "\",\"output_index\":0,\"content_index\":0,\"delta\":\"");
        put_tokens(b, r, from, to);
        http_buf_puts(b, "\"}");
        emit_event(r, out, name, b->data, b->len);
        return;
    }
    http_buf_clear(b);
    put_chunk_head(b, r);
    if (r->chat)
        http_buf_puts(b, reasoning ? "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\""
                                   : "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
    else
        http_buf_puts(b, "\"choices\":[{\"index\":0,\"text\":\"");
    put_tokens(b, r, from, to);
    http_buf_puts(b, r->chat ? "\"},\"logprobs\":null,\"finish_reason\":null}]}"
                             : "\",\"logprobs\":null,\"finish_reason\":null}]}");
    emit_data(r, out, b->data, b->len);
}

void apiwrite_role(struct api_ctx *ctx, const struct api_req *r, struct http_buf *out)
{
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    put_chunk_head(b, r);
    http_buf_puts(b, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
                     "\"logprobs\":null,\"finish_reason\":null}]}");
    emit_data(r, out, b->data, b->len);
}

/* The OpenAI usage (chat, completions): output is completion_tokens. */
static void put_usage(struct http_buf *b, const struct api_req *r, uint32_t output)
{
    http_buf_puts(b, "\"usage\":{\"prompt_tokens\":");
    http_buf_u64(b, r->prompt_tokens);
    http_buf_puts(b, ",\"completion_tokens\":");
    http_buf_u64(b, output);
    http_buf_puts(b, ",\"total_tokens\":");
    http_buf_u64(b, (uint64_t)r->prompt_tokens + output);
    http_buf_puts(b, ",\"prompt_tokens_details\":{\"cached_tokens\":");
    http_buf_u64(b, r->cached_tokens);
    http_buf_puts(b, "}}");
}

/* Write the tokens produced but not yet sent, up to upto, splitting at the
 * reasoning boundary. */
void apiwrite_tokens(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, uint32_t upto)
{
    if (upto > r->cut_after_tokens)
        upto = r->cut_after_tokens;
    while (r->sent_tokens < upto) {
        uint32_t end = upto;
        int reasoning = r->sent_tokens < r->reasoning_tokens;
        if (reasoning && end > r->reasoning_tokens)
            end = r->reasoning_tokens;
        emit_tokens(ctx, r, out, r->sent_tokens, end, reasoning);
        r->sent_tokens = end;
        if (r->fault == FAULT_MALFORMED && !r->malformed_sent) {
            static const char bad[] =
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"unterminated";
            emit_data(r, out, bad, sizeof(bad) - 1);
            r->malformed_sent = 1;
        }
    }
}

/* The whole non-stream response body into ctx->json. */
void apiwrite_body(struct api_ctx *ctx, struct api_req *r, int finish_length)
{
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    uint32_t n = r->produced_tokens;
    if (r->anth) {
        http_buf_puts(b, "{\"id\":\"");
        http_buf_puts(b, r->id);
        http_buf_puts(b, "\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"");
        http_buf_append(b, r->model.data, r->model.len);
        http_buf_puts(b, "\",\"content\":[{\"type\":\"text\",\"text\":\"");
        put_tokens(b, r, 0, n);
        http_buf_puts(b, "\"}],\"stop_reason\":\"");
        http_buf_puts(b, finish_length ? "max_tokens" : "end_turn");
        http_buf_puts(b, "\",\"stop_sequence\":null");
        put_usage_close(b, ctx, r, put_anth_usage, n, "}\n");
        return;
    }
    if (r->resp) {
        put_resp_object(b, ctx, r, 1, finish_length);
        http_buf_puts(b, "\n");
        return;
    }
    apiwrite_obj_head(b, r, r->chat ? "chat.completion" : "text_completion");
    if (r->chat) {
        http_buf_puts(b, "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",");
        if (r->reasoning_tokens) {
            uint32_t k = LL_MIN(n, r->reasoning_tokens);
            http_buf_puts(b, "\"reasoning_content\":\"");
            put_tokens(b, r, 0, k);
            http_buf_puts(b, "\",\"content\":\"");
            put_tokens(b, r, k, n);
        } else {
            http_buf_puts(b, "\"content\":\"");
            put_tokens(b, r, 0, n);
        }
        http_buf_puts(b, "\"},\"logprobs\":null,\"finish_reason\":\"");
    } else {
        http_buf_puts(b, "\"choices\":[{\"index\":0,\"text\":\"");
        put_tokens(b, r, 0, n);
        http_buf_puts(b, "\",\"logprobs\":null,\"finish_reason\":\"");
    }
    http_buf_puts(b, finish_length ? "length" : "stop");
    http_buf_puts(b, "\"}]");
    put_usage_close(b, ctx, r, put_usage, n, "}\n");
}

/* The embeddings usage: the prompt, which is all the tokens (no output). */
static void put_emb_usage(struct http_buf *b, const struct api_req *r, uint32_t output)
{
    http_buf_printf(b, "\"usage\":{\"prompt_tokens\":%" PRIu32 ",\"total_tokens\":%" PRIu32 "}",
                    r->prompt_tokens, r->prompt_tokens);
}

/* An embeddings answer into ctx->json: one vector of ctx->embeddings_dim
 * floats per input, drawn from the request's token seed (so the same
 * seed answers the same numbers), and the usage. */
void apiwrite_embeddings(struct api_ctx *ctx, const struct api_req *r)
{
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    http_buf_puts(b, "{\"object\":\"list\",\"data\":[");
    for (uint32_t i = 0; i < r->inputs; i++) {
        http_buf_puts(b, i ? ",{\"object\":\"embedding\",\"index\":"
                           : "{\"object\":\"embedding\",\"index\":");
        http_buf_u64(b, i);
        http_buf_puts(b, ",\"embedding\":[");
        for (uint32_t j = 0; j < ctx->embeddings_dim; j++) {
            uint64_t u = mix64(r->token_seed ^ mix64((uint64_t)i * ctx->embeddings_dim + j + 1));
            /* 24 bits to [-1, 1), rounded to 8 decimals. */
            double x = (double)(u >> 40) / (double)(1u << 23) - 1.0;
            http_buf_printf(b, j ? ",%.8f" : "%.8f", x);
        }
        http_buf_puts(b, "]}");
    }
    http_buf_puts(b, "],\"model\":\"");
    http_buf_append(b, r->model.data, r->model.len);
    http_buf_puts(b, "\"");
    put_usage_close(b, ctx, r, put_emb_usage, 0, "}\n");
}

/* ---- the end of a response ---- */

/* The end of an Anthropic stream: the block's stop, message_delta with the
 * stop reason and the usage, message_stop. */
static void anth_end(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                     const char *reason)
{
    struct http_buf *b = &ctx->json;
    anth_start(ctx, r, out);
    static const char stop[] = "{\"type\":\"content_block_stop\",\"index\":0}";
    emit_event(r, out, "content_block_stop", stop, sizeof stop - 1);
    http_buf_clear(b);
    http_buf_puts(b, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"");
    http_buf_puts(b, reason);
    http_buf_puts(b, "\",\"stop_sequence\":null}");
    put_usage_close(b, ctx, r, put_anth_usage, r->produced_tokens, "}");
    emit_event(r, out, "message_delta", b->data, b->len);
    static const char end[] = "{\"type\":\"message_stop\"}";
    emit_event(r, out, "message_stop", end, sizeof end - 1);
}

/* The end of an OpenAI chat or completions stream: the chunk with the
 * finish reason, the usage chunk when asked for, [DONE]. */
static void chunks_end(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                       const char *reason)
{
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    put_chunk_head(b, r);
    http_buf_puts(b, r->chat ? "\"choices\":[{\"index\":0,\"delta\":{},"
                             : "\"choices\":[{\"index\":0,\"text\":\"\",");
    http_buf_puts(b, "\"logprobs\":null,\"finish_reason\":\"");
    http_buf_puts(b, reason);
    http_buf_puts(b, "\"}]}");
    emit_data(r, out, b->data, b->len);
    if (r->include_usage && !ctx->no_usage) {
        http_buf_clear(b);
        put_chunk_head(b, r);
        http_buf_puts(b, "\"choices\":[],");
        put_usage(b, r, r->produced_tokens);
        http_buf_puts(b, "}");
        emit_data(r, out, b->data, b->len);
    }
    emit_data(r, out, "[DONE]", 6);
}

void apiwrite_stream_end(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                         const char *reason, int finish_length)
{
    if (r->anth)
        anth_end(ctx, r, out, reason);
    else if (r->resp)
        resp_finish(ctx, r, out, finish_length);
    else
        chunks_end(ctx, r, out, reason);
    if (r->chunked)
        http_buf_append(out, "0\r\n\r\n", 5);
}

void apiwrite_json_answer(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                          const char *content_type)
{
    size_t len = ctx->json.len;
    if (r->fault == FAULT_MALFORMED)
        len /= 2; /* a body that is not JSON, with a correct length */
    apiwrite_head(out, 200, content_type, (int64_t)len, r->keep_alive, NULL);
    http_buf_append(out, ctx->json.data, len);
    r->status = 200;
}
