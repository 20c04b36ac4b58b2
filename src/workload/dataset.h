/* dataset.h: prompt datasets, lengths taken from the data.
 *
 * Two formats, told apart by the first non-blank byte (docs/workload.md):
 *
 *   ShareGPT ('[')  a JSON array of conversations:
 *       [{"id": "...", "conversations": [{"from": "human", "value": "..."},
 *                                        {"from": "gpt", "value": "..."}]}]
 *     The prompt is the first turn whose "from" is "human" or "user"; the
 *     output length is the number of whitespace-separated words of the first
 *     reply after it ("from" "gpt", "chatgpt", "bing" or "assistant").
 *     Other members are ignored (the format is foreign and varies).
 *     Conversations with no usable prompt, no reply, or text with a NUL are
 *     skipped and counted by reason; a wrong shape (a turn that is not an
 *     object, a "value" that is not a string) is an error.
 *   JSONL ('{')     one object per line, {"prompt": "...", "output_tokens": N}
 *     with output_tokens optional (then 0: the class's output distribution
 *     applies). Unknown fields are errors; nothing is skipped.
 *
 * Prompts are stored back to back in one arena. Each entry also carries the
 * prompt's length under the sim's tokenizer (src/workload/tokenizer.h). */
#ifndef LL_DATASET_H
#define LL_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"

/* Most entries kept (each about 24 bytes plus its prompt). */
#define DATASET_MAX_ENTRIES 10000000u
/* Longest prompt kept, bytes; longer ones are skipped (ShareGPT) or an
 * error (JSONL). */
#define DATASET_MAX_PROMPT_BYTES ((size_t)1 << 20)
/* Largest output length taken from the data, tokens. */
#define DATASET_MAX_OUTPUT_TOKENS 100000000u

enum dataset_format {
    DATASET_SHAREGPT,
    DATASET_JSONL,
};

/* Why a ShareGPT conversation was skipped. */
enum dataset_skip {
    DATASET_SKIP_NO_PROMPT,   /* no human/user turn, or its text is empty */
    DATASET_SKIP_NO_REPLY,    /* no gpt/assistant turn after it, or an empty one */
    DATASET_SKIP_BAD_TEXT,    /* a NUL in the text, or a prompt over the bound */
    DATASET_SKIP_COUNT
};

struct dataset_entry {
    uint64_t prompt_off;      /* the prompt at arena + prompt_off, NUL-terminated */
    uint32_t prompt_bytes;
    uint32_t prompt_tokens;   /* under the sim's tokenizer rule */
    uint32_t output_tokens;   /* reply words (ShareGPT), the given count (JSONL),
                                 or 0 when the line gave none */
};

struct dataset {
    struct dataset_entry *entries;
    size_t n;                 /* >= 1 */
    char *arena;
    size_t arena_bytes;
    enum dataset_format format;
    size_t skipped[DATASET_SKIP_COUNT];
    size_t skipped_total;
};

/* Load the dataset at path. Returns 0 and a new *out (caller frees with
 * dataset_free), or LL_E_IO / LL_E_INVAL / LL_E_RANGE with one line in err
 * naming the file, line, column and field. A file with no usable entry is
 * an error that gives the skip counts. *out is NULL on error. */
int dataset_load(const char *path, struct dataset **out, char *err,
                 size_t errlen);

/* The same for text[0..len); name used in messages. Does no I/O. */
int dataset_parse(const char *name, const char *text, size_t len,
                  struct dataset **out, char *err, size_t errlen);

/* Free d. NULL does nothing. */
void dataset_free(struct dataset *d);

/* The prompt of entry i (< d->n), NUL-terminated, *len_out bytes (may be
 * NULL). Borrowed; valid until dataset_free. */
const char *dataset_prompt(const struct dataset *d, size_t i, size_t *len_out);

/* An entry drawn uniformly, with one uniform from r. Returns [0, d->n). */
size_t dataset_pick(const struct dataset *d, struct rng *r);

/* The number of whitespace-separated words in s[0..len) (the output
 * length rule for ShareGPT replies). */
uint32_t dataset_count_words(const char *s, size_t len);

#endif
