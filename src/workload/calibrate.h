/* calibrate.h: the words-to-tokens fit of a server's tokenizer.
 *
 * `llmload calibrate` sends synthetic prompts of known word counts (the
 * words of wl_prompt_build) and reads back the server's token counts; a
 * (weighted) least-squares line tokens = slope * words + intercept is the
 * fit. A run with `--calibration FILE` then writes
 * round((target - intercept) / slope) words so the server-counted prompt
 * hits the target. The fit is saved as
 * one JSON object:
 *
 *   {"model": "m", "api": "openai-chat", "slope": 1.3, "intercept": 9, "residual": 0.4,
 *    "probes": 10, "source": "usage", "date": "2024-05-01T12:00:00Z",
 *    "spread": {"requests": 24, "targets": [32, 64, 128], "error_mean": -0.004,
 *               "error_min": -0.062, "error_max": 0.047}}
 *
 * api is the API the probes spoke, "openai-chat" (a chat template in the
 * count) or "openai-completions" (none); absent or null in a file from an
 * older llmload: not known. residual is the root mean square of the fit's errors, tokens. spread
 * (absent or null: not measured) is the per-request error of prompts
 * built by the fit for the target lengths, as the server counted them:
 * (counted - target) / target, a fraction. */
#ifndef LL_CALIBRATE_H
#define LL_CALIBRATE_H

#include <stddef.h>

#include <jansson.h>

/* Longest model name kept, NUL included. */
#define CALIB_MODEL_MAX 256

/* Most target lengths a spread measures. */
#define CALIB_SPREAD_TARGETS_MAX 8

/* The per-request error of prompts built by a fit (see above). */
struct calib_spread {
    size_t requests;                            /* 0: not measured (the rest unset) */
    unsigned targets[CALIB_SPREAD_TARGETS_MAX]; /* the target lengths, tokens, ascending */
    size_t n_targets;
    double error_mean, error_min, error_max; /* (counted - target) / target */
};

struct calib_fit {
    char model[CALIB_MODEL_MAX];  /* the model the probes asked for ("" = unknown) */
    char api[24];                 /* "openai-chat" or "openai-completions" ("" = unknown) */
    double slope;                 /* tokens per word, > 0 */
    double intercept;             /* tokens added to every prompt (chat template), may be < 0 */
    double residual;              /* RMS error of the fit over the probes, tokens */
    size_t probes;                /* number of points fitted, >= 2 */
    char source[16];              /* "usage" or "tokenize" */
    char date[32];                /* UTC, ISO 8601, when fitted */
    struct calib_spread spread;   /* requests 0: not measured */
};

/* Fit tokens[i] = slope * words[i] + intercept by least squares over n
 * points (n >= 2, at least two distinct word counts). Sets out's slope,
 * intercept, residual and probes (other fields untouched). Returns 0, or
 * LL_E_INVAL when the points cannot give a line or the slope is not > 0. */
int calib_fit_compute(const double *words, const double *tokens, size_t n,
                      struct calib_fit *out);

/* calib_fit_compute by weighted least squares: point i counts weight[i]
 * (> 0, finite; NULL = all 1, which is calib_fit_compute). residual stays
 * the unweighted RMS error over the points. Use weights 1 / variance when
 * the points' errors differ: a probe's count varies more the more random
 * words it has. Same returns. */
int calib_fit_compute_weighted(const double *words, const double *tokens, const double *weight,
                               size_t n, struct calib_fit *out);

/* The fit as the JSON object above (a new reference). */
json_t *calib_fit_json(const struct calib_fit *fit);

/* Write fit to path as the JSON object above (replacing the file). Returns
 * 0, or LL_E_IO with the reason in err. */
int calib_fit_save(const char *path, const struct calib_fit *fit, char *err, size_t errlen);

/* Read a fit saved by calib_fit_save. Returns 0, or LL_E_IO / LL_E_INVAL
 * with one line in err naming the file and field and what was expected
 * (api absent, null, "openai-chat" or "openai-completions"; slope must be a number in (0, 100], intercept in [-1e6, 1e6]; spread's
 * requests a whole number >= 1, its targets up to CALIB_SPREAD_TARGETS_MAX
 * ascending whole numbers >= 1, its errors numbers >= -1, min <= mean <=
 * max). Unknown fields are errors. */
int calib_fit_load(const char *path, struct calib_fit *out, char *err, size_t errlen);

#endif
