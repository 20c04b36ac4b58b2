/* api.c: the endpoints of `llmload sim`.
 *
 * Request bodies are read with jscan (once per request, off the token path,
 * nothing allocated; reqbody.c). Each completion request goes through the
 * engine here: begun, its faults drawn and applied, submitted, fed the
 * engine's events, finished and logged. The bytes of the responses are
 * written by apiwrite.c (api_int.h). */
#include "sim/api.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/jscan.h"
#include "sim/api_int.h"
#include "util/util.h"
#include "workload/tokenizer.h"

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

/* Free the block hashes a slow-headers request kept for its release. */
static void req_drop_hashes(struct api_req *r)
{
    free(r->hashes);
    r->hashes = NULL;
    r->n_hashes = 0;
}

void api_req_free(struct api_req *r)
{
    http_buf_free(&r->model);
    http_buf_free(&r->chunk_head);
    free(r->image_hashes);
    r->image_hashes = NULL;
    req_drop_hashes(r);
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

/* An error answer to a completion request: write it, log it. */
static int req_fail(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, int status,
                    const char *code, const char *message, uint64_t now_ns)
{
    if (r->anth)
        apiwrite_anth_error(out, status, message, r->keep_alive);
    else
        api_write_error(out, status, code, message, r->keep_alive);
    r->status = status;
    r->state = API_REQ_IDLE;
    log_req(ctx, r, now_ns, NULL);
    return r->keep_alive ? API_DONE : API_CLOSE;
}

/* ---- completion requests ---- */

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
        apiwrite_head(out, 200, "text/event-stream", r->chunked ? -1 : -2, r->keep_alive,
                      "Cache-Control: no-cache\r\n");
        r->status = 200;
        r->headers_sent = 1;
        if (r->chat && !r->anth && !r->resp && (ctx->role_chunk || r->fault == FAULT_ROLE_ONLY))
            apiwrite_role(ctx, r, out);
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
        apiwrite_obj_head(&r->chunk_head, r, apiwrite_chunk_object(r));
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
    req_drop_hashes(r);
    return rc;
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
    apiwrite_embeddings(ctx, r);
    apiwrite_json_answer(ctx, r, out, "application/json; charset=utf-8");
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
    if (r->stream) {
        apiwrite_stream_end(ctx, r, out, reason, ev->finish_length);
    } else {
        apiwrite_body(ctx, r, ev->finish_length);
        apiwrite_json_answer(ctx, r, out, "application/json");
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
            apiwrite_tokens(ctx, r, out, r->produced_tokens);
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
        apiwrite_tokens(ctx, r, out, r->produced_tokens);
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
    req_drop_hashes(r);
    r->state = API_REQ_IDLE;
    log_req(ctx, r, now_ns, error);
}

/* ---- the other endpoints ---- */

static int respond(struct http_buf *out, int status, const char *ctype, const char *body,
                   size_t len, int keep_alive)
{
    apiwrite_head(out, status, ctype, (int64_t)len, keep_alive, NULL);
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
    apiwrite_head(out, 200, "application/json; charset=utf-8", (int64_t)b->len, ka, NULL);
    http_buf_append(out, b->data, b->len);
    return ka ? API_DONE : API_CLOSE;
}

/* 405 for a path that takes only method ("POST" or "GET"). */
static int wrong_method(struct http_buf *out, const char *method, int ka)
{
    char msg[16], allow[24];
    snprintf(msg, sizeof msg, "use %s", method);
    snprintf(allow, sizeof allow, "Allow: %s\r\n", method);
    apiwrite_error(out, 405, "method_not_allowed", msg, ka, allow);
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
        if (hreq->method != HTTP_METHOD_POST)
            return wrong_method(out, "POST", ka);
        return handle_completion(ctx, r, hreq, chat, anth, resp, out, now_ns, ud);
    }
    if (strcmp(path, PATH_EMBEDDINGS) == 0) {
        if (hreq->method != HTTP_METHOD_POST)
            return wrong_method(out, "POST", ka);
        return handle_embeddings(ctx, r, hreq, out, now_ns, ud);
    }
    if (strcmp(path, "/tokenize") == 0) {
        if (hreq->method != HTTP_METHOD_POST)
            return wrong_method(out, "POST", ka);
        return handle_tokenize(ctx, hreq, out);
    }
    if (strcmp(path, "/reset_prefix_cache") == 0) {
        /* vLLM's endpoint (at the root): the sim also goes cold again. */
        if (hreq->method != HTTP_METHOD_POST)
            return wrong_method(out, "POST", ka);
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
    if (hreq->method != HTTP_METHOD_GET)
        return wrong_method(out, "GET", ka);
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
