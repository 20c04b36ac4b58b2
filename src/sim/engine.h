/* engine.h: the simulated continuous-batching inference engine of
 * `llmload sim`. Pure computation: no I/O, no clock reads. The server tells
 * it the time; it says when its next step ends and what each step produced.
 *
 * Model (vLLM-like):
 *   - A FIFO waiting queue; a running batch bounded by max_num_seqs and by a
 *     KV-cache of kv_tokens, allocated in blocks of block_tokens.
 *   - Steps run back to back while there is work. At the start of a step the
 *     engine forms the batch: running sequences that are decoding take one
 *     token each; prefill takes up to prefill_chunk_tokens across sequences
 *     (chunked prefill); waiting requests are admitted FIFO while a sequence
 *     slot and KV blocks for their next chunk are free.
 *   - Step duration = step_base_ns + prefill tokens * step_prefill_token_ns
 *     + decoding sequences * step_seq_ns. At the end of a step each decoding
 *     sequence emits one output token (a sequence whose prefill completes in
 *     a step emits its first token at the end of that step).
 *   - When a decoding sequence needs a new KV block and none is free, the
 *     newest running sequence is preempted (recompute): its blocks are freed
 *     and it goes back to the front of the waiting queue, keeping the tokens
 *     already emitted (it re-prefills prompt + emitted tokens, then resumes).
 *   - A prefix cache: full prompt blocks whose cumulative hash matches a block
 *     still cached skip prefill; reported as cached_tokens.
 *   - A cold state: after start and after engine_reset_cold the prefix cache
 *     is empty and the first step takes cold_first_ns longer (lazy set-up,
 *     kernels compiled or captured on first use).
 *   - Output length: min(max_tokens, natural length) where the natural length
 *     is drawn from a seeded distribution at submit (ignore_eos: max_tokens).
 *     The KV-cache is also the context length: output stops (finish_length)
 *     once prompt + output - 1 tokens fill it.
 *   - A request submitted while the planned step has not started yet joins
 *     that step, so simultaneous arrivals are batched together.
 *   - Zero costs are allowed: steps then take no time and a request's
 *     every token comes out within one engine_advance call.
 *   docs/sim-engine.md describes the model in full.
 *   - Deterministic: same config, same submits at the same times => the same
 *     events at the same times.
 */
#ifndef LL_SIM_ENGINE_H
#define LL_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

struct engine_config {
    uint32_t max_num_seqs;          /* running batch bound, sequences (>= 1) */
    uint64_t kv_tokens;             /* KV-cache capacity, tokens */
    uint32_t block_tokens;          /* KV allocation unit, tokens (e.g. 16) */
    uint32_t prefill_chunk_tokens;  /* prefill token budget per step (>= 1) */
    uint64_t step_base_ns;          /* fixed cost of every step */
    uint64_t step_prefill_token_ns; /* cost per prefill token in the step */
    uint64_t step_seq_ns;           /* cost per decoding sequence in the step */
    uint32_t queue_limit;           /* max waiting requests; 0 = unbounded */
    double natural_len_median_tokens; /* lognormal median of natural output length */
    double natural_len_sigma;       /* lognormal sigma; 0 = always the median */
    int prefix_cache;               /* 1 = reuse cached prompt blocks */
    uint64_t cold_first_ns;         /* the cold state: the first step after start (or after
                                     * engine_reset_cold) takes this much longer; 0 = none */
    uint64_t seed;                  /* seeds the natural-length draws */
};

/* What the server submits for one request. */
struct engine_req {
    uint32_t prompt_tokens;         /* >= 1 */
    uint32_t max_tokens;            /* >= 1 (unless embed) */
    int ignore_eos;                 /* 1 = generate exactly max_tokens */
    int embed;                      /* 1 = an embedding (/v1/embeddings): prefill only, in
                                     * batches like any prompt; when its prefill completes
                                     * it is done, with a DONE event and no TOKEN, no output
                                     * tokens and no output-length draw; max_tokens unused */
    /* Cumulative hash of each full prompt block: hashes[i] covers prompt
     * tokens [0, (i+1)*block_tokens). May be NULL when n_block_hashes is 0.
     * Copied by engine_submit; the caller keeps ownership. */
    const uint64_t *block_hashes;
    uint32_t n_block_hashes;
    void *ud;                       /* the server's handle, passed back in events */
};

enum engine_event_kind {
    ENGINE_EV_TOKEN,     /* n_tokens output tokens were produced (first one included) */
    ENGINE_EV_DONE,      /* the request finished; no more events for it */
};

struct engine_event {
    enum engine_event_kind kind;
    uint64_t id;                    /* from engine_submit */
    void *ud;                       /* engine_req.ud */
    uint64_t time_ns;               /* the step end that produced it */
    uint32_t n_tokens;              /* TOKEN: tokens produced by this step (1) */
    uint32_t output_tokens;         /* total output tokens so far */
    uint32_t prompt_tokens;         /* as submitted */
    uint32_t cached_tokens;         /* prompt tokens served from the prefix cache */
    int finish_length;              /* DONE: 1 = stopped at max_tokens, 0 = natural stop */
};

typedef void engine_event_cb(void *cb_ud, const struct engine_event *ev);

struct engine_stats {
    uint32_t running;               /* sequences in the running batch */
    uint32_t waiting;               /* requests in the waiting queue */
    uint64_t kv_used_tokens;        /* allocated blocks * block_tokens */
    double kv_usage_frac;           /* kv_used_tokens / kv_tokens, 0..1 */
    uint64_t preemptions_total;
    uint64_t prompt_tokens_total;   /* prompt tokens prefilled (not cached), at
                                     * each request's first admission; recompute
                                     * after preemption is not counted */
    uint64_t cached_tokens_total;   /* prompt tokens served from cache, same rule */
    uint64_t generation_tokens_total;
    uint64_t success_total;         /* requests finished (not cancelled) */
    uint64_t rejected_total;        /* submits refused by queue_limit */
    uint64_t steps_total;
    /* The work of completed steps, for the sim's power model (sim/gpu.h):
     * every prefill token computed (recompute after preemption included)
     * and every decoding sequence-step (one output token each). */
    uint64_t prefill_tokens_stepped_total;
    uint64_t decode_seqs_stepped_total;
    /* The step planned or in progress: its span on the server's clock and
     * its work. step_end_ns is UINT64_MAX when the engine is idle (the
     * other three are then 0). */
    uint64_t step_start_ns, step_end_ns;
    uint64_t step_prefill_tokens, step_decode_seqs;
};

/* Validate cfg; returns 0 or LL_E_INVAL with a one-line reason in err. */
int engine_config_check(const struct engine_config *cfg, char *err, size_t errlen);

/* Create an engine. cfg is copied. Caller frees with engine_free. Returns
 * NULL when engine_config_check rejects cfg. */
struct engine *engine_new(const struct engine_config *cfg);
void engine_free(struct engine *e); /* NULL is fine */

/* Queue a request arriving at now_ns (>= every earlier now_ns; call
 * engine_advance(now_ns) first). Returns 0 and the id in *id_out (id_out may
 * be NULL), LL_E_INVAL for a zero prompt_tokens or max_tokens, LL_E_FULL when
 * the waiting queue is at queue_limit, or LL_E_RANGE when the prompt alone
 * can never fit the KV-cache. Each accepted request takes the next natural
 * length draw, so draws follow submit order. Amortized O(1); allocates only
 * when the pool of request slots grows. */
int engine_submit(struct engine *e, uint64_t now_ns, const struct engine_req *req,
                  uint64_t *id_out);

/* Remove a request (the client went away). Frees its KV blocks. Unknown or
 * finished ids are ignored. No events are emitted for it afterwards. */
void engine_cancel(struct engine *e, uint64_t id);

/* Absolute time at which the current step ends, or UINT64_MAX when idle. */
uint64_t engine_next_ns(const struct engine *e);

/* Run every step that ends at or before now_ns, calling cb for each event in
 * time order. Steps are back to back on absolute time (a late call does not
 * shift later steps). Callbacks may call engine_cancel but not engine_submit.
 * cb may be NULL (events are dropped). Within a step, events follow the
 * running batch's order, oldest first; a request's DONE follows its last
 * TOKEN at the same time. O(running) per step, no allocation. */
void engine_advance(struct engine *e, uint64_t now_ns, engine_event_cb *cb, void *cb_ud);

/* Freeze the engine over [from_ns, to_ns): a step that would start inside
 * the window starts at to_ns instead; a step in progress at from_ns is
 * frozen for the whole window and ends (to_ns - from_ns) late. One window
 * at a time: a call replaces the previous one; from_ns >= to_ns clears it.
 * Set it before from_ns. Used for the --stall-at/--stall-for fault. */
void engine_set_stall(struct engine *e, uint64_t from_ns, uint64_t to_ns);

/* The same stall, placed when the first request is submitted: it starts
 * at_ns after that request and lasts for_ns. (A test's client reaches the
 * server an unknown while after the server starts; this keeps a stall at
 * the same point of the client's own schedule.) */
void engine_set_stall_after_first(struct engine *e, uint64_t at_ns, uint64_t for_ns);

/* Make the engine cold again, as after a restart: the prefix cache is
 * emptied (no prompt block cached so far is matched again; blocks in use
 * stay with their sequences, uncached) and the next step to start takes
 * cold_first_ns longer. POST /reset_prefix_cache calls it. */
void engine_reset_cold(struct engine *e);

void engine_get_stats(const struct engine *e, struct engine_stats *out);

#endif
