/* api.h: the OpenAI-compatible endpoints of `llmload sim`.
 *
 * The server owns sockets and buffers; this module turns one parsed HTTP
 * request into response bytes, appended to the connection's output buffer,
 * and drives the request through the engine: submit, one SSE event per
 * token event, the finish, the usage and [DONE]. It also applies the
 * injected faults (faults.h). No I/O and no clock reads: the server passes
 * now_ns. */
#ifndef LL_SIM_API_H
#define LL_SIM_API_H

#include <stdint.h>

#include "decode/jscan.h"

#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/gpu.h"
#include "sim/http.h"
#include "sim/metrics.h"
#include "sim/simlog.h"
#include "workload/tokenizer.h"

/* What the server does next with a connection after an api_* call. */
#define API_DONE    0   /* the response is complete in out; read the next request */
#define API_PENDING 1   /* more is coming (engine events or the slow-headers timer) */
#define API_CLOSE   2   /* flush out, then close the connection */

#define API_MAX_MODEL_BYTES 256 /* longest "model" echoed */
#define API_IGNORED_KEYS_MAX 256 /* --log's "ignored_keys": the first keys that fit */

/* Shared by every request; owned by the server. */
struct api_ctx {
    struct engine *engine;          /* borrowed */
    struct faults *faults;          /* borrowed; one draw per completion request */
    struct metrics *metrics;        /* borrowed */
    const struct gpu_model *gpu;    /* borrowed; NULL without --gpu-metrics */
    struct simlog *log;             /* borrowed; NULL without --log */
    const char *model_name;         /* served model id, borrowed */
    uint32_t block_tokens;          /* engine's KV block size, tokens */
    uint32_t default_max_tokens;    /* when the request names none */
    uint32_t tokens_per_event;      /* >= 1: tokens coalesced per SSE event */
    int role_chunk;                 /* 1 = every chat stream starts with a role-only chunk */
    uint64_t slow_headers_delay_ns;
    uint64_t seed;                  /* per-request output text seeds derive from it */
    enum tokenizer_kind tokenizer;  /* counts prompts, keys their blocks, answers /tokenize */
    int no_usage;                   /* 1 = completion responses carry no "usage" (--no-usage) */
    uint32_t context_tokens;        /* --context-tokens: prompt + output at most this, a
                                     * prompt of this many or more refused; 0 = no limit */
    uint32_t vocab;                 /* --vocab: token IDs of a prompt must be below it
                                     * (1 .. TOKENIZER_ID_MAX + 1; api_ctx_init: the latter) */
    uint32_t total_slots;           /* the engine's max_num_seqs, for /props */
    uint32_t embeddings_dim;        /* --embeddings-dim: floats in each embedding (>= 1) */
    uint64_t requests_total;        /* completion requests seen; numbers the ids */
    /* Scratch space reused by every request (no per-token allocation). */
    struct http_buf text;           /* prompt text of the request being parsed */
    struct http_buf json;           /* one event or body being built */
    uint64_t *hashes;               /* block hashes */
    uint32_t hashes_cap;
    size_t *msg_ends;               /* chat: where each message's content ends in text */
    size_t n_msgs, msg_ends_cap;
    uint32_t images;       /* images in the request being parsed */
    uint32_t image_tokens; /* their prefill tokens (image_tokens), saturating */
    /* Where each of them stands in text, its tokens and its bytes' hash,
     * for the prefix cache's block hashes (images of them). */
    struct tokenizer_image *image_at;
    size_t image_at_cap;
};

/* What a completion request's body asked for (api_parse_completion). */
struct api_body {
    int stream, include_usage, ignore_eos;
    int64_t max_tokens;             /* the request's, or ctx->default_max_tokens */
    int has_max_tokens;             /* the request named max_tokens (or max_completion_tokens) */
    int ids_prompt;                 /* 1: ctx->text holds uint32_t token IDs, not text */
    struct jscan_value model;       /* the "model" string (a view into the body), or
                                     * type JSCAN_INVALID: absent or null */
    /* The body's other top-level keys (those the sim does not read), as
     * their JSON strings joined by commas (NUL-terminated; the keys that
     * fit), for --log's "ignored_keys". */
    char ignored_keys[API_IGNORED_KEYS_MAX];
    size_t ignored_keys_len;
};

/* The body shapes api_parse_completion reads (its `shape`). */
#define API_BODY_COMPLETIONS 0 /* "prompt", "max_tokens" */
#define API_BODY_CHAT 1        /* "messages", "max_tokens" (chat, Anthropic's Messages) */
#define API_BODY_RESPONSES 2   /* "input" (a string or messages), "max_output_tokens" */

/* Read and check the body of a completion request of the given shape
 * (API_BODY_*): the prompt goes to ctx->text (and ctx->msg_ends,
 * ctx->n_msgs for chat and responses), the rest to *b. Returns 0, or -1
 * with the 400's error code and message (reqbody.c). Exposed for
 * tests/fuzz/fuzz_simbody.c. */
int api_parse_completion(struct api_ctx *ctx, const char *body, size_t len, int shape,
                         struct api_body *b, const char **code, char *msg, size_t msglen);

/* The most inputs one /v1/embeddings request may carry (OpenAI's limit). */
#define API_MAX_EMBEDDING_INPUTS 2048

/* Read and check the body of POST /v1/embeddings: "input" (a string, or
 * an array of at most API_MAX_EMBEDDING_INPUTS strings) goes to ctx->text,
 * input i ending at ctx->msg_ends[i] (ctx->n_msgs inputs); "model" and the
 * keys the sim does not read to *b ("encoding_format" other than "float",
 * and token-ID inputs, are refused as unsupported). Returns 0, or -1 with
 * the 400's error code and message. */
int api_parse_embeddings(struct api_ctx *ctx, const char *body, size_t len, struct api_body *b,
                         const char **code, char *msg, size_t msglen);

/* Read and check the body of POST /tokenize ({"content": "text",
 * "add_special": bool}; "with_pieces" is refused): the content goes to
 * ctx->text, add_special to *add_special. Returns 0, or -1 with the 400's
 * error code and message. */
int api_parse_tokenize(struct api_ctx *ctx, const char *body, size_t len, int *add_special,
                       const char **code, char *msg, size_t msglen);

enum api_req_state {
    API_REQ_IDLE,                   /* no request in progress */
    API_REQ_SLOW_HEADERS,           /* waiting for release_ns */
    API_REQ_RUNNING,                /* submitted; engine events to come */
};

/* One in-progress completion request; embedded in a connection. The
 * server reads state and release_ns; the rest is private to api.c. */
struct api_req {
    enum api_req_state state;
    uint64_t release_ns;            /* SLOW_HEADERS: when to call api_release */
    /* private */
    int chat, stream, include_usage, chunked, keep_alive, ignore_eos;
    int anth;         /* POST /v1/messages (chat is 1 too: a messages array) */
    int anth_started; /* its stream's message_start is out */
    int resp;         /* POST /v1/responses (chat is 1 too: an input of messages) */
    int resp_started; /* its stream's response.created ... content_part.added are out */
    int emb;          /* POST /v1/embeddings: prefill only, one non-streamed answer */
    uint32_t inputs;  /* its inputs (one embedding each) */
    enum fault_kind fault;
    int status;                     /* HTTP status sent, 0 before headers */
    int headers_sent;
    int malformed_sent;
    char id[40];
    uint64_t created_s;             /* wall clock seconds, for "created" */
    uint64_t engine_id;
    uint64_t token_seed;
    uint32_t max_tokens, prompt_tokens, cached_tokens;
    uint32_t images, image_tokens;  /* the request's images and their share of prompt_tokens */
    uint64_t *image_hashes;         /* with --log: each image's hash, for its line; malloc'd */
    uint32_t produced_tokens;       /* output tokens the engine produced */
    uint32_t sent_tokens;           /* output tokens written into events */
    uint32_t cut_after_tokens;      /* FAULT_CUT: close once this many are sent */
    uint32_t reasoning_tokens;      /* FAULT_REASONING: first this many are reasoning */
    const char *finish;             /* the finish_reason sent ("stop", "length"), NULL before */
    char ignored_keys[API_IGNORED_KEYS_MAX]; /* api_body's, for the log */
    uint64_t arrival_ns, first_token_ns, last_token_ns;
    struct http_buf model;          /* the echoed model name, JSON-escaped */
    struct http_buf chunk_head;     /* a stream chunk's JSON up to "choices" */
    uint64_t *hashes;               /* kept while SLOW_HEADERS delays the submit */
    uint32_t n_hashes;
};

/* Set up ctx around the server's objects (borrowed). Free with
 * api_ctx_free. */
void api_ctx_init(struct api_ctx *ctx);
void api_ctx_free(struct api_ctx *ctx);

void api_req_init(struct api_req *r);
/* Free r's storage; r must not be RUNNING (api_abort first). */
void api_req_free(struct api_req *r);

/* Handle one complete request (the completion endpoints: /v1/chat/completions,
 * /v1/completions, Anthropic's /v1/messages and OpenAI's /v1/responses;
 * /v1/embeddings, the engine's prefill only; /v1/models,
 * /health, /metrics, and POST /tokenize, llama.cpp's: {"content": "..."}
 * with an optional boolean "add_special", answered {"tokens": [...]} under
 * ctx->tokenizer): append the response (or, for a stream, its
 * headers) to out. ud is passed to the engine and comes back in its events
 * for this request. Returns API_DONE, API_PENDING (r->state says why) or
 * API_CLOSE. */
int api_handle(struct api_ctx *ctx, struct api_req *r, const struct http_request *hreq,
               struct http_buf *out, uint64_t now_ns, void *ud);

/* The slow-headers delay of r is over: send the headers and submit.
 * Returns like api_handle. Must not be called inside engine_advance. */
int api_release(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                uint64_t now_ns, void *ud);

/* One engine event for r (ev->ud == the ud given at submit). Appends the
 * SSE events or the whole non-stream response to out. Returns API_PENDING
 * (more to come), API_DONE, or API_CLOSE (the cut fault: the engine
 * request is already cancelled). Callable inside engine_advance. */
int api_on_event(struct api_ctx *ctx, struct api_req *r, const struct engine_event *ev,
                 struct http_buf *out, uint64_t now_ns);

/* The connection is going away with r in progress: cancel it in the
 * engine and log it with error (e.g. "client_gone"). r becomes IDLE. */
void api_abort(struct api_ctx *ctx, struct api_req *r, uint64_t now_ns, const char *error);

/* The output-text seed of completion request number request_num (1 for
 * the first completion request the server saw, in arrival order) under
 * seed: tokenizer_output_token(api_token_seed(seed, n), i, ...) is the
 * text of its output token i. Lets tests predict a stream byte for byte. */
uint64_t api_token_seed(uint64_t seed, uint64_t request_num);

/* Append a complete JSON error response (status, OpenAI-style body) to out.
 * keep_alive 0 adds "Connection: close". */
void api_write_error(struct http_buf *out, int status, const char *code, const char *message,
                     int keep_alive);

#endif
