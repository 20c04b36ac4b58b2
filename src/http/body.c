/* body.c: one request's JSON body (body.h). Written with memcpy rather
 * than snprintf: this runs once per request, and three snprintf calls
 * were a tenth of the client's own CPU at 5,000 req/s. */
#include "http/body.h"

#include <string.h>

#include "util/util.h"

/* Append the n bytes at src to b at *at when they fit in cap; *at advances
 * either way, so a too-small buffer shows as *at > cap. */
static void put(char *b, size_t cap, size_t *at, const char *src, size_t n)
{
    if (*at + n <= cap)
        memcpy(b + *at, src, n);
    *at += n;
}

#define LIT(b, cap, at, lit) put((b), (cap), (at), (lit), sizeof(lit) - 1)

/* ,"model":"M" (the model's name is JSON-escaped once, before the load). */
static void put_model(const struct body_params *p, char *b, size_t cap, size_t *at)
{
    LIT(b, cap, at, ",\"model\":\"");
    put(b, cap, at, p->model_json, p->model_json_len);
    LIT(b, cap, at, "\"");
}

/* End the body of at bytes: the --extra-body fields, then the first
 * member's comma becomes the opening brace (an empty body is "{}") and the
 * closing brace goes on. Returns the body's whole length, which is more
 * than cap when it did not fit. */
static size_t close_object(const struct extrabody *x, char *b, size_t cap, size_t at)
{
    if (x && x->frag_len)
        put(b, cap, &at, x->frag, x->frag_len);
    if (at == 0)
        LIT(b, cap, &at, "{");
    else if (cap > 0)
        b[0] = '{';
    LIT(b, cap, &at, "}");
    return at;
}

/* The seed of input i of an embeddings batch: input 0 is the prompt
 * completions would send for spec, the others differ from it and from
 * each other (a bijection of i, mixed into the seed). */
static uint64_t input_seed(uint64_t seed, uint32_t i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ULL;
    return i ? seed ^ (z ^ (z >> 29)) : seed;
}

/* openai-embeddings: {"model":M,"input":["...",...]}, spec->inputs texts
 * of spec->prompt_tokens each; no stream, no output limit. */
static size_t embeddings_write(const struct body_params *p, const struct req_spec *spec,
                               const struct extrabody *x, char *b, size_t cap)
{
    unsigned skip = x ? x->skip : 0;
    uint32_t n = spec->inputs ? spec->inputs : 1;
    size_t at = 0;

    if (!(skip & EXTRABODY_MODEL))
        put_model(p, b, cap, &at);
    if (!(skip & EXTRABODY_PROMPT)) {
        LIT(b, cap, &at, ",\"input\":[");
        for (uint32_t i = 0; i < n; i++) {
            if (i)
                LIT(b, cap, &at, ",");
            LIT(b, cap, &at, "\"");
            size_t room = at < cap ? cap - at : 0;
            at += workload_prompt(input_seed(p->seed, i), spec, at < cap ? b + at : NULL, room);
            LIT(b, cap, &at, "\"");
        }
        LIT(b, cap, &at, "]");
    }
    return close_object(x, b, cap, at);
}

size_t body_write(const struct body_params *p, enum oai_api api, const struct req_spec *spec,
                  const struct extrabody *x, char *b, size_t cap)
{
    if (api == OAI_API_EMBEDDINGS)
        return embeddings_write(p, spec, x, b, cap);
    int chat = api != OAI_API_COMPLETIONS; /* a messages array: chat, Anthropic, Responses */
    int resp = api == OAI_API_RESPONSES;   /* "input" and "max_output_tokens" */
    int ids = !chat && p->prompt_ids;
    unsigned skip = x ? x->skip : 0;
    size_t at = 0;

    /* Every member is written with a comma before it; the first comma
     * becomes the opening brace at the end. */
    if (!(skip & EXTRABODY_MODEL))
        put_model(p, b, cap, &at);
    if (!(skip & EXTRABODY_PROMPT)) {
        if (resp)
            LIT(b, cap, &at, ",\"input\":[");
        else if (chat)
            LIT(b, cap, &at, ",\"messages\":[");
        else if (ids)
            LIT(b, cap, &at, ",\"prompt\":[");
        else
            LIT(b, cap, &at, ",\"prompt\":\"");
        size_t room = at < cap ? cap - at : 0;
        char *dst = at < cap ? b + at : NULL;
        at += ids ? chatbody_prompt_ids(p->seed, &p->prompt_id_range, spec, dst, room)
                  : chatbody_prompt(api, p->seed, spec, dst, room);
        if (chat || ids)
            LIT(b, cap, &at, "]");
        else
            LIT(b, cap, &at, "\"");
    }
    if (!(skip & EXTRABODY_MAX_TOKENS)) {
        char num[LL_U64_DIGITS_MAX];
        if (resp)
            LIT(b, cap, &at, ",\"max_output_tokens\":");
        else
            LIT(b, cap, &at, ",\"max_tokens\":");
        put(b, cap, &at, num, ll_fmt_u64(num, spec->max_tokens));
    }
    if (!(skip & EXTRABODY_STREAM)) {
        if (p->stream)
            LIT(b, cap, &at, ",\"stream\":true");
        else
            LIT(b, cap, &at, ",\"stream\":false");
    }
    /* Anthropic and Responses send usage in every stream; chat and
     * completions when asked. */
    if (p->stream && api != OAI_API_ANTHROPIC && !resp && !(skip & EXTRABODY_STREAM_OPTIONS))
        LIT(b, cap, &at, ",\"stream_options\":{\"include_usage\":true}");
    if (spec->ignore_eos && !(skip & EXTRABODY_IGNORE_EOS))
        LIT(b, cap, &at, ",\"ignore_eos\":true");
    return close_object(x, b, cap, at);
}
