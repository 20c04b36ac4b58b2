/* fuzz_simbody: the sim's reading of completion request bodies
 * (api_parse_completion, jscan views), against a reference that reads the
 * same fields with jansson the way the sim did before (the reference below
 * is that code, kept here as the oracle; it answers a top-level scalar as
 * the new reader does, "the request body must be a JSON object").
 *
 * Input layout: byte 0 picks the shape: bit 2 set, the embeddings body
 * (check_embeddings, below); else bit 1 set, the Responses API's
 * (input, max_output_tokens); else bit 0 chat (messages) or completions
 * (prompt); the rest is the body. Whenever jansson and jscan agree that the
 * body is valid JSON, the two readers must agree on everything: accepted or
 * not, the error code and message, and on success every field, the prompt
 * text or token IDs byte for byte, and (chat) where each message ends.
 * Where they disagree on validity, the disagreement must be one of the
 * known ones: jscan accepts \u0000 and numbers past int64 or double, which
 * jansson refuses, and refuses nesting past 1024 levels, which jansson
 * takes to 2048, and a NUL byte, where jansson stops reading. The new reader must answer a body jscan refuses with a 400
 * invalid_json, and one jansson refuses with a well-formed answer. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "sim/api.h"
#include "util/util.h"
#include "workload/image.h"

struct ref {
    int stream, include_usage, ignore_eos, ids_prompt;
    json_int_t max_tokens;
    const char *model;
    size_t model_len;
    struct http_buf text;
    size_t msg_ends[4096];
    size_t n_msgs;
    uint32_t images, image_tokens;
};

/* obj's key when present and not null (the sim reads null as absent): a
 * boolean into *b when b is not NULL, else an integer into *i. Returns -1
 * when it has another type; 0, leaving *b and *i, when absent or null. */
static int get_scalar(json_t *obj, const char *key, int *b, json_int_t *i)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (b != NULL ? !json_is_boolean(v) : !json_is_integer(v))
        return -1;
    if (b != NULL)
        *b = json_is_true(v);
    else
        *i = json_integer_value(v);
    return 0;
}

/* An image part (type image_url, input_image or image) read with jansson:
 * its data URL or base64 source, the size from image_header_size (fuzzed
 * on its own in fuzz_imghdr). Returns 1 (an image), 0 (not one), -1. */
static int ref_image(struct ref *r, json_t *part, const char **why)
{
    const char *type = json_string_value(json_object_get(part, "type"));
    if (!type || (strcmp(type, "image_url") != 0 && strcmp(type, "input_image") != 0 &&
                  strcmp(type, "image") != 0))
        return 0;
    /* jansson stops a type string at a NUL; the sim compares all its bytes. */
    if (strlen(type) != json_string_length(json_object_get(part, "type")))
        return 0;
    json_t *v;
    int is_url = strcmp(type, "image") != 0;
    if (!is_url) {
        json_t *src = json_object_get(part, "source");
        json_t *st = json_is_object(src) ? json_object_get(src, "type") : NULL;
        if (!json_is_string(st) || json_string_length(st) != 6 ||
            memcmp(json_string_value(st), "base64", 6) != 0) {
            *why = "an image part's \"source\" must be {\"type\":\"base64\",...}: the sim "
                   "reads base64 images only";
            return -1;
        }
        v = json_object_get(src, "data");
    } else {
        v = json_object_get(part, "image_url");
        if (strcmp(type, "image_url") == 0 && json_is_object(v))
            v = json_object_get(v, "url");
    }
    if (!json_is_string(v)) {
        *why = is_url ? "an image part's URL must be a string (a data: URL)"
                      : "an image source's \"data\" must be a base64 string";
        return -1;
    }
    const char *p = json_string_value(v), *end = p + json_string_length(v);
    if (is_url) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        if ((size_t)(end - p) < 5 || memcmp(p, "data:", 5) != 0 || !comma || comma - p < 8 ||
            memcmp(comma - 7, ";base64,", 8) != 0) {
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
    r->images++;
    uint64_t t = (uint64_t)r->image_tokens + image_tokens(w, h);
    r->image_tokens = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
    return 1;
}

static int append_content(struct ref *r, json_t *content, const char **why)
{
    if (!content || json_is_null(content))
        return 0;
    if (json_is_string(content)) {
        http_buf_append(&r->text, json_string_value(content), json_string_length(content));
        return 0;
    }
    if (!json_is_array(content)) {
        *why = "messages[].content must be a string or an array of text parts";
        return -1;
    }
    size_t i, texts = 0;
    json_t *part;
    json_array_foreach(content, i, part) {
        if (json_is_object(part)) {
            int img = ref_image(r, part, why);
            if (img < 0)
                return -1;
            if (img)
                continue;
        }
        json_t *text = json_is_object(part) ? json_object_get(part, "text") : NULL;
        if (!json_is_string(text)) {
            *why = "messages[].content parts must be objects with a string \"text\" "
                   "(or images)";
            return -1;
        }
        if (texts++ > 0)
            http_buf_append(&r->text, "\n", 1);
        http_buf_append(&r->text, json_string_value(text), json_string_length(text));
    }
    return 0;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction or exponent";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int extract_ids(struct ref *r, json_t *arr, const char *field, char *whybuf,
                       size_t whylen, const char **why)
{
    size_t n = json_array_size(arr);
    if (n == 0) {
        snprintf(whybuf, whylen, "%s must not be an empty array: a prompt of token IDs needs "
                 "at least one", field);
        *why = whybuf;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_integer(v)) {
            snprintf(whybuf, whylen, "%s[%zu] must be an integer token ID (0 to %u), got %s",
                     field, i, TOKENIZER_ID_MAX, json_kind(v));
            *why = whybuf;
            return -1;
        }
        json_int_t id = json_integer_value(v);
        if (id < 0 || id > (json_int_t)TOKENIZER_ID_MAX) {
            snprintf(whybuf, whylen, "%s[%zu]: token ID %lld is %s; IDs are 0 to %u", field, i,
                     (long long)id, id < 0 ? "negative" : "above the vocabulary",
                     TOKENIZER_ID_MAX);
            *why = whybuf;
            return -1;
        }
        uint32_t u = (uint32_t)id;
        http_buf_append(&r->text, &u, sizeof u);
    }
    return 0;
}

static int extract_prompt(struct ref *r, json_t *root, int shape, const char **code,
                          const char **why, char *whybuf, size_t whylen)
{
    int resp = shape == API_BODY_RESPONSES;
    if (resp && json_is_string(json_object_get(root, "input"))) {
        json_t *in = json_object_get(root, "input");
        http_buf_append(&r->text, json_string_value(in), json_string_length(in));
        r->msg_ends[0] = r->text.len;
        r->n_msgs = 1;
        return 0;
    }
    if (shape != API_BODY_COMPLETIONS) {
        json_t *msgs = json_object_get(root, resp ? "input" : "messages");
        if (!msgs) {
            *code = "missing_field";
            *why =
                resp ? "missing required field \"input\"" : "missing required field \"messages\"";
            return -1;
        }
        if (!json_is_array(msgs) || json_array_size(msgs) == 0) {
            *code = "invalid_field";
            *why = resp ? "\"input\" must be a string or a non-empty array of messages"
                        : "\"messages\" must be a non-empty array";
            return -1;
        }
        size_t i;
        json_t *m;
        json_array_foreach(msgs, i, m) {
            if (!json_is_object(m)) {
                *code = "invalid_field";
                *why = resp ? "each of \"input\" must be an object"
                            : "each of \"messages\" must be an object";
                return -1;
            }
            if (i > 0)
                http_buf_append(&r->text, "\n", 1);
            if (append_content(r, json_object_get(m, "content"), why) < 0) {
                *code = "invalid_field";
                return -1;
            }
            if (i < LL_ARRAY_LEN(r->msg_ends))
                r->msg_ends[i] = r->text.len;
        }
        r->n_msgs = json_array_size(msgs);
        return 0;
    }
    json_t *p = json_object_get(root, "prompt");
    if (!p) {
        *code = "missing_field";
        *why = "missing required field \"prompt\"";
        return -1;
    }
    if (json_is_array(p) && json_array_size(p) == 1 && json_is_string(json_array_get(p, 0)))
        p = json_array_get(p, 0);
    if (json_is_array(p)) {
        *code = "invalid_field";
        const char *field = "\"prompt\"";
        json_t *first = json_array_get(p, 0);
        if (json_is_array(first) || json_is_string(first)) {
            if (json_array_size(p) > 1) {
                *code = "unsupported";
                *why = "\"prompt\": a batch of several prompts is not supported; send one "
                       "prompt per request";
                return -1;
            }
            p = first;
            field = "\"prompt\"[0]";
        }
        if (extract_ids(r, p, field, whybuf, whylen, why) < 0)
            return -1;
        r->ids_prompt = 1;
        return 0;
    }
    if (!json_is_string(p)) {
        *code = "invalid_field";
        *why = "\"prompt\" must be a string, an array of token IDs, or an array of one of "
               "either";
        return -1;
    }
    http_buf_append(&r->text, json_string_value(p), json_string_length(p));
    return 0;
}

/* The reference: returns 0 or -1 with code and msg; root is kept in *keep
 * (the model string points into it). */
static int ref_parse(json_t *root, int shape, struct ref *r, const char **code, char *msg,
                     size_t msglen)
{
    int resp = shape == API_BODY_RESPONSES;
    const char *why = NULL;
    char whybuf[192];
    json_int_t n = 1;
    *code = "invalid_json";
    if (!json_is_object(root)) {
        snprintf(msg, msglen, "the request body must be a JSON object");
        return -1;
    }
    *code = "invalid_field";
    json_t *model_v = json_object_get(root, "model");
    json_t *so = json_object_get(root, "stream_options");
    if (model_v && !json_is_null(model_v) &&
        (!json_is_string(model_v) || json_string_length(model_v) > API_MAX_MODEL_BYTES))
        why = "\"model\" must be a string of at most 256 bytes";
    else if (get_scalar(root, "stream", &r->stream, NULL) < 0)
        why = "\"stream\" must be a boolean";
    else if (so && !json_is_null(so) && !json_is_object(so))
        why = "\"stream_options\" must be an object";
    else if (so && json_is_object(so) &&
             get_scalar(so, "include_usage", &r->include_usage, NULL) < 0)
        why = "\"stream_options.include_usage\" must be a boolean";
    else if (get_scalar(root, "ignore_eos", &r->ignore_eos, NULL) < 0)
        why = "\"ignore_eos\" must be a boolean";
    else if (resp ? get_scalar(root, "max_output_tokens", NULL, &r->max_tokens) < 0
                  : (get_scalar(root, "max_tokens", NULL, &r->max_tokens) < 0 ||
                     get_scalar(root, "max_completion_tokens", NULL, &r->max_tokens) < 0))
        why =
            resp ? "\"max_output_tokens\" must be an integer" : "\"max_tokens\" must be an integer";
    else if (r->max_tokens < 1 || r->max_tokens > (json_int_t)(1u << 30))
        why = resp ? "\"max_output_tokens\" must be between 1 and 1073741824"
                   : "\"max_tokens\" must be between 1 and 1073741824";
    else if (get_scalar(root, "n", NULL, &n) < 0)
        why = "\"n\" must be an integer";
    else if (n != 1) {
        *code = "unsupported";
        why = "only n=1 is supported";
    } else if (extract_prompt(r, root, shape, code, &why, whybuf, sizeof whybuf) == 0) {
        why = NULL;
    }
    if (why) {
        snprintf(msg, msglen, "%s", why);
        return -1;
    }
    if (model_v && json_is_string(model_v)) {
        r->model = json_string_value(model_v);
        r->model_len = json_string_length(model_v);
    }
    return 0;
}

/* Why jansson may refuse JSON that jscan takes: a \u0000 escape, or a
 * number past what jansson holds (an integer past int64, a real past
 * double). Scans the text outside strings. */
static int jansson_refuses(const char *s, size_t n)
{
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') {
                if (i + 5 < n && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0)
                    return 1;
                i++;
            } else if (c == '"') {
                in_str = 0;
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i + 1;
            int integer = 1;
            while (j < n && strchr("0123456789+-.eE", s[j])) {
                if (s[j] == '.' || s[j] == 'e' || s[j] == 'E')
                    integer = 0;
                j++;
            }
            char num[400];
            if (j - i >= sizeof num)
                return 1;
            memcpy(num, s + i, j - i);
            num[j - i] = 0;
            errno = 0;
            if (integer)
                (void)strtoll(num, NULL, 10);
            else if (isinf(strtod(num, NULL)))
                errno = ERANGE;
            if (errno == ERANGE)
                return 1;
            i = j - 1;
        }
    }
    return 0;
}

/* The deepest nesting of arrays and objects, outside strings. */
static size_t depth(const char *s, size_t n)
{
    size_t d = 0, max = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                in_str = 0;
        } else if (s[i] == '"') {
            in_str = 1;
        } else if (s[i] == '[' || s[i] == '{') {
            max = ++d > max ? d : max;
        } else if ((s[i] == ']' || s[i] == '}') && d) {
            d--;
        }
    }
    return max;
}

static void differ(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_simbody: %s differs for a %s body of %zu bytes:\n%.*s\n", what,
            (data[0] & 2)   ? "responses"
            : (data[0] & 1) ? "chat"
                            : "completions",
            size - 1, (int)(size - 1), (const char *)data + 1);
    abort();
}

/* Byte 0 bit 2: the embeddings body (api_parse_embeddings). A refusal has
 * a code and a message, and invalid JSON is refused as such; an accepted
 * body's inputs are jansson's reading of "input" (a string, or an array of
 * strings), their text joined in ctx.text byte for byte, each ending where
 * ctx.msg_ends says. */
static void check_embeddings(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    struct api_ctx ctx;
    api_ctx_init(&ctx);
    struct api_body b;
    const char *code = NULL;
    char msg[300] = "";
    int rc = api_parse_embeddings(&ctx, body, len, &b, &code, msg, sizeof msg);
    if (rc < 0 && (!code || !msg[0]))
        differ("an embeddings refusal without a code or message", data, size);
    struct jscan_value root;
    if (jscan_validate(body, len, JSCAN_DEPTH_LIMIT, &root) != 0 &&
        (rc == 0 || strcmp(code, "invalid_json") != 0))
        differ("embeddings: acceptance of invalid JSON", data, size);
    json_error_t jerr;
    json_t *j = rc == 0 ? json_loadb(body, len, 0, &jerr) : NULL;
    if (j) {
        json_t *in = json_object_get(j, "input");
        size_t n = json_is_string(in) ? 1 : json_array_size(in), at = 0;
        if (n == 0 || ctx.n_msgs != n)
            differ("embeddings: the input count", data, size);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_is_string(in) ? in : json_array_get(in, i);
            size_t k = json_string_length(e);
            if (!json_is_string(e) || at + k != ctx.msg_ends[i] ||
                (k && memcmp(ctx.text.data + at, json_string_value(e), k) != 0))
                differ("embeddings: an input", data, size);
            at += k;
        }
        if (at != ctx.text.len)
            differ("embeddings: the text's length", data, size);
    }
    json_decref(j);
    api_ctx_free(&ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 4) {
        check_embeddings(data, size);
        return 0;
    }
    int shape = (data[0] & 2)   ? API_BODY_RESPONSES
                : (data[0] & 1) ? API_BODY_CHAT
                                : API_BODY_COMPLETIONS;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;

    struct api_ctx ctx;
    api_ctx_init(&ctx);
    ctx.default_max_tokens = 16;
    struct api_body b;
    const char *code;
    char msg[300];
    int rc = api_parse_completion(&ctx, body, len, shape, &b, &code, msg, sizeof msg);
    if (rc < 0 && (!code || !msg[0]))
        differ("a refusal without a code or message", data, size);

    struct jscan_value root;
    int jscan_ok = jscan_validate(body, len, JSCAN_DEPTH_LIMIT, &root) == 0;
    if (!jscan_ok && (rc == 0 || strcmp(code, "invalid_json") != 0))
        differ("acceptance of invalid JSON", data, size);
    json_error_t jerr;
    json_t *jroot = json_loadb(body, len, JSON_DECODE_ANY, &jerr);
    if (jroot && !jscan_ok && depth(body, len) <= JSCAN_DEPTH_LIMIT && !memchr(body, 0, len))
        differ("validity (jansson takes it, jscan does not)", data, size);
    if (!jroot && jscan_ok && !jansson_refuses(body, len))
        differ("validity (jscan takes it, jansson does not)", data, size);
    if (jroot && jscan_ok) {
        static struct ref r;
        memset(&r, 0, sizeof r);
        r.max_tokens = 16;
        const char *rcode;
        char rmsg[300];
        int rrc = ref_parse(jroot, shape, &r, &rcode, rmsg, sizeof rmsg);
        if (rrc != rc)
            differ("acceptance", data, size);
        if (rc < 0) {
            if (strcmp(code, rcode) != 0)
                differ("the error code", data, size);
            if (strcmp(msg, rmsg) != 0)
                differ("the error message", data, size);
        } else {
            if (b.stream != r.stream || b.include_usage != r.include_usage ||
                b.ignore_eos != r.ignore_eos || b.max_tokens != (int64_t)r.max_tokens ||
                b.ids_prompt != r.ids_prompt)
                differ("a field", data, size);
            char model[API_MAX_MODEL_BYTES + 1];
            size_t model_len = 0;
            if ((b.model.type == JSCAN_STRING) != (r.model != NULL))
                differ("model presence", data, size);
            if (r.model) {
                jscan_string_unescape(&b.model, model, sizeof model, &model_len);
                if (model_len != r.model_len || memcmp(model, r.model, model_len) != 0)
                    differ("the model", data, size);
            }
            if (ctx.text.len != r.text.len ||
                (r.text.len && memcmp(ctx.text.data, r.text.data, r.text.len) != 0))
                differ("the prompt", data, size);
            if (ctx.images != r.images || ctx.image_tokens != r.image_tokens)
                differ("the images", data, size);
            if (shape != API_BODY_COMPLETIONS) {
                if (ctx.n_msgs != r.n_msgs)
                    differ("the message count", data, size);
                for (size_t i = 0; i < ctx.n_msgs && i < LL_ARRAY_LEN(r.msg_ends); i++) {
                    if (ctx.msg_ends[i] != r.msg_ends[i])
                        differ("a message end", data, size);
                }
            }
        }
        http_buf_free(&r.text);
    }
    json_decref(jroot);
    api_ctx_free(&ctx);
    return 0;
}
