/* dataset.c: ShareGPT and JSONL prompt datasets. See dataset.h. */
#include "workload/dataset.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "workload/tokenizer.h"
#include "util/util.h"
#include "workload/jsonfile.h"

struct dparse {
    const char *name;
    const char *text;
    char *err;
    size_t errlen;
    struct dataset *d;
    size_t cap;            /* entries allocated */
    size_t arena_cap;
    char *scratch;         /* a decoded reply, for counting its words */
    size_t scratch_cap;
};

static void derr_at(struct dparse *p, const char *at, const char *field,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "NAME:LINE:COL: FIELD: <fmt>" for a position in the whole text. */
static void derr_at(struct dparse *p, const char *at, const char *field,
                    const char *fmt, ...)
{
    unsigned long line, col;
    va_list ap;
    if (!p->err || p->errlen == 0)
        return; /* no need to find the line */
    jsonfile_line_col(p->text, (size_t)(at - p->text), &line, &col);
    va_start(ap, fmt);
    jsonfile_verrf(p->err, p->errlen, p->name, line, col, field, fmt, ap);
    va_end(ap);
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
           c == '\r';
}

uint32_t dataset_count_words(const char *s, size_t len)
{
    uint64_t n = 0;
    int in_word = 0;
    for (size_t i = 0; i < len; i++) {
        int sp = is_space((unsigned char)s[i]);
        if (!sp && !in_word)
            n++;
        in_word = !sp;
    }
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static void reserve_arena(struct dparse *p, size_t n)
{
    struct dataset *d = p->d;
    d->arena = ll_grow(d->arena, &p->arena_cap, d->arena_bytes + n, 65536);
}

/* Decode string v onto the end of the arena (not yet committed). Returns
 * the decoded length, or -1 when it holds a NUL. */
static int64_t arena_decode(struct dparse *p, const struct jscan_value *v,
                            size_t n)
{
    struct dataset *d = p->d;
    size_t got_len = 0;
    reserve_arena(p, n + 1);
    char *dst = d->arena + d->arena_bytes;
    if (jscan_string_unescape(v, dst, n + 1, &got_len) != 0 || got_len != n ||
        memchr(dst, '\0', n))
        return -1;
    return (int64_t)n;
}

/* Commit the prompt decoded at the arena's end as a new entry. */
static int push_entry(struct dparse *p, size_t prompt_bytes,
                      uint32_t output_tokens, const char *at)
{
    struct dataset *d = p->d;
    if (d->n >= DATASET_MAX_ENTRIES) {
        derr_at(p, at, NULL, "too many entries: at most %u are read",
                DATASET_MAX_ENTRIES);
        return LL_E_RANGE;
    }
    if (d->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 1024;
        d->entries = ll_realloc(d->entries, p->cap * sizeof(*d->entries));
    }
    struct dataset_entry *e = &d->entries[d->n++];
    e->prompt_off = d->arena_bytes;
    e->prompt_bytes = (uint32_t)prompt_bytes;
    e->prompt_tokens = tokenizer_count(d->arena + d->arena_bytes, prompt_bytes);
    e->output_tokens = output_tokens;
    d->arena_bytes += prompt_bytes + 1;
    return 0;
}

static void skip(struct dparse *p, enum dataset_skip why)
{
    p->d->skipped[why]++;
    p->d->skipped_total++;
}

static int is_human(const struct jscan_value *from)
{
    return jscan_string_equals(from, "human", 5) ||
           jscan_string_equals(from, "user", 4);
}

static int is_reply(const struct jscan_value *from)
{
    return jscan_string_equals(from, "gpt", 3) ||
           jscan_string_equals(from, "chatgpt", 7) ||
           jscan_string_equals(from, "bing", 4) ||
           jscan_string_equals(from, "assistant", 9);
}

/* Check one turn's shape: an object with string "from" and "value". */
static int get_turn(struct dparse *p, const struct jscan_value *turn,
                    struct jscan_value *from, struct jscan_value *value)
{
    if (turn->type != JSCAN_OBJECT) {
        char q[64];
        derr_at(p, turn->ptr, "conversations[]", "expected a turn object "
                "{\"from\": ..., \"value\": ...}, got %s",
                jsonfile_quote(turn->ptr, turn->len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    if (jscan_object_get(turn, "from", 4, from) != 0 || from->type != JSCAN_STRING) {
        derr_at(p, turn->ptr, "from", "expected a string (\"human\", \"gpt\", "
                "...) in every turn");
        return LL_E_INVAL;
    }
    if (jscan_object_get(turn, "value", 5, value) != 0 ||
        value->type != JSCAN_STRING) {
        derr_at(p, turn->ptr, "value", "expected the turn's text as a string");
        return LL_E_INVAL;
    }
    return 0;
}

static int sharegpt_one(struct dparse *p, const struct jscan_value *conv)
{
    struct jscan_value turns, turn, from, value, prompt, reply;
    struct jscan_iter it;
    int rc, have_prompt = 0, have_reply = 0;

    if (conv->type != JSCAN_OBJECT) {
        char q[64];
        derr_at(p, conv->ptr, NULL, "expected a conversation object "
                "{\"conversations\": [...]}, got %s",
                jsonfile_quote(conv->ptr, conv->len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    if (jscan_object_get(conv, "conversations", 13, &turns) != 0) {
        skip(p, DATASET_SKIP_NO_PROMPT);
        return 0;
    }
    if (turns.type != JSCAN_ARRAY) {
        char q[64];
        derr_at(p, turns.ptr, "conversations", "expected an array of turns, "
                "got %s", jsonfile_quote(turns.ptr, turns.len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    jscan_iter_init(&it, &turns);
    while (jscan_iter_next_element(&it, &turn)) {
        if ((rc = get_turn(p, &turn, &from, &value)))
            return rc;
        if (!have_prompt && is_human(&from)) {
            prompt = value;
            have_prompt = 1;
        } else if (have_prompt && !have_reply && is_reply(&from)) {
            reply = value;
            have_reply = 1;
        }
    }
    if (!have_prompt) {
        skip(p, DATASET_SKIP_NO_PROMPT);
        return 0;
    }
    if (!have_reply) {
        skip(p, DATASET_SKIP_NO_REPLY);
        return 0;
    }

    /* The reply's length in words, from its decoded text. */
    size_t rn = jscan_string_decoded_len(&reply);
    if (rn + 1 > p->scratch_cap) {
        p->scratch_cap = rn + 1 > 4096 ? rn + 1 : 4096;
        free(p->scratch);
        p->scratch = ll_malloc(p->scratch_cap);
    }
    size_t got_len = 0;
    if (jscan_string_unescape(&reply, p->scratch, rn + 1, &got_len) != 0 ||
        got_len != rn || memchr(p->scratch, '\0', rn)) {
        skip(p, DATASET_SKIP_BAD_TEXT);
        return 0;
    }
    uint32_t words = dataset_count_words(p->scratch, rn);
    if (words == 0) {
        skip(p, DATASET_SKIP_NO_REPLY);
        return 0;
    }
    if (words > DATASET_MAX_OUTPUT_TOKENS) {
        skip(p, DATASET_SKIP_BAD_TEXT);
        return 0;
    }

    size_t pn = jscan_string_decoded_len(&prompt);
    if (pn > DATASET_MAX_PROMPT_BYTES) {
        skip(p, DATASET_SKIP_BAD_TEXT);
        return 0;
    }
    if (arena_decode(p, &prompt, pn) < 0) {
        skip(p, DATASET_SKIP_BAD_TEXT);
        return 0;
    }
    if (dataset_count_words(p->d->arena + p->d->arena_bytes, pn) == 0) {
        skip(p, DATASET_SKIP_NO_PROMPT);
        return 0;
    }
    return push_entry(p, pn, words, conv->ptr);
}

static int parse_sharegpt(struct dparse *p, size_t len)
{
    struct jscan_value root, conv;
    struct jscan_iter it;
    int rc;
    if (jscan_validate(p->text, len, JSCAN_DEFAULT_DEPTH, &root) != 0) {
        jsonfile_json_error(p->name, 1, p->text, len, p->err, p->errlen);
        return LL_E_INVAL;
    }
    jscan_iter_init(&it, &root);
    while (jscan_iter_next_element(&it, &conv)) {
        if ((rc = sharegpt_one(p, &conv)))
            return rc;
    }
    return 0;
}

static int jsonl_line(struct dparse *p, const char *s, size_t n,
                      unsigned long line)
{
    static const char *const names[] = {"prompt", "output_tokens"};
    struct jscan_value root, v[2];
    int rc;
    char q[64];

    if (jscan_validate(s, n, JSCAN_DEFAULT_DEPTH, &root) != 0) {
        jsonfile_json_error(p->name, line, s, n, p->err, p->errlen);
        return LL_E_INVAL;
    }
    if (root.type != JSCAN_OBJECT) {
        derr_at(p, root.ptr, NULL, "expected one object per line like "
                "{\"prompt\": \"...\", \"output_tokens\": 100}, got %s",
                jsonfile_quote(root.ptr, root.len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    if ((rc = jsonfile_json_members(p->name, line, s, &root, names, 2, v, p->err,
                                  p->errlen)))
        return rc;
    if (v[0].type == JSCAN_INVALID) {
        derr_at(p, root.ptr, "prompt", "missing: expected the prompt text");
        return LL_E_INVAL;
    }
    size_t pn = v[0].type == JSCAN_STRING ? jscan_string_decoded_len(&v[0]) : 0;
    if (v[0].type != JSCAN_STRING || pn > DATASET_MAX_PROMPT_BYTES ||
        arena_decode(p, &v[0], pn) < 0 ||
        dataset_count_words(p->d->arena + p->d->arena_bytes, pn) == 0) {
        derr_at(p, v[0].ptr, "prompt", "expected a non-empty string of at most "
                "%zu bytes without NUL, got %s", DATASET_MAX_PROMPT_BYTES,
                jsonfile_quote(v[0].ptr, v[0].len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    uint32_t out_tokens = 0;
    if (v[1].type != JSCAN_INVALID) {
        int64_t x;
        if (jsonfile_whole_number(&v[1], 1, DATASET_MAX_OUTPUT_TOKENS, &x) != 0) {
            derr_at(p, v[1].ptr, "output_tokens", "expected a whole number in "
                    "[1, %u], got %s", DATASET_MAX_OUTPUT_TOKENS,
                    jsonfile_quote(v[1].ptr, v[1].len, q, sizeof(q)));
            return LL_E_INVAL;
        }
        out_tokens = (uint32_t)x;
    }
    return push_entry(p, pn, out_tokens, root.ptr);
}

static int jsonl_line_cb(void *ud, const char *s, size_t n, unsigned long line)
{
    return jsonl_line(ud, s, n, line);
}

static int parse_jsonl(struct dparse *p, size_t len)
{
    return jsonfile_each_line(p->text, len, jsonl_line_cb, p);
}

void dataset_free(struct dataset *d)
{
    if (!d)
        return;
    free(d->entries);
    free(d->arena);
    free(d);
}

int dataset_parse(const char *name, const char *text, size_t len,
                  struct dataset **out, char *err, size_t errlen)
{
    struct dparse p = {.name = name, .text = text, .err = err, .errlen = errlen};
    int rc;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    p.d = ll_calloc(1, sizeof(*p.d));

    size_t k = 0;
    while (k < len && is_space((unsigned char)text[k]))
        k++;
    if (k == len) {
        snprintf(err, errlen, "%s: empty file: expected a ShareGPT JSON array "
                 "or JSON Lines of {\"prompt\": \"...\"}", name);
        rc = LL_E_INVAL;
        goto fail;
    }
    if (text[k] == '[') {
        p.d->format = DATASET_SHAREGPT;
        rc = parse_sharegpt(&p, len);
    } else if (text[k] == '{') {
        p.d->format = DATASET_JSONL;
        rc = parse_jsonl(&p, len);
    } else {
        char q[64];
        derr_at(&p, text + k, NULL, "expected a ShareGPT JSON array ('[') or "
                "JSON Lines of objects ('{'), got \"%s\"",
                jsonfile_quote(text + k, len - k < 16 ? len - k : 16, q, sizeof(q)));
        rc = LL_E_INVAL;
    }
    if (rc)
        goto fail;
    if (p.d->n == 0) {
        const size_t *s = p.d->skipped;
        snprintf(err, errlen, "%s: no usable entries: %zu conversations "
                 "skipped (%zu without a prompt, %zu without a reply, %zu "
                 "with bad text)", name, p.d->skipped_total,
                 s[DATASET_SKIP_NO_PROMPT], s[DATASET_SKIP_NO_REPLY],
                 s[DATASET_SKIP_BAD_TEXT]);
        rc = LL_E_INVAL;
        goto fail;
    }
    *out = p.d;
    p.d = NULL;

fail:
    free(p.scratch);
    dataset_free(p.d); /* NULL once handed to *out */
    return rc;
}

JSONFILE_DEFINE_LOAD(dataset_load, dataset_parse, struct dataset)

const char *dataset_prompt(const struct dataset *d, size_t i, size_t *len_out)
{
    if (len_out)
        *len_out = d->entries[i].prompt_bytes;
    return d->arena + d->entries[i].prompt_off;
}

size_t dataset_pick(const struct dataset *d, struct rng *r)
{
    size_t i = (size_t)(rng_uniform(r) * (double)d->n);
    return i < d->n ? i : d->n - 1;
}
