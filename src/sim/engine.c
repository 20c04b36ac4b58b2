/* engine.c: the simulated continuous-batching engine of `llmload sim`.
 *
 * The engine is a discrete-step machine on absolute time. It always holds
 * at most one planned step: the batch is formed when the step starts (the
 * plan), the step's duration follows from the plan, and at the step's end
 * the plan is executed (prefill progress, one token per decoding sequence)
 * and the next step is planned at that same instant. A request submitted
 * while the planned step has not started yet (its start is >= now) joins
 * that step's admission, exactly as if it had been there when it was
 * planned, so simultaneous arrivals are batched together.
 *
 * Memory: sequences live in a slot pool (indices, never pointers, so the
 * pool can grow) that grows only in engine_submit; each slot keeps its
 * block-table and hash arrays between uses. The KV-cache is an array of
 * blocks sized once at engine_new; its pages are touched only when a block
 * is first used, so a huge kv_tokens costs address space, not memory.
 * Steps allocate nothing: a step costs O(running + admitted) time.
 */
#include "sim/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

#include "util/dlist.h"
#include "util/util.h"

#define NIL UINT32_MAX
#define KV_MAX_BLOCKS (UINT32_MAX / 2)

enum seq_state {
    SEQ_FREE,       /* in the slot free list */
    SEQ_WAITING,    /* in the waiting queue */
    SEQ_RUNNING,    /* in the running batch */
    SEQ_FINISHED,   /* done, DONE event not delivered yet */
    SEQ_CANCELLED,  /* cancelled while its events were being delivered */
};

struct seq {
    uint32_t gen;                 /* bumped on every reuse of the slot */
    uint8_t state;                /* enum seq_state */
    uint8_t decoding;             /* 1 = prefill done, one token per step */
    uint8_t emit_pending;         /* in the current step's emit list */
    uint8_t finish_length;        /* DONE: stopped at max_tokens */
    uint8_t admitted_once;        /* counted in prompt/cached totals */
    uint8_t embed;                /* an embedding: done when its prefill is, no output */
    uint32_t prev, next;          /* links in waiting, running or free list */
    uint32_t prompt_tokens;
    uint32_t target_tokens;       /* output length it will produce */
    uint32_t out_tokens;          /* output tokens emitted so far */
    uint32_t computed_tokens;     /* tokens whose KV is computed */
    uint32_t prefill_target_tokens; /* tokens to prefill before decoding */
    uint32_t sched_tokens;        /* tokens scheduled in the planned step */
    uint32_t cached_tokens;       /* prompt tokens from the prefix cache */
    uint32_t n_registered;        /* prompt blocks offered to the cache */
    uint32_t n_hashes, hashes_cap;
    uint64_t *hashes;             /* cumulative prompt block hashes */
    uint32_t n_blocks, blocks_cap;
    uint32_t *blocks;             /* block table: KV block indices */
    uint64_t arrival_ns;
    void *ud;
};

struct seq_list {
    uint32_t head, tail, count;
};

struct kv_block {
    uint64_t hash;                /* valid when hashed */
    uint32_t ref;                 /* sequences using it */
    uint32_t hnext;               /* hash chain, index + 1, 0 = end */
    uint32_t lru_prev, lru_next;  /* cached-free LRU list, NIL = end */
    uint8_t hashed;               /* 1 = in the prefix-cache table */
};

struct engine {
    struct engine_config cfg;

    /* KV-cache */
    struct kv_block *blocks;
    uint32_t n_blocks;            /* capacity in blocks */
    uint32_t n_virgin;            /* blocks [n_virgin, n_blocks) never used */
    uint32_t *free_stack;         /* free blocks that hold no cached prefix */
    uint32_t n_free_stack;
    uint32_t lru_head, lru_tail, lru_count; /* free blocks still cached */
    uint32_t *buckets;            /* hash table heads, index + 1, 0 = empty */
    uint32_t bucket_mask;
    uint32_t n_used_blocks;       /* blocks with ref > 0 */

    /* sequences */
    struct seq *seqs;
    uint32_t n_seqs_cap;
    uint32_t free_slot;           /* head of the free slot list */
    struct seq_list waiting, running;
    uint32_t *emit;               /* slots with events in the current step */
    uint32_t n_emit;

    /* the planned step */
    uint64_t step_start_ns;
    uint64_t step_end_ns;         /* UINT64_MAX = idle, no step planned */
    uint64_t step_prefill_tokens;
    uint64_t step_decode_seqs;
    uint32_t budget_left_tokens;  /* prefill budget left in the plan */
    int step_preempted;           /* a preemption happened in this plan */

    uint64_t stall_from_ns, stall_to_ns; /* empty when from >= to */
    uint64_t stall_first_at_ns, stall_first_for_ns; /* pending until the first submit */
    int stall_first_pending;
    int cold_pending; /* 1: the next step executed pays cold_first_ns */
    int step_cold;    /* 1: the step planned now was planned cold (pays cold_first_ns) */
    uint64_t rng_state;
    struct engine_stats st;
};

/* ---- small helpers ---------------------------------------------------- */

/* Uniform in (0, 1]: 53 random bits, never 0 (safe for log). */
static double draw_unit(uint64_t *s)
{
    return ((double)(rng_splitmix64(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

/* One standard normal by Box-Muller; always consumes two draws. */
static double draw_normal(uint64_t *s)
{
    double u1 = draw_unit(s), u2 = draw_unit(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint64_t div_ceil_u64(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint32_t hash_bucket(const struct engine *e, uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (uint32_t)h & e->bucket_mask;
}

/* ---- lists of sequences ----------------------------------------------- */

static void list_init(struct seq_list *l)
{
    l->head = l->tail = NIL;
    l->count = 0;
}

/* Link sequence i between prev and next (NIL for the list's ends), which
 * are neighbours in l. */
static void list_link(struct engine *e, struct seq_list *l, uint32_t i, uint32_t prev,
                      uint32_t next)
{
    struct seq *s = &e->seqs[i];
    s->prev = prev;
    s->next = next;
    if (prev != NIL)
        e->seqs[prev].next = i;
    else
        l->head = i;
    if (next != NIL)
        e->seqs[next].prev = i;
    else
        l->tail = i;
    l->count++;
}

static void list_push_back(struct engine *e, struct seq_list *l, uint32_t i)
{
    list_link(e, l, i, l->tail, NIL);
}

static void list_push_front(struct engine *e, struct seq_list *l, uint32_t i)
{
    list_link(e, l, i, NIL, l->head);
}

static void list_remove(struct engine *e, struct seq_list *l, uint32_t i)
{
    struct seq *s = &e->seqs[i];
    DLIST_IDX_UNLINK(e->seqs, l->head, l->tail, i, prev, next, NIL);
    s->prev = s->next = NIL;
    l->count--;
}

/* ---- the KV-cache ------------------------------------------------------- */

static uint32_t kv_free_blocks(const struct engine *e)
{
    return e->n_free_stack + (e->n_blocks - e->n_virgin) + e->lru_count;
}

static uint32_t kv_lookup(const struct engine *e, uint64_t h)
{
    for (uint32_t b = e->buckets[hash_bucket(e, h)]; b != 0; b = e->blocks[b - 1].hnext)
        if (e->blocks[b - 1].hash == h)
            return b - 1;
    return NIL;
}

static void kv_table_insert(struct engine *e, uint32_t b, uint64_t h)
{
    uint32_t k = hash_bucket(e, h);
    e->blocks[b].hash = h;
    e->blocks[b].hashed = 1;
    e->blocks[b].hnext = e->buckets[k];
    e->buckets[k] = b + 1;
}

static void kv_table_remove(struct engine *e, uint32_t b)
{
    uint32_t *link = &e->buckets[hash_bucket(e, e->blocks[b].hash)];
    while (*link != b + 1)
        link = &e->blocks[*link - 1].hnext;
    *link = e->blocks[b].hnext;
    e->blocks[b].hnext = 0;
    e->blocks[b].hashed = 0;
}

static void kv_lru_remove(struct engine *e, uint32_t b)
{
    DLIST_IDX_UNLINK(e->blocks, e->lru_head, e->lru_tail, b, lru_prev, lru_next, NIL);
    e->lru_count--;
}

static void kv_lru_push(struct engine *e, uint32_t b)
{
    struct kv_block *k = &e->blocks[b];
    k->lru_prev = e->lru_tail;
    k->lru_next = NIL;
    if (e->lru_tail != NIL)
        e->blocks[e->lru_tail].lru_next = b;
    else
        e->lru_head = b;
    e->lru_tail = b;
    e->lru_count++;
}

/* Take a free block (caller checked kv_free_blocks() > 0): a never-cached
 * one if any, else evict the least recently freed cached block. */
static uint32_t kv_alloc(struct engine *e)
{
    uint32_t b;

    if (e->n_free_stack > 0) {
        b = e->free_stack[--e->n_free_stack];
    } else if (e->n_virgin < e->n_blocks) {
        b = e->n_virgin++;
    } else {
        b = e->lru_head;
        kv_lru_remove(e, b);
        kv_table_remove(e, b);
    }
    e->blocks[b].ref = 1;
    e->n_used_blocks++;
    return b;
}

/* Add a reference to a block found in the prefix-cache table. */
static void kv_ref(struct engine *e, uint32_t b)
{
    if (e->blocks[b].ref++ == 0) {
        kv_lru_remove(e, b);
        e->n_used_blocks++;
    }
}

static void kv_unref(struct engine *e, uint32_t b)
{
    if (--e->blocks[b].ref > 0)
        return;
    e->n_used_blocks--;
    if (e->blocks[b].hashed)
        kv_lru_push(e, b);
    else
        e->free_stack[e->n_free_stack++] = b;
}

/* Release a sequence's blocks, last first, so that a prefix's tail blocks
 * are the first to be evicted from the cache. */
static void seq_free_blocks(struct engine *e, struct seq *s)
{
    while (s->n_blocks > 0)
        kv_unref(e, s->blocks[--s->n_blocks]);
}

/* Grow s's block table to cover tokens [0, tokens); the caller checked
 * that enough blocks are free. */
static void seq_alloc_blocks(struct engine *e, struct seq *s, uint64_t tokens)
{
    uint64_t want = div_ceil_u64(tokens, e->cfg.block_tokens);
    while (s->n_blocks < want)
        s->blocks[s->n_blocks++] = kv_alloc(e);
}

static uint32_t seq_blocks_short(const struct engine *e, const struct seq *s, uint64_t tokens)
{
    uint64_t want = div_ceil_u64(tokens, e->cfg.block_tokens);
    return want > s->n_blocks ? (uint32_t)(want - s->n_blocks) : 0;
}

/* Offer the prompt blocks that s has fully computed to the prefix cache.
 * A block whose hash is already cached (another sequence computed the same
 * prefix at the same time) stays private. */
static void seq_register_blocks(struct engine *e, struct seq *s)
{
    uint32_t full = s->computed_tokens / e->cfg.block_tokens;
    uint32_t upto = LL_MIN(full, s->n_hashes);

    if (!e->cfg.prefix_cache)
        return;
    for (; s->n_registered < upto; s->n_registered++) {
        uint32_t b = s->blocks[s->n_registered];
        uint64_t h = s->hashes[s->n_registered];
        if (!e->blocks[b].hashed && kv_lookup(e, h) == NIL)
            kv_table_insert(e, b, h);
    }
}

/* ---- slots ---------------------------------------------------------------- */

static void slots_grow(struct engine *e)
{
    uint32_t old = e->n_seqs_cap;
    uint32_t cap = old ? old * 2 : 64;

    e->seqs = ll_realloc(e->seqs, (size_t)cap * sizeof(*e->seqs));
    e->emit = ll_realloc(e->emit, (size_t)cap * sizeof(*e->emit));
    memset(e->seqs + old, 0, (size_t)(cap - old) * sizeof(*e->seqs));
    /* Chain the new slots so that the lowest index is handed out first. */
    for (uint32_t i = cap; i-- > old;) {
        e->seqs[i].state = SEQ_FREE;
        e->seqs[i].gen = 1;
        e->seqs[i].next = e->free_slot;
        e->free_slot = i;
    }
    e->n_seqs_cap = cap;
}

static void slot_release(struct engine *e, uint32_t i)
{
    struct seq *s = &e->seqs[i];
    s->state = SEQ_FREE;
    s->emit_pending = 0;
    s->gen++;
    s->ud = NULL;
    s->next = e->free_slot;
    e->free_slot = i;
}

/* ---- planning a step ---------------------------------------------------- */

static void seq_preempt(struct engine *e, uint32_t i)
{
    struct seq *s = &e->seqs[i];

    list_remove(e, &e->running, i);
    seq_free_blocks(e, s);
    s->state = SEQ_WAITING;
    s->decoding = 0;
    s->sched_tokens = 0;
    s->computed_tokens = 0;
    s->n_registered = 0;
    /* Recompute: prefill the prompt and every token emitted so far; the
     * step that completes it emits the next token. */
    s->prefill_target_tokens = s->prompt_tokens + s->out_tokens;
    list_push_front(e, &e->waiting, i);
    e->st.preemptions_total++;
    e->step_preempted = 1;
}

/* Schedule every running sequence, oldest first: a decoding one takes one
 * token, a prefilling one the next chunk of the prefill budget. When blocks
 * run short the newest running sequence is preempted, which may be the one
 * being scheduled (then nothing after it remains). */
static void plan_running(struct engine *e)
{
    uint32_t i = e->running.head;

    while (i != NIL) {
        struct seq *s = &e->seqs[i];
        uint64_t want, upto;
        int self_preempted = 0;

        if (s->decoding) {
            want = 1;
        } else {
            want = LL_MIN((uint64_t)(s->prefill_target_tokens - s->computed_tokens),
                          (uint64_t)e->budget_left_tokens);
            if (want == 0) {
                s->sched_tokens = 0;
                i = s->next;
                continue;
            }
        }
        upto = (uint64_t)s->computed_tokens + want;
        while (kv_free_blocks(e) < seq_blocks_short(e, s, upto)) {
            uint32_t victim = e->running.tail;
            seq_preempt(e, victim);
            if (victim == i) {
                self_preempted = 1;
                break;
            }
        }
        if (self_preempted)
            break;
        seq_alloc_blocks(e, s, upto);
        s->sched_tokens = (uint32_t)want;
        if (s->decoding) {
            e->step_decode_seqs++;
        } else {
            e->step_prefill_tokens += want;
            e->budget_left_tokens -= (uint32_t)want;
        }
        i = s->next;
    }
}

/* Admit waiting requests FIFO into the planned step while a sequence slot,
 * prefill budget and KV blocks for their first chunk are available. The
 * head that does not fit blocks the queue (no overtaking). Not done in a
 * step that preempted: the freed blocks go to the running batch first. */
static void plan_admit(struct engine *e)
{
    const uint32_t bt = e->cfg.block_tokens;

    if (e->step_preempted)
        return;
    while (e->waiting.count > 0 && e->running.count < e->cfg.max_num_seqs &&
           e->budget_left_tokens > 0) {
        uint32_t i = e->waiting.head;
        struct seq *s = &e->seqs[i];
        uint32_t matched = 0, unreferenced = 0;
        uint64_t chunk, computed;

        if (s->arrival_ns > e->step_start_ns)
            break;
        if (e->cfg.prefix_cache) {
            /* Keep at least one token to compute: it yields the logits. */
            uint32_t max_match = LL_MIN(s->n_hashes, (s->prefill_target_tokens - 1) / bt);
            while (matched < max_match) {
                uint32_t b = kv_lookup(e, s->hashes[matched]);
                if (b == NIL)
                    break;
                unreferenced += e->blocks[b].ref == 0;
                matched++;
            }
        }
        computed = (uint64_t)matched * bt;
        chunk = LL_MIN(s->prefill_target_tokens - computed, (uint64_t)e->budget_left_tokens);
        if (kv_free_blocks(e) < unreferenced ||
            kv_free_blocks(e) - unreferenced < div_ceil_u64(computed + chunk, bt) - matched)
            break;

        list_remove(e, &e->waiting, i);
        list_push_back(e, &e->running, i);
        s->state = SEQ_RUNNING;
        for (uint32_t k = 0; k < matched; k++) {
            uint32_t b = kv_lookup(e, s->hashes[k]);
            kv_ref(e, b);
            s->blocks[s->n_blocks++] = b;
        }
        s->computed_tokens = (uint32_t)computed;
        s->n_registered = matched;
        seq_alloc_blocks(e, s, computed + chunk);
        s->sched_tokens = (uint32_t)chunk;
        e->step_prefill_tokens += chunk;
        e->budget_left_tokens -= (uint32_t)chunk;
        if (!s->admitted_once) {
            s->admitted_once = 1;
            s->cached_tokens = (uint32_t)computed;
            e->st.cached_tokens_total += computed;
            e->st.prompt_tokens_total += s->prompt_tokens - computed;
        }
    }
}

/* Set step_end_ns from the plan's work, the start and the stall window:
 * a step that would start inside [from, to) starts at to; a step running
 * across from is frozen for the whole window and ends later by its length. */
static void plan_set_end(struct engine *e)
{
    const struct engine_config *c = &e->cfg;
    uint64_t dur = c->step_base_ns + e->step_prefill_tokens * c->step_prefill_token_ns +
                   e->step_decode_seqs * c->step_seq_ns;
    uint64_t from = e->stall_from_ns, to = e->stall_to_ns;

    e->step_cold = e->cold_pending;
    if (e->step_cold)
        dur += c->cold_first_ns;
    if (from < to && e->step_start_ns >= from && e->step_start_ns < to)
        e->step_start_ns = to;
    e->step_end_ns = e->step_start_ns + dur;
    if (from < to && e->step_start_ns < from && e->step_end_ns > from)
        e->step_end_ns += to - from;
}

/* Plan the step that starts at start_ns (or later, when the batch is empty
 * and the first waiting request arrives later). Idle when no work. */
static void plan_step(struct engine *e, uint64_t start_ns)
{
    e->step_prefill_tokens = 0;
    e->step_decode_seqs = 0;
    e->step_preempted = 0;
    e->budget_left_tokens = e->cfg.prefill_chunk_tokens;
    if (e->running.count == 0) {
        if (e->waiting.count == 0) {
            e->step_end_ns = UINT64_MAX;
            return;
        }
        start_ns = LL_MAX(start_ns, e->seqs[e->waiting.head].arrival_ns);
    }
    e->step_start_ns = start_ns;
    plan_running(e);
    plan_admit(e);
    if (e->step_prefill_tokens == 0 && e->step_decode_seqs == 0) {
        /* Cannot happen with a valid config (an empty batch always admits
         * the head); kept so that no state can loop. */
        e->step_end_ns = UINT64_MAX;
        return;
    }
    plan_set_end(e);
}

/* ---- executing a step ----------------------------------------------------- */

/* Running sequence i is done: out of the batch, its cache blocks freed,
 * counted a success; its DONE event goes with its next emit. */
static void seq_finish(struct engine *e, uint32_t i)
{
    struct seq *s = &e->seqs[i];
    list_remove(e, &e->running, i);
    seq_free_blocks(e, s);
    s->state = SEQ_FINISHED;
    e->st.success_total++;
}

/* Sequence i has an event for this step's end (a token, or its end). */
static void seq_emit(struct engine *e, uint32_t i)
{
    e->seqs[i].emit_pending = 1;
    e->emit[e->n_emit++] = i;
}

/* Apply the planned step's work and queue its events in e->emit. */
static void step_execute(struct engine *e)
{
    uint32_t i = e->running.head;

    e->n_emit = 0;
    /* Only the step that paid the delay ends the cold state: a reset that
     * came while this step ran leaves it for the next. */
    if (e->step_cold)
        e->cold_pending = e->step_cold = 0;
    while (i != NIL) {
        struct seq *s = &e->seqs[i];
        uint32_t next = s->next;

        if (s->sched_tokens == 0) {
            i = next;
            continue;
        }
        if (!s->decoding) {
            s->computed_tokens += s->sched_tokens;
            s->sched_tokens = 0;
            seq_register_blocks(e, s);
            if (s->computed_tokens < s->prefill_target_tokens) {
                i = next;
                continue;
            }
            if (s->embed) {
                /* Pooled at the end of its prefill: done, no token. */
                seq_finish(e, i);
                seq_emit(e, i);
                i = next;
                continue;
            }
            s->decoding = 1;
        } else {
            s->computed_tokens++;
            s->sched_tokens = 0;
        }
        s->out_tokens++;
        e->st.generation_tokens_total++;
        if (s->out_tokens >= s->target_tokens)
            seq_finish(e, i);
        seq_emit(e, i);
        i = next;
    }
    e->st.steps_total++;
    e->st.prefill_tokens_stepped_total += e->step_prefill_tokens;
    e->st.decode_seqs_stepped_total += e->step_decode_seqs;
}

static void fill_event(struct engine_event *ev, enum engine_event_kind kind, uint32_t i,
                       const struct seq *s, uint64_t time_ns)
{
    ev->kind = kind;
    ev->id = ((uint64_t)s->gen << 32) | i;
    ev->ud = s->ud;
    ev->time_ns = time_ns;
    ev->n_tokens = kind == ENGINE_EV_TOKEN ? 1 : 0;
    ev->output_tokens = s->out_tokens;
    ev->prompt_tokens = s->prompt_tokens;
    ev->cached_tokens = s->cached_tokens;
    ev->finish_length = kind == ENGINE_EV_DONE ? s->finish_length : 0;
}

/* Deliver the step's events. A callback may cancel any request: a pending
 * one then gets no further events, and its slot is released here. */
static void step_emit(struct engine *e, uint64_t time_ns, engine_event_cb *cb, void *cb_ud)
{
    struct engine_event ev;

    for (uint32_t k = 0; k < e->n_emit; k++) {
        uint32_t i = e->emit[k];
        struct seq *s = &e->seqs[i];

        if (s->state != SEQ_CANCELLED && cb != NULL) {
            fill_event(&ev, ENGINE_EV_TOKEN, i, s, time_ns);
            if (!s->embed)
                cb(cb_ud, &ev);
            if (s->state == SEQ_FINISHED) {
                fill_event(&ev, ENGINE_EV_DONE, i, s, time_ns);
                cb(cb_ud, &ev);
            }
        }
        if (s->state == SEQ_FINISHED || s->state == SEQ_CANCELLED)
            slot_release(e, i);
        else
            s->emit_pending = 0;
    }
    e->n_emit = 0;
}

/* ---- public API ------------------------------------------------------------- */

int engine_config_check(const struct engine_config *cfg, char *err, size_t errlen)
{
    const char *why = NULL;

    if (cfg->max_num_seqs < 1)
        why = "max_num_seqs must be at least 1";
    else if (cfg->block_tokens < 1)
        why = "block_tokens must be at least 1";
    else if (cfg->kv_tokens < cfg->block_tokens)
        why = "kv_tokens must hold at least one block";
    else if (cfg->kv_tokens / cfg->block_tokens > KV_MAX_BLOCKS)
        why = "kv_tokens / block_tokens must be below 2^31 blocks";
    else if (cfg->prefill_chunk_tokens < 1)
        why = "prefill_chunk_tokens must be at least 1";
    else if (!(cfg->natural_len_median_tokens >= 1.0 && cfg->natural_len_median_tokens <= 1e9))
        why = "natural_len_median_tokens must be in [1, 1e9]";
    else if (!(cfg->natural_len_sigma >= 0.0 && cfg->natural_len_sigma <= 10.0))
        why = "natural_len_sigma must be in [0, 10]";
    else if (cfg->step_base_ns > LL_NS_PER_SEC * 3600)
        why = "step_base_ns must be at most 1 h";
    else if (cfg->step_prefill_token_ns > LL_NS_PER_SEC)
        why = "step_prefill_token_ns must be at most 1 s";
    else if (cfg->step_seq_ns > LL_NS_PER_SEC)
        why = "step_seq_ns must be at most 1 s";
    if (why == NULL)
        return 0;
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return LL_E_INVAL;
}

struct engine *engine_new(const struct engine_config *cfg)
{
    struct engine *e;
    uint64_t buckets = 1;

    if (engine_config_check(cfg, NULL, 0) != 0)
        return NULL;
    e = ll_calloc(1, sizeof(*e));
    e->cfg = *cfg;
    e->n_blocks = (uint32_t)(cfg->kv_tokens / cfg->block_tokens);
    /* calloc'd and malloc'd: pages are touched only as blocks get used. */
    e->blocks = ll_calloc(e->n_blocks, sizeof(*e->blocks));
    e->free_stack = ll_malloc((size_t)e->n_blocks * sizeof(*e->free_stack));
    while (buckets < e->n_blocks)
        buckets <<= 1;
    e->buckets = ll_calloc(buckets, sizeof(*e->buckets));
    e->bucket_mask = (uint32_t)(buckets - 1);
    e->lru_head = e->lru_tail = NIL;
    e->free_slot = NIL;
    list_init(&e->waiting);
    list_init(&e->running);
    e->step_end_ns = UINT64_MAX;
    e->rng_state = cfg->seed;
    e->cold_pending = 1;
    return e;
}

void engine_reset_cold(struct engine *e)
{
    for (uint32_t b = 0; b < e->n_virgin; b++) {
        if (!e->blocks[b].hashed)
            continue;
        kv_table_remove(e, b);
        if (e->blocks[b].ref == 0) {
            kv_lru_remove(e, b);
            e->free_stack[e->n_free_stack++] = b;
        }
    }
    e->cold_pending = 1;
}

void engine_free(struct engine *e)
{
    if (e == NULL)
        return;
    for (uint32_t i = 0; i < e->n_seqs_cap; i++) {
        free(e->seqs[i].hashes);
        free(e->seqs[i].blocks);
    }
    free(e->seqs);
    free(e->emit);
    free(e->blocks);
    free(e->free_stack);
    free(e->buckets);
    free(e);
}

/* Output length: min(max_tokens, round(median * exp(sigma * z))), at least
 * 1; one normal draw per accepted request, ignore_eos included, so that the
 * i-th accepted request always gets the i-th draw. */
static uint32_t draw_target(struct engine *e, const struct engine_req *req, uint8_t *length_out)
{
    double z = draw_normal(&e->rng_state);
    double natural = floor(e->cfg.natural_len_median_tokens *
                           exp(e->cfg.natural_len_sigma * z) + 0.5);

    if (natural < 1.0)
        natural = 1.0;
    if (req->ignore_eos || natural >= (double)req->max_tokens) {
        *length_out = 1;
        return req->max_tokens;
    }
    *length_out = 0;
    return (uint32_t)natural;
}

int engine_submit(struct engine *e, uint64_t now_ns, const struct engine_req *req,
                  uint64_t *id_out)
{
    if (e->stall_first_pending) {
        e->stall_first_pending = 0;
        engine_set_stall(e, now_ns + e->stall_first_at_ns,
                         now_ns + e->stall_first_at_ns + e->stall_first_for_ns);
    }
    const uint32_t bt = e->cfg.block_tokens;
    uint64_t capacity_tokens = (uint64_t)e->n_blocks * bt;
    uint32_t n_hashes, i;
    struct seq *s;
    uint8_t finish_length;
    uint32_t target;
    uint64_t max_blocks;

    if (req->prompt_tokens < 1 || (req->max_tokens < 1 && !req->embed) ||
        (req->n_block_hashes > 0 && req->block_hashes == NULL))
        return LL_E_INVAL;
    if (req->prompt_tokens > capacity_tokens)
        return LL_E_RANGE;
    if (e->cfg.queue_limit > 0 && e->waiting.count >= e->cfg.queue_limit) {
        e->st.rejected_total++;
        return LL_E_FULL;
    }

    /* An embedding draws no output length, so a mix of both keeps the
     * generating requests' draws in their order among themselves. */
    finish_length = 0;
    target = req->embed ? 0 : draw_target(e, req, &finish_length);
    /* The KV capacity is also the context length: the last token's KV is
     * never needed, so prompt + output - 1 tokens must fit. Longer outputs
     * stop at the limit with finish_length set, as a model at its context
     * length does. This also guarantees the oldest sequence always fits. */
    if ((uint64_t)req->prompt_tokens + target - 1 > capacity_tokens) {
        target = (uint32_t)(capacity_tokens - req->prompt_tokens + 1);
        finish_length = 1;
    }
    n_hashes = LL_MIN(req->n_block_hashes, req->prompt_tokens / bt);
    max_blocks = div_ceil_u64((uint64_t)req->prompt_tokens + target, bt);

    if (e->free_slot == NIL)
        slots_grow(e);
    i = e->free_slot;
    s = &e->seqs[i];
    e->free_slot = s->next;

    if (s->hashes_cap < n_hashes) {
        s->hashes = ll_realloc(s->hashes, (size_t)n_hashes * sizeof(*s->hashes));
        s->hashes_cap = n_hashes;
    }
    if (n_hashes > 0)
        memcpy(s->hashes, req->block_hashes, (size_t)n_hashes * sizeof(*s->hashes));
    if (s->blocks_cap < max_blocks) {
        s->blocks = ll_realloc(s->blocks, (size_t)max_blocks * sizeof(*s->blocks));
        s->blocks_cap = (uint32_t)max_blocks;
    }
    s->n_hashes = n_hashes;
    s->n_blocks = 0;
    s->state = SEQ_WAITING;
    s->decoding = 0;
    s->emit_pending = 0;
    s->finish_length = finish_length;
    s->admitted_once = 0;
    s->embed = req->embed ? 1 : 0;
    s->prompt_tokens = req->prompt_tokens;
    s->target_tokens = target;
    s->out_tokens = 0;
    s->computed_tokens = 0;
    s->prefill_target_tokens = req->prompt_tokens;
    s->sched_tokens = 0;
    s->cached_tokens = 0;
    s->n_registered = 0;
    s->arrival_ns = now_ns;
    s->ud = req->ud;
    list_push_back(e, &e->waiting, i);
    if (id_out != NULL)
        *id_out = ((uint64_t)s->gen << 32) | i;

    if (e->step_end_ns == UINT64_MAX) {
        plan_step(e, now_ns);
    } else if (now_ns <= e->step_start_ns) {
        /* The planned step has not started: join its admission. */
        plan_admit(e);
        plan_set_end(e);
    }
    return 0;
}

void engine_cancel(struct engine *e, uint64_t id)
{
    uint32_t i = (uint32_t)id;
    struct seq *s;

    if (i >= e->n_seqs_cap)
        return;
    s = &e->seqs[i];
    if (s->gen != (uint32_t)(id >> 32))
        return;
    switch (s->state) {
    case SEQ_WAITING:
        list_remove(e, &e->waiting, i);
        break;
    case SEQ_RUNNING:
        list_remove(e, &e->running, i);
        seq_free_blocks(e, s);
        break;
    case SEQ_FINISHED:
        if (s->emit_pending)
            s->state = SEQ_CANCELLED; /* suppress its DONE */
        return;
    default:
        return;
    }
    s->sched_tokens = 0;
    if (s->emit_pending)
        s->state = SEQ_CANCELLED; /* step_emit releases the slot */
    else
        slot_release(e, i);
}

uint64_t engine_next_ns(const struct engine *e)
{
    return e->step_end_ns;
}

void engine_advance(struct engine *e, uint64_t now_ns, engine_event_cb *cb, void *cb_ud)
{
    while (e->step_end_ns != UINT64_MAX && e->step_end_ns <= now_ns) {
        uint64_t t = e->step_end_ns;
        step_execute(e);
        step_emit(e, t, cb, cb_ud);
        plan_step(e, t);
    }
}

void engine_set_stall_after_first(struct engine *e, uint64_t at_ns, uint64_t for_ns)
{
    e->stall_first_at_ns = at_ns;
    e->stall_first_for_ns = for_ns;
    e->stall_first_pending = for_ns > 0;
}

void engine_set_stall(struct engine *e, uint64_t from_ns, uint64_t to_ns)
{
    e->stall_from_ns = from_ns;
    e->stall_to_ns = to_ns;
    if (e->step_end_ns != UINT64_MAX)
        plan_set_end(e);
}

void engine_get_stats(const struct engine *e, struct engine_stats *out)
{
    *out = e->st;
    out->running = e->running.count;
    out->waiting = e->waiting.count;
    out->kv_used_tokens = (uint64_t)e->n_used_blocks * e->cfg.block_tokens;
    out->kv_usage_frac = (double)out->kv_used_tokens / (double)e->cfg.kv_tokens;
    out->step_end_ns = e->step_end_ns;
    if (e->step_end_ns != UINT64_MAX) {
        out->step_start_ns = e->step_start_ns;
        out->step_prefill_tokens = e->step_prefill_tokens;
        out->step_decode_seqs = e->step_decode_seqs;
    }
}
