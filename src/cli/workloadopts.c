/* workloadopts.c: the workload's flags that run, replay and sweep share:
 * the length distributions, the files that give lengths or prompts
 * (empirical:FILE, --lengths, --dataset, --calibration), --workload's
 * classes, the shared prefix and cancellation flags, and --max-inflight,
 * checked into cfg->workload (see runopts.h). Moved from runopts.c. */
#include <stdlib.h>
#include <string.h>

#include "cli/runopts.h"
#include "cli/runopts_int.h"
#include "util/util.h"
#include "workload/dataset.h"
#include "workload/empirical.h"
#include "workload/extrabody.h"

/* A --*-fraction flag, from 0 to 1; 1 when absent (the flags beside it
 * turn the feature on for every request). */
static int fraction_flag(const char *name, const char *v, double *out, char *err, size_t errlen)
{
    double x = 1.0;
    if (v && (ll_parse_double(v, &x) != 0 || !(x >= 0 && x <= 1)))
        return runopts_errf(err, errlen,
                            "%s: expected a fraction from 0 to 1 (e.g. 0.3), "
                            "got \"%s\"",
                            name, v);
    *out = x;
    return 0;
}

/* flags beside --workload, whose classes set what (lengths, prefixes...). */
static int set_per_class(const char *flags, const char *what, char *err, size_t errlen)
{
    return runopts_errf(err, errlen, "%s: with --workload, %s are set per class in the file", flags,
                        what);
}

/* Whether a length flag's value names an empirical file. */
static int is_empirical(const char *v)
{
    return v && strncmp(v, "empirical:", 10) == 0;
}

/* Load `empirical:FILE[#input|#output]` of flag name into *out (caller
 * frees with empirical_free): the column is the suffix's, else def_col of
 * a two-column file (-1: both, as pairs; *col is then 0), else the only
 * column. Its lengths are checked as a DIST's are (empirical_check_length).
 * 0 or LL_E_INVAL. */
static int empirical_flag(const char *name, const char *v, int def_col, struct empirical **out,
                          int *col, char *err, size_t errlen)
{
    const char *path = v + 10;
    size_t n;
    int want = empirical_spec_col(path, &n);
    if (want == EMPIRICAL_COL_BAD)
        return runopts_errf(err, errlen,
                            "%s: \"%s\": expected #input or #output after the file name", name, v);
    if (n == 0)
        return runopts_errf(err, errlen,
                            "%s: expected empirical:FILE (a CSV or JSONL of "
                            "observed lengths), got \"%s\"",
                            name, v);
    char *file = ll_malloc(n + 1);
    memcpy(file, path, n);
    file[n] = 0;
    char why[512];
    struct empirical *e = NULL;
    int rc = 0;
    if (empirical_load(file, DIST_UNIT_NONE, &e, why, sizeof why) != 0) {
        rc = runopts_errf(err, errlen, "%s: %s", name, why);
        goto out;
    }
    int cols = empirical_columns(e);
    if (want >= 0 && cols < 2) {
        empirical_free(e);
        rc = runopts_errf(err, errlen,
                          "%s: %s has one column; #input and #output name a "
                          "column of a two-column file",
                          name, file);
        goto out;
    }
    int both = def_col < 0;
    *col = want >= 0 ? want : cols == 2 && !both ? def_col : EMPIRICAL_COL_VALUE;
    /* Lengths that round to 0 would be sent as 1, as a DIST's would
     * (dist_check_length): both columns of --lengths, else the one used. */
    for (int c = both ? 0 : *col; c <= (both ? cols - 1 : *col); c++) {
        if (empirical_check_length(e, c, why, sizeof why) != 0) {
            empirical_free(e);
            rc = runopts_errf(err, errlen, "%s %s: %s", name, v, why);
            goto out;
        }
    }
    *out = e;
out:
    free(file);
    return rc;
}

/* --prompt-tokens / --output-tokens empirical:FILE, --lengths, --dataset
 * and --calibration FILE into wl (checked against --workload by the
 * caller), the fit into *fit; --calibrate checked (its fit comes later,
 * run_setup_calibrate). What it loaded stays in wl, for
 * runopts_workload_free, even on an error. */
static int runopts_workload_files(const struct run_opts *o, struct workload *wl,
                                  struct calib_fit *fit, char *err, size_t errlen)
{
    if (o->calibrate) {
        if (strcmp(o->calibrate, "auto") != 0)
            return runopts_errf(err, errlen, "--calibrate: expected auto, got \"%s\"",
                                o->calibrate);
        if (o->calibration)
            return runopts_errf(err, errlen,
                                "--calibrate and --calibration: pick one (a fit "
                                "made now, or one from a file)");
    }
    /* A fit scales llmload's words; a dataset's text goes as it is. */
    if ((o->calibrate || o->calibration) && o->dataset)
        return runopts_errf(err, errlen,
                            "--%s: --dataset prompts are sent verbatim; there is nothing "
                            "to scale",
                            o->calibrate ? "calibrate" : "calibration");
    struct empirical *e = NULL;
    if (o->lengths) {
        if (o->workload)
            return set_per_class("--lengths", "lengths", err, errlen);
        if (o->prompt_tokens || o->output_tokens)
            return runopts_errf(err, errlen,
                                "--lengths: gives both lengths; drop "
                                "--prompt-tokens and --output-tokens");
        if (!is_empirical(o->lengths))
            return runopts_errf(err, errlen,
                                "--lengths: expected empirical:FILE (two columns, "
                                "input,output), got \"%s\"",
                                o->lengths);
        size_t n = strlen(o->lengths);
        if ((n > 6 && strcmp(o->lengths + n - 6, "#input") == 0) ||
            (n > 7 && strcmp(o->lengths + n - 7, "#output") == 0))
            return runopts_errf(err, errlen,
                                "--lengths: takes both columns; drop the #column "
                                "from \"%s\"",
                                o->lengths);
        int col;
        if (empirical_flag("--lengths", o->lengths, -1, &e, &col, err, errlen) != 0)
            return LL_E_INVAL;
        if (empirical_columns(e) != 2) {
            empirical_free(e);
            return runopts_errf(err, errlen,
                                "--lengths: expected a two-column file "
                                "(input,output), got one column in \"%s\"",
                                o->lengths + 10);
        }
        wl->pairs = e;
    }
    if (is_empirical(o->prompt_tokens)) {
        if (empirical_flag("--prompt-tokens", o->prompt_tokens, EMPIRICAL_COL_INPUT, &e,
                           &wl->prompt_col, err, errlen) != 0)
            return LL_E_INVAL;
        wl->prompt_emp = e;
    }
    if (is_empirical(o->output_tokens)) {
        if (empirical_flag("--output-tokens", o->output_tokens, EMPIRICAL_COL_OUTPUT, &e,
                           &wl->output_col, err, errlen) != 0)
            return LL_E_INVAL;
        wl->output_emp = e;
    }
    if (o->dataset) {
        if (o->prompt_tokens || o->lengths)
            return runopts_errf(err, errlen,
                                "--dataset: prompt lengths come from the data; drop %s",
                                o->prompt_tokens ? "--prompt-tokens" : "--lengths");
        if (o->prefix_fraction || o->prefix_groups || o->prefix_tokens)
            return runopts_errf(err, errlen,
                                "--dataset: prompts are sent verbatim; --prefix-* "
                                "does not apply");
        char why[512];
        struct dataset *d = NULL;
        if (dataset_load(o->dataset, &d, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--dataset: %s", why);
        wl->dataset = d;
    }
    if (o->calibration) {
        char why[512];
        if (calib_fit_load(o->calibration, fit, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--calibration: %s", why);
        wl->calib.tokens_per_word = fit->slope;
        wl->calib.intercept_tokens = fit->intercept;
    }
    return 0;
}

/* The shared prefix flags into wl->prefix (--workload excludes them). */
static int runopts_prefix(const struct run_opts *o, struct wl_prefix *px, char *err, size_t errlen)
{
    if (o->workload)
        return set_per_class("--prefix-*", "prefixes", err, errlen);
    if (fraction_flag("--prefix-fraction", o->prefix_fraction, &px->fraction, err, errlen) != 0)
        return LL_E_INVAL;
    px->groups = 1;
    if (o->prefix_groups && runopts_count_upto("--prefix-groups", o->prefix_groups,
                                               WL_MAX_PREFIX_GROUPS, &px->groups, err, errlen) != 0)
        return LL_E_INVAL;
    if (!o->prefix_tokens) /* named by the flag given */
        return runopts_errf(err, errlen, "%s: needs --prefix-tokens L (the prefix length)",
                            o->prefix_fraction ? "--prefix-fraction" : "--prefix-groups");
    if (runopts_count_upto("--prefix-tokens", o->prefix_tokens, WL_MAX_PREFIX_TOKENS, &px->tokens,
                           err, errlen) != 0)
        return LL_E_INVAL;
    if (o->all_unique)
        px->fraction = 0;
    return 0;
}

/* The cancellation flags into wl->cancel (--workload excludes them). */
static int runopts_cancel(const struct run_opts *o, struct wl_cancel *cx, char *err, size_t errlen)
{
    if (o->workload)
        return set_per_class("--cancel-*", "cancellations", err, errlen);
    if (!o->cancel_after && !o->cancel_after_tokens)
        return runopts_errf(err, errlen,
                            "--cancel-fraction: needs --cancel-after DIST or "
                            "--cancel-after-tokens DIST");
    if (fraction_flag("--cancel-fraction", o->cancel_fraction, &cx->fraction, err, errlen) != 0)
        return LL_E_INVAL;
    int rc;
    if (o->cancel_after) {
        cx->kind = WL_CANCEL_AFTER_TIME;
        rc = runopts_dist("--cancel-after", o->cancel_after, DIST_UNIT_DURATION_NS, 1, &cx->after,
                          err, errlen);
    } else {
        cx->kind = WL_CANCEL_AFTER_TOKENS;
        rc = runopts_dist("--cancel-after-tokens", o->cancel_after_tokens, DIST_UNIT_NONE, 1,
                          &cx->after, err, errlen);
        char why[160]; /* a point of 0 tokens would cancel after the first, silently */
        if (rc == 0 && dist_check_length(&cx->after, why, sizeof why) != 0)
            return runopts_errf(err, errlen, "--cancel-after-tokens %s: %s", o->cancel_after_tokens,
                                why);
    }
    if (rc != 0)
        return rc;
    if (cx->fraction == 0)
        cx->kind = WL_CANCEL_NONE;
    return 0;
}

/* --workload, the prefix flags, --all-unique and the cancellation flags
 * into cfg->workload (and the transport's need for timed cancels). */
static int runopts_workload_realism(const struct run_opts *o, struct run_config *cfg, char *err,
                                    size_t errlen)
{
    struct workload *wl = &cfg->workload;
    if (o->workload) {
        if (o->prompt_tokens || o->output_tokens)
            return runopts_errf(err, errlen,
                                "--workload: lengths come from its classes; drop "
                                "--prompt-tokens and --output-tokens");
        char why[512];
        struct wl_file *f = NULL;
        if (wl_file_load_api(o->workload, o->api ? oai_api_from_name(o->api) : -1, &f, why,
                             sizeof why) != 0)
            return runopts_errf(err, errlen, "--workload: %s", why);
        if (o->all_unique) {
            for (size_t i = 0; i < f->n; i++)
                f->classes[i].prefix.fraction = 0;
        }
        wl->classes = f;
    }
    if (runopts_workload_files(o, wl, &cfg->calib_fit, err, errlen) != 0)
        return LL_E_INVAL;
    if ((o->prefix_fraction || o->prefix_groups || o->prefix_tokens) &&
        runopts_prefix(o, &wl->prefix, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->cancel_after && o->cancel_after_tokens)
        return runopts_errf(err, errlen, "--cancel-after and --cancel-after-tokens: pick one");
    if ((o->cancel_fraction || o->cancel_after || o->cancel_after_tokens) &&
        runopts_cancel(o, &wl->cancel, err, errlen) != 0)
        return LL_E_INVAL;
    int timed = wl->cancel.kind == WL_CANCEL_AFTER_TIME;
    for (size_t i = 0; wl->classes && i < wl->classes->n; i++)
        timed |= wl->classes->classes[i].cancel.kind == WL_CANCEL_AFTER_TIME;
    cfg->transport.cancels = timed;
    return 0;
}

void runopts_workload_free(struct run_config *cfg)
{
    struct workload *wl = &cfg->workload;
    wl_file_free((struct wl_file *)wl->classes);
    wl->classes = NULL;
    empirical_free((struct empirical *)wl->prompt_emp);
    wl->prompt_emp = NULL;
    empirical_free((struct empirical *)wl->output_emp);
    wl->output_emp = NULL;
    empirical_free((struct empirical *)wl->pairs);
    wl->pairs = NULL;
    dataset_free((struct dataset *)wl->dataset);
    wl->dataset = NULL;
    struct extrabody *x = (struct extrabody *)cfg->transport.extra;
    for (size_t i = 0; x && i < cfg->transport.n_extra; i++)
        extrabody_free(&x[i]);
    free(x);
    cfg->transport.extra = NULL;
    cfg->transport.n_extra = 0;
}

/* The length and realism flags of the workload, and --max-inflight. */
int runopts_workload(const struct run_opts *o, uint64_t seed, struct run_config *cfg, char *err,
                     size_t errlen)
{
    struct workload *wl = &cfg->workload;
    wl->seed = seed;
    wl->ignore_eos = o->ignore_eos;
    /* An empirical:FILE is loaded by runopts_workload_files; the DIST
     * keeps the default then (unused, but well-formed). */
    if (runopts_dist("--prompt-tokens",
                     o->prompt_tokens && !is_empirical(o->prompt_tokens) ? o->prompt_tokens
                                                                         : RUNOPTS_DEFAULT_PROMPT,
                     DIST_UNIT_NONE, 1, &wl->prompt_tokens, err, errlen) != 0 ||
        runopts_dist("--output-tokens",
                     o->output_tokens && !is_empirical(o->output_tokens) ? o->output_tokens
                                                                         : RUNOPTS_DEFAULT_OUTPUT,
                     DIST_UNIT_NONE, 1, &wl->output_tokens, err, errlen) != 0 ||
        runopts_workload_realism(o, cfg, err, errlen) != 0)
        return LL_E_INVAL;
    /* Lengths no model's context holds cannot be meant: an error; a p99
     * beyond most contexts, a warning (once: a sweep parses again). */
    static int warned;
    const struct {
        const char *flag, *spec;
        const struct dist *d;
    } lens[] = {
        {"--prompt-tokens", o->prompt_tokens, &wl->prompt_tokens},
        {"--output-tokens", o->output_tokens, &wl->output_tokens},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(lens); i++) {
        char warn[300];
        if (!lens[i].spec || is_empirical(lens[i].spec))
            continue;
        if (dist_check_tokens(lens[i].d, lens[i].flag, lens[i].spec, err, errlen, warn,
                              sizeof warn) != 0)
            return LL_E_INVAL;
        if (warn[0] && !warned) {
            warned = 1;
            ll_errorf("%s", warn);
        }
    }
    if (wl->classes && wl->classes->warn[0] && !warned) {
        warned = 1;
        ll_errorf("warning: --workload: %s", wl->classes->warn);
    }
    /* The cap refuses open-loop arrivals; a closed loop's users and a
     * session's turns each wait for their answer, and no cap reads them. */
    if (o->max_inflight && cfg->mode == LOAD_CLOSED)
        return runopts_errf(err, errlen,
                            "--max-inflight: has no effect with --users (each user waits for "
                            "its answer: at most --users in flight); it caps --rate's arrivals");
    if (o->max_inflight && cfg->mode == LOAD_SESSIONS)
        return runopts_errf(err, errlen,
                            "--max-inflight: has no effect with --sessions; it caps --rate's "
                            "arrivals");
    if (o->max_inflight && runopts_count_upto("--max-inflight", o->max_inflight, 10000000,
                                              &cfg->max_inflight, err, errlen) != 0)
        return LL_E_INVAL;
    return 0;
}
