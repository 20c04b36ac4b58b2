/* chatbody.h: the prompt part of a request body: one user message of
 * synthetic or verbatim text, or a whole conversation (the earlier turns
 * of a session, then the new user message).
 *
 * A chat body's "messages" array holds, for turn k of a session,
 *
 *   {"role":"user","content":U0},{"role":"assistant","content":A0}, ...,
 *   {"role":"user","content":Uk}
 *
 * where Uj is turn j's user prompt (rebuilt byte for byte from its
 * req_spec, so every turn resends the identical history and a prefix cache
 * can hit it) and Aj is synthetic assistant text of exactly the output
 * tokens turn j received. A completions body's "prompt" is the same texts
 * joined by "\n". The sim counts a chat prompt as the message contents
 * joined by "\n" under its whitespace tokenizer (docs/sim.md), so in both
 * forms the server's prompt_tokens is exactly chatbody_prompt_tokens(). */
#ifndef LL_CHATBODY_H
#define LL_CHATBODY_H

#include <stddef.h>
#include <stdint.h>

#include "openai.h"
#include "record.h"
#include "workload.h"

/* One finished turn of a session, as the next turns resend it. */
struct chat_turn {
    struct req_spec spec;        /* the turn's own user prompt (history fields unused) */
    uint64_t output_tokens;      /* tokens the assistant returned (its record's count) */
};

/* Write the prompt part of the body of spec for api: for
 * chat, the members of the "messages" array (without the brackets); for
 * completions, the body of the "prompt" string (without the quotes). The
 * user prompt is spec->prompt_text, JSON-escaped, when set, else the
 * synthetic text workload_prompt(seed, spec) builds. Writes at most len
 * bytes (no NUL; buf may be NULL when len is 0) and returns the bytes
 * needed: when that exceeds len, retry with a bigger buffer. */
size_t chatbody_prompt(enum oai_api api, uint64_t seed, const struct req_spec *spec, char *buf,
                       size_t len);

/* The prompt tokens the sim counts for spec's body: the earlier turns'
 * prompts and outputs plus spec->prompt_tokens, saturating at UINT32_MAX. */
uint32_t chatbody_prompt_tokens(const struct req_spec *spec);

/* Copy what a record carries from its spec beyond id and lengths: the
 * prompt tokens of the whole conversation (chatbody_prompt_tokens), the
 * session and the turn. */
void chatbody_fill_record(struct record *r, const struct req_spec *spec);

/* The synthetic assistant text of a turn: exactly n_tokens words of 1-4
 * lowercase letters or digits under the sim's tokenizer, a function of
 * (seed, index). Same buffer contract as chatbody_prompt. */
size_t chatbody_assistant_text(uint64_t seed, uint64_t index, uint32_t n_tokens, char *buf,
                               size_t len);

#endif
