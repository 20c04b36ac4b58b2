/* api.c: the endpoints of `llmload sim`.
 *
 * Request bodies are read with jscan (once per request, off the token path,
 * nothing allocated; reqbody.c). Responses are written by hand: every SSE event of a stream is built
 * from a fixed template into one reused scratch buffer and then framed into
 * the connection's output buffer, so a token costs a few memcpys and no
 * allocation. */
#include "sim/api.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/jscan.h"
#include "util/util.h"
#include "workload/tokenizer.h"

static const char SERVER_HEADER[] = "Server: llmload-sim/" LL_VERSION "\r\n";
static const char PATH_CHAT[] = "/v1/chat/completions";
static const char PATH_COMPLETIONS[] = "/v1/completions";
static const char PATH_MESSAGES[] = "/v1/messages";
static const char PATH_RESPONSES[] = "/v1/responses";
static const char PATH_EMBEDDINGS[] = "/v1/embeddings";

void api_ctx_init(struct api_ctx *ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->tokens_per_event = 1;
    ctx->default_max_tokens = 16;
    ctx->block_tokens = 16;
    ctx->vocab = TOKENIZER_ID_MAX + 1;
    http_buf_init(&ctx->text);
    http_buf_init(&ctx->json);
}

void api_ctx_free(struct api_ctx *ctx)
{
    http_buf_free(&ctx->text);
    http_buf_free(&ctx->json);
    free(ctx->hashes);
    ctx->hashes = NULL;
    ctx->hashes_cap = 0;
    free(ctx->image_at);
    ctx->image_at = NULL;
    ctx->image_at_cap = 0;
    free(ctx->msg_ends);
    ctx->msg_ends = NULL;
    ctx->n_msgs = ctx->msg_ends_cap = 0;
}

void api_req_init(struct api_req *r)
{
    memset(r, 0, sizeof(*r));
    http_buf_init(&r->model);
    http_buf_init(&r->chunk_head);
    r->state = API_REQ_IDLE;
}

void api_req_free(struct api_req *r)
{
    http_buf_free(&r->model);
    http_buf_free(&r->chunk_head);
    free(r->image_hashes);
    r->image_hashes = NULL;
    free(r->hashes);
    r->hashes = NULL;
    r->n_hashes = 0;
}

/* ---- response heads and errors ---- */

/* content_length >= 0: Content-Length; -1: chunked; -2: close-delimited. */
static void put_head(struct http_buf *out, int status, const char *content_type,
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

static void write_error_ex(struct http_buf *out, int status, const char *code,
                           const char *message, int keep_alive, const char *extra)
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
    put_head(out, status, "application/json", (int64_t)body.len, keep_alive, extra);
    http_buf_append(out, body.data, body.len);
    http_buf_free(&body);
}

void api_write_error(struct http_buf *out, int status, const char *code, const char *message,
                     int keep_alive)
{
    write_error_ex(out, status, code, message, keep_alive,
                   status == 429 ? "Retry-After: 1\r\n" : NULL);
}

/* ---- the log ---- */

static const char *req_path(const struct api_req *r)
{
    return r->emb    ? PATH_EMBEDDINGS
           : r->anth ? PATH_MESSAGES
           : r->resp ? PATH_RESPONSES
           : r->chat ? PATH_CHAT
                     : PATH_COMPLETIONS;
}

static void log_req(struct api_ctx *ctx, const struct api_req *r, uint64_t now_ns,
                    const char *error)
{
    if (!ctx->log)
        return;
    struct simlog_entry e = {
        .id = r->id,
        .path = req_path(r),
        .status = r->status,
        .arrival_ns = r->arrival_ns,
        .first_token_ns = r->first_token_ns,
        .last_token_ns = r->last_token_ns,
        .end_ns = now_ns,
        .prompt_tokens = r->prompt_tokens,
        .cached_tokens = r->cached_tokens,
        .images = r->images,
        .image_tokens = r->image_tokens,
        .image_hashes = r->image_hashes,
        .max_tokens = r->max_tokens,
        .output_tokens = r->stream ? r->sent_tokens : r->produced_tokens,
        .finish_reason = r->finish,
        .fault = r->fault != FAULT_NONE ? fault_kind_name(r->fault) : NULL,
        .error = error,
        .ignored_keys = r->ignored_keys[0] ? r->ignored_keys : NULL,
        .inputs = r->inputs,
    };
    simlog_write(ctx->log, &e);
}

/* Anthropic's error body: {"type":"error","error":{"type":T,"message":M}},
 * T by status as the API names them. */
static void write_anth_error(struct http_buf *out, int status, const char *message, int keep_alive)
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
    put_head(out, status, "application/json", (int64_t)body.len, keep_alive,
             status == 429 ? "Retry-After: 1\r\n" : NULL);
    http_buf_append(out, body.data, body.len);
    http_buf_free(&body);
}

/* An error answer to a completion request: write it, log it. */
static int req_fail(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, int status,
                    const char *code, const char *message, uint64_t now_ns)
{
    if (r->anth)
        write_anth_error(out, status, message, r->keep_alive);
    else
        api_write_error(out, status, code, message, r->keep_alive);
    r->status = status;
    r->state = API_REQ_IDLE;
    log_req(ctx, r, now_ns, NULL);
    return r->keep_alive ? API_DONE : API_CLOSE;
}

/* ---- SSE events ---- */

/* {"id":"..","object":"..","created":N,"model":"..", */
static void put_obj_head(struct http_buf *b, const struct api_req *r, const char *object)
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

static const char *chunk_object(const struct api_req *r)
{
    return r->chat ? "chat.completion.chunk" : "text_completion";
}

/* put_obj_head for a stream's chunk: the same bytes in every event of a
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
    if (!ctx->no_usage) {
        http_buf_puts(b, ",");
        put_anth_usage(b, r, 0);
    }
    http_buf_puts(b, "}}");
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
    if (!ctx->no_usage) {
        http_buf_puts(b, ",");
        put_resp_usage(b, r, r->produced_tokens);
    }
    http_buf_puts(b, "}");
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

static void emit_role(struct api_ctx *ctx, const struct api_req *r, struct http_buf *out)
{
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    put_chunk_head(b, r);
    http_buf_puts(b, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},"
                     "\"logprobs\":null,\"finish_reason\":null}]}");
    emit_data(r, out, b->data, b->len);
}

static void put_usage(struct http_buf *b, const struct api_req *r)
{
    http_buf_puts(b, "\"usage\":{\"prompt_tokens\":");
    http_buf_u64(b, r->prompt_tokens);
    http_buf_puts(b, ",\"completion_tokens\":");
    http_buf_u64(b, r->produced_tokens);
    http_buf_puts(b, ",\"total_tokens\":");
    http_buf_u64(b, (uint64_t)r->prompt_tokens + r->produced_tokens);
    http_buf_puts(b, ",\"prompt_tokens_details\":{\"cached_tokens\":");
    http_buf_u64(b, r->cached_tokens);
    http_buf_puts(b, "}}");
}

/* Write the tokens produced but not yet sent, up to upto, splitting at the
 * reasoning boundary. */
static void flush_tokens(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                         uint32_t upto)
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
            static const char bad[] = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"unterminated";
            emit_data(r, out, bad, sizeof(bad) - 1);
            r->malformed_sent = 1;
        }
    }
}

/* ---- completion requests ---- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t api_token_seed(uint64_t seed, uint64_t request_num)
{
    return mix64(seed ^ mix64(request_num));
}

/* Submit r to the engine and, for a stream, send the headers. */
static int req_start(struct api_ctx *ctx, struct api_req *r, const uint64_t *hashes,
                     uint32_t n_hashes, struct http_buf *out, uint64_t now_ns, void *ud)
{
    /* Under --context-tokens the output ends where it would pass the
     * context (the prompt is below it: handle_completion), as "length". */
    uint32_t room =
        ctx->context_tokens && !r->emb ? ctx->context_tokens - r->prompt_tokens : UINT32_MAX;
    struct engine_req er = {
        .prompt_tokens = r->prompt_tokens,
        .max_tokens = r->emb ? 0 : LL_MIN(r->max_tokens, room),
        .ignore_eos = r->ignore_eos,
        .embed = r->emb,
        .block_hashes = hashes,
        .n_block_hashes = n_hashes,
        .ud = ud,
    };
    int rc = engine_submit(ctx->engine, now_ns, &er, &r->engine_id);
    if (rc == LL_E_FULL)
        return req_fail(ctx, r, out, 429, "queue_full",
                        "the server's waiting queue is full; retry later", now_ns);
    if (rc == LL_E_RANGE) {
        char msg[160];
        snprintf(msg, sizeof(msg), "the prompt of %u tokens does not fit the KV cache",
                 r->prompt_tokens);
        return req_fail(ctx, r, out, 400, "context_length_exceeded", msg, now_ns);
    }
    if (rc < 0)
        return req_fail(ctx, r, out, 500, "engine_error", ll_strerror(rc), now_ns);
    r->state = API_REQ_RUNNING;
    if (r->stream) {
        put_head(out, 200, "text/event-stream", r->chunked ? -1 : -2, r->keep_alive,
                 "Cache-Control: no-cache\r\n");
        r->status = 200;
        r->headers_sent = 1;
        if (r->chat && !r->anth && !r->resp && (ctx->role_chunk || r->fault == FAULT_ROLE_ONLY))
            emit_role(ctx, r, out);
    }
    return API_PENDING;
}

/* Make r a fresh request that arrived at now_ns, the num-th the server
 * saw (its buffers kept, emptied; its fault drawn): what every endpoint
 * that goes through the engine does first. */
static void req_begin(struct api_ctx *ctx, struct api_req *r, const struct http_request *hreq,
                      uint64_t num, uint64_t now_ns)
{
    struct http_buf keep_model = r->model, keep_head = r->chunk_head;
    free(r->hashes);
    free(r->image_hashes);
    memset(r, 0, sizeof(*r));
    r->model = keep_model;
    r->chunk_head = keep_head;
    http_buf_clear(&r->model);
    http_buf_clear(&r->chunk_head);
    r->keep_alive = hreq->keep_alive;
    r->chunked = hreq->version_minor >= 1;
    r->arrival_ns = now_ns;
    r->first_token_ns = r->last_token_ns = SIMLOG_NO_TIME;
    r->cut_after_tokens = UINT32_MAX;
    r->fault = faults_draw(ctx->faults);
    r->created_s = (uint64_t)time(NULL);
    r->token_seed = api_token_seed(ctx->seed, num);
}

/* The model a body named (or the served one) into r->model, JSON-escaped. */
static void req_model(struct api_ctx *ctx, struct api_req *r, const struct api_body *body)
{
    if (body->model.type == JSCAN_STRING) {
        char model[API_MAX_MODEL_BYTES + 1];
        size_t model_len = 0;
        jscan_string_unescape(&body->model, model, sizeof model, &model_len);
        http_buf_json_escape(&r->model, model, model_len);
    } else {
        http_buf_json_escape(&r->model, ctx->model_name, strlen(ctx->model_name));
    }
}

/* The injected faults that answer before the engine (500, 503, 429) or
 * delay it (slow-headers, keeping n_hashes of ctx->hashes): API_DONE or
 * API_CLOSE when one answered, API_PENDING when the engine waits, -1 for
 * none of them. */
static int early_fault(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                       uint32_t n_hashes, uint64_t now_ns)
{
    switch (r->fault) {
    case FAULT_500:
        return req_fail(ctx, r, out, 500, "injected_fault", "injected fault: internal error",
                        now_ns);
    case FAULT_503: /* Anthropic says overloaded with its own 529 */
        return req_fail(ctx, r, out, r->anth ? 529 : 503, "injected_fault",
                        "injected fault: overloaded", now_ns);
    case FAULT_429:
        return req_fail(ctx, r, out, 429, "injected_fault", "injected fault: rate limited", now_ns);
    case FAULT_SLOW_HEADERS:
        r->hashes = n_hashes ? ll_malloc((size_t)n_hashes * sizeof(uint64_t)) : NULL;
        if (n_hashes)
            memcpy(r->hashes, ctx->hashes, (size_t)n_hashes * sizeof(uint64_t));
        r->n_hashes = n_hashes;
        r->state = API_REQ_SLOW_HEADERS;
        r->release_ns = now_ns + ctx->slow_headers_delay_ns;
        return API_PENDING;
    default: return -1;
    }
}

/* POST /v1/embeddings: every input counted by the tokenizer as a
 * completions prompt (an empty one as 1 token), their sum one engine
 * request that is prefill only (engine.h's embed), answered when its
 * prefill completes (emb_finish). Of the faults, 500, 503, 429 and
 * slow-headers act as for completions, cut closes the connection
 * without an answer, malformed sends half the body; the others change
 * nothing. No prefix cache: no block hashes. */
static int handle_embeddings(struct api_ctx *ctx, struct api_req *r,
                             const struct http_request *hreq, struct http_buf *out, uint64_t now_ns,
                             void *ud)
{
    uint64_t num = ++ctx->requests_total;
    req_begin(ctx, r, hreq, num, now_ns);
    r->emb = 1;
    snprintf(r->id, sizeof(r->id), "embd-%llu", (unsigned long long)num);

    struct api_body body;
    const char *code;
    char msg[300];
    if (api_parse_embeddings(ctx, hreq->body, hreq->body_len, &body, &code, msg, sizeof msg) < 0)
        return req_fail(ctx, r, out, 400, code, msg, now_ns);
    memcpy(r->ignored_keys, body.ignored_keys, body.ignored_keys_len + 1);
    req_model(ctx, r, &body);
    r->inputs = (uint32_t)ctx->n_msgs;
    uint64_t total = 0;
    for (size_t i = 0, at = 0; i < ctx->n_msgs; at = ctx->msg_ends[i++]) {
        struct tokenizer_prompt tp = {.text = ctx->text.data ? ctx->text.data + at : "",
                                      .len = ctx->msg_ends[i] - at};
        uint32_t n = tokenizer_prompt_count(ctx->tokenizer, &tp);
        n = n ? n : 1;
        if (ctx->context_tokens && n > ctx->context_tokens) {
            snprintf(msg, sizeof msg,
                     "input %zu (%u tokens) is too large to process: the context size is "
                     "%u tokens",
                     i, n, ctx->context_tokens);
            return req_fail(ctx, r, out, 400, "context_length_exceeded", msg, now_ns);
        }
        total += n;
    }
    r->prompt_tokens = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
    int rc = early_fault(ctx, r, out, 0, now_ns);
    if (rc >= 0)
        return rc;
    return req_start(ctx, r, NULL, 0, out, now_ns, ud);
}

static int handle_completion(struct api_ctx *ctx, struct api_req *r,
                             const struct http_request *hreq, int chat, int anth, int resp,
                             struct http_buf *out, uint64_t now_ns, void *ud)
{
    uint64_t num = ++ctx->requests_total;
    req_begin(ctx, r, hreq, num, now_ns);
    r->chat = chat;
    r->anth = anth;
    r->resp = resp;
    snprintf(r->id, sizeof(r->id), "%s%llu",
             anth   ? "msg_"
             : resp ? "resp_"
             : chat ? "chatcmpl-"
                    : "cmpl-",
             (unsigned long long)num);

    struct api_body body;
    const char *code;
    char msg[300];
    int shape = resp ? API_BODY_RESPONSES : chat ? API_BODY_CHAT : API_BODY_COMPLETIONS;
    if (api_parse_completion(ctx, hreq->body, hreq->body_len, shape, &body, &code, msg,
                             sizeof msg) < 0)
        return req_fail(ctx, r, out, 400, code, msg, now_ns);
    memcpy(r->ignored_keys, body.ignored_keys, body.ignored_keys_len + 1);
    if (anth && !body.has_max_tokens)
        return req_fail(ctx, r, out, 400, "invalid_field", "max_tokens: Field required", now_ns);
    req_model(ctx, r, &body);
    int stream = body.stream, include_usage = body.include_usage, ignore_eos = body.ignore_eos;
    int64_t max_tokens = body.max_tokens;
    int ids_prompt = body.ids_prompt;

    r->stream = stream;
    if (stream && !anth && !resp)
        put_obj_head(&r->chunk_head, r, chunk_object(r));
    r->include_usage = stream && include_usage;
    r->ignore_eos = ignore_eos;
    r->max_tokens = (uint32_t)max_tokens;
    if (r->stream && !r->chunked)
        r->keep_alive = 0; /* HTTP/1.0: the stream ends at close */
    if (r->fault == FAULT_CUT)
        r->cut_after_tokens = LL_MAX(1u, r->max_tokens / 2);
    if (r->fault == FAULT_REASONING && r->chat && !r->anth)
        r->reasoning_tokens = r->max_tokens / 2;

    /* The prompt: under ctx->tokenizer, its template included (chat: the
     * n_msgs messages); an empty count is 1 token (like a BOS token); a
     * prompt of IDs is one token per ID (at least one: extract_ids), under
     * either tokenizer, with no BOS added. */
    const char *text = ctx->text.data ? ctx->text.data : "";
    size_t text_len = ctx->text.len;
    const uint32_t *ids = ids_prompt ? (const uint32_t *)(const void *)ctx->text.data : NULL;
    size_t n_ids = ids_prompt ? ctx->text.len / sizeof(uint32_t) : 0;
    struct tokenizer_prompt tp = {
        .text = text,
        .len = text_len,
        .msg_ends = chat ? ctx->msg_ends : NULL,
        .n_msgs = chat ? ctx->n_msgs : 0,
        .images = ctx->image_at,
        .n_images = ids_prompt ? 0 : ctx->images,
    };
    uint32_t ptoks = ids_prompt ? (uint32_t)n_ids : tokenizer_prompt_count(ctx->tokenizer, &tp);
    /* Each image costs image_tokens(W, H) prefill tokens on top of the
     * text (docs/sim.md), hashed into the prefix cache's blocks where the
     * image stands, by its bytes (tokenizer_prompt_block_hashes). */
    uint64_t all_toks = (uint64_t)(ptoks ? ptoks : 1) + ctx->image_tokens;
    r->prompt_tokens = all_toks > UINT32_MAX ? UINT32_MAX : (uint32_t)all_toks;
    r->images = ctx->images;
    r->image_tokens = ctx->image_tokens;
    if (ctx->log && ctx->images) {
        r->image_hashes = ll_malloc(ctx->images * sizeof *r->image_hashes);
        for (uint32_t k = 0; k < ctx->images; k++)
            r->image_hashes[k] = ctx->image_at[k].hash;
    }
    if (ids_prompt && ctx->vocab <= TOKENIZER_ID_MAX) {
        /* --vocab: llama.cpp's answer to an ID it does not have. */
        for (size_t i = 0; i < n_ids; i++) {
            if (ids[i] < ctx->vocab)
                continue;
            snprintf(msg, sizeof msg,
                     "Prompt contains invalid tokens: token ID %u (at %zu) is "
                     "outside the vocabulary of %u (IDs 0 to %u)",
                     ids[i], i, ctx->vocab, ctx->vocab - 1);
            return req_fail(ctx, r, out, 400, "invalid_tokens", msg, now_ns);
        }
    }
    if (ctx->context_tokens && r->prompt_tokens >= ctx->context_tokens) {
        /* --context-tokens: no room for one output token, llama.cpp's words. */
        snprintf(msg, sizeof msg,
                 "request (%u tokens) exceeds the available context size "
                 "(%u tokens), try increasing it",
                 r->prompt_tokens, ctx->context_tokens);
        return req_fail(ctx, r, out, 400, "context_length_exceeded", msg, now_ns);
    }
    uint32_t want = ctx->block_tokens ? r->prompt_tokens / ctx->block_tokens + 1 : 0;
    if (want > ctx->hashes_cap) {
        free(ctx->hashes);
        ctx->hashes = ll_malloc((size_t)want * sizeof(uint64_t));
        ctx->hashes_cap = want;
    }
    uint32_t n_hashes = 0;
    if (ctx->block_tokens && ids_prompt)
        n_hashes = tokenizer_block_hashes_ids(ids, n_ids, ctx->block_tokens, ctx->hashes,
                                              ctx->hashes_cap);
    else if (ctx->block_tokens)
        n_hashes = tokenizer_prompt_block_hashes(ctx->tokenizer, &tp, ctx->block_tokens,
                                                 ctx->hashes, ctx->hashes_cap);

    int rc = early_fault(ctx, r, out, n_hashes, now_ns);
    if (rc >= 0)
        return rc;
    return req_start(ctx, r, ctx->hashes, n_hashes, out, now_ns, ud);
}

int api_release(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, uint64_t now_ns,
                void *ud)
{
    r->state = API_REQ_IDLE;
    int rc = req_start(ctx, r, r->hashes, r->n_hashes, out, now_ns, ud);
    free(r->hashes);
    r->hashes = NULL;
    r->n_hashes = 0;
    return rc;
}

/* The whole non-stream response body into ctx->json. */
static void build_body(struct api_ctx *ctx, struct api_req *r, int finish_length)
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
        if (!ctx->no_usage) {
            http_buf_puts(b, ",");
            put_anth_usage(b, r, n);
        }
        http_buf_puts(b, "}\n");
        return;
    }
    if (r->resp) {
        put_resp_object(b, ctx, r, 1, finish_length);
        http_buf_puts(b, "\n");
        return;
    }
    put_obj_head(b, r, r->chat ? "chat.completion" : "text_completion");
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
    if (!ctx->no_usage) {
        http_buf_puts(b, ",");
        put_usage(b, r);
    }
    http_buf_puts(b, "}\n");
}

/* An embeddings answer into ctx->json: one vector of ctx->embeddings_dim
 * floats per input, drawn from the request's token seed (so the same
 * seed answers the same numbers), and the usage. */
static void build_embeddings(struct api_ctx *ctx, const struct api_req *r)
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
    if (!ctx->no_usage) {
        http_buf_puts(b, ",\"usage\":{\"prompt_tokens\":");
        http_buf_u64(b, r->prompt_tokens);
        http_buf_puts(b, ",\"total_tokens\":");
        http_buf_u64(b, r->prompt_tokens);
        http_buf_puts(b, "}");
    }
    http_buf_puts(b, "}\n");
}

/* An embedding's prefill is done: the answer (or, under the cut fault,
 * the connection closed without one), then the log. */
static int emb_finish(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, uint64_t now_ns)
{
    ctx->metrics->prompt_tokens_total += r->prompt_tokens;
    r->state = API_REQ_IDLE;
    if (r->fault == FAULT_CUT) {
        log_req(ctx, r, now_ns, NULL);
        return API_CLOSE;
    }
    ctx->metrics->success_stop_total++;
    build_embeddings(ctx, r);
    size_t len = ctx->json.len;
    if (r->fault == FAULT_MALFORMED)
        len /= 2; /* a body that is not JSON, with a correct length */
    put_head(out, 200, "application/json; charset=utf-8", (int64_t)len, r->keep_alive, NULL);
    http_buf_append(out, ctx->json.data, len);
    r->status = 200;
    log_req(ctx, r, now_ns, NULL);
    return r->keep_alive ? API_DONE : API_CLOSE;
}

static int req_finish(struct api_ctx *ctx, struct api_req *r, const struct engine_event *ev,
                      struct http_buf *out, uint64_t now_ns)
{
    if (ev->finish_length)
        ctx->metrics->success_length_total++;
    else
        ctx->metrics->success_stop_total++;
    const char *reason = ev->finish_length ? "length" : "stop";
    if (r->anth)
        reason = ev->finish_length ? "max_tokens" : "end_turn";
    if (r->resp) /* the response's status */
        reason = ev->finish_length ? "incomplete" : "completed";
    r->finish = reason;
    if (r->stream && r->anth) {
        struct http_buf *b = &ctx->json;
        anth_start(ctx, r, out);
        static const char stop[] = "{\"type\":\"content_block_stop\",\"index\":0}";
        emit_event(r, out, "content_block_stop", stop, sizeof stop - 1);
        http_buf_clear(b);
        http_buf_puts(b, "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"");
        http_buf_puts(b, reason);
        http_buf_puts(b, "\",\"stop_sequence\":null}");
        if (!ctx->no_usage) {
            http_buf_puts(b, ",");
            put_anth_usage(b, r, r->produced_tokens);
        }
        http_buf_puts(b, "}");
        emit_event(r, out, "message_delta", b->data, b->len);
        static const char end[] = "{\"type\":\"message_stop\"}";
        emit_event(r, out, "message_stop", end, sizeof end - 1);
        if (r->chunked)
            http_buf_append(out, "0\r\n\r\n", 5);
    } else if (r->stream && r->resp) {
        resp_finish(ctx, r, out, ev->finish_length);
        if (r->chunked)
            http_buf_append(out, "0\r\n\r\n", 5);
    } else if (r->stream) {
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
            put_usage(b, r);
            http_buf_puts(b, "}");
            emit_data(r, out, b->data, b->len);
        }
        emit_data(r, out, "[DONE]", 6);
        if (r->chunked)
            http_buf_append(out, "0\r\n\r\n", 5);
    } else {
        build_body(ctx, r, ev->finish_length);
        size_t len = ctx->json.len;
        if (r->fault == FAULT_MALFORMED)
            len /= 2; /* a body that is not JSON, with a correct length */
        put_head(out, 200, "application/json", (int64_t)len, r->keep_alive, NULL);
        http_buf_append(out, ctx->json.data, len);
        r->status = 200;
    }
    r->state = API_REQ_IDLE;
    log_req(ctx, r, now_ns, NULL);
    if (r->stream && !r->chunked)
        return API_CLOSE;
    return r->keep_alive ? API_DONE : API_CLOSE;
}

int api_on_event(struct api_ctx *ctx, struct api_req *r, const struct engine_event *ev,
                 struct http_buf *out, uint64_t now_ns)
{
    if (r->state != API_REQ_RUNNING)
        return API_PENDING;
    r->prompt_tokens = ev->prompt_tokens;
    r->cached_tokens = ev->cached_tokens;
    if (ev->kind == ENGINE_EV_TOKEN) {
        if (r->first_token_ns == SIMLOG_NO_TIME) {
            r->first_token_ns = now_ns;
            metrics_observe_ttft(ctx->metrics, now_ns - r->arrival_ns);
            ctx->metrics->prompt_tokens_total += r->prompt_tokens;
            ctx->metrics->cached_tokens_total += r->cached_tokens;
        }
        r->last_token_ns = now_ns;
        r->produced_tokens = ev->output_tokens;
        ctx->metrics->generation_tokens_total += ev->n_tokens;
        if (r->stream && (r->produced_tokens - r->sent_tokens >= ctx->tokens_per_event ||
                          r->produced_tokens >= r->cut_after_tokens))
            flush_tokens(ctx, r, out, r->produced_tokens);
        uint32_t done = r->stream ? r->sent_tokens : r->produced_tokens;
        if (done >= r->cut_after_tokens) {
            engine_cancel(ctx->engine, r->engine_id);
            r->state = API_REQ_IDLE;
            log_req(ctx, r, now_ns, NULL);
            return API_CLOSE;
        }
        return API_PENDING;
    }
    /* ENGINE_EV_DONE */
    if (r->emb)
        return emb_finish(ctx, r, out, now_ns);
    r->produced_tokens = ev->output_tokens;
    if (r->stream)
        flush_tokens(ctx, r, out, r->produced_tokens);
    if (r->fault == FAULT_CUT) {
        /* Generation ended before the cut point: cut before the finish. */
        r->state = API_REQ_IDLE;
        log_req(ctx, r, now_ns, NULL);
        return API_CLOSE;
    }
    return req_finish(ctx, r, ev, out, now_ns);
}

void api_abort(struct api_ctx *ctx, struct api_req *r, uint64_t now_ns, const char *error)
{
    if (r->state == API_REQ_IDLE)
        return;
    if (r->state == API_REQ_RUNNING)
        engine_cancel(ctx->engine, r->engine_id);
    free(r->hashes);
    r->hashes = NULL;
    r->n_hashes = 0;
    r->state = API_REQ_IDLE;
    log_req(ctx, r, now_ns, error);
}

/* ---- the other endpoints ---- */

static int respond(struct http_buf *out, int status, const char *ctype, const char *body,
                   size_t len, int keep_alive)
{
    put_head(out, status, ctype, (int64_t)len, keep_alive, NULL);
    http_buf_append(out, body, len);
    return keep_alive ? API_DONE : API_CLOSE;
}

/* POST /tokenize, llama.cpp's (at the root, not under /v1): {"content":
 * "text", "add_special": false} -> {"tokens":[id, ...]} under
 * ctx->tokenizer. Not a completion request: no engine, no log, no fault. */
static int handle_tokenize(struct api_ctx *ctx, const struct http_request *hreq,
                           struct http_buf *out)
{
    int ka = hreq->keep_alive;
    const char *code = NULL;
    char msg[300];
    int add_special = 0;
    if (api_parse_tokenize(ctx, hreq->body, hreq->body_len, &add_special, &code, msg, sizeof msg) !=
        0) {
        api_write_error(out, 400, code, msg, ka);
        return ka ? API_DONE : API_CLOSE;
    }
    const char *text = ctx->text.data ? ctx->text.data : "";
    size_t len = ctx->text.len;
    uint32_t n = tokenizer_ids(ctx->tokenizer, text, len, add_special, NULL, 0);
    uint32_t *ids = n ? ll_malloc((size_t)n * sizeof(uint32_t)) : NULL;
    tokenizer_ids(ctx->tokenizer, text, len, add_special, ids, n);
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    http_buf_puts(b, "{\"tokens\":[");
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            http_buf_puts(b, ",");
        http_buf_u64(b, ids[i]);
    }
    http_buf_puts(b, "]}");
    free(ids);
    put_head(out, 200, "application/json; charset=utf-8", (int64_t)b->len, ka, NULL);
    http_buf_append(out, b->data, b->len);
    return ka ? API_DONE : API_CLOSE;
}

int api_handle(struct api_ctx *ctx, struct api_req *r, const struct http_request *hreq,
               struct http_buf *out, uint64_t now_ns, void *ud)
{
    int ka = hreq->keep_alive;
    const char *path = hreq->path;
    int anth = strcmp(path, PATH_MESSAGES) == 0;
    int resp = strcmp(path, PATH_RESPONSES) == 0;
    int chat = anth || resp || strcmp(path, PATH_CHAT) == 0;
    if (chat || strcmp(path, PATH_COMPLETIONS) == 0) {
        if (hreq->method != HTTP_METHOD_POST) {
            write_error_ex(out, 405, "method_not_allowed", "use POST", ka, "Allow: POST\r\n");
            return ka ? API_DONE : API_CLOSE;
        }
        return handle_completion(ctx, r, hreq, chat, anth, resp, out, now_ns, ud);
    }
    if (strcmp(path, PATH_EMBEDDINGS) == 0) {
        if (hreq->method != HTTP_METHOD_POST) {
            write_error_ex(out, 405, "method_not_allowed", "use POST", ka, "Allow: POST\r\n");
            return ka ? API_DONE : API_CLOSE;
        }
        return handle_embeddings(ctx, r, hreq, out, now_ns, ud);
    }
    if (strcmp(path, "/tokenize") == 0) {
        if (hreq->method != HTTP_METHOD_POST) {
            write_error_ex(out, 405, "method_not_allowed", "use POST", ka, "Allow: POST\r\n");
            return ka ? API_DONE : API_CLOSE;
        }
        return handle_tokenize(ctx, hreq, out);
    }
    if (strcmp(path, "/reset_prefix_cache") == 0) {
        /* vLLM's endpoint (at the root): the sim also goes cold again. */
        if (hreq->method != HTTP_METHOD_POST) {
            write_error_ex(out, 405, "method_not_allowed", "use POST", ka, "Allow: POST\r\n");
            return ka ? API_DONE : API_CLOSE;
        }
        engine_reset_cold(ctx->engine);
        return respond(out, 200, NULL, "", 0, ka);
    }
    int models = strcmp(path, "/v1/models") == 0;
    int health = strcmp(path, "/health") == 0;
    int metrics = strcmp(path, "/metrics") == 0;
    int version = strcmp(path, "/version") == 0;
    int props = strcmp(path, "/props") == 0;
    if (!models && !health && !metrics && !version && !props) {
        char msg[128];
        snprintf(msg, sizeof(msg), "no such endpoint: %.80s", path);
        api_write_error(out, 404, "not_found", msg, ka);
        return ka ? API_DONE : API_CLOSE;
    }
    if (hreq->method != HTTP_METHOD_GET) {
        write_error_ex(out, 405, "method_not_allowed", "use GET", ka, "Allow: GET\r\n");
        return ka ? API_DONE : API_CLOSE;
    }
    struct http_buf *b = &ctx->json;
    http_buf_clear(b);
    if (health)
        return respond(out, 200, NULL, "", 0, ka);
    /* What a server says about itself, as vLLM's /version and llama.cpp's
     * /props say it (llmload keeps them in run.json's contract). */
    if (version) {
        http_buf_puts(b, "{\"version\":\"llmload-sim " LL_VERSION "\"}\n");
        return respond(out, 200, "application/json", b->data, b->len, ka);
    }
    if (props) {
        http_buf_puts(b, "{\"default_generation_settings\":{\"n_ctx\":");
        http_buf_u64(b, ctx->context_tokens);
        http_buf_puts(b, "},\"total_slots\":");
        http_buf_u64(b, ctx->total_slots);
        http_buf_puts(b, ",\"model_path\":\"");
        http_buf_json_escape(b, ctx->model_name, strlen(ctx->model_name));
        http_buf_puts(
            b, "\",\"chat_template\":\"{{ messages }}\",\"build_info\":\"llmload-sim " LL_VERSION
               "\"}\n");
        return respond(out, 200, "application/json", b->data, b->len, ka);
    }
    if (metrics) {
        struct engine_stats st;
        engine_get_stats(ctx->engine, &st);
        metrics_render(ctx->metrics, &st, ctx->model_name, b);
        if (ctx->gpu)
            gpu_render(ctx->gpu, &st, now_ns, b);
        return respond(out, 200, "text/plain; version=0.0.4; charset=utf-8", b->data, b->len,
                       ka);
    }
    http_buf_puts(b, "{\"object\":\"list\",\"data\":[{\"id\":\"");
    http_buf_json_escape(b, ctx->model_name, strlen(ctx->model_name));
    http_buf_puts(b, "\",\"object\":\"model\",\"created\":");
    http_buf_u64(b, (uint64_t)time(NULL));
    http_buf_puts(b, ",\"owned_by\":\"llmload\",\"max_model_len\":");
    if (ctx->context_tokens)
        http_buf_u64(b, ctx->context_tokens);
    else
        http_buf_puts(b, "null");
    /* The vocabulary where llama.cpp says it (what llmload run --prompt-ids
     * reads). */
    http_buf_puts(b, ",\"meta\":{\"n_vocab\":");
    http_buf_u64(b, ctx->vocab);
    http_buf_puts(b, "}}]}\n");
    return respond(out, 200, "application/json", b->data, b->len, ka);
}
