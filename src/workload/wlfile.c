/* wlfile.c: the --workload file and its draws (the class, lengths,
 * prefix group and cancellation of a request). See wlfile.h.
 *
 * The file is parsed with jansson (which rejects repeated keys and gives
 * the line and column of a syntax error); jansson keeps no positions for
 * values, so when a value is wrong we find it again with jscan over the
 * same text, by its path, and report where it starts. */
#include "workload/wlfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "decode/jscan.h"
#include "workload/empirical.h"
#include "workload/jsonfile.h"
#include "util/util.h"

/* A workload file is small; refuse anything huge. */
#define WL_MAX_FILE_BYTES ((size_t)16 << 20)
/* Longest JSON path we build ("classes.255.cancel.after_tokens"). */
#define WL_PATH_MAX 96
/* Upper bounds for "impossible" values. */
#define WL_MAX_WEIGHT 1e12
#define WL_MAX_SLO_MS 1e9

/* ---- parsing the workload file ----------------------------------------- */

struct wctx {
    const char *name;
    const char *text;
    size_t len;
    const char *base_dir;
    char *err;
    size_t errlen;
    struct jscan_value root;
    int have_root;
    int default_api; /* the run's --api (enum oai_api), or -1: openai-chat */
    char *warn;      /* the file's first warning (WL_WARN_MAX bytes), or NULL */
};

/* Write "NAME:LINE:COL: FIELD: <fmt>" for the dotted path (located by
 * jscan; when the path does not exist, its nearest existing parent). */
static void werr(struct wctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void werr(struct wctx *c, const char *path, const char *fmt, ...)
{
    char where[WL_PATH_MAX], shown[WL_PATH_MAX + 16];
    struct jscan_value v;
    int found = 0;

    if (!c->err || c->errlen == 0)
        return;
    snprintf(where, sizeof(where), "%s", path);
    while (c->have_root) {
        if (jscan_path_get(&c->root, where, &v) == 0) {
            found = 1;
            break;
        }
        char *dot = strrchr(where, '.');
        if (!dot) {
            v = c->root;
            found = 1;
            break;
        }
        *dot = '\0';
    }

    /* classes.1.weight -> classes[1].weight */
    size_t at = 0;
    for (const char *p = path; *p && at + 8 < sizeof(shown);) {
        const char *seg = p;
        while (*p && *p != '.')
            p++;
        size_t n = (size_t)(p - seg);
        int digits = n > 0;
        for (size_t k = 0; k < n; k++)
            digits &= seg[k] >= '0' && seg[k] <= '9';
        if (digits) {
            at += (size_t)snprintf(shown + at, sizeof(shown) - at, "[%.*s]",
                                   (int)n, seg);
        } else {
            at += (size_t)snprintf(shown + at, sizeof(shown) - at, "%s%.*s",
                                   at ? "." : "", (int)n, seg);
        }
        if (at >= sizeof(shown))
            at = sizeof(shown) - 1;
        if (*p == '.')
            p++;
    }
    shown[at] = '\0';

    char raw[512], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    ll_printable(raw, sizeof(raw), msg, sizeof(msg)); /* a DIST error may echo raw text */
    if (found) {
        unsigned long line, col;
        jsonfile_line_col(c->text, (size_t)(v.ptr - c->text), &line, &col);
        snprintf(c->err, c->errlen, "%s:%lu:%lu: %s%s%s", c->name, line, col,
                 shown, at ? ": " : "", msg);
    } else {
        snprintf(c->err, c->errlen, "%s: %s%s%s", c->name, shown,
                 at ? ": " : "", msg);
    }
}

/* dst = a "." b (or b when a is empty), cut to fit n bytes. */
static void join(char *dst, size_t n, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), at = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < la && at + 1 < n; i++)
        dst[at++] = a[i];
    if (la && at + 1 < n)
        dst[at++] = '.';
    for (size_t i = 0; i < lb && at + 1 < n; i++)
        dst[at++] = b[i];
    dst[at] = '\0';
}

/* A short rendering of a JSON value for "got ..." (caller frees). */
static char *got(const json_t *j)
{
    char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s)
        return ll_strdup("?");
    char q[64];
    jsonfile_quote(s, strlen(s), q, sizeof(q));
    free(s);
    return ll_strdup(q);
}

/* "expected WHAT, got <j>" (j NULL: "nothing") at path, WHAT from fmt;
 * returns LL_E_INVAL. */
static int werr_got(struct wctx *c, const char *path, const json_t *j, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int werr_got(struct wctx *c, const char *path, const json_t *j, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char *g = j ? got(j) : ll_strdup("nothing");
    werr(c, path, "expected %s, got %s", what, g);
    free(g);
    return LL_E_INVAL;
}

/* Reject members of obj not in names (NULL-terminated). */
static int check_keys(struct wctx *c, const char *path, json_t *obj,
                      const char *const *names)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (size_t i = 0; names[i]; i++)
            ok |= strcmp(key, names[i]) == 0;
        if (ok)
            continue;
        char allowed[512], sub[WL_PATH_MAX];
        size_t at = 0;
        allowed[0] = '\0';
        for (size_t i = 0; names[i] && at < sizeof(allowed); i++) {
            int w = snprintf(allowed + at, sizeof(allowed) - at, "%s%s",
                             i ? ", " : "", names[i]);
            if (w < 0)
                break;
            at += (size_t)w;
        }
        char q[64];
        jsonfile_quote(key, strlen(key), q, sizeof(q));
        if (jsonfile_valid_name(key, strlen(key), WL_NAME_MAX) && !strchr(key, '.') &&
            strlen(key) <= 40)
            join(sub, sizeof(sub), path, key);
        else
            snprintf(sub, sizeof(sub), "%s", path); /* jscan cannot name it */
        werr(c, sub, "unknown field \"%s\" (allowed: %s)", q, allowed);
        return LL_E_INVAL;
    }
    return 0;
}

/* A number field into *out; absent leaves *out. Checks lo < v <= hi (or
 * lo <= v when lo_incl). */
static int get_number(struct wctx *c, const char *path, json_t *obj,
                      const char *key, double lo, int lo_incl, double hi,
                      const char *expect, double *out)
{
    char sub[WL_PATH_MAX];
    json_t *j = json_object_get(obj, key);
    if (!j)
        return 0;
    join(sub, sizeof(sub), path, key);
    double v = json_is_number(j) ? json_number_value(j) : NAN;
    if (!json_is_number(j) || !isfinite(v) || v > hi || v < lo ||
        (!lo_incl && v == lo)) {
        return werr_got(c, sub, j, "%s", expect);
    }
    *out = v;
    return 0;
}

/* j, the value at the dotted path, as a whole number in [lo, hi], read
 * from its own text however it is written (5, 5.0, 5e0:
 * jsonfile_whole_number). Returns 0, or LL_E_INVAL / LL_E_RANGE for the
 * caller's message. */
static int whole_at(const struct wctx *c, const char *path, const json_t *j, int64_t lo, int64_t hi,
                    int64_t *out)
{
    struct jscan_value v;
    if (!json_is_number(j))
        return LL_E_INVAL;
    if (c->have_root && jscan_path_get(&c->root, path, &v) == 0)
        return jsonfile_whole_number(&v, lo, hi, out);
    /* Not reached (a document jansson read is one jscan validates) but
     * for a nesting past jscan's depth: the integers jansson read. */
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return LL_E_INVAL;
    *out = (int64_t)json_integer_value(j);
    return 0;
}

/* A whole-number field in [lo, hi]; absent is an error when required. */
static int get_count(struct wctx *c, const char *path, json_t *obj,
                     const char *key, uint32_t lo, uint32_t hi, int required,
                     uint32_t *out)
{
    char sub[WL_PATH_MAX];
    json_t *j = json_object_get(obj, key);
    join(sub, sizeof(sub), path, key);
    if (!j) {
        if (!required)
            return 0;
        werr(c, sub, "missing: expected a whole number in [%u, %u]", lo, hi);
        return LL_E_INVAL;
    }
    int64_t v;
    if (whole_at(c, sub, j, lo, hi, &v) != 0)
        return werr_got(c, sub, j, "a whole number in [%u, %u]", lo, hi);
    *out = (uint32_t)v;
    return 0;
}

/* The directory of the workload file at path, as its empirical FILEs are
 * found from it. Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ll_strdup(".");
    if (slash == path)
        return ll_strdup("/");
    return ll_strndup(path, (size_t)(slash - path));
}

/* The path of an empirical FILE, relative to the workload file's directory.
 * Caller frees. */
static char *resolve(const char *base_dir, const char *file)
{
    if (file[0] == '/' || !base_dir || !*base_dir || strcmp(base_dir, ".") == 0)
        return ll_strdup(file);
    size_t a = strlen(base_dir), b = strlen(file);
    char *p = ll_malloc(a + b + 2);
    memcpy(p, base_dir, a);
    p[a] = '/';
    memcpy(p + a + 1, file, b + 1);
    return p;
}

/* Load "empirical:FILE[#input|#output]" for the field at sub, the column
 * its suffix names into *col (-1: none; empirical_spec_col, as the flags
 * read it; a suffix needs a two-column file). */
static int load_empirical(struct wctx *c, const char *sub, const char *spec, struct empirical **out,
                          int *col)
{
    const char *file = spec + strlen("empirical:");
    while (*file == ' ')
        file++;
    if (!c->base_dir) {
        werr(c, sub, "empirical files are not allowed here");
        return LL_E_INVAL;
    }
    size_t n;
    *col = empirical_spec_col(file, &n);
    if (*col == EMPIRICAL_COL_BAD) {
        werr(c, sub, "%s: expected #input or #output after the file name", spec);
        return LL_E_INVAL;
    }
    if (n == 0) {
        werr(c, sub, "expected empirical:FILE, got no file name");
        return LL_E_INVAL;
    }
    char *name = ll_strndup(file, n), *path = resolve(c->base_dir, name);
    char eerr[512];
    int rc = empirical_load(path, DIST_UNIT_NONE, out, eerr, sizeof(eerr));
    free(path);
    if (rc) {
        free(name);
        werr(c, sub, "%s", eerr);
        return rc;
    }
    if (*col >= 0 && empirical_columns(*out) < 2) {
        werr(c, sub, "%s has one column; #input and #output name a column of a two-column file",
             name);
        rc = LL_E_INVAL;
    }
    free(name);
    return rc;
}

/* A DIST field (string, or a number meaning fixed:N) into *d, in unit;
 * token distributions are also checked non-negative. */
static int get_dist(struct wctx *c, const char *sub, json_t *j,
                    enum dist_unit unit, struct dist *d)
{
    char spec[DIST_SPEC_MAX + 32], derr[256];
    if (json_is_number(j) && unit == DIST_UNIT_NONE) {
        snprintf(spec, sizeof(spec), "fixed:%.17g", json_number_value(j));
    } else if (json_is_string(j) && json_string_length(j) < DIST_SPEC_MAX &&
               strlen(json_string_value(j)) == json_string_length(j)) {
        snprintf(spec, sizeof(spec), "%s", json_string_value(j));
    } else {
        return werr_got(c, sub, j, "a DIST string such as %s",
                        unit == DIST_UNIT_NONE ? "\"uniform:100,500\"" : "\"exponential:2s\"");
    }
    derr[0] = '\0';
    if (dist_parse(spec, unit, d, derr, sizeof(derr)) != 0 ||
        (unit == DIST_UNIT_NONE && dist_require_nonneg(d, derr, sizeof(derr)))) {
        werr(c, sub, "%s", derr[0] ? derr : "bad distribution");
        return LL_E_INVAL;
    }
    return 0;
}

/* Columns first..last of an empirical file of token lengths (spec, at
 * sub) refused as a DIST is when their p99 rounds to 0 tokens
 * (empirical_check_length): 0 or LL_E_INVAL. */
static int check_emp_lengths(struct wctx *c, const char *sub, const char *spec,
                             const struct empirical *e, int first, int last)
{
    char why[200];
    for (int k = first; k <= last; k++) {
        if (empirical_check_length(e, k, why, sizeof why) != 0) {
            werr(c, sub, "%s: %s", spec, why);
            return LL_E_INVAL;
        }
    }
    return 0;
}

/* The DIST d of j, at sub, checked as the length flags' are
 * (dist_check_tokens): 0, or LL_E_INVAL for a p99 of 0 tokens or a median
 * beyond any context; a p99 beyond most contexts is the file's first
 * warning, if it has none yet. */
static int check_tokens(struct wctx *c, const char *sub, json_t *j, const struct dist *d)
{
    char spec[DIST_SPEC_MAX], why[512], warn[320];
    if (dist_check_length(d, why, sizeof why) != 0) { /* the field names it: no spec */
        werr(c, sub, "%s", why);
        return LL_E_INVAL;
    }
    if (json_is_string(j))
        snprintf(spec, sizeof spec, "%s", json_string_value(j));
    else if (dist_format(d, spec, sizeof spec) < 0)
        spec[0] = '\0';
    if (dist_check_tokens(d, NULL, spec, why, sizeof why, warn, sizeof warn) != 0) {
        werr(c, sub, "%s", why);
        return LL_E_INVAL;
    }
    if (warn[0] && c->warn && !c->warn[0]) {
        char *err = c->err; /* werr writes the located line into warn */
        size_t errlen = c->errlen;
        c->err = c->warn;
        c->errlen = WL_WARN_MAX;
        werr(c, sub, "%s", warn + strlen("warning: "));
        c->err = err;
        c->errlen = errlen;
    }
    return 0;
}

/* prompt_tokens / output_tokens: a DIST or empirical:FILE. */
static int get_len(struct wctx *c, const char *path, json_t *cls,
                   const char *key, int col, struct wl_len *out)
{
    char sub[WL_PATH_MAX];
    json_t *j = json_object_get(cls, key);
    join(sub, sizeof(sub), path, key);
    if (!j) {
        werr(c, sub, "missing: expected a DIST (e.g. \"lognormal:median=500,"
                     "sigma=0.5\") or \"empirical:FILE\", or \"lengths\"");
        return LL_E_INVAL;
    }
    if (json_is_string(j) &&
        strncmp(json_string_value(j), "empirical:", 10) == 0) {
        out->kind = WL_LEN_EMPIRICAL;
        int want;
        int rc = load_empirical(c, sub, json_string_value(j), &out->emp, &want);
        if (rc)
            return rc;
        out->col = want >= 0 ? want : empirical_columns(out->emp) > col ? col : 0;
        return check_emp_lengths(c, sub, json_string_value(j), out->emp, out->col, out->col);
    }
    out->kind = WL_LEN_DIST;
    int rc = get_dist(c, sub, j, DIST_UNIT_NONE, &out->dist);
    if (rc == 0)
        rc = check_tokens(c, sub, j, &out->dist);
    return rc;
}

/* Check that j is an object of only the members keys (NULL-terminated):
 * else "expected WHAT SHAPE, got <its type>" or check_keys's error. */
static int expect_object(struct wctx *c, const char *path, json_t *j, const char *const *keys,
                         const char *what, const char *shape)
{
    if (!json_is_object(j)) {
        return werr_got(c, path, j, "%s %s", what, shape);
    }
    return check_keys(c, path, j, keys);
}

static int parse_prefix(struct wctx *c, const char *path, json_t *j,
                        struct wl_prefix *p)
{
    static const char *const keys[] = {"fraction", "groups", "tokens", NULL};
    int rc;
    if ((rc = expect_object(c, path, j, keys, "an object",
                            "{\"fraction\": F, \"groups\": P, \"tokens\": L}")))
        return rc;
    char sub[WL_PATH_MAX];
    join(sub, sizeof(sub), path, "fraction");
    if (!json_object_get(j, "fraction")) {
        werr(c, sub, "missing: expected a fraction of requests in [0, 1]");
        return LL_E_INVAL;
    }
    if ((rc = get_number(c, path, j, "fraction", 0, 1, 1,
                         "a fraction of requests in [0, 1]", &p->fraction)) ||
        (rc = get_count(c, path, j, "groups", 1, WL_MAX_PREFIX_GROUPS, 1,
                        &p->groups)) ||
        (rc = get_count(c, path, j, "tokens", 1, WL_MAX_PREFIX_TOKENS, 1,
                        &p->tokens)))
        return rc;
    return 0;
}

static int parse_cancel(struct wctx *c, const char *path, json_t *j,
                        struct wl_cancel *k)
{
    static const char *const keys[] = {"fraction", "after", "after_tokens", NULL};
    int rc;
    char sub[WL_PATH_MAX];
    if ((rc = expect_object(c, path, j, keys, "an object",
                            "{\"fraction\": F, \"after\": DIST} "
                            "or {\"fraction\": F, \"after_tokens\": DIST}")))
        return rc;
    join(sub, sizeof(sub), path, "fraction");
    if (!json_object_get(j, "fraction")) {
        werr(c, sub, "missing: expected a fraction of requests in (0, 1]");
        return LL_E_INVAL;
    }
    if ((rc = get_number(c, path, j, "fraction", 0, 0, 1,
                         "a fraction of requests in (0, 1]", &k->fraction)))
        return rc;
    json_t *t = json_object_get(j, "after");
    json_t *n = json_object_get(j, "after_tokens");
    if ((t != NULL) == (n != NULL)) {
        werr(c, path, "expected exactly one of \"after\" (a duration DIST) "
                      "and \"after_tokens\" (a token-count DIST)");
        return LL_E_INVAL;
    }
    if (t) {
        k->kind = WL_CANCEL_AFTER_TIME;
        join(sub, sizeof(sub), path, "after");
        return get_dist(c, sub, t, DIST_UNIT_DURATION_NS, &k->after);
    }
    k->kind = WL_CANCEL_AFTER_TOKENS;
    join(sub, sizeof(sub), path, "after_tokens");
    if ((rc = get_dist(c, sub, n, DIST_UNIT_NONE, &k->after)))
        return rc;
    /* A point of 0 tokens would cancel after the first, silently. */
    char why[160];
    if (dist_check_length(&k->after, why, sizeof why) != 0) {
        werr(c, sub, "%s", why);
        return LL_E_INVAL;
    }
    return 0;
}

static int parse_slo(struct wctx *c, const char *path, json_t *j,
                     struct slo *s)
{
    static const char *const keys[] = {"ttft_ms", "tpot_ms", "e2e_ms", NULL};
    uint64_t *dst[] = {&s->ttft_ns, &s->tpot_ns, &s->e2e_ns};
    int rc;
    if ((rc = expect_object(c, path, j, keys, "an object",
                            "{\"ttft_ms\": N, \"tpot_ms\": N, \"e2e_ms\": N}")))
        return rc;
    for (size_t i = 0; i < 3; i++) {
        double ms = -1;
        if ((rc = get_number(c, path, j, keys[i], 0, 0, WL_MAX_SLO_MS,
                             "a number of milliseconds > 0 (the unit is in "
                             "the name: 500, not \"500ms\")", &ms)))
            return rc;
        if (ms > 0)
            *dst[i] = (uint64_t)llround(ms * 1e6);
    }
    return 0;
}

/* A class's "images": {"count": DIST, "prefix_images": N, "sizes":
 * "WxH[:WEIGHT],...", "format": "png"|"jpeg"}, as --images,
 * --prefix-images, --image-sizes and --image-format take them
 * (image_cfg_parse); "count" is required unless "prefix_images" is given
 * (then it is 0: shared images only). */
static int parse_images(struct wctx *c, const char *path, json_t *j, struct image_cfg *out)
{
    static const char *const keys[] = {"count", "prefix_images", "sizes", "format", NULL};
    static const char *const what[3] = {"count", "sizes", "format"};
    int rc;
    if ((rc = expect_object(c, path, j, keys, "an object",
                            "{\"count\": DIST, \"prefix_images\": N, \"sizes\": "
                            "\"512x512:3,1024x768:1\", \"format\": \"png\"}")))
        return rc;
    json_t *count = json_object_get(j, "count"), *sizes = json_object_get(j, "sizes");
    json_t *format = json_object_get(j, "format"), *shared = json_object_get(j, "prefix_images");
    char spec[64], err[320];
    uint32_t n_shared = 0;
    if (shared) {
        char sub[WL_PATH_MAX];
        int64_t v;
        join(sub, sizeof sub, path, "prefix_images");
        if (whole_at(c, sub, shared, 1, IMAGE_PER_REQUEST_MAX, &v) != 0) {
            char *g = got(shared);
            werr(c, path,
                 "prefix_images: expected a whole number of images each prefix group shares, "
                 "1 to %d, got %s",
                 IMAGE_PER_REQUEST_MAX, g);
            free(g);
            return LL_E_INVAL;
        }
        n_shared = (uint32_t)v;
    }
    if (!count && shared)
        snprintf(spec, sizeof spec, "0");
    else if (count && json_is_number(count))
        snprintf(spec, sizeof spec, "fixed:%.17g", json_number_value(count));
    else if (count && json_is_string(count) && json_string_length(count) < sizeof spec &&
             strlen(json_string_value(count)) == json_string_length(count))
        snprintf(spec, sizeof spec, "%s", json_string_value(count));
    else {
        char *g = count ? got(count) : ll_strdup("nothing");
        werr(c, path,
             "count: expected images per request, a number or a DIST string such "
             "as \"uniform:1,3\", got %s",
             g);
        free(g);
        return LL_E_INVAL;
    }
    for (int i = 0; i < 2; i++) {
        json_t *v = i ? format : sizes;
        if (v && (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))) {
            char *g = got(v);
            werr(c, path, "%s: expected a string, got %s", what[i ? 2 : 1], g);
            free(g);
            return LL_E_INVAL;
        }
    }
    if (image_cfg_parse(what, spec, sizes ? json_string_value(sizes) : NULL,
                        format ? json_string_value(format) : NULL, out, err, sizeof err) != 0) {
        werr(c, path, "%s", err);
        return LL_E_INVAL;
    }
    out->prefix_count = n_shared;
    return 0;
}

/* 1 when class k is sent to openai-embeddings: its own "api" (parsed
 * already), else the run's (c->default_api). */
static int class_embeds(const struct wctx *c, const struct wl_class *k)
{
    return (k->api >= 0 ? k->api : c->default_api) == OAI_API_EMBEDDINGS;
}

static int parse_class(struct wctx *c, struct wl_file *f, size_t idx, json_t *j)
{
    static const char *const keys[] = {
        "name",   "weight", "prompt_tokens", "output_tokens", "lengths", "api", "ignore_eos",
        "prefix", "cancel", "slo",           "extra_body",    "images",  NULL};
    struct wl_class *k = &f->classes[idx];
    char path[WL_PATH_MAX], sub[WL_PATH_MAX];
    json_t *v;
    int rc;

    snprintf(path, sizeof(path), "classes.%zu", idx);
    k->weight = 1;
    k->api = -1;
    k->ignore_eos = -1;
    if ((rc = expect_object(c, path, j, keys, "a class object", "{\"name\": ..., ...}")))
        return rc;

    join(sub, sizeof(sub), path, "name");
    v = json_object_get(j, "name");
    if (!v || !json_is_string(v) ||
        !jsonfile_valid_name(json_string_value(v), json_string_length(v), WL_NAME_MAX) ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        return werr_got(c, sub, v, "a name of 1 to %d letters, digits, '_', '.' or '-'",
                        WL_NAME_MAX - 1);
    }
    snprintf(k->name, sizeof(k->name), "%s", json_string_value(v));
    for (size_t i = 0; i < idx; i++) {
        if (strcmp(f->classes[i].name, k->name) == 0) {
            werr(c, sub, "class name \"%s\" is already used by classes[%zu]",
                 k->name, i);
            return LL_E_INVAL;
        }
    }

    if ((rc = get_number(c, path, j, "weight", 0, 0, WL_MAX_WEIGHT,
                         "a number > 0 (relative weight)", &k->weight)))
        return rc;

    /* The API before the lengths, which it decides: an "api" misspelt on
     * an embeddings class read "output_tokens: missing". */
    v = json_object_get(j, "api");
    if (v) {
        int api = json_is_string(v) ? oai_api_from_name(json_string_value(v)) : -1;
        if (api < 0) {
            join(sub, sizeof(sub), path, "api");
            return werr_got(c, sub, v,
                            "\"chat\", \"completions\", \"anthropic-messages\", "
                            "\"openai-responses\" or \"openai-embeddings\" (as --api takes them)");
        }
        k->api = (enum oai_api)api;
    }

    v = json_object_get(j, "lengths");
    if (v) {
        join(sub, sizeof(sub), path, "lengths");
        if (json_object_get(j, "prompt_tokens") ||
            json_object_get(j, "output_tokens")) {
            werr(c, sub, "expected either \"lengths\" (joint pairs) or "
                         "\"prompt_tokens\" and \"output_tokens\", not both");
            return LL_E_INVAL;
        }
        if (!json_is_string(v) ||
            strncmp(json_string_value(v), "empirical:", 10) != 0) {
            return werr_got(c, sub, v, "\"empirical:FILE\" (a file of input,output pairs)");
        }
        int want;
        if ((rc = load_empirical(c, sub, json_string_value(v), &k->pairs, &want)))
            return rc;
        if (want >= 0) {
            werr(c, sub, "takes both columns; drop the #column from \"%s\"", json_string_value(v));
            return LL_E_INVAL;
        }
        if (empirical_columns(k->pairs) != 2) {
            werr(c, sub, "expected a file of input,output pairs, got one "
                         "column of values");
            return LL_E_INVAL;
        }
        if ((rc = check_emp_lengths(c, sub, json_string_value(v), k->pairs, 0, 1)))
            return rc;
    } else if ((rc =
                    get_len(c, path, j, "prompt_tokens", EMPIRICAL_COL_INPUT, &k->prompt_tokens))) {
        return rc;
    } else if (!json_object_get(j, "output_tokens") && class_embeds(c, k)) {
        /* An embedding has no output (the CLI refuses --output-tokens
         * with it): nothing to give, and 1 is never sent. */
        k->output_tokens.kind = WL_LEN_DIST;
        dist_parse("1", DIST_UNIT_NONE, &k->output_tokens.dist, NULL, 0);
    } else if ((rc = get_len(c, path, j, "output_tokens", EMPIRICAL_COL_OUTPUT,
                             &k->output_tokens))) {
        return rc;
    }

    v = json_object_get(j, "ignore_eos");
    if (v) {
        if (!json_is_boolean(v)) {
            join(sub, sizeof(sub), path, "ignore_eos");
            return werr_got(c, sub, v, "true or false");
        }
        k->ignore_eos = json_is_true(v);
    }
    join(sub, sizeof(sub), path, "prefix");
    if ((v = json_object_get(j, "prefix")) &&
        (rc = parse_prefix(c, sub, v, &k->prefix)))
        return rc;
    join(sub, sizeof(sub), path, "cancel");
    if ((v = json_object_get(j, "cancel")) &&
        (rc = parse_cancel(c, sub, v, &k->cancel)))
        return rc;
    join(sub, sizeof(sub), path, "slo");
    if ((v = json_object_get(j, "slo")) && (rc = parse_slo(c, sub, v, &k->slo)))
        return rc;
    join(sub, sizeof(sub), path, "images");
    if ((v = json_object_get(j, "images")) && (rc = parse_images(c, sub, v, &k->images)))
        return rc;
    /* Checked against the class's API by whoever knows the command line's
     * (runopts: extrabody_build). */
    if ((v = json_object_get(j, "extra_body"))) {
        if (!json_is_object(v)) {
            join(sub, sizeof(sub), path, "extra_body");
            return werr_got(c, sub, v,
                            "an object of fields to add to every request body, e.g. "
                            "{\"temperature\": 0}");
        }
        k->extra_body = json_incref(v);
    }
    return 0;
}

static int parse_root(struct wctx *c, json_t *root, struct wl_file *f)
{
    static const char *const keys[] = {"version", "classes", NULL};
    int rc;
    if (!json_is_object(root)) {
        werr(c, "", "expected an object {\"classes\": [...]}, got %s", jsonfile_type_name(root));
        return LL_E_INVAL;
    }
    if ((rc = check_keys(c, "", root, keys)))
        return rc;
    json_t *v = json_object_get(root, "version");
    int64_t ver;
    if (v && whole_at(c, "version", v, 1, 1, &ver) != 0) {
        return werr_got(c, "version", v, "1 (the only schema version)");
    }
    json_t *cl = json_object_get(root, "classes");
    if (!cl || !json_is_array(cl) || json_array_size(cl) == 0 ||
        json_array_size(cl) > WL_MAX_CLASSES) {
        return werr_got(c, "classes", cl, "an array of 1 to %d class objects", WL_MAX_CLASSES);
    }
    f->n = json_array_size(cl);
    f->classes = ll_calloc(f->n, sizeof(*f->classes));
    f->cum_weight = ll_calloc(f->n, sizeof(double));
    double total = 0;
    uint32_t groups = 0; /* each class's prefixes its own: no cache hit across classes */
    for (size_t i = 0; i < f->n; i++) {
        if ((rc = parse_class(c, f, i, json_array_get(cl, i))))
            return rc;
        total += f->classes[i].weight;
        f->classes[i].prefix.first_group = groups;
        groups += f->classes[i].prefix.groups;
    }
    double run = 0;
    for (size_t i = 0; i < f->n; i++) {
        run += f->classes[i].weight;
        f->cum_weight[i] = run / total;
    }
    f->cum_weight[f->n - 1] = 1.0;
    return 0;
}

int wl_file_parse(const char *name, const char *text, size_t len,
                  const char *base_dir, struct wl_file **out, char *err,
                  size_t errlen)
{
    return wl_file_parse_api(name, text, len, base_dir, -1, out, err, errlen);
}

int wl_file_parse_api(const char *name, const char *text, size_t len, const char *base_dir,
                      int default_api, struct wl_file **out, char *err, size_t errlen)
{
    struct wctx c = {.name = name,
                     .text = text,
                     .len = len,
                     .base_dir = base_dir,
                     .err = err,
                     .errlen = errlen,
                     .default_api = default_api};
    struct wl_file *f = NULL;
    json_t *root = NULL;
    json_error_t jerr;
    int rc = LL_E_INVAL;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    size_t k = jsonfile_skip_blank(text, len);
    if (k == len) {
        snprintf(err, errlen, "%s: empty file: expected a JSON object "
                              "{\"classes\": [...]} (see docs/workload.md)", name);
        return LL_E_INVAL;
    }
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!root) {
        jsonfile_json_error(name, 1, text, len, err, errlen);
        return LL_E_INVAL;
    }
    c.have_root = jscan_validate(text, len, JSCAN_DEFAULT_DEPTH, &c.root) == 0;

    f = ll_calloc(1, sizeof(*f));
    c.warn = f->warn;
    if ((rc = parse_root(&c, root, f)))
        goto fail;
    json_decref(root);
    *out = f;
    return 0;

fail:
    json_decref(root);
    wl_file_free(f);
    return rc;
}

int wl_file_load(const char *path, struct wl_file **out, char *err,
                 size_t errlen)
{
    return wl_file_load_api(path, -1, out, err, errlen);
}

int wl_file_load_api(const char *path, int default_api, struct wl_file **out, char *err,
                     size_t errlen)
{
    char *text, *dir;
    size_t len;
    *out = NULL;
    int rc = jsonfile_read_all(path, WL_MAX_FILE_BYTES, &text, &len, err, errlen);
    if (rc)
        return rc;
    dir = dir_of(path);
    rc = wl_file_parse_api(path, text, len, dir, default_api, out, err, errlen);
    free(dir);
    free(text);
    return rc;
}

void wl_file_free(struct wl_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->classes && i < f->n; i++) {
        empirical_free(f->classes[i].prompt_tokens.emp);
        empirical_free(f->classes[i].output_tokens.emp);
        empirical_free(f->classes[i].pairs);
        json_decref(f->classes[i].extra_body);
    }
    free(f->classes);
    free(f->cum_weight);
    free(f);
}

/* ---- draws ------------------------------------------------------------- */

size_t wl_pick_class(const struct wl_file *f, struct rng *r)
{
    double u = rng_uniform(r);
    size_t lo = 0, hi = f->n - 1;
    while (lo < hi) {                  /* first i with u < cum_weight[i] */
        size_t mid = lo + (hi - lo) / 2;
        if (u < f->cum_weight[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int wl_find_class(const struct wl_file *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->classes[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

static double len_draw(const struct wl_len *l, struct rng *r)
{
    if (l->kind == WL_LEN_EMPIRICAL)
        return empirical_sample(l->emp, l->col, r);
    return dist_sample(&l->dist, r);
}

void wl_class_lengths(const struct wl_class *c, struct rng *r,
                      uint32_t *prompt_tokens, uint32_t *max_tokens)
{
    if (c->pairs) {
        double in, outv;
        empirical_sample_pair(c->pairs, r, &in, &outv);
        *prompt_tokens = dist_to_tokens(in);
        *max_tokens = dist_to_tokens(outv);
        return;
    }
    *prompt_tokens = dist_to_tokens(len_draw(&c->prompt_tokens, r));
    *max_tokens = dist_to_tokens(len_draw(&c->output_tokens, r));
}

int64_t wl_prefix_draw(const struct wl_prefix *p, struct rng *r)
{
    if (!(p->fraction > 0) || p->groups == 0 || p->tokens == 0)
        return -1;
    if (p->fraction < 1 && !(rng_uniform(r) < p->fraction))
        return -1;
    uint64_t g = (uint64_t)(rng_uniform(r) * (double)p->groups);
    return (int64_t)p->first_group + (int64_t)(g < p->groups ? g : p->groups - 1);
}

int wl_cancel_draw(const struct wl_cancel *c, struct rng *r, uint64_t *after)
{
    if (c->kind == WL_CANCEL_NONE || !(c->fraction > 0))
        return 0;
    if (c->fraction < 1 && !(rng_uniform(r) < c->fraction))
        return 0;
    *after = dist_sample_u64(&c->after, r);
    return 1;
}

char *wl_file_ref_path(const char *workload_path, const char *file)
{
    char *dir = dir_of(workload_path), *p = resolve(dir, file);
    free(dir);
    return p;
}
