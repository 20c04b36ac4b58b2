/* wlfile.h: the --workload FILE (traffic classes) and its draws; the
 * synthetic prompt with a shared prefix is synthprompt.h. The helpers every loader of a user's file shares
 * are in jsonfile.h.
 *
 * A workload file is JSON; docs/workload.md is the user's reference:
 *
 *   {"version": 1,
 *    "classes": [
 *      {"name": "chat", "weight": 3,
 *       "prompt_tokens": "lognormal:median=400,sigma=0.6,max=4000",
 *       "output_tokens": "uniform:50,300",
 *       "api": "chat", "ignore_eos": true,
 *       "prefix": {"fraction": 0.5, "groups": 4, "tokens": 256},
 *       "cancel": {"fraction": 0.1, "after": "exponential:2s"},
 *       "slo": {"ttft_ms": 500, "tpot_ms": 50, "e2e_ms": 20000},
 *       "extra_body": {"temperature": 0}}]}
 *
 * Parsing checks everything before a request is sent: unknown fields
 * (named, with the allowed ones), repeated keys, wrong types, negative or
 * impossible values, duplicate names, no classes. Every error is one line:
 *
 *   FILE:LINE:COL: classes[1].weight: expected a number > 0, got -2
 *
 * A parsed wl_file is read-only and may be shared by every worker thread;
 * every draw takes the caller's rng. */
#ifndef LL_WLFILE_H
#define LL_WLFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decode/openai.h"
#include "measure/slo.h"
#include "util/rng.h"
#include "workload/dist.h"
#include "workload/image.h"

struct empirical;
struct jscan_value;

/* Longest class name, NUL included. */
#define WL_NAME_MAX 64
/* Most classes in one file. */
#define WL_MAX_CLASSES 256
/* Most prefix groups in one class, and most tokens in one prefix. */
#define WL_MAX_PREFIX_GROUPS 1000000u
#define WL_MAX_PREFIX_TOKENS 1000000u
/* Where a length comes from. */
enum wl_len_kind {
    WL_LEN_DIST,      /* a DIST from dist_parse */
    WL_LEN_EMPIRICAL, /* observed values of one column of an empirical file */
};

/* One length source, in tokens. */
struct wl_len {
    enum wl_len_kind kind;
    struct dist dist;        /* WL_LEN_DIST: tokens, non-negative */
    struct empirical *emp;   /* WL_LEN_EMPIRICAL: owned by the wl_file */
    int col;                 /* the column of emp drawn from (0 or 1) */
};

/* Prefix sharing: a request is in the shared fraction with probability
 * `fraction`, then starts with one of `groups` prefixes of `tokens` tokens
 * (the group drawn uniformly), whose ids are first_group and on. fraction
 * 0 means off. */
struct wl_prefix {
    double fraction;         /* [0, 1] */
    uint32_t groups;         /* [1, WL_MAX_PREFIX_GROUPS] when fraction > 0 */
    uint32_t tokens;         /* [1, WL_MAX_PREFIX_TOKENS] when fraction > 0 */
    /* The id of the first group: a workload file's class k starts after
     * the groups of classes 0..k-1 (below WL_MAX_CLASSES *
     * WL_MAX_PREFIX_GROUPS < 2^32), so no two classes share a prefix; 0
     * for the --prefix-* flags. */
    uint32_t first_group;
};

enum wl_cancel_kind {
    WL_CANCEL_NONE,
    WL_CANCEL_AFTER_TIME,    /* `after`: a duration DIST, ns, from the send */
    WL_CANCEL_AFTER_TOKENS,  /* `after_tokens`: a token-count DIST */
};

/* Cancellation: a fraction of requests disconnect mid-stream. */
struct wl_cancel {
    enum wl_cancel_kind kind;
    double fraction;         /* (0, 1]; 0 when kind is WL_CANCEL_NONE */
    struct dist after;       /* ns (AFTER_TIME) or tokens (AFTER_TOKENS) */
};

struct wl_class {
    char name[WL_NAME_MAX];  /* [A-Za-z0-9_.-], 1..63 bytes, unique */
    double weight;           /* > 0, relative */
    struct wl_len prompt_tokens;   /* unused when pairs is set */
    struct wl_len output_tokens;   /* unused when pairs is set */
    struct empirical *pairs; /* joint (input, output) lengths, or NULL; owned */
    int api;                 /* enum oai_api, or -1: the command line's --api */
    int ignore_eos;          /* 0, 1, or -1: the command line's setting */
    struct wl_prefix prefix;
    struct wl_cancel cancel;
    struct slo slo;          /* the class's own SLO; unset = the run's */
    struct json_t *extra_body; /* its "extra_body" object (owned), NULL = none */
    struct image_cfg images;   /* its "images" object; set 0 = the command line's */
};

/* Longest warning a parse keeps, NUL included. */
#define WL_WARN_MAX 384

struct wl_file {
    struct wl_class *classes;  /* n classes, in file order */
    size_t n;                  /* >= 1 */
    double *cum_weight;        /* cum_weight[i]: sum of weights 0..i over the total */
    /* The first warning parsing found, located as an error is ("FILE:LINE:COL:
     * classes[0].prompt_tokens: SPEC: 1% of the lengths are above ..."), for the
     * caller to print with "warning: " before it; "" when none. */
    char warn[WL_WARN_MAX];
};

/* Load and validate the workload file at path. Relative `empirical:FILE`
 * paths inside it are taken relative to the directory of path. Returns 0
 * and a new *out (caller frees with wl_file_free), or LL_E_IO (cannot read)
 * / LL_E_INVAL (bad content) / LL_E_RANGE (too big) with one line in err
 * (errlen bytes) naming path, line, column and field, and what was
 * expected. *out is NULL on error. */
int wl_file_load(const char *path, struct wl_file **out, char *err,
                 size_t errlen);

/* wl_file_load for a run whose --api is default_api (enum oai_api; -1:
 * openai-chat): a class sent to openai-embeddings, by its own "api" or
 * that one, may leave out "output_tokens" (an embedding has no output). */
int wl_file_load_api(const char *path, int default_api, struct wl_file **out, char *err,
                     size_t errlen);

/* The path wl_file_load reads for an empirical FILE named in the workload
 * file at workload_path: FILE itself when absolute, else beside the
 * workload file. Caller frees. */
char *wl_file_ref_path(const char *workload_path, const char *file);

/* The same for text[0..len) (need not be NUL-terminated), with name used in
 * messages. base_dir is the directory relative empirical paths start
 * from; NULL forbids `empirical:` (no file is opened: for fuzzing and
 * tests). */
int wl_file_parse(const char *name, const char *text, size_t len,
                  const char *base_dir, struct wl_file **out, char *err,
                  size_t errlen);
/* wl_file_parse with the run's --api, as wl_file_load_api. */
int wl_file_parse_api(const char *name, const char *text, size_t len, const char *base_dir,
                      int default_api, struct wl_file **out, char *err, size_t errlen);

/* Free f and everything it owns. NULL does nothing. */
void wl_file_free(struct wl_file *f);

/* The class index of one request, drawn by weight with one uniform from r:
 * class i with probability weight_i / sum of weights. Returns [0, f->n). */
size_t wl_pick_class(const struct wl_file *f, struct rng *r);

/* The index of the class named name, or -1. */
int wl_find_class(const struct wl_file *f, const char *name);

/* Draw a request's prompt and output lengths from class c: from the pairs
 * file as one observed row (so their correlation is kept), else prompt
 * then output from their own sources. Each is rounded to the nearest
 * integer, at least 1 and at most DIST_TOKENS_MAX. */
void wl_class_lengths(const struct wl_class *c, struct rng *r,
                      uint32_t *prompt_tokens, uint32_t *max_tokens);

/* Whether a request shares a prefix, and which: returns -1 (not in the
 * shared fraction, or prefix off) or a group in [p->first_group,
 * p->first_group + p->groups). Uses one uniform when fraction is in
 * (0, 1), plus one for the group. */
int64_t wl_prefix_draw(const struct wl_prefix *p, struct rng *r);

/* Whether a request cancels, and after how much: returns 0 (no), or 1 with
 * *after set to ns (WL_CANCEL_AFTER_TIME) or tokens (AFTER_TOKENS), drawn
 * from c->after. */
int wl_cancel_draw(const struct wl_cancel *c, struct rng *r, uint64_t *after);

#endif
