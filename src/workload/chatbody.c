/* chatbody.c: the prompt part of a request body, conversations included
 * (see chatbody.h).
 *
 * Every writer here follows workload_prompt's contract: write what fits
 * into buf[0, len), count every byte needed, and let the caller grow its
 * buffer and call again. That keeps the transport's one body buffer per
 * slot and its single retry loop, and costs nothing extra on the common
 * path (one user message of synthetic text). */
#include "workload/chatbody.h"

#include <string.h>

#include "util/rng.h"
#include "util/util.h"
#include "workload/synthprompt.h"
#include "workload/wlfile.h"

/* Salt of the seed of synthetic assistant text, so it never repeats a
 * user prompt's words. */
#define CHATBODY_ASSISTANT_SALT 0x61737369737461ULL

/* RNG streams of ID prompts: the shared prefix of group g is drawn from
 * stream CHATBODY_IDS_PREFIX_STREAM ^ g (schedule-wide: above 2^63), the
 * filler of request i from CHATBODY_IDS_FILLER_STREAM + i. Both differ
 * from every stream the text prompts and the workload draw from. */
#define CHATBODY_IDS_PREFIX_STREAM (RNG_STREAM_ARRIVAL | 0x4950000000000000ULL)
#define CHATBODY_IDS_FILLER_STREAM 0x4946000000000000ULL
/* Salt of the nonce, and its width (four 14-bit IDs in the default range). */
#define CHATBODY_IDS_NONCE_SALT 0x69646E6F6E6365ULL
#define CHATBODY_IDS_NONCE_BITS 56
/* Bits of a prefix's tag: its 32-bit number (three 14-bit IDs), and the
 * salt of a salted seed's offset added to it. */
#define CHATBODY_IDS_TAG_BITS 32
#define CHATBODY_IDS_TAG_SALT 0x6964746167ULL

struct cbuf {
    char *buf;
    size_t len;
    size_t at;                   /* bytes needed so far */
};

static void cb_put(void *ud, const char *s, size_t n)
{
    struct cbuf *b = ud;
    if (b->at < b->len) {
        size_t room = b->len - b->at;
        memcpy(b->buf + b->at, s, n < room ? n : room);
    }
    b->at += n;
}

#define CB_LIT(b, lit) cb_put((b), (lit), sizeof(lit) - 1)

/* Where the next bytes go, and how many fit: the pair a
 * workload_prompt-style writer takes. */
static char *cb_tail(struct cbuf *b, size_t *room)
{
    *room = b->at < b->len ? b->len - b->at : 0;
    return *room ? b->buf + b->at : NULL;
}

/* Append text[0, n) as the body of a JSON string: quote, backslash and
 * control bytes (and DEL) escaped (ll_json_escape); every other byte as it is (the trace loader only
 * hands over text that came out of valid JSON, so it is valid UTF-8). */
static void cb_escaped(struct cbuf *b, const char *text, size_t n)
{
    ll_json_escape_runs(text, n, cb_put, b);
}

/* The user prompt of spec: verbatim (escaped) or synthetic. */
static void cb_user_text(struct cbuf *b, uint64_t seed, const struct req_spec *spec)
{
    if (spec->prompt_text) {
        cb_escaped(b, spec->prompt_text, spec->prompt_text_len);
        return;
    }
    size_t room;
    char *p = cb_tail(b, &room);
    b->at += workload_prompt(seed, spec, p, room);
}

static void cb_assistant_text(struct cbuf *b, uint64_t seed, const struct chat_turn *turn)
{
    size_t room;
    char *p = cb_tail(b, &room);
    uint32_t n = turn->output_tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)turn->output_tokens;
    b->at += chatbody_assistant_text(seed, turn->spec.index, n, p, room);
}

/* A message's opening: the Responses API's input items say they are
 * messages (llama.cpp refuses an assistant item that does not: "Cannot
 * determine type of 'item'"). */
static void cb_message(struct cbuf *b, enum oai_api api, int assistant)
{
    if (api == OAI_API_RESPONSES)
        CB_LIT(b, "{\"type\":\"message\",");
    else
        CB_LIT(b, "{");
    if (assistant)
        CB_LIT(b, "\"role\":\"assistant\",\"content\":\"");
    else
        CB_LIT(b, "\"role\":\"user\",\"content\":\"");
}

/* Image parts [from, to) of im, each followed by a comma, in api's own
 * part type (see cb_images). */
static void cb_image_parts(struct cbuf *b, enum oai_api api, const struct req_image_data *im,
                           uint32_t from, uint32_t to)
{
    size_t mime_len = strlen(im->mime);
    for (uint32_t k = from; k < to; k++) {
        size_t start = k ? im->ends[k - 1] : 0;
        if (api == OAI_API_ANTHROPIC) {
            CB_LIT(b, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"");
            cb_put(b, im->mime, mime_len);
            CB_LIT(b, "\",\"data\":\"");
        } else {
            if (api == OAI_API_RESPONSES)
                CB_LIT(b, "{\"type\":\"input_image\",\"image_url\":\"data:");
            else
                CB_LIT(b, "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:");
            cb_put(b, im->mime, mime_len);
            CB_LIT(b, ";base64,");
        }
        cb_put(b, im->b64 + start, im->ends[k] - start);
        if (api == OAI_API_RESPONSES)
            CB_LIT(b, "\"},");
        else
            CB_LIT(b, "\"}},");
    }
}

static void cb_text_open(struct cbuf *b, enum oai_api api)
{
    if (api == OAI_API_RESPONSES)
        CB_LIT(b, "{\"type\":\"input_text\",\"text\":\"");
    else
        CB_LIT(b, "{\"type\":\"text\",\"text\":\"");
}

/* The user message of spec with its images: a content array of the
 * images, then the text, in api's own part types (docs/apis.md):
 *
 *   chat       {"type":"image_url","image_url":{"url":"data:M;base64,B"}}
 *   Anthropic  {"type":"image","source":{"type":"base64","media_type":"M","data":"B"}}
 *   Responses  {"type":"input_image","image_url":"data:M;base64,B"}
 *
 * and {"type":"text","text":T} ("input_text" for Responses). A synthetic
 * prompt with a shared prefix is cut after the prefix, so that everything
 * the group shares comes first and in the same bytes: the group's images,
 * the prefix text, then the request's own images and the rest of its
 * text (docs/workload.md, "Images"). */
static void cb_images(struct cbuf *b, enum oai_api api, const struct req_spec *spec, uint64_t seed)
{
    const struct req_image_data *im = spec->image_data;
    if (api == OAI_API_RESPONSES)
        CB_LIT(b, "{\"type\":\"message\",\"role\":\"user\",\"content\":[");
    else
        CB_LIT(b, "{\"role\":\"user\",\"content\":[");
    uint32_t shared = LL_MIN(im->n_prefix, im->n);
    if (spec->prefix_id >= 0 && !spec->prompt_text) {
        size_t room;
        cb_image_parts(b, api, im, 0, shared);
        cb_text_open(b, api);
        char *p = cb_tail(b, &room);
        b->at += workload_prompt_part(seed, spec, WORKLOAD_PROMPT_PREFIX, p, room);
        CB_LIT(b, "\"},");
        cb_image_parts(b, api, im, shared, im->n);
        cb_text_open(b, api);
        p = cb_tail(b, &room);
        b->at += workload_prompt_part(seed, spec, WORKLOAD_PROMPT_REST, p, room);
        CB_LIT(b, "\"}]}");
        return;
    }
    cb_image_parts(b, api, im, 0, im->n);
    cb_text_open(b, api);
    cb_user_text(b, seed, spec);
    CB_LIT(b, "\"}]}");
}

size_t chatbody_prompt(enum oai_api api, uint64_t seed, const struct req_spec *spec, char *buf,
                       size_t len)
{
    struct cbuf b = {.buf = buf, .len = len, .at = 0};
    for (uint32_t k = 0; k < spec->history_len; k++) {
        const struct chat_turn *turn = &spec->history[k];
        if (turn->unanswered)
            continue;
        if (api != OAI_API_COMPLETIONS) {
            cb_message(&b, api, 0);
            cb_user_text(&b, seed, &turn->spec);
            CB_LIT(&b, "\"},");
            cb_message(&b, api, 1);
            cb_assistant_text(&b, seed, turn);
            CB_LIT(&b, "\"},");
        } else {
            cb_user_text(&b, seed, &turn->spec);
            CB_LIT(&b, "\\n");
            cb_assistant_text(&b, seed, turn);
            CB_LIT(&b, "\\n");
        }
    }
    const struct req_image_data *im = spec->image_data;
    if (api != OAI_API_COMPLETIONS && im && im->n > 0) {
        cb_images(&b, api, spec, seed);
        return b.at;
    }
    if (api != OAI_API_COMPLETIONS)
        cb_message(&b, api, 0);
    cb_user_text(&b, seed, spec);
    if (api != OAI_API_COMPLETIONS)
        CB_LIT(&b, "\"}");
    return b.at;
}

uint32_t chatbody_prompt_tokens(const struct req_spec *spec)
{
    uint64_t total = (uint64_t)spec->prompt_tokens + spec->image_tokens;
    for (uint32_t k = 0; k < spec->history_len; k++) {
        if (!spec->history[k].unanswered)
            total += (uint64_t)spec->history[k].spec.prompt_tokens + spec->history[k].output_tokens;
    }
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

void chatbody_fill_record(struct record *r, const struct req_spec *spec)
{
    r->prompt_tokens = chatbody_prompt_tokens(spec);
    r->session = spec->session;
    r->turn = spec->turn;
    r->ignore_eos = spec->ignore_eos;
    r->images = spec->images + spec->prefix_images;
}

size_t chatbody_assistant_text(uint64_t seed, uint64_t index, uint32_t n_tokens, char *buf,
                               size_t len)
{
    return wl_prompt_build(seed ^ CHATBODY_ASSISTANT_SALT, index, n_tokens, -1, 0, buf, len);
}

/* ---- token-ID prompts -------------------------------------------------- */

struct idbuf {
    struct cbuf b;
    uint32_t ids;                /* IDs written so far */
    uint32_t min;                /* the range's first ID: digit 0 */
    uint64_t m;                  /* IDs in the range: the base, >= 2 */
};

/* Append one ID, after a comma unless it is the first. */
static void ids_put(struct idbuf *w, uint32_t id)
{
    char d[12];
    size_t n = 0;
    if (w->ids)
        d[n++] = ',';
    char rev[10];
    size_t k = 0;
    do {
        rev[k++] = (char)('0' + id % 10);
        id /= 10;
    } while (id);
    while (k)
        d[n++] = rev[--k];
    cb_put(&w->b, d, n);
    w->ids++;
}

/* Digits of base m that every value below 2^bits needs. */
static int ids_digits_for(uint64_t m, int bits)
{
    int d = 0;
    for (unsigned __int128 cap = 1; cap < (unsigned __int128)1 << bits; cap *= m)
        d++;
    return d;
}

/* Write v's digits in base w->m, least significant first, `digits` of
 * them, stopping when w->ids reaches limit. In the default range (m =
 * 2^14) these are v's 14-bit groups. */
static void ids_digits(struct idbuf *w, uint64_t v, int digits, uint32_t limit)
{
    for (int i = 0; i < digits && w->ids < limit; i++) {
        ids_put(w, w->min + (uint32_t)(v % w->m));
        v /= w->m;
    }
}

/* IDs drawn uniformly from the range by multiplying up 64 random bits: in
 * the default range, a draw's top 14 bits. */
static void ids_random(struct idbuf *w, struct rng *r, uint32_t limit)
{
    while (w->ids < limit)
        ids_put(w, w->min + (uint32_t)(((unsigned __int128)rng_next(r) * w->m) >> 64));
}

/* A bijection of [0, 2^56): splitmix64's finaliser with every step taken
 * mod 2^56 (a right xorshift and a product with an odd constant are each
 * invertible there), so distinct values below 2^56 stay distinct. */
static uint64_t mix56(uint64_t z)
{
    const uint64_t mask = ((uint64_t)1 << CHATBODY_IDS_NONCE_BITS) - 1;
    z &= mask;
    z ^= z >> 29;
    z = (z * 0xBF58476D1CE4E5B9ULL) & mask;
    z ^= z >> 27;
    z = (z * 0x94D049BB133111EBULL) & mask;
    z ^= z >> 31;
    return z;
}

size_t chatbody_prompt_ids(uint64_t seed, const struct chatbody_id_range *range,
                           const struct req_spec *spec, char *buf, size_t len)
{
    static const struct chatbody_id_range dflt = {CHATBODY_ID_MIN, CHATBODY_ID_MAX};
    if (!range || range->max <= range->min)
        range = &dflt;
    struct idbuf w = {.b = {.buf = buf, .len = len, .at = 0}, .ids = 0, .min = range->min};
    w.m = (uint64_t)range->max - range->min + 1;
    int nonce_ids = ids_digits_for(w.m, CHATBODY_IDS_NONCE_BITS);
    uint32_t n = spec->prompt_tokens;
    struct rng r;

    if (spec->prefix_id >= 0 && spec->prefix_tokens > 0) {
        uint32_t l = spec->prefix_tokens < n ? spec->prefix_tokens : n;
        /* Under a salted seed the group's number plus an offset of the
         * seed's, mod 2^32: distinct groups keep distinct tags, another
         * salt shares none. */
        uint64_t tag = (uint64_t)spec->prefix_id;
        if (seed & WL_SEED_SALTED)
            tag += mix56(seed ^ CHATBODY_IDS_TAG_SALT);
        ids_digits(&w, tag & 0xFFFFFFFFULL, ids_digits_for(w.m, CHATBODY_IDS_TAG_BITS), l);
        rng_seed(&r, seed, CHATBODY_IDS_PREFIX_STREAM ^ (uint64_t)spec->prefix_id);
        ids_random(&w, &r, l);
    }
    uint32_t nonce_end = n - w.ids > (uint32_t)nonce_ids ? w.ids + (uint32_t)nonce_ids : n;
    uint64_t salt = seed ^ CHATBODY_IDS_NONCE_SALT;
    salt ^= salt >> 31;
    salt *= 0x9E3779B97F4A7C15ULL;
    ids_digits(&w, mix56(spec->index + salt), nonce_ids, nonce_end);
    rng_seed(&r, seed, CHATBODY_IDS_FILLER_STREAM + spec->index);
    ids_random(&w, &r, n);
    return w.b.at;
}
