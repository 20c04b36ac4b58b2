/* promptcheck.c: the checks of the prompts a run will send, made before
 * it starts: --prompt-ids against the API and the server's vocabulary,
 * --prompt-id-range, a trace's token IDs, and a calibration that would
 * make prompts shorter than asked (runopts.h). Split from runopts.c. */
#include "cli/runopts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "workload/chatbody.h"
#include "workload/trace.h"

/* --prompt-ids sends synthetic prompts as token IDs to /v1/completions:
 * refuse what would send anything else (cfg->transport.api is parsed). */
int runopts_prompt_ids_check(const struct run_opts *o, struct run_config *cfg, char *err,
                             size_t errlen)
{
    const struct wl_file *f = cfg->workload.classes;
    int cli_chat = cfg->transport.api != OAI_API_COMPLETIONS;
    if (!f && (cfg->transport.api == OAI_API_ANTHROPIC || cfg->transport.api == OAI_API_RESPONSES))
        return runopts_errf(err, errlen,
                            "--prompt-ids: %s takes text prompts "
                            "only; token-ID prompts go to /v1/completions (--api "
                            "openai-completions)",
                            oai_api_name(cfg->transport.api));
    if (!f && cli_chat)
        return runopts_errf(err, errlen,
                            "--prompt-ids: token-ID prompts go to "
                            "/v1/completions; add --api openai-completions");
    for (size_t i = 0; f && i < f->n; i++) {
        const struct wl_class *c = &f->classes[i];
        if (c->api >= 0 && c->api != OAI_API_COMPLETIONS)
            return runopts_errf(err, errlen,
                                "--prompt-ids: class \"%s\" of %s has \"api\": "
                                "\"%s\"; token-ID prompts go to /v1/completions only",
                                c->name, o->workload,
                                c->api == OAI_API_CHAT ? "chat" : oai_api_name(c->api));
        else if (c->api < 0 && cli_chat)
            return runopts_errf(err, errlen,
                                "--prompt-ids: class \"%s\" of %s takes the chat "
                                "API from --api; add --api openai-completions",
                                c->name, o->workload);
    }
    if (o->dataset)
        return runopts_errf(err, errlen,
                            "--prompt-ids: --dataset prompts are text, sent "
                            "verbatim; use one or the other");
    if (o->calibration || o->calibrate)
        return runopts_errf(err, errlen,
                            "--prompt-ids: an ID prompt's length is exact on every "
                            "server; --%s applies to text prompts only",
                            o->calibration ? "calibration" : "calibrate");
    if (cfg->mode == LOAD_SESSIONS)
        return runopts_errf(err, errlen,
                            "--prompt-ids: a session resends its conversation as "
                            "text; --sessions does not take token-ID prompts");
    return 0;
}

int runopts_calib_short(const struct run_config *cfg, char *msg, size_t len)
{
    const struct workload_calib *c = &cfg->workload.calib;
    if (!(c->tokens_per_word > 0) || !(c->intercept_tokens > 0.5))
        return 0;
    double near = 2 * c->intercept_tokens, floor = c->intercept_tokens + c->tokens_per_word;
    uint64_t n = cfg->max_requests && cfg->max_requests < 1000 ? cfg->max_requests : 1000;
    uint64_t below = 0, seen = 0;
    uint32_t shortest = UINT32_MAX;
    const struct trace *tr = cfg->trace;
    if (tr)
        n = LL_MIN(n, (uint64_t)tr->n);
    /* The whole run's lengths, or a sample of its schedule (a run bound by
     * time, or longer than 1000): the words say which, and a replay's are
     * its trace's, not drawn. */
    int whole = (cfg->max_requests && cfg->max_requests <= n) || (tr && tr->n <= n);
    for (uint64_t i = 0; i < n + cfg->n_bursts; i++) {
        uint32_t t;
        if (tr && i < n) {
            /* A replay: the lines llmload writes the prompt of. */
            if (tr->entries[i].prompt_off != TRACE_NONE || tr->entries[i].prompt_tokens == 0)
                continue;
            t = tr->entries[i].prompt_tokens;
        } else if (i < n) {
            struct req_spec sp;
            workload_spec(&cfg->workload, i, &sp);
            t = sp.prompt_tokens;
        } else if (cfg->bursts[i - n].prompt_tokens) {
            t = cfg->bursts[i - n].prompt_tokens;
        } else {
            continue;
        }
        seen++;
        if ((double)t < near) {
            below++;
            shortest = LL_MIN(shortest, t);
        }
    }
    if (below == 0)
        return 0;
    int w = snprintf(msg, len,
                     "%llu of %s%llu prompt lengths %s ask for fewer than %.0f "
                     "tokens, twice the calibration's intercept of %.1f (the template the "
                     "server adds to every prompt): such a prompt is mostly template and keeps "
                     "its length worse",
                     (unsigned long long)below, whole ? "" : "the first ", (unsigned long long)seen,
                     tr      ? "of the trace"
                     : whole ? "drawn"
                             : "of the schedule",
                     ceil(near), c->intercept_tokens);
    if (w > 0 && (size_t)w < len && (double)shortest < floor)
        snprintf(msg + w, len - (size_t)w,
                 "; the shortest, %u, is under the %.0f of the "
                 "template and one word and cannot be reached: it comes out longer",
                 shortest, ceil(floor));
    return 1;
}

/* One ID of --prompt-id-range: decimal digits only, at most 4294967295. */
static int id_of(const char *s, size_t n, uint32_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int runopts_prompt_id_range(const char *v, struct chatbody_id_range *out, char *err, size_t errlen)
{
    const char *comma = strchr(v, ',');
    struct chatbody_id_range r;
    if (v[0] == '-' || (comma && comma[1] == '-'))
        return runopts_errf(err, errlen,
                            "--prompt-id-range: token IDs are 0 or more, got "
                            "\"%s\"",
                            v);
    if (!comma || id_of(v, (size_t)(comma - v), &r.min) != 0 ||
        id_of(comma + 1, strlen(comma + 1), &r.max) != 0)
        return runopts_errf(err, errlen,
                            "--prompt-id-range: expected A,B, two whole numbers "
                            "from 0 to 4294967295 (the IDs are drawn from [A, B]), got \"%s\"",
                            v);
    if (r.min >= r.max)
        return runopts_errf(err, errlen,
                            "--prompt-id-range: A must be below B (two IDs at "
                            "least, to tell requests apart), got \"%s\"",
                            v);
    *out = r;
    return 0;
}

const json_t *runopts_models_entry(const json_t *models, const char *model)
{
    const json_t *data = json_object_get(models, "data"), *e;
    size_t i;
    json_array_foreach(data, i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        if (model && id && strcmp(id, model) == 0)
            return e;
    }
    return json_array_size(data) == 1 ? json_array_get(data, 0) : NULL;
}

int64_t runopts_models_vocab(const json_t *models, const char *model)
{
    const json_t *entry = runopts_models_entry(models, model);
    json_t *n = json_object_get(json_object_get(entry, "meta"), "n_vocab");
    return json_is_integer(n) && json_integer_value(n) > 0 ? (int64_t)json_integer_value(n) : -1;
}

int runopts_vocab_check(const json_t *models, const char *model,
                        const struct chatbody_id_range *range, int range_given, char *err,
                        size_t errlen)
{
    int64_t n = runopts_models_vocab(models, model);
    if (n < 0 || (int64_t)range->max < n)
        return 0;
    const char *flag = range_given ? "--prompt-id-range" : "--prompt-ids";
    if (n < 2) {
        runopts_errf(err, errlen,
                     "%s: the model's vocabulary has %lld token (/models "
                     "meta.n_vocab): too few for token-ID prompts; drop --prompt-ids",
                     flag, (long long)n);
        return -1;
    }
    /* A range that fits, as far from the low (special) IDs as it can. */
    uint32_t b = (uint32_t)LL_MIN(n - 1, (int64_t)CHATBODY_ID_MAX);
    uint32_t a = (uint32_t)LL_MIN((int64_t)CHATBODY_ID_MIN, n / 2);
    if (a >= b)
        a = b - 1;
    runopts_errf(err, errlen,
                 "%s: the model's vocabulary has %lld tokens (IDs 0 to %lld, "
                 "/models meta.n_vocab) but the prompt IDs are drawn from [%u, %u]; pass "
                 "--prompt-id-range A,B with B below %lld (e.g. --prompt-id-range %u,%u)",
                 flag, (long long)n, (long long)(n - 1), range->min, range->max, (long long)n, a,
                 b);
    return -1;
}

int runopts_prompt_ids_check_trace(const struct run_config *cfg, const struct trace *trace,
                                   const char *path, char *err, size_t errlen)
{
    if (!cfg->transport.prompt_ids)
        return 0;
    for (size_t i = 0; i < trace->n; i++) {
        if (trace->entries[i].prompt_off != TRACE_NONE) {
            snprintf(err, errlen,
                     "--prompt-ids: %s:%u: the line carries prompt text, which "
                     "is sent verbatim; a trace replayed with --prompt-ids must give lengths "
                     "only",
                     path, trace->entries[i].line);
            return -1;
        }
    }
    return 0;
}
