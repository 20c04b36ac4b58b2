/* embopts.c: the flags of an openai-embeddings run
 * (runopts_embeddings_check, runopts.h). Apart from runopts.c, which every
 * API shares, so that what this one API refuses reads in one place. */
#include "cli/runopts.h"

#include <math.h>
#include <string.h>

#include "measure/expect.h"
#include "util/util.h"

#define EMB "openai-embeddings"

/* --batch DIST: a count of inputs, bounded by RUNOPTS_MAX_INPUTS: its
 * kind's own bound (fixed, uniform) or its max=. An unbounded draw is
 * refused rather than clamped. */
static int batch_flag(const char *v, struct workload *wl, char *err, size_t errlen)
{
    if (runopts_dist("--batch", v, DIST_UNIT_NONE, 1, &wl->batch, err, errlen) != 0)
        return LL_E_INVAL;
    const struct dist *d = &wl->batch;
    double top = d->kind == DIST_FIXED ? d->a : d->kind == DIST_UNIFORM ? d->b : INFINITY;
    if (d->has_max && d->max < top)
        top = d->max;
    if (!(top <= RUNOPTS_MAX_INPUTS + 0.5))
        return runopts_errf(err, errlen,
                            "--batch: at most %d inputs a request; give a bounded DIST (N, "
                            "uniform:A,B or max=%d), got \"%s\"",
                            RUNOPTS_MAX_INPUTS, RUNOPTS_MAX_INPUTS, v);
    wl->has_batch = 1;
    return 0;
}

/* The one rule of which latencies an answer without a stream (--no-stream,
 * openai-embeddings) has: E2E alone. There is no first token before the
 * last (a TTFT would be E2E by another name), no token pace (TPOT, ITL).
 * latency is "ttft", "tpot", "itl" or "e2e"; 1 when it has a meaning. */
static int streamless_has(const char *latency)
{
    return strcmp(latency, "e2e") == 0;
}

/* Why a latency without a stream has none, after "NAME has no meaning
 * WHOSE": shared by --slo and --expect. */
#define STREAMLESS_WHY "(no stream: no first token before the last, no token pace)"

/* A class or run SLO an answer without a stream cannot meet or miss
 * (streamless_has). where names it ("--slo", "class \"x\"'s slo"),
 * whose the run it is ("for openai-embeddings", "with --no-stream"). */
static int slo_check(const struct slo *s, const char *where, const char *whose, char *err,
                     size_t errlen)
{
    const char *bad = s->ttft_ns && !streamless_has("ttft")   ? "ttft"
                      : s->tpot_ns && !streamless_has("tpot") ? "tpot"
                                                              : NULL;
    if (bad)
        return runopts_errf(err, errlen,
                            "%s: %s has no meaning %s " STREAMLESS_WHY "; judge it by e2e=", where,
                            bad, whose);
    return 0;
}

int runopts_expect_stream_check(const struct expect_set *ex, const struct run_config *cfg,
                                char *err, size_t errlen)
{
    const char *whose = cfg->transport.api == OAI_API_EMBEDDINGS ? "for " EMB
                        : !cfg->transport.stream                 ? "with --no-stream"
                                                                 : NULL;
    for (size_t i = 0; whose && i < ex->n; i++) {
        const struct expect_item *it = &ex->item[i];
        char latency[sizeof it->metric];
        snprintf(latency, sizeof latency, "%.*s", (int)strcspn(it->metric, "_"), it->metric);
        if (it->unit == EXPECT_NS && !streamless_has(latency))
            return runopts_errf(err, errlen,
                                "--expect: \"%s\": %s has no meaning %s " STREAMLESS_WHY
                                "; judge it by e2e_",
                                it->text, latency, whose);
    }
    return 0;
}

/* slo_check of the run's SLO and of every class's own. */
static int slos_check(const struct run_config *cfg, const char *whose, char *err, size_t errlen)
{
    const struct wl_file *f = cfg->workload.classes;
    for (size_t i = 0; f && i < f->n; i++) {
        char where[160];
        snprintf(where, sizeof where, "--workload: class \"%s\"'s slo", f->classes[i].name);
        if (slo_check(&f->classes[i].slo, where, whose, err, errlen) != 0)
            return LL_E_INVAL;
    }
    return slo_check(&cfg->slo, "--slo", whose, err, errlen);
}

/* The workload file: every class on this API (its own "api" or --api's),
 * none with what the API cannot do. */
static int classes_check(const struct run_opts *o, const struct wl_file *f, int emb, char *err,
                         size_t errlen)
{
    for (size_t i = 0; f && i < f->n; i++) {
        const struct wl_class *c = &f->classes[i];
        int c_emb = c->api >= 0 ? c->api == OAI_API_EMBEDDINGS : emb;
        if (c_emb != emb)
            return runopts_errf(err, errlen,
                                "--workload: class \"%s\" of %s is %s while the run is %s: " EMB
                                " does not stream, so it cannot share a run with a "
                                "streamed API; run it apart, with --api " EMB,
                                c->name, o->workload, c_emb ? EMB : "a streamed API",
                                emb ? EMB : "streamed");
        if (!emb)
            continue;
        if (c->prefix.fraction > 0 || c->cancel.kind != WL_CANCEL_NONE)
            return runopts_errf(err, errlen,
                                "--workload: class \"%s\" has %s, which " EMB
                                " does not take (no prefix cache reuse, nothing to cancel "
                                "mid-stream)",
                                c->name, c->prefix.fraction > 0 ? "a prefix" : "cancellations");
    }
    return 0;
}

/* The first flag given that an embedding cannot use, with the reason; or
 * NULL. */
static const char *refused_flag(const struct run_opts *o, const struct run_config *cfg,
                                const char **why)
{
    static const char *const no_output = "an embedding has no output tokens";
    static const char *const no_prefix =
        "every input is unique (the sim keeps no prefix cache for embeddings)";
    static const char *const no_stream = "there is no stream to walk away from";
    /* In the order they are looked at: the first one given is named. */
    const struct {
        int given;
        const char *flag, *why;
    } refused[] = {
        {!!o->output_tokens, "--output-tokens", no_output},
        {!!o->ignore_eos, "--ignore-eos", no_output},
        {!!o->lengths, "--lengths",
         "its rows pair inputs with outputs, and an embedding has no output; give "
         "--prompt-tokens"},
        {cfg->mode == LOAD_SESSIONS, "--sessions", "an embedding is not a conversation"},
        {!!o->prefix_fraction, "--prefix-fraction", no_prefix},
        {!!o->prefix_groups, "--prefix-groups", no_prefix},
        {!!o->prefix_tokens, "--prefix-tokens", no_prefix},
        {!!o->cancel_fraction, "--cancel-fraction", no_stream},
        {!!o->cancel_after, "--cancel-after", no_stream},
        {!!o->cancel_after_tokens, "--cancel-after-tokens", no_stream},
        {!!o->prompt_ids, "--prompt-ids", "its inputs are sent as text"},
        {!!o->dataset, "--dataset", "a batch of inputs is synthetic text of --prompt-tokens each"},
        {!!o->calibrate, "--calibrate",
         "its probes speak OpenAI chat, whose template an embedding's input lacks; fit "
         "with llmload calibrate --api openai-completions (raw text, as embeddings) "
         "and pass --calibration FILE"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(refused); i++) {
        if (refused[i].given) {
            *why = refused[i].why;
            return refused[i].flag;
        }
    }
    return NULL;
}

int runopts_embeddings_refused(const struct run_opts *o, const struct run_config *cfg, char *err,
                               size_t errlen)
{
    const char *why = NULL, *flag = refused_flag(o, cfg, &why);
    return flag ? runopts_errf(err, errlen, "%s: not with --api " EMB ": %s", flag, why) : 0;
}

int runopts_embeddings_check(const struct run_opts *o, struct run_config *cfg, char *err,
                             size_t errlen)
{
    int emb = cfg->transport.api == OAI_API_EMBEDDINGS;
    if (classes_check(o, cfg->workload.classes, emb, err, errlen) != 0)
        return LL_E_INVAL;
    if (!emb) {
        if (o->batch)
            return runopts_errf(err, errlen, "--batch: inputs per request go with --api " EMB);
        /* Not streamed, a TTFT is the whole answer's time and no TPOT
         * exists: a ttft= would judge E2E by another name, a tpot= pass
         * every request. */
        return cfg->transport.stream ? 0 : slos_check(cfg, "with --no-stream", err, errlen);
    }
    if (runopts_embeddings_refused(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    if (slos_check(cfg, "for " EMB, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->batch && batch_flag(o->batch, &cfg->workload, err, errlen) != 0)
        return LL_E_INVAL;
    cfg->transport.stream = 0;
    return 0;
}
