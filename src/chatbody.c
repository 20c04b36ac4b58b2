/* chatbody.c: the prompt part of a request body, conversations included
 * (see chatbody.h).
 *
 * Every writer here follows workload_prompt's contract: write what fits
 * into buf[0, len), count every byte needed, and let the caller grow its
 * buffer and call again. That keeps the transport's one body buffer per
 * slot and its single retry loop, and costs nothing extra on the common
 * path (one user message of synthetic text). */
#include "chatbody.h"

#include <string.h>

#include "wlfile.h"

/* Salt of the seed of synthetic assistant text, so it never repeats a
 * user prompt's words. */
#define CHATBODY_ASSISTANT_SALT 0x61737369737461ULL

struct cbuf {
    char *buf;
    size_t len;
    size_t at;                   /* bytes needed so far */
};

static void cb_put(struct cbuf *b, const char *s, size_t n)
{
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
 * control bytes escaped; every other byte as it is (the trace loader only
 * hands over text that came out of valid JSON, so it is valid UTF-8). */
static void cb_escaped(struct cbuf *b, const char *text, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;              /* start of the bytes not yet copied */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        cb_put(b, text + run, i - run);
        run = i + 1;
        if (c == '"') {
            CB_LIT(b, "\\\"");
        } else if (c == '\\') {
            CB_LIT(b, "\\\\");
        } else if (c == '\n') {
            CB_LIT(b, "\\n");
        } else if (c == '\t') {
            CB_LIT(b, "\\t");
        } else if (c == '\r') {
            CB_LIT(b, "\\r");
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            cb_put(b, esc, sizeof esc);
        }
    }
    cb_put(b, text + run, n - run);
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

size_t chatbody_prompt(enum oai_api api, uint64_t seed, const struct req_spec *spec, char *buf,
                       size_t len)
{
    struct cbuf b = {.buf = buf, .len = len, .at = 0};
    for (uint32_t k = 0; k < spec->history_len; k++) {
        const struct chat_turn *turn = &spec->history[k];
        if (api == OAI_API_CHAT) {
            CB_LIT(&b, "{\"role\":\"user\",\"content\":\"");
            cb_user_text(&b, seed, &turn->spec);
            CB_LIT(&b, "\"},{\"role\":\"assistant\",\"content\":\"");
            cb_assistant_text(&b, seed, turn);
            CB_LIT(&b, "\"},");
        } else {
            cb_user_text(&b, seed, &turn->spec);
            CB_LIT(&b, "\\n");
            cb_assistant_text(&b, seed, turn);
            CB_LIT(&b, "\\n");
        }
    }
    if (api == OAI_API_CHAT)
        CB_LIT(&b, "{\"role\":\"user\",\"content\":\"");
    cb_user_text(&b, seed, spec);
    if (api == OAI_API_CHAT)
        CB_LIT(&b, "\"}");
    return b.at;
}

uint32_t chatbody_prompt_tokens(const struct req_spec *spec)
{
    uint64_t total = spec->prompt_tokens;
    for (uint32_t k = 0; k < spec->history_len; k++)
        total += (uint64_t)spec->history[k].spec.prompt_tokens + spec->history[k].output_tokens;
    return total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
}

void chatbody_fill_record(struct record *r, const struct req_spec *spec)
{
    r->prompt_tokens = chatbody_prompt_tokens(spec);
    r->session = spec->session;
    r->turn = spec->turn;
}

size_t chatbody_assistant_text(uint64_t seed, uint64_t index, uint32_t n_tokens, char *buf,
                               size_t len)
{
    return wl_prompt_build(seed ^ CHATBODY_ASSISTANT_SALT, index, n_tokens, -1, 0, buf, len);
}
