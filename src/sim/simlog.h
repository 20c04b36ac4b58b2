/* simlog.h: `llmload sim --log FILE`, one JSON line per completion request
 * (POST /v1/completions and /v1/chat/completions, whatever its status):
 *
 *   {"id":"chatcmpl-7","path":"/v1/chat/completions","status":200,
 *    "arrival_ns":..,"first_token_ns":..,"last_token_ns":..,"end_ns":..,
 *    "prompt_tokens":12,"cached_tokens":0,"max_tokens":16,"output_tokens":16,
 *    "finish_reason":"length","fault":"cut"}
 *
 * Times are raw ll_now_ns() values (CLOCK_MONOTONIC nanoseconds, the same
 * clock a client on the same machine reads), null when they never happened;
 * "images" and "image_tokens" (the part of prompt_tokens the images cost,
 * ceil(W/28)*ceil(H/28) each: docs/sim.md) and "image_hashes" (each
 * image's tokenizer_image_hash as 16 hex digits, in the order of the
 * body: the key its prefix-cache blocks are found by, equal exactly when
 * the bytes are) only for a request with images,
 * "fault" is present only when a fault was injected, "ignored_keys" (e.g.
 * ["temperature","top_k"]: the body's top-level keys the sim does not read,
 * as many as fit in 256 bytes) only when there were some, "error" only when the
 * server dropped the connection ("client_gone": the client closed it or a
 * write failed; "buffer_overflow": the client stopped reading). Lines are buffered and
 * written by simlog_flush (the server calls it at least every second) and
 * by simlog_close. */
#ifndef LL_SIM_SIMLOG_H
#define LL_SIM_SIMLOG_H

#include <stddef.h>
#include <stdint.h>

#define SIMLOG_NO_TIME UINT64_MAX

struct simlog_entry {
    const char *id;                 /* response id, e.g. "cmpl-3" */
    const char *path;
    int status;                     /* HTTP status sent (0: none, the connection was cut) */
    uint64_t arrival_ns;            /* request fully read */
    uint64_t first_token_ns;        /* SIMLOG_NO_TIME if none */
    uint64_t last_token_ns;         /* SIMLOG_NO_TIME if none */
    uint64_t end_ns;                /* response finished or connection dropped */
    uint32_t prompt_tokens;
    uint32_t cached_tokens;
    uint32_t images;              /* images in the request (written only when > 0) */
    uint32_t image_tokens;        /* their share of prompt_tokens (written with images) */
    const uint64_t *image_hashes; /* images of them, or NULL: not written */
    uint32_t max_tokens;          /* as the request asked (0 when its body was refused) */
    uint32_t output_tokens;
    const char *finish_reason;      /* "stop" or "length" as sent; NULL when none was */
    const char *fault;              /* NULL when none */
    const char *error;              /* NULL, "client_gone" or "buffer_overflow" */
    const char *ignored_keys;       /* the body's keys the sim does not read, as JSON
                                     * strings joined by commas; NULL = none */
    uint32_t inputs;                /* /v1/embeddings: its inputs (0 elsewhere: not written) */
};

struct simlog;

/* Open (truncate) path for writing. Returns the log, or NULL with a
 * one-line reason in err. Caller closes with simlog_close. */
struct simlog *simlog_open(const char *path, char *err, size_t errlen);

/* Append one line to the in-memory buffer (no syscall unless it is full). */
void simlog_write(struct simlog *l, const struct simlog_entry *e);

/* Write the buffered lines to the file. Returns 0 or LL_E_IO. */
int simlog_flush(struct simlog *l);

/* Flush and close. Returns 0 or LL_E_IO (a write or close failed).
 * NULL is fine. */
int simlog_close(struct simlog *l);

#endif
