/* api_int.h: what api.c (a request's way through the engine: read, faults,
 * submit, events, finish, the log) calls in apiwrite.c (the bytes of the
 * responses); private to src/sim. Each function appends to out (or fills
 * ctx->json, the scratch buffer) and aborts on out of memory, as the
 * http_buf functions do. */
#ifndef LL_API_INT_H
#define LL_API_INT_H

#include <stdint.h>

/* From api.h and http.h (not included: api.c includes this file). */
struct api_ctx;
struct api_req;
struct http_buf;

/* A response's status line and headers. content_length >= 0:
 * Content-Length; -1: chunked; -2: close-delimited. extra: more header
 * lines, each ending in CRLF, or NULL. */
void apiwrite_head(struct http_buf *out, int status, const char *content_type,
                   int64_t content_length, int keep_alive, const char *extra);

/* An OpenAI error answer: head and {"error":{"message","type","param",
 * "code"}}, with the extra header lines (or NULL). */
void apiwrite_error(struct http_buf *out, int status, const char *code, const char *message,
                    int keep_alive, const char *extra);

/* Anthropic's error answer: {"type":"error","error":{"type":T,
 * "message":M}}, T by status as the API names them. */
void apiwrite_anth_error(struct http_buf *out, int status, const char *message, int keep_alive);

/* {"id":"..","object":"..","created":N,"model":"..", of r into b. */
void apiwrite_obj_head(struct http_buf *b, const struct api_req *r, const char *object);

/* The "object" of r's stream chunks. */
const char *apiwrite_chunk_object(const struct api_req *r);

/* The chat stream's first chunk, the assistant's role alone. */
void apiwrite_role(struct api_ctx *ctx, const struct api_req *r, struct http_buf *out);

/* Write r's tokens produced but not yet sent, up to upto (at most its cut
 * point), as its API's events, splitting at the reasoning boundary; the
 * malformed fault's broken event after the first. */
void apiwrite_tokens(struct api_ctx *ctx, struct api_req *r, struct http_buf *out, uint32_t upto);

/* The end of r's stream, after its last tokens: its API's finish events
 * with reason (and the usage), then the chunked body's last chunk. */
void apiwrite_stream_end(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                         const char *reason, int finish_length);

/* The whole body of r, not streamed, into ctx->json. */
void apiwrite_body(struct api_ctx *ctx, struct api_req *r, int finish_length);

/* An embeddings answer into ctx->json: one vector of ctx->embeddings_dim
 * floats per input, drawn from the request's token seed (so the same
 * seed answers the same numbers), and the usage. */
void apiwrite_embeddings(struct api_ctx *ctx, const struct api_req *r);

/* Answer ctx->json as r's 200 with content_type; half of it under the
 * malformed fault (a body that is not JSON, with a correct length). */
void apiwrite_json_answer(struct api_ctx *ctx, struct api_req *r, struct http_buf *out,
                          const char *content_type);

#endif
