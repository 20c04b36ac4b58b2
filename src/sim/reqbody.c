/* reqbody.c: the request bodies the sim reads (api.h): the completion and
 * chat bodies (api_parse_completion) and /tokenize's (api_parse_tokenize).
 * api.c, which answers the endpoints and writes the responses, calls them;
 * nothing here writes a response. */
#include "sim/api.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "util/util.h"
#include "workload/image.h"

/* The largest max_tokens a body may ask (a larger one is a 400). */
#define API_MAX_TOKENS_LIMIT (1u << 30)

/* ---- request bodies ----
 *
 * Read with jscan (src/decode/jscan.h): the body is validated once, as RFC 8259
 * JSON, and the few members the sim uses are read from views into it, with
 * nothing allocated; jansson is called only to say where an invalid body
 * goes wrong. A repeated key counts by its last value, as jansson and
 * Python's json module keep it. */

/* Look up several members of object obj in one pass: vals[k] gets the last
 * value of key names[k] (type JSCAN_INVALID when absent). With b, every
 * other key goes into b->ignored_keys (api.h). */
static void body_members_other(const struct jscan_value *obj, const char *const *names, size_t n,
                               struct jscan_value *vals, struct api_body *b)
{
    struct jscan_iter it;
    struct jscan_value key, val;
    for (size_t k = 0; k < n; k++)
        vals[k] = (struct jscan_value){0};
    if (jscan_iter_init(&it, obj) != 0)
        return;
    while (jscan_iter_next_member(&it, &key, &val)) {
        /* A key with no escape is its own bytes between the quotes. */
        const char *raw = key.ptr + 1;
        size_t raw_len = key.len - 2;
        int plain = !memchr(raw, '\\', raw_len), matched = 0;
        for (size_t k = 0; k < n; k++) {
            size_t want = strlen(names[k]);
            if (want == 0)
                continue; /* "": a member this shape has not */
            if (plain ? raw_len == want && memcmp(raw, names[k], want) == 0
                      : jscan_string_equals(&key, names[k], want)) {
                vals[k] = val;
                matched = 1;
                break;
            }
        }
        if (b && !matched) {
            /* The key's JSON text as it came: one element of a JSON array. */
            size_t at = b->ignored_keys_len, need = at + (at ? 1 : 0) + key.len;
            if (need < sizeof b->ignored_keys) {
                if (at)
                    b->ignored_keys[at++] = ',';
                memcpy(b->ignored_keys + at, key.ptr, key.len);
                b->ignored_keys_len = need;
                b->ignored_keys[need] = '\0';
            }
        }
    }
}

static void body_members(const struct jscan_value *obj, const char *const *names, size_t n,
                         struct jscan_value *vals)
{
    body_members_other(obj, names, n, vals, NULL);
}

static int absent(const struct jscan_value *v)
{
    return v->type == JSCAN_INVALID || v->type == JSCAN_NULL;
}

/* 1 when a "model" member v is there but is not a string of at most
 * API_MAX_MODEL_BYTES once decoded. */
static int bad_model(const struct jscan_value *v)
{
    return !absent(v) &&
           (v->type != JSCAN_STRING || jscan_string_decoded_len(v) > API_MAX_MODEL_BYTES);
}

/* A body's first refusal: with why (non-NULL), copy it into msg and return
 * -1; else 0. */
static int body_refuse(const char *why, char *msg, size_t msglen)
{
    if (!why)
        return 0;
    snprintf(msg, msglen, "%s", why);
    return -1;
}

/* Optional boolean: absent or null leaves *out. Returns 0 or -1. */
static int body_bool(const struct jscan_value *v, int *out)
{
    if (absent(v))
        return 0;
    if (v->type != JSCAN_TRUE && v->type != JSCAN_FALSE)
        return -1;
    *out = v->type == JSCAN_TRUE;
    return 0;
}

static int integer_text(const struct jscan_value *v);

/* Optional integer: absent or null leaves *out; one past int64 reads as
 * INT64_MAX or INT64_MIN, for the caller's range check. Returns 0, or -1
 * for anything but an integer (a fraction or exponent included). */
static int body_int(const struct jscan_value *v, int64_t *out)
{
    if (absent(v))
        return 0;
    if (v->type != JSCAN_NUMBER || !integer_text(v))
        return -1;
    if (jscan_number_int64(v, out) != 0)
        *out = v->ptr[0] == '-' ? INT64_MIN : INT64_MAX;
    return 0;
}

/* Append the decoded JSON string v to b. */
static void body_append_string(struct http_buf *b, const struct jscan_value *v)
{
    size_t n = jscan_string_decoded_len(v), got = 0;
    jscan_string_unescape(v, http_buf_reserve(b, n + 1), n + 1, &got);
    http_buf_commit(b, got);
}

/* Count the image whose text (unescaped) is [p, end): a data URL when
 * url is set, else bare base64. Returns 0, or -1 with the reason in why. */
static int count_image_text(struct api_ctx *ctx, int url, const char *p, const char *end,
                            const char **why)
{
    if (url) {
        static const char marker[] = ";base64,";
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if ((size_t)(end - p) < 5 || memcmp(p, "data:", 5) != 0 || !comma ||
            (size_t)(comma - p) < sizeof marker - 1 ||
            memcmp(comma - (sizeof marker - 2), marker, sizeof marker - 1) != 0) {
            *why = "the sim reads images from base64 data URLs only "
                   "(data:image/png;base64,...)";
            return -1;
        }
        p = comma + 1;
    }
    enum image_format f;
    uint32_t w, h;
    if (image_header_size(p, (size_t)(end - p), &f, &w, &h, why) < 0)
        return -1;
    if (ctx->images == ctx->image_at_cap) {
        ctx->image_at_cap = ctx->image_at_cap ? 2 * ctx->image_at_cap : 8;
        ctx->image_at = ll_realloc(ctx->image_at, ctx->image_at_cap * sizeof *ctx->image_at);
    }
    /* Keyed by its bytes, so the prefix cache finds the same image sent
     * again at the same place, and only that (docs/sim.md). */
    ctx->image_at[ctx->images] = (struct tokenizer_image){
        .at = ctx->text.len,
        .tokens = image_tokens(w, h),
        .hash = tokenizer_image_hash(p, (size_t)(end - p)),
    };
    ctx->images++;
    uint64_t t = (uint64_t)ctx->image_tokens + image_tokens(w, h);
    ctx->image_tokens = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
    return 0;
}

/* The size of the image in a data URL's text (url, a JSON string:
 * "data:MIME;base64,B"), or of Anthropic's base64 source data (url NULL,
 * b64 the "data" string), into the request's image count and tokens
 * (image_tokens: docs/sim.md). Returns 0, or -1 with the reason in why. */
static int count_image(struct api_ctx *ctx, const struct jscan_value *url,
                       const struct jscan_value *b64, const char **why)
{
    const struct jscan_value *v = url ? url : b64;
    if (v->type != JSCAN_STRING) {
        *why = url ? "an image part's URL must be a string (a data: URL)"
                   : "an image source's \"data\" must be a base64 string";
        return -1;
    }
    /* The text between the quotes, unescaped first when it has escapes (a
     * JSON writer may send '/' as "\/"): base64 and data URLs need none. */
    const char *p = v->ptr + 1, *end = v->ptr + v->len - 1;
    char *copy = NULL;
    if (memchr(p, '\\', (size_t)(end - p))) {
        size_t n = jscan_string_decoded_len(v), got = 0;
        copy = ll_malloc(n + 1);
        jscan_string_unescape(v, copy, n + 1, &got);
        p = copy;
        end = copy + got;
    }
    int rc = count_image_text(ctx, url != NULL, p, end, why);
    free(copy);
    return rc;
}

/* One image part of a content array (part: an object whose "type" is
 * type): chat's image_url ({"url": ...} or a string), Responses'
 * input_image (a string), Anthropic's image (a base64 "source"). Returns
 * 1 when part is an image (counted), 0 when it is not one, -1 with the
 * reason in why. */
static int image_part(struct api_ctx *ctx, const struct jscan_value *part,
                      const struct jscan_value *type, const char **why)
{
    static const char *const keys[] = {"image_url", "source"};
    static const char *const url_key[] = {"url"};
    static const char *const src_keys[] = {"type", "data"};
    struct jscan_value v[2], u, src[2];
    if (type->type != JSCAN_STRING)
        return 0;
    int chat = jscan_string_equals(type, "image_url", 9);
    int resp = jscan_string_equals(type, "input_image", 11);
    int anth = jscan_string_equals(type, "image", 5);
    if (!chat && !resp && !anth)
        return 0;
    body_members(part, keys, 2, v);
    if (anth) {
        if (v[1].type == JSCAN_OBJECT)
            body_members(&v[1], src_keys, 2, src);
        if (v[1].type != JSCAN_OBJECT || src[0].type != JSCAN_STRING ||
            !jscan_string_equals(&src[0], "base64", 6)) {
            *why = "an image part's \"source\" must be {\"type\":\"base64\",...}: the sim "
                   "reads base64 images only";
            return -1;
        }
        return count_image(ctx, NULL, &src[1], why) < 0 ? -1 : 1;
    }
    u = v[0];
    if (chat && v[0].type == JSCAN_OBJECT)
        body_members(&v[0], url_key, 1, &u);
    return count_image(ctx, &u, NULL, why) < 0 ? -1 : 1;
}

/* Append one message content (string, or an array of parts: text, and
 * images, which are counted, not appended) to ctx->text, the text parts
 * joined by "\n". Returns 0, or -1 with the reason in why. */
static int append_content(struct api_ctx *ctx, const struct jscan_value *content, const char **why)
{
    if (absent(content))
        return 0;
    if (content->type == JSCAN_STRING) {
        body_append_string(&ctx->text, content);
        return 0;
    }
    if (content->type != JSCAN_ARRAY) {
        *why = "messages[].content must be a string or an array of text parts";
        return -1;
    }
    static const char *const part_keys[] = {"text", "type"};
    struct jscan_iter it;
    struct jscan_value part, f[2];
    size_t texts = 0;
    jscan_iter_init(&it, content);
    while (jscan_iter_next_element(&it, &part)) {
        if (part.type == JSCAN_OBJECT) {
            body_members(&part, part_keys, 2, f);
            int img = image_part(ctx, &part, &f[1], why);
            if (img < 0)
                return -1;
            if (img)
                continue;
        }
        if (part.type != JSCAN_OBJECT || f[0].type != JSCAN_STRING) {
            *why = "messages[].content parts must be objects with a string \"text\" "
                   "(or images)";
            return -1;
        }
        if (texts++ > 0)
            http_buf_append(&ctx->text, "\n", 1);
        body_append_string(&ctx->text, &f[0]);
    }
    return 0;
}

/* An integer's text has no fraction or exponent. */
static int integer_text(const struct jscan_value *v)
{
    for (size_t i = 0; i < v->len; i++) {
        if (v->ptr[i] == '.' || v->ptr[i] == 'e' || v->ptr[i] == 'E')
            return 0;
    }
    return 1;
}

/* A JSON value's kind, for messages: "a string", "null", ... */
static const char *json_kind(const struct jscan_value *v)
{
    switch (v->type) {
    case JSCAN_OBJECT: return "an object";
    case JSCAN_ARRAY: return "an array";
    case JSCAN_STRING: return "a string";
    case JSCAN_NUMBER:
        return integer_text(v) ? "an integer" : "a number with a fraction or exponent";
    case JSCAN_TRUE:
    case JSCAN_FALSE: return "a boolean";
    default: return "null";
    }
}

static size_t array_len(const struct jscan_value *arr)
{
    struct jscan_iter it;
    struct jscan_value v;
    size_t n = 0;
    if (jscan_iter_init(&it, arr) != 0)
        return 0;
    while (jscan_iter_next_element(&it, &v))
        n++;
    return n;
}

/* Fill ctx->text with the token IDs of arr, a prompt given as IDs (field
 * names it in messages: "prompt" or "prompt"[0]), as native uint32_t
 * values from ctx->text.data (malloc'd, so aligned). Every element must be
 * an integer from 0 to TOKENIZER_ID_MAX, and there must be at least one.
 * Returns 0, or -1 with the reason in whybuf (whylen bytes) and *why. */
static int extract_ids(struct api_ctx *ctx, const struct jscan_value *arr, const char *field,
                       char *whybuf, size_t whylen, const char **why)
{
    size_t n = array_len(arr);
    if (n == 0) {
        snprintf(whybuf, whylen,
                 "%s must not be an empty array: a prompt of token IDs needs "
                 "at least one",
                 field);
        *why = whybuf;
        return -1;
    }
    if (n > UINT32_MAX) {
        snprintf(whybuf, whylen, "%s: more than 4294967295 token IDs", field);
        *why = whybuf;
        return -1;
    }
    uint32_t *ids = (uint32_t *)(void *)http_buf_reserve(&ctx->text, n * sizeof(uint32_t));
    struct jscan_iter it;
    struct jscan_value v;
    jscan_iter_init(&it, arr);
    for (size_t i = 0; jscan_iter_next_element(&it, &v); i++) {
        if (v.type != JSCAN_NUMBER || !integer_text(&v)) {
            snprintf(whybuf, whylen, "%s[%zu] must be an integer token ID (0 to %u), got %s", field,
                     i, TOKENIZER_ID_MAX, json_kind(&v));
            *why = whybuf;
            return -1;
        }
        int64_t id;
        int big = jscan_number_int64(&v, &id) != 0; /* past int64: out of range too */
        if (big || id < 0 || id > (int64_t)TOKENIZER_ID_MAX) {
            int neg = big ? v.ptr[0] == '-' : id < 0;
            snprintf(whybuf, whylen, "%s[%zu]: token ID %.*s%s is %s; IDs are 0 to %u", field, i,
                     (int)LL_MIN(v.len, 40u), v.ptr, v.len > 40 ? "..." : "",
                     neg ? "negative" : "above the vocabulary", TOKENIZER_ID_MAX);
            *why = whybuf;
            return -1;
        }
        ids[i] = (uint32_t)id;
    }
    http_buf_commit(&ctx->text, n * sizeof(uint32_t));
    return 0;
}

/* Room in ctx->msg_ends for n message ends (what it held is not kept). */
static void msg_ends_reserve(struct api_ctx *ctx, size_t n)
{
    if (n > ctx->msg_ends_cap) {
        free(ctx->msg_ends);
        ctx->msg_ends_cap = n;
        ctx->msg_ends = ll_malloc(n * sizeof *ctx->msg_ends);
    }
}

/* The string v, the whole of the prompt: one message. Returns 0. */
static int one_message(struct api_ctx *ctx, const struct jscan_value *v)
{
    msg_ends_reserve(ctx, 1);
    body_append_string(&ctx->text, v);
    ctx->msg_ends[0] = ctx->text.len;
    ctx->n_msgs = 1;
    return 0;
}

/* Fill ctx->text with the prompt (messages for chat, input for
 * responses, else prompt): its text, or, when *is_ids is set on return,
 * its token IDs (extract_ids). Returns 0, or -1 with code and why (why may
 * point into whybuf, whylen bytes). */
static int extract_prompt(struct api_ctx *ctx, const struct jscan_value *msgs,
                          const struct jscan_value *prompt, int shape, const char **code,
                          const char **why, char *whybuf, size_t whylen, int *is_ids)
{
    *is_ids = 0;
    http_buf_clear(&ctx->text);
    ctx->n_msgs = 0;
    ctx->images = 0;
    ctx->image_tokens = 0;
    if (shape == API_BODY_RESPONSES && msgs->type == JSCAN_STRING) {
        /* "input": "text" is one user message. */
        return one_message(ctx, msgs);
    }
    if (shape != API_BODY_COMPLETIONS) {
        int resp = shape == API_BODY_RESPONSES;
        if (msgs->type == JSCAN_INVALID) {
            *code = "missing_field";
            *why =
                resp ? "missing required field \"input\"" : "missing required field \"messages\"";
            return -1;
        }
        size_t n = msgs->type == JSCAN_ARRAY ? array_len(msgs) : 0;
        if (n == 0) {
            *code = "invalid_field";
            *why = resp ? "\"input\" must be a string or a non-empty array of messages"
                        : "\"messages\" must be a non-empty array";
            return -1;
        }
        msg_ends_reserve(ctx, n);
        static const char *const content_key[] = {"content"};
        struct jscan_iter it;
        struct jscan_value m, content;
        jscan_iter_init(&it, msgs);
        for (size_t i = 0; jscan_iter_next_element(&it, &m); i++) {
            if (m.type != JSCAN_OBJECT) {
                *code = "invalid_field";
                *why = resp ? "each of \"input\" must be an object"
                            : "each of \"messages\" must be an object";
                return -1;
            }
            if (i > 0)
                http_buf_append(&ctx->text, "\n", 1);
            body_members(&m, content_key, 1, &content);
            if (append_content(ctx, &content, why) < 0) {
                *code = "invalid_field";
                return -1;
            }
            ctx->msg_ends[i] = ctx->text.len;
        }
        ctx->n_msgs = n;
        return 0;
    }
    if (prompt->type == JSCAN_INVALID) {
        *code = "missing_field";
        *why = "missing required field \"prompt\"";
        return -1;
    }
    struct jscan_value p = *prompt, first = {0};
    struct jscan_iter it;
    size_t n = 0;
    if (p.type == JSCAN_ARRAY) {
        n = array_len(&p);
        jscan_iter_init(&it, &p);
        jscan_iter_next_element(&it, &first);
        if (n == 1 && first.type == JSCAN_STRING) {
            p = first;
            n = 0;
        }
    }
    if (p.type == JSCAN_ARRAY) {
        /* Token IDs: [1, 2, 3], or a batch of one: [[1, 2, 3]]. */
        *code = "invalid_field";
        const char *field = "\"prompt\"";
        if (first.type == JSCAN_ARRAY || first.type == JSCAN_STRING) {
            if (n > 1) {
                *code = "unsupported";
                *why = "\"prompt\": a batch of several prompts is not supported; send one "
                       "prompt per request";
                return -1;
            }
            p = first;
            field = "\"prompt\"[0]";
        }
        if (extract_ids(ctx, &p, field, whybuf, whylen, why) < 0)
            return -1;
        *is_ids = 1;
        return 0;
    }
    if (p.type != JSCAN_STRING) {
        *code = "invalid_field";
        *why = "\"prompt\" must be a string, an array of token IDs, or an array of one of "
               "either";
        return -1;
    }
    body_append_string(&ctx->text, &p);
    return 0;
}

/* Validate body as one JSON object into *root. Returns 0, or -1 with the
 * 400's message in msg. */
static int body_object(const char *body, size_t len, struct jscan_value *root, char *msg,
                       size_t msglen)
{
    if (jscan_validate(body, len, JSCAN_DEPTH_LIMIT, root) != 0) {
        /* Only now ask jansson, which says where the text goes wrong. */
        json_error_t jerr;
        json_t *j = json_loadb(body, len, 0, &jerr);
        const char *nul = memchr(body, '\0', len);
        if (j && nul) /* jansson stops reading at a NUL byte */
            snprintf(msg, msglen, "invalid JSON body: a NUL byte at offset %zu",
                     (size_t)(nul - body));
        else if (j) /* jansson's limit is 2048 levels */
            snprintf(msg, msglen, "invalid JSON body: nested more than %d levels deep",
                     JSCAN_DEPTH_LIMIT);
        else
            snprintf(msg, msglen, "invalid JSON body: %s (line %d, column %d)", jerr.text,
                     jerr.line, jerr.column);
        json_decref(j);
        return -1;
    }
    if (root->type != JSCAN_OBJECT) {
        snprintf(msg, msglen, "the request body must be a JSON object");
        return -1;
    }
    return 0;
}

int api_parse_completion(struct api_ctx *ctx, const char *body, size_t len, int shape,
                         struct api_body *b, const char **code, char *msg, size_t msglen)
{
    enum {
        F_MODEL,
        F_STREAM,
        F_SO,
        F_IGNORE_EOS,
        F_MAX,
        F_MAX_COMPL,
        F_N,
        F_MSGS,
        F_PROMPT,
        F_COUNT
    };
    /* Responses: its own names for the prompt and the output limit. */
    int resp = shape == API_BODY_RESPONSES;
    static const char *const chat_names[F_COUNT] = {
        "model", "stream",   "stream_options", "ignore_eos", "max_tokens", "max_completion_tokens",
        "n",     "messages", "prompt",
    };
    static const char *const resp_names[F_COUNT] = {
        "model", "stream", "stream_options", "ignore_eos", "max_output_tokens",
        "",      "n",      "input",          "",
    };
    const char *const *names = resp ? resp_names : chat_names;
    static const char *const so_names[] = {"include_usage"};
    struct jscan_value root, f[F_COUNT], include_usage = {0};
    const char *why = NULL;
    char whybuf[192];
    int64_t n = 1;

    memset(b, 0, sizeof *b);
    b->max_tokens = ctx->default_max_tokens;
    *code = "invalid_json";
    if (body_object(body, len, &root, msg, msglen) < 0)
        return -1;
    *code = "invalid_field";
    body_members_other(&root, names, F_COUNT, f, b);
    if (f[F_SO].type == JSCAN_OBJECT)
        body_members(&f[F_SO], so_names, 1, &include_usage);
    if (bad_model(&f[F_MODEL]))
        why = "\"model\" must be a string of at most 256 bytes";
    else if (body_bool(&f[F_STREAM], &b->stream) < 0)
        why = "\"stream\" must be a boolean";
    else if (!absent(&f[F_SO]) && f[F_SO].type != JSCAN_OBJECT)
        why = "\"stream_options\" must be an object";
    else if (body_bool(&include_usage, &b->include_usage) < 0)
        why = "\"stream_options.include_usage\" must be a boolean";
    else if (body_bool(&f[F_IGNORE_EOS], &b->ignore_eos) < 0)
        why = "\"ignore_eos\" must be a boolean";
    else if (body_int(&f[F_MAX], &b->max_tokens) < 0 ||
             body_int(&f[F_MAX_COMPL], &b->max_tokens) < 0)
        why =
            resp ? "\"max_output_tokens\" must be an integer" : "\"max_tokens\" must be an integer";
    else if (b->max_tokens < 1 || b->max_tokens > (int64_t)API_MAX_TOKENS_LIMIT)
        why = resp ? "\"max_output_tokens\" must be between 1 and 1073741824"
                   : "\"max_tokens\" must be between 1 and 1073741824";
    else if (body_int(&f[F_N], &n) < 0)
        why = "\"n\" must be an integer";
    else if (n != 1) {
        *code = "unsupported";
        why = "only n=1 is supported";
    } else if (extract_prompt(ctx, &f[F_MSGS], &f[F_PROMPT], shape, code, &why, whybuf,
                              sizeof whybuf, &b->ids_prompt) == 0) {
        why = NULL;
    }
    if (body_refuse(why, msg, msglen) != 0)
        return -1;
    if (f[F_MODEL].type == JSCAN_STRING)
        b->model = f[F_MODEL];
    b->has_max_tokens = !absent(&f[F_MAX]) || !absent(&f[F_MAX_COMPL]);
    return 0;
}

int api_parse_tokenize(struct api_ctx *ctx, const char *body, size_t len, int *add_special,
                       const char **code, char *msg, size_t msglen)
{
    static const char *const names[] = {"content", "add_special", "with_pieces"};
    struct jscan_value root, f[3];
    int with_pieces = 0;
    const char *why = NULL;
    *code = "invalid_field";
    if (body_object(body, len, &root, msg, msglen) < 0) {
        *code = "invalid_json";
        return -1;
    }
    body_members(&root, names, 3, f);
    if (f[0].type == JSCAN_INVALID) {
        *code = "missing_field";
        why = "missing required field \"content\"";
    } else if (f[0].type != JSCAN_STRING) {
        why = "\"content\" must be a string";
    } else if (body_bool(&f[1], add_special) < 0) {
        why = "\"add_special\" must be a boolean";
    } else if (body_bool(&f[2], &with_pieces) < 0 || with_pieces) {
        *code = "unsupported";
        why = "\"with_pieces\" is not supported: the sim answers token IDs only";
    }
    if (body_refuse(why, msg, msglen) != 0)
        return -1;
    http_buf_clear(&ctx->text);
    body_append_string(&ctx->text, &f[0]);
    return 0;
}

/* An embeddings body's "input": a string, or a non-empty array of strings,
 * into ctx->text, input i ending at ctx->msg_ends[i] (ctx->n_msgs of
 * them). Token-ID inputs are refused. Returns 0, or -1 with code and why. */
static int extract_inputs(struct api_ctx *ctx, const struct jscan_value *input, const char **code,
                          const char **why)
{
    http_buf_clear(&ctx->text);
    ctx->n_msgs = 0;
    *code = "invalid_field";
    if (input->type == JSCAN_INVALID) {
        *code = "missing_field";
        *why = "missing required field \"input\"";
        return -1;
    }
    size_t n = input->type == JSCAN_STRING ? 1 : input->type == JSCAN_ARRAY ? array_len(input) : 0;
    if (n == 0) {
        *why = "\"input\" must be a string or a non-empty array of strings";
        return -1;
    }
    if (n > API_MAX_EMBEDDING_INPUTS) {
        *why = "\"input\": at most 2048 inputs a request";
        return -1;
    }
    if (input->type == JSCAN_STRING)
        return one_message(ctx, input);
    msg_ends_reserve(ctx, n);
    struct jscan_iter it;
    struct jscan_value v;
    jscan_iter_init(&it, input);
    for (size_t i = 0; jscan_iter_next_element(&it, &v); i++) {
        if (v.type != JSCAN_STRING) {
            *code = "unsupported";
            *why = v.type == JSCAN_NUMBER || v.type == JSCAN_ARRAY
                       ? "\"input\": token-ID inputs are not supported; send text"
                       : "\"input\" must be a string or a non-empty array of strings";
            return -1;
        }
        body_append_string(&ctx->text, &v);
        ctx->msg_ends[i] = ctx->text.len;
    }
    ctx->n_msgs = n;
    return 0;
}

int api_parse_embeddings(struct api_ctx *ctx, const char *body, size_t len, struct api_body *b,
                         const char **code, char *msg, size_t msglen)
{
    enum { F_MODEL, F_INPUT, F_FORMAT, F_COUNT };
    static const char *const names[F_COUNT] = {"model", "input", "encoding_format"};
    struct jscan_value root, f[F_COUNT];
    const char *why = NULL;

    memset(b, 0, sizeof *b);
    *code = "invalid_json";
    if (body_object(body, len, &root, msg, msglen) < 0)
        return -1;
    *code = "invalid_field";
    body_members_other(&root, names, F_COUNT, f, b);
    if (bad_model(&f[F_MODEL]))
        why = "\"model\" must be a string of at most 256 bytes";
    else if (!absent(&f[F_FORMAT]) &&
             !(f[F_FORMAT].type == JSCAN_STRING && jscan_string_equals(&f[F_FORMAT], "float", 5))) {
        *code = "unsupported";
        why = "\"encoding_format\": only \"float\" is supported";
    } else if (extract_inputs(ctx, &f[F_INPUT], code, &why) == 0) {
        why = NULL;
    }
    if (body_refuse(why, msg, msglen) != 0)
        return -1;
    if (f[F_MODEL].type == JSCAN_STRING)
        b->model = f[F_MODEL];
    return 0;
}
