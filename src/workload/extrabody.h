/* extrabody.h: --extra-body JSON and a --workload class's "extra_body":
 * fields merged into every request body (sampling settings, a chat
 * template's kwargs, tools, response_format), built once per class before
 * the load and appended to each body as raw bytes (docs/run.md).
 *
 * A key that llmload writes itself for the request's API (extrabody_own)
 * is refused, unless the run says --extra-body-override: then the extra
 * value is sent and llmload leaves its own member out (struct extrabody's
 * skip), so no body carries a key twice. */
#ifndef LL_EXTRABODY_H
#define LL_EXTRABODY_H

#include <stddef.h>

#include <jansson.h>

#include "decode/openai.h"

/* The members llmload writes (each a bit of struct extrabody's skip). */
enum {
    EXTRABODY_MODEL = 1u << 0,
    EXTRABODY_PROMPT = 1u << 1, /* "messages" (chat, anthropic-messages) or "prompt" */
    EXTRABODY_MAX_TOKENS = 1u << 2,
    EXTRABODY_STREAM = 1u << 3,
    EXTRABODY_STREAM_OPTIONS = 1u << 4, /* the OpenAI APIs, when streaming */
    EXTRABODY_IGNORE_EOS = 1u << 5,     /* under --ignore-eos or a class's ignore_eos */
};

/* Largest extra body, serialized (1 MiB: tools lists are large, but every
 * request carries it). */
#define EXTRABODY_MAX_BYTES ((size_t)1 << 20)

/* One class's extra fields, ready to append. */
struct extrabody {
    json_t *json; /* the merged object (owned), NULL = no extra fields */
    char *frag;   /* its members, compact, each as ,"key":value (owned; NULL = none) */
    size_t frag_len;
    unsigned skip; /* EXTRABODY_* members llmload leaves out: the extra body sends them */
    int own;       /* the class gave its own "extra_body" (not only the global one) */
};

/* Whether key is one llmload writes in api's bodies: 0 when not, else the
 * EXTRABODY_* bit of its member. max_completion_tokens counts as
 * max_tokens in openai-chat (servers read it in max_tokens's place). */
unsigned extrabody_own(enum oai_api api, const char *key);

/* --extra-body's value arg: inline JSON, or @FILE to read it from FILE.
 * It must be a JSON object, each key given once. Returns 0 with a new
 * reference in *out, or LL_E_INVAL / LL_E_IO with one line in err naming
 * flag (and FILE with jansson's line and column). */
int extrabody_parse_arg(const char *flag, const char *arg, json_t **out, char *err, size_t errlen);

/* Build out for a request of api from global (--extra-body, may be NULL)
 * and cls (a class's extra_body, may be NULL), cls winning per key. A key
 * llmload writes for api (extrabody_own) is refused unless override; the
 * error names it, the API and where it came from: global_where (e.g.
 * "--extra-body") or cls_where (e.g. "FILE: classes[1] (\"chat\").extra_body").
 * Returns 0 (out zeroed when there is nothing to add), or LL_E_INVAL /
 * LL_E_RANGE with one line in err. Caller frees with extrabody_free. */
int extrabody_build(const json_t *global, const json_t *cls, enum oai_api api, int override,
                    const char *global_where, const char *cls_where, struct extrabody *out,
                    char *err, size_t errlen);

/* Free what out owns and zero it. NULL is fine. */
void extrabody_free(struct extrabody *e);

#endif
