/* extrabody.c: --extra-body and a class's extra_body, checked against the
 * keys llmload writes and serialized once (extrabody.h). */
#include "workload/extrabody.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "workload/jsonfile.h"

struct own_key {
    const char *name;
    unsigned bit;
    unsigned apis; /* the APIs whose body has it: a mask of API_BIT(enum oai_api) */
};

#define API_BIT(api) (1u << (api))
/* Every API but embeddings (no output, so no output limit and no stream). */
#define API_STREAMED                                                                               \
    (API_BIT(OAI_API_CHAT) | API_BIT(OAI_API_COMPLETIONS) | API_BIT(OAI_API_ANTHROPIC) |           \
     API_BIT(OAI_API_RESPONSES))

/* What the body writer (src/http/body.c) writes, key by key, and for
 * which APIs. */
static const struct own_key own_keys[] = {
    {"model", EXTRABODY_MODEL, API_STREAMED | API_BIT(OAI_API_EMBEDDINGS)},
    {"messages", EXTRABODY_PROMPT, API_BIT(OAI_API_CHAT) | API_BIT(OAI_API_ANTHROPIC)},
    {"prompt", EXTRABODY_PROMPT, API_BIT(OAI_API_COMPLETIONS)},
    {"input", EXTRABODY_PROMPT, API_BIT(OAI_API_RESPONSES) | API_BIT(OAI_API_EMBEDDINGS)},
    {"max_tokens", EXTRABODY_MAX_TOKENS,
     API_BIT(OAI_API_CHAT) | API_BIT(OAI_API_COMPLETIONS) | API_BIT(OAI_API_ANTHROPIC)},
    {"max_completion_tokens", EXTRABODY_MAX_TOKENS, API_BIT(OAI_API_CHAT)},
    {"max_output_tokens", EXTRABODY_MAX_TOKENS, API_BIT(OAI_API_RESPONSES)},
    {"stream", EXTRABODY_STREAM, API_STREAMED},
    {"stream_options", EXTRABODY_STREAM_OPTIONS,
     API_BIT(OAI_API_CHAT) | API_BIT(OAI_API_COMPLETIONS)},
    {"ignore_eos", EXTRABODY_IGNORE_EOS, API_STREAMED},
};

unsigned extrabody_own(enum oai_api api, const char *key)
{
    /* An API out of range is read as chat, the default. */
    unsigned a = (unsigned)api < OAI_API_COUNT ? API_BIT(api) : API_BIT(OAI_API_CHAT);
    for (size_t i = 0; i < LL_ARRAY_LEN(own_keys); i++)
        if ((own_keys[i].apis & a) && strcmp(own_keys[i].name, key) == 0)
            return own_keys[i].bit;
    return 0;
}

int extrabody_parse_arg(const char *flag, const char *arg, json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *text = arg, *path = NULL;
    char *file = NULL;
    size_t len = strlen(arg);
    if (arg[0] == '@') {
        path = arg + 1;
        if (!*path) {
            snprintf(err, errlen, "%s: \"@\" needs a file name (@FILE)", flag);
            return LL_E_INVAL;
        }
        char why[512];
        int rc = jsonfile_read_all(path, EXTRABODY_MAX_BYTES, &file, &len, why, sizeof why);
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", flag, why);
            return rc;
        }
        text = file;
    }
    if (jsonfile_skip_blank(text, len) == len) {
        snprintf(err, errlen, "%s: %s%sempty: expected a JSON object such as {\"temperature\":0}",
                 flag, path ? path : "", path ? " is " : "");
        free(file);
        return LL_E_INVAL;
    }
    json_error_t jerr;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!j) {
        char why[768];
        jsonfile_json_error(path ? path : "inline", 1, text, len, why, sizeof why);
        snprintf(err, errlen, "%s: %s%s", flag, why, path ? "" : " (a file's contents: @FILE)");
        free(file);
        return LL_E_INVAL;
    }
    free(file);
    if (!json_is_object(j)) {
        snprintf(err, errlen, "%s: expected a JSON object such as {\"temperature\":0}, got %s%s%s",
                 flag, jsonfile_type_name(j), path ? " in " : "", path ? path : "");
        json_decref(j);
        return LL_E_INVAL;
    }
    *out = j;
    return 0;
}

void extrabody_free(struct extrabody *e)
{
    if (!e)
        return;
    json_decref(e->json);
    free(e->frag);
    memset(e, 0, sizeof *e);
}

/* Append ,"key":value (compact) for each member of obj to the fragment. */
static int serialize(struct extrabody *out, char *err, size_t errlen, const char *where)
{
    size_t cap = 0, at = 0;
    const char *key;
    json_t *val;
    json_object_foreach(out->json, key, val)
    {
        json_t *k = json_string(key);
        char *ks = json_dumps(k, JSON_ENCODE_ANY | JSON_COMPACT);
        char *vs = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
        json_decref(k);
        if (!ks || !vs) {
            free(ks);
            free(vs);
            snprintf(err, errlen, "%s: \"%.64s\": its value cannot be written as JSON", where, key);
            return LL_E_INVAL;
        }
        size_t kn = strlen(ks), vn = strlen(vs), need = at + 2 + kn + vn;
        if (need > EXTRABODY_MAX_BYTES) {
            free(ks);
            free(vs);
            snprintf(err, errlen, "%s: over %zu bytes written out; every request carries it", where,
                     EXTRABODY_MAX_BYTES);
            return LL_E_RANGE;
        }
        out->frag = ll_grow(out->frag, &cap, need + 1, 256);
        out->frag[at++] = ',';
        memcpy(out->frag + at, ks, kn);
        at += kn;
        out->frag[at++] = ':';
        memcpy(out->frag + at, vs, vn);
        at += vn;
        out->frag[at] = '\0';
        free(ks);
        free(vs);
    }
    out->frag_len = at;
    return 0;
}

int extrabody_build(const json_t *global, const json_t *cls, enum oai_api api, int override,
                    const char *global_where, const char *cls_where, struct extrabody *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if ((!global || json_object_size(global) == 0) && (!cls || json_object_size(cls) == 0))
        return 0;
    out->own = cls != NULL;
    out->json = global ? json_deep_copy(global) : json_object();
    if (cls)
        json_object_update(out->json, (json_t *)cls); /* the class wins per key */
    const char *key;
    json_t *val;
    json_object_foreach(out->json, key, val)
    {
        unsigned bit = extrabody_own(api, key);
        if (!bit)
            continue;
        if (!override) {
            const char *where = cls && json_object_get(cls, key) ? cls_where : global_where;
            snprintf(err, errlen,
                     "%s: \"%s\" is a key llmload writes itself in %s requests; drop it, or add "
                     "--extra-body-override to send this value in place of llmload's",
                     where, key, oai_api_name(api));
            extrabody_free(out);
            return LL_E_INVAL;
        }
        out->skip |= bit;
    }
    int rc = serialize(out, err, errlen, cls ? cls_where : global_where);
    if (rc != 0)
        extrabody_free(out);
    return rc;
}
