/* ctxcheck.c: the server's context window against the run's lengths
 * (ctxcheck.h). A request past the window is refused (vLLM, SGLang, TGI:
 * an http_4xx) or has its output cut when the window fills (llama.cpp,
 * the sim: finish_reason "length"); either way the run measures other
 * lengths than it asked for, so say so before the figures are read. */
#include "cli/ctxcheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/runopts.h"
#include "util/util.h"

/* A positive whole number of tokens in v, else 0. */
static uint64_t tokens_of(const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) > 0)
        return (uint64_t)json_integer_value(v);
    return 0;
}

void ctx_limit_read(const json_t *models, const json_t *contract, const char *model,
                    struct ctx_limit *out)
{
    /* The total window, first said first: each engine says it in one place. */
    static const struct {
        const char *endpoint, *key, *of;
    } totals[] = {
        {"props", "n_ctx", "n_ctx, /props"},
        {"get_server_info", "context_length", "context_length, /get_server_info"},
        {"info", "max_total_tokens", "max_total_tokens, /info"},
    };
    memset(out, 0, sizeof *out);
    out->total = tokens_of(json_object_get(runopts_models_entry(models, model), "max_model_len"));
    if (out->total)
        out->total_of = "max_model_len, /models";
    for (size_t i = 0; !out->total && i < LL_ARRAY_LEN(totals); i++) {
        out->total = tokens_of(
            json_object_get(json_object_get(contract, totals[i].endpoint), totals[i].key));
        out->total_of = out->total ? totals[i].of : NULL;
    }
    out->prompt = tokens_of(json_object_get(json_object_get(contract, "info"), "max_input_tokens"));
    out->prompt_of = out->prompt ? "max_input_tokens, /info" : NULL;
}

void ctx_count(const struct workload *w, uint64_t n, int no_output, const struct ctx_limit *lim,
               uint64_t *over_total, uint64_t *over_prompt, uint64_t *longest)
{
    *over_total = *over_prompt = *longest = 0;
    for (uint64_t i = 0; i < n; i++) {
        struct req_spec s;
        workload_spec(w, i, &s);
        uint64_t p = s.prompt_tokens, asked = p + (no_output ? 0 : s.max_tokens);
        if (asked > *longest)
            *longest = asked;
        if ((lim->total && p >= lim->total) || (lim->prompt && p > lim->prompt))
            (*over_prompt)++;
        else if (lim->total && asked > lim->total)
            (*over_total)++;
    }
}

/* n of all as a percentage with the precision it needs: "0.05%", "37%". */
static void share(uint64_t n, uint64_t all, char *buf, size_t len)
{
    double pct = 100.0 * (double)n / (double)all;
    snprintf(buf, len, pct < 1 ? "%.2g%%" : "%.0f%%", pct);
}

int ctx_check(const struct workload *w, uint64_t n, int all, int no_output,
              const struct ctx_limit *lim, char *buf, size_t len)
{
    uint64_t total, prompt, longest;
    char a[16], b[16];
    if (len)
        buf[0] = '\0';
    if ((!lim->total && !lim->prompt) || n == 0)
        return 0;
    ctx_count(w, n, no_output, lim, &total, &prompt, &longest);
    if (!total && !prompt)
        return 0;
    share(total, n, a, sizeof a);
    share(prompt, n, b, sizeof b);
    const char *of = all ? "" : "about ";
    if (lim->total && total)
        snprintf(buf, len,
                 "the model's context is %" PRIu64 " tokens (%s) and %s%s of the requests ask "
                 "for more (prompt + max_tokens, up to %" PRIu64 "): a server refuses them or "
                 "ends their output early%s%s%s",
                 lim->total, lim->total_of, of, a, longest, prompt ? "; " : "", prompt ? b : "",
                 prompt ? " more have prompts it cannot take at all" : "");
    else if (lim->total)
        snprintf(buf, len,
                 "the model's context is %" PRIu64 " tokens (%s) and %s%s of the requests have "
                 "prompts that fill it: a server refuses them",
                 lim->total, lim->total_of, of, b);
    else
        snprintf(buf, len,
                 "the server takes prompts of at most %" PRIu64 " tokens (%s) and %s%s of the "
                 "requests have longer ones: it refuses them",
                 lim->prompt, lim->prompt_of, of, b);
    return 1;
}

void ctx_warn(const json_t *models, const json_t *contract, const char *model,
              const struct workload *w, uint64_t max_requests, int no_output)
{
    struct ctx_limit lim;
    char msg[600];
    int all = max_requests > 0 && max_requests <= CTX_CHECK_DRAWS;
    ctx_limit_read(models, contract, model, &lim);
    if (ctx_check(w, all ? max_requests : CTX_CHECK_DRAWS, all, no_output, &lim, msg, sizeof msg))
        ll_errorf("warning: %s", msg);
}
