/* workload.h: what each scheduled request asks for, as a pure function of
 * the seed and the request's schedule index, so any worker thread (or any
 * machine of a sharded run) builds the identical request for index i. */
#ifndef LL_WORKLOAD_H
#define LL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "workload/dist.h"
#include "workload/image.h"
#include "workload/wlfile.h"

struct chat_turn;
struct dataset;
struct empirical;

/* A words-to-tokens fit of a server's tokenizer (llmload calibrate): a
 * synthetic prompt of W words counts slope * W + intercept tokens there.
 * slope 0 means none: one word per token (exact on the sim). */
struct workload_calib {
    double tokens_per_word;      /* slope, > 0 when set */
    double intercept_tokens;     /* tokens the server adds to every prompt (chat template) */
};

struct workload {
    struct dist prompt_tokens;   /* prompt length distribution, tokens */
    struct dist output_tokens;   /* max_tokens distribution, tokens */
    int ignore_eos;              /* ask the server to generate exactly max_tokens */
    /* --batch DIST: inputs per openai-embeddings request, drawn last (after
     * the cancellation) so the other draws stay where they were; unset:
     * one input, no draw. */
    int has_batch;
    struct dist batch;
    uint64_t seed;
    /* Traffic classes from --workload FILE (borrowed; NULL = one class made
     * of the fields above and below). */
    const struct wl_file *classes;
    struct wl_prefix prefix;     /* one-class prefix sharing; fraction 0 = all unique */
    struct wl_cancel cancel;     /* one-class cancellations; kind NONE = none */
    /* Lengths from files (owned by whoever loaded them: runopts frees them in
     * runopts_workload_free). Without classes only. NULL = not used. */
    const struct empirical *prompt_emp;  /* --prompt-tokens empirical:FILE */
    int prompt_col;                      /* its column (EMPIRICAL_COL_*) */
    const struct empirical *output_emp;  /* --output-tokens empirical:FILE */
    int output_col;
    const struct empirical *pairs;       /* --lengths empirical:FILE: one row per request */
    /* --dataset FILE: each prompt's text and length (and its output length
     * when the entry has one) from an entry drawn per request. NULL = none. */
    const struct dataset *dataset;
    struct workload_calib calib;         /* --calibration FILE; zero = none */
    struct image_cfg images;             /* --images, --image-size(s), --image-format;
                                          * set 0 = none (a class's own replaces it) */
};

/* One request's content parameters. */
struct req_spec {
    uint64_t index;              /* schedule index */
    uint32_t prompt_tokens;      /* >= 1 */
    uint32_t max_tokens;         /* >= 1 */
    int32_t class_idx;           /* index into workload.classes (a replay: the trace's
                                  * classes), -1 without classes */
    const char *class_name;      /* its name (borrowed from workload.classes), NULL = none */
    int ignore_eos;              /* 0 or 1 */
    int api;                     /* enum oai_api, or -1: the transport's --api */
    int64_t prefix_id;           /* shared-prefix group, -1 = unique prompt */
    uint32_t prefix_tokens;      /* length of the shared prefix, tokens */
    enum wl_cancel_kind cancel_kind;
    uint64_t cancel_after;       /* ns after the send, or tokens received */
    /* Replay and sessions (NULL / 0 / -1 from workload_spec). */
    const char *prompt_text;     /* send this text as the prompt, JSON-escaped, instead of
                                    synthetic text; borrowed until transport_submit returns */
    size_t prompt_text_len;      /* its bytes */
    const struct chat_turn *history; /* earlier turns of a session, oldest first; borrowed
                                    until transport_submit returns (src/workload/chatbody.h) */
    uint32_t history_len;        /* turns in history */
    int64_t session;             /* session index (sessions, or a trace's session_id), -1 = none */
    int32_t turn;                /* 0-based turn within the session, -1 = none */
    /* The fit workload_prompt scales synthetic words by (zero from anything
     * but workload_spec with --calibration: one word per token). */
    struct workload_calib calib;
    int64_t dataset_entry;       /* the --dataset entry of the prompt, -1 = none */
    /* Image inputs (0 / NULL without --images): how many, the draw their
     * sizes come from (image_pick_size), the prefill tokens they cost
     * (image_tokens summed), the settings (borrowed from the workload),
     * and their encoded bytes, which the transport sets just before it
     * writes the body (borrowed until transport_submit returns). */
    uint32_t images;
    uint64_t image_draw;
    uint32_t image_tokens;
    const struct image_cfg *image_cfg;
    const struct req_image_data *image_data;
    /* Its prefix group's shared images (--prefix-images; 0 without a
     * shared prefix): how many, the group's size draw (workload_group_draw),
     * and their tokens, which image_tokens includes. images counts the
     * request's own only. */
    uint32_t prefix_images;
    uint64_t prefix_image_draw;
    uint32_t prefix_image_tokens;
    uint32_t inputs; /* openai-embeddings: the inputs the request carries, each
                                  * of prompt_tokens (--batch); 1 without it, and 0 (taken
                                  * as 1) from anything but workload_spec */
};

/* The encoded images of one request, as the body writer sends them: image
 * k's base64 text is b64[ends[k-1], ends[k]) (ends[-1] = 0). The first
 * n_prefix are its prefix group's shared images, the rest its own. */
struct req_image_data {
    const char *mime; /* "image/png" or "image/jpeg" */
    const char *b64;
    const size_t *ends;
    uint32_t n;        /* all of them */
    uint32_t n_prefix; /* the shared ones, first */
};

/* Draw request index. Deterministic in (seed, index): one RNG stream per
 * index, drawn in a fixed order (class, lengths, dataset entry, prefix,
 * cancellation). Lengths are rounded to the nearest integer and at least 1.
 * Lengths come from the class, or else from w->pairs (one observed row), or
 * else each from its empirical file or its DIST. With w->dataset the prompt
 * is an entry's text (prompt_text, borrowed from the dataset), its length
 * the entry's, and max_tokens the entry's output length when it has one;
 * such a prompt never has a shared prefix. */
void workload_spec(const struct workload *w, uint64_t index, struct req_spec *out);

/* workload_spec, but with w->classes the request is of class class_idx
 * (an index into w->classes, drawn by an earlier request: a session's
 * later turns keep its first turn's class) instead of the class it would
 * draw; every other draw is made as workload_spec makes it, from the
 * chosen class. class_idx -1 (or past the classes) draws as workload_spec. */
void workload_spec_class(const struct workload *w, uint64_t index, int32_t class_idx,
                         struct req_spec *out);

/* Whether any request of w can carry images: w->images, or a class's. */
int workload_has_images(const struct workload *w);

/* Draw spec's images from c (NULL or unset: none) on their own RNG stream
 * of (seed, spec->index), so runs without images draw what they drew
 * before: the count from c->count, the size draw, the image tokens. A
 * request with a shared prefix (spec->prefix_id >= 0, set first) also
 * gets c->prefix_count shared images, sized by workload_group_draw. */
void workload_images(const struct image_cfg *c, uint64_t seed, struct req_spec *spec);

/* The size draw (image_pick_size's draw) of prefix group group's shared
 * images: a pure function of (seed, group), on a stream of its own, so
 * every request of the group gets the same sizes and groups differ. */
uint64_t workload_group_draw(uint64_t seed, uint64_t group);

/* Which words of spec's synthetic prompt workload_prompt_part writes: all
 * of them, the shared prefix's alone, or those after it (the first
 * without a leading space). ALL is workload_prompt's text; PREFIX, a space
 * and REST concatenated are that text again. */
enum workload_prompt_part { WORKLOAD_PROMPT_ALL, WORKLOAD_PROMPT_PREFIX, WORKLOAD_PROMPT_REST };

/* The words of part of spec's prompt, under workload_prompt's contract
 * (at most len bytes, returns the bytes needed). A request without a
 * shared prefix has an empty PREFIX and its whole text as REST. */
size_t workload_prompt_part(uint64_t seed, const struct req_spec *spec,
                            enum workload_prompt_part part, char *buf, size_t len);

/* The name of the request's class, or NULL without classes. Borrowed from
 * w->classes. */
const char *workload_class_name(const struct workload *w, const struct req_spec *spec);

/* Build the prompt of spec: exactly spec->prompt_tokens tokens under the
 * documented whitespace tokenizer (docs/workload.md), beginning with its
 * shared prefix when it has one and unique after it. With spec->calib set
 * the number of words is workload_calib_words(calib, prompt_tokens) (and
 * the prefix's words scaled the same way, without the intercept), so the
 * server's own count hits the target. Writes at most len
 * bytes (no NUL) into buf and returns the byte count needed; when that
 * exceeds len the caller retries with a bigger buffer. The text needs no
 * JSON escaping. */
size_t workload_prompt(uint64_t seed, const struct req_spec *spec, char *buf, size_t len);

/* The seed of a run's prompt content (the transport's seed: every
 * synthetic prompt, shared prefix, token-ID prompt and assistant turn is
 * built from it) for the schedule's seed and the run's prompt salt
 * (--prompt-salt). The salt changes what the prompts say, never the
 * schedule: workload_spec and the arrivals take the seed alone. Salt 0
 * is none: the seed itself, the text runs sent before salts existed.
 * Any other salt gives a 63-bit mix of both with WL_SEED_SALTED set (which
 * moves the prefixes' tags too), so two runs with the same seed and
 * another salt share no prompt text, and the same pair always gives the
 * same bytes. */
uint64_t workload_content_seed(uint64_t seed, uint64_t salt);

/* The number of synthetic words whose count under the fit c is closest to
 * target_tokens: round((target - intercept) / slope), at least 1 and at
 * most DIST_TOKENS_MAX. With no fit (slope <= 0) returns target_tokens. */
uint32_t workload_calib_words(const struct workload_calib *c, uint32_t target_tokens);

/* The same for a shared prefix of prefix_tokens (no intercept: the
 * template is counted once per prompt), at least 1 when prefix_tokens > 0. */
uint32_t workload_calib_prefix_words(const struct workload_calib *c, uint32_t prefix_tokens);

#endif
