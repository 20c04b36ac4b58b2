/* ctxcheck.h: the server's context window against the lengths a run
 * asks for, checked once the target has said its window (its /models
 * entry, or run.json's contract.server). */
#ifndef LL_CTXCHECK_H
#define LL_CTXCHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

/* A server's context window, tokens; 0 where it did not say. */
struct ctx_limit {
    uint64_t total;       /* prompt and output together (vLLM max_model_len, SGLang
                           * context_length, TGI max_total_tokens, llama.cpp's per-slot
                           * n_ctx) */
    const char *total_of; /* where total came from: "max_model_len, /models", ... */
    uint64_t prompt;      /* the prompt alone may not pass it (TGI max_input_tokens) */
    const char *prompt_of;
};

/* What the target said of model's window: its /models entry (models, as
 * probed; the entry whose id is model, or the only one) and the contract
 * probe's answers (contract, contract.h's object). Either may be NULL. */
void ctx_limit_read(const json_t *models, const json_t *contract, const char *model,
                    struct ctx_limit *out);

/* The requests of w (their first n schedule indices, drawn as the run
 * draws them) that ask for more than lim: *over_total whose prompt plus
 * max_tokens (the prompt alone with no_output, as an embeddings request)
 * passes lim->total, *over_prompt whose prompt alone reaches it or passes
 * lim->prompt, and *longest the most any asks for. */
void ctx_count(const struct workload *w, uint64_t n, int no_output, const struct ctx_limit *lim,
               uint64_t *over_total, uint64_t *over_prompt, uint64_t *longest);

/* The warning for a run whose requests ask for more than lim (ctx_count
 * over n draws) in buf, or "" when none does: one line, without the
 * "warning: " that the caller prints; its shares read "about" unless n
 * is all the run sends (all). Returns 1 when there is one. */
int ctx_check(const struct workload *w, uint64_t n, int all, int no_output,
              const struct ctx_limit *lim, char *buf, size_t len);

/* The most draws ctx_warn makes: the first this many requests. */
#define CTX_CHECK_DRAWS 2000

/* ctx_check of the window the target said (ctx_limit_read), printed as
 * a warning on stderr: over the run's requests when it sends at most
 * CTX_CHECK_DRAWS (max_requests, 0 = no bound), else over that many.
 * Nothing when the target said no window or every request fits. */
void ctx_warn(const json_t *models, const json_t *contract, const char *model,
              const struct workload *w, uint64_t max_requests, int no_output);

#endif
