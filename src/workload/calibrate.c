/* calibrate.c: the words-to-tokens fit, and its file (see calibrate.h). */
#include "workload/calibrate.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/util.h"
#include "workload/jsonfile.h"

int calib_fit_compute(const double *words, const double *tokens, size_t n,
                      struct calib_fit *out)
{
    return calib_fit_compute_weighted(words, tokens, NULL, n, out);
}

int calib_fit_compute_weighted(const double *words, const double *tokens, const double *weight,
                               size_t n, struct calib_fit *out)
{
    if (n < 2)
        return LL_E_INVAL;
    double sw = 0, mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weight ? weight[i] : 1.0;
        if (!(w > 0) || !isfinite(w))
            return LL_E_INVAL;
        sw += w;
        mx += w * words[i];
        my += w * tokens[i];
    }
    mx /= sw;
    my /= sw;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double w = weight ? weight[i] : 1.0;
        sxx += w * (words[i] - mx) * (words[i] - mx);
        sxy += w * (words[i] - mx) * (tokens[i] - my);
    }
    if (!(sxx > 0))
        return LL_E_INVAL;
    double slope = sxy / sxx;
    if (!(slope > 0) || !isfinite(slope))
        return LL_E_INVAL;
    double intercept = my - slope * mx;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double e = tokens[i] - (slope * words[i] + intercept);
        sse += e * e;
    }
    out->slope = slope;
    out->intercept = intercept;
    out->residual = sqrt(sse / (double)n);
    out->probes = n;
    return 0;
}

json_t *calib_fit_json(const struct calib_fit *fit)
{
    json_t *j = json_object();
    json_object_set_new(j, "model", json_string(fit->model));
    json_object_set_new(j, "api", fit->api[0] ? json_string(fit->api) : json_null());
    json_object_set_new(j, "slope", json_real(fit->slope));
    json_object_set_new(j, "intercept", json_real(fit->intercept));
    json_object_set_new(j, "residual", json_real(fit->residual));
    json_object_set_new(j, "probes", json_integer((json_int_t)fit->probes));
    json_object_set_new(j, "source", json_string(fit->source));
    json_object_set_new(j, "date", json_string(fit->date));
    const struct calib_spread *sp = &fit->spread;
    json_t *spread = json_null();
    if (sp->requests > 0) {
        spread = json_object();
        json_object_set_new(spread, "requests", json_integer((json_int_t)sp->requests));
        json_t *t = json_array();
        for (size_t i = 0; i < sp->n_targets; i++)
            json_array_append_new(t, json_integer(sp->targets[i]));
        json_object_set_new(spread, "targets", t);
        json_object_set_new(spread, "error_mean", json_real(sp->error_mean));
        json_object_set_new(spread, "error_min", json_real(sp->error_min));
        json_object_set_new(spread, "error_max", json_real(sp->error_max));
    }
    json_object_set_new(j, "spread", spread);
    return j;
}

int calib_fit_save(const char *path, const struct calib_fit *fit, char *err, size_t errlen)
{
    json_t *j = calib_fit_json(fit);
    int rc = json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(j);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(errno));
        return LL_E_IO;
    }
    return 0;
}

/* A string member of j into buf (cap bytes): 0, or -1 when the type is
 * wrong or it does not fit. Absent: buf unchanged. */
static int take_string(json_t *j, const char *key, char *buf, size_t cap)
{
    json_t *v = json_object_get(j, key);
    if (!v)
        return 0;
    if (!json_is_string(v) || json_string_length(v) >= cap)
        return -1;
    memcpy(buf, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* A number member of j >= -1 into *out: 0, or -1. */
static int take_error(json_t *j, const char *key, double *out)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_number(v) || !(json_number_value(v) >= -1) || !isfinite(json_number_value(v)))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* The api member v into buf (cap bytes): absent or null (a file from
 * before calibrate recorded it) leaves "", the two APIs the probes speak
 * are copied; 0, or -1 for anything else. */
static int take_api(json_t *v, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (!v || json_is_null(v))
        return 0;
    const char *s = json_string_value(v);
    if (!s || (strcmp(s, "openai-chat") != 0 && strcmp(s, "openai-completions") != 0))
        return -1;
    snprintf(buf, cap, "%s", s);
    return 0;
}

/* The spread object v (NULL or null: not measured) into sp: 0, or -1 when
 * it is not what calibrate.h says. */
static int take_spread(json_t *v, struct calib_spread *sp)
{
    memset(sp, 0, sizeof *sp);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v) || json_object_size(v) != 5)
        return -1;
    json_t *n = json_object_get(v, "requests"), *t = json_object_get(v, "targets");
    if (!json_is_integer(n) || json_integer_value(n) < 1 || !json_is_array(t) ||
        json_array_size(t) > CALIB_SPREAD_TARGETS_MAX)
        return -1;
    for (size_t i = 0; i < json_array_size(t); i++) {
        json_t *e = json_array_get(t, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 100000000 ||
            (i > 0 && (unsigned)json_integer_value(e) <= sp->targets[i - 1]))
            return -1;
        sp->targets[i] = (unsigned)json_integer_value(e);
    }
    sp->n_targets = json_array_size(t);
    if (take_error(v, "error_mean", &sp->error_mean) != 0 ||
        take_error(v, "error_min", &sp->error_min) != 0 ||
        take_error(v, "error_max", &sp->error_max) != 0 ||
        !(sp->error_min <= sp->error_mean && sp->error_mean <= sp->error_max)) {
        memset(sp, 0, sizeof *sp);
        return -1;
    }
    sp->requests = (size_t)json_integer_value(n);
    return 0;
}

/* A calibration file is a few hundred bytes; anything past this is not one. */
#define CALIB_FILE_MAX_BYTES ((size_t)1 << 20)

int calib_fit_load(const char *path, struct calib_fit *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* Read as the other input files are, so a missing file, a directory
     * or an empty one is said in those words (jansson said "nope.json:-1:-1:
     * unable to open nope.json: ..." and, for a directory or an empty file,
     * "'[' or '{' expected near end of file"). */
    char *text = NULL;
    size_t len = 0;
    int rc = jsonfile_read_all(path, CALIB_FILE_MAX_BYTES, &text, &len, err, errlen);
    if (rc != 0)
        return rc;
    if (jsonfile_skip_blank(text, len) == len) {
        snprintf(err, errlen, "%s: empty file: expected the JSON object llmload calibrate writes",
                 path);
        free(text);
        return LL_E_INVAL;
    }
    json_error_t je;
    json_t *j = ll_json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!j) {
        snprintf(err, errlen, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
        return LL_E_INVAL;
    }
    rc = LL_E_INVAL;
    if (!json_is_object(j)) {
        snprintf(err, errlen, "%s: expected a JSON object (from llmload calibrate)", path);
        goto fail;
    }
    static const char *const known[] = {"model",  "api",    "slope", "intercept", "residual",
                                        "probes", "source", "date",  "spread"};
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v) {
        size_t i = 0;
        while (i < LL_ARRAY_LEN(known) && strcmp(key, known[i]) != 0)
            i++;
        if (i == LL_ARRAY_LEN(known)) {
            snprintf(err, errlen,
                     "%s: %s: unknown field (allowed: model, api, slope, intercept, "
                     "residual, probes, source, date, spread)",
                     path, key);
            goto fail;
        }
    }
    json_t *s = json_object_get(j, "slope");
    if (!json_is_number(s) || !(json_number_value(s) > 0) || json_number_value(s) > 100) {
        snprintf(err, errlen, "%s: slope: expected a number in (0, 100] (tokens per word)", path);
        goto fail;
    }
    out->slope = json_number_value(s);
    json_t *b = json_object_get(j, "intercept");
    if (!json_is_number(b) || !(fabs(json_number_value(b)) <= 1e6)) {
        snprintf(err, errlen, "%s: intercept: expected a number in [-1e6, 1e6] (tokens)", path);
        goto fail;
    }
    out->intercept = json_number_value(b);
    json_t *r = json_object_get(j, "residual");
    if (r) {
        if (!json_is_number(r) || !(json_number_value(r) >= 0)) {
            snprintf(err, errlen, "%s: residual: expected a number >= 0 (tokens)", path);
            goto fail;
        }
        out->residual = json_number_value(r);
    }
    json_t *p = json_object_get(j, "probes");
    if (p) {
        if (!json_is_integer(p) || json_integer_value(p) < 0) {
            snprintf(err, errlen, "%s: probes: expected a whole number >= 0", path);
            goto fail;
        }
        out->probes = (size_t)json_integer_value(p);
    }
    if (take_spread(json_object_get(j, "spread"), &out->spread) != 0) {
        snprintf(err, errlen,
                 "%s: spread: expected null or {\"requests\": N >= 1, "
                 "\"targets\": [up to %d ascending lengths >= 1], \"error_mean\", "
                 "\"error_min\", \"error_max\": fractions >= -1, min <= mean <= max}",
                 path, CALIB_SPREAD_TARGETS_MAX);
        goto fail;
    }
    if (take_string(j, "model", out->model, sizeof out->model) != 0 ||
        take_string(j, "source", out->source, sizeof out->source) != 0 ||
        take_string(j, "date", out->date, sizeof out->date) != 0) {
        snprintf(err, errlen, "%s: model, source and date: expected short strings", path);
        goto fail;
    }
    if (take_api(json_object_get(j, "api"), out->api, sizeof out->api) != 0) {
        snprintf(err, errlen, "%s: api: expected \"openai-chat\" or \"openai-completions\"", path);
        goto fail;
    }
    rc = 0;
fail:
    json_decref(j);
    return rc;
}
