/* server.h: the event loop of `llmload sim`: one thread, epoll over
 * non-blocking sockets, one timerfd armed (absolute CLOCK_MONOTONIC) at the
 * engine's next step end, signalfd for SIGINT/SIGTERM. HTTP/1.1 keep-alive
 * and pipelining; chunked streams; per-connection output buffering with a
 * cap (a client that stops reading is dropped and its request cancelled). */
#ifndef LL_SIM_SERVER_H
#define LL_SIM_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/gpu.h"
#include "workload/tokenizer.h"

/* /v1/embeddings: floats per vector by default (small: a load test
 * measures the answer's cost, not its meaning), and at most. */
#define SERVER_DEFAULT_EMBEDDINGS_DIM 8
#define SERVER_MAX_EMBEDDINGS_DIM 65536

struct server_config {
    const char *host;               /* numeric address to bind: "127.0.0.1", "::1", "0.0.0.0" */
    uint16_t port;                  /* 0 = the kernel picks a free port */
    struct engine_config engine;    /* validated by the caller (engine_config_check) */
    const char *model_name;         /* served model id */
    uint64_t duration_ns;           /* stop by itself after this long; 0 = never */
    uint64_t stall_at_ns;           /* engine stall start, relative to server start (or see below) */
    uint64_t stall_for_ns;          /* stall length; 0 = no stall */
    int stall_from_first;           /* stall_at_ns counts from the first request instead */
    struct faults faults;           /* copied (seeded, with the fractions) */
    uint64_t slow_headers_delay_ns; /* the slow-headers fault's delay */
    int role_chunk;                 /* 1 = every chat stream starts with a role-only chunk */
    uint32_t tokens_per_event;      /* >= 1 */
    uint32_t default_max_tokens;    /* >= 1, when a request names none */
    size_t max_head_bytes;          /* request line + headers bound (431 beyond) */
    size_t max_body_bytes;          /* request body bound (413 beyond) */
    size_t conn_buffer_bytes;       /* output buffered per connection before a drop */
    const char *log_path;           /* --log FILE, or NULL */
    uint64_t seed;                  /* output text seeds */
    enum tokenizer_kind tokenizer;  /* --tokenizer (default TOKENIZER_WORDS) */
    int no_usage;                   /* --no-usage: completion responses carry no usage */
    int prompt_excludes_cached;     /* --prompt-counter-excludes-cached: /metrics as
                                     * llama.cpp's (struct metrics) */
    uint32_t context_tokens;        /* --context-tokens: prompt + output bound; 0 = none */
    uint32_t vocab;                 /* --vocab: token IDs below it; 0 = TOKENIZER_ID_MAX + 1 */
    uint32_t embeddings_dim;        /* --embeddings-dim: floats per embedding (1 ..
                                     * SERVER_MAX_EMBEDDINGS_DIM); 0 = SERVER_DEFAULT_EMBEDDINGS_DIM */
    int gpu_metrics;                /* --gpu-metrics: /metrics also serves DCGM's series */
    struct gpu_model gpu;           /* their power model (start_ns is set by server_run) */
};

struct server;

/* Raise RLIMIT_NOFILE, bind and listen on cfg->host:cfg->port, open the
 * log, create the engine. Strings in cfg must outlive the server. Returns 0
 * and the server in *out (free with server_free), or LL_E_IO / LL_E_INVAL
 * with a one-line reason in err. SIGINT and SIGTERM are blocked from here
 * on (read through a signalfd); SIGPIPE is ignored. */
int server_new(const struct server_config *cfg, struct server **out, char *err, size_t errlen);

/* The bound port (the real one when cfg->port was 0). */
uint16_t server_port(const struct server *s);

/* Serve until SIGINT/SIGTERM or duration_ns. Returns 0, or LL_E_IO when
 * the event loop itself failed (reason on stderr). */
int server_run(struct server *s);

/* Close every connection (in-flight requests are cancelled and logged),
 * flush and close the log, free everything. NULL is fine. Returns 0, or
 * LL_E_IO when the log could not be written. */
int server_free(struct server *s);

#endif
