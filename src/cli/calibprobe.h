/* calibprobe.h: the probes and the fit of `llmload calibrate`, apart
 * from its command so that another can calibrate before its load
 * (docs/workload.md).
 *
 * Probes: CALIB_PROBES synthetic prompts of known word counts (the words
 * of wl_prompt_build), one at a time, each a non-streaming request for one
 * output token, whose usage.prompt_tokens the server gives back; a server
 * that sends no usage is asked its POST /tokenize (llama.cpp's) instead.
 * The weighted least-squares line through them is the fit.
 *
 * The spread: then CALIB_SPREAD_PER_TARGET prompts at each of a few
 * target lengths, built as a calibrated run builds them (the fit's words
 * for the target), counted by the server: the per-request error of a run
 * calibrated by this fit, which the line's residual does not say (the
 * probes fit the line; these are fresh draws). */
#ifndef LL_CALIBPROBE_H
#define LL_CALIBPROBE_H

#include <curl/curl.h>

#include "http/fetch.h"
#include "workload/calibrate.h"

/* Where and how to probe. */
struct calib_probe {
    const char *url;                  /* the OpenAI-compatible base URL */
    const char *model;                /* the model to ask for */
    int completions;                  /* 1: /completions, else /chat/completions */
    const struct curl_slist *headers; /* Content-Type: application/json, the key; borrowed */
    const char *cacert;               /* CA bundle, NULL: the system's */
    int insecure;                     /* 1: check no certificate */
    int cancel_fd;                    /* readable: abandon the probes (a signalfd); -1: none */
    const char *who;                  /* the prefix of its lines on stderr: "calibrate" */
};

/* Probe p's server, fit, and measure the fit's spread: fit gets its
 * model, slope, intercept, residual, probes, source, date and spread.
 * Notes (a long probe refused, the chat template /tokenize leaves out) go
 * to stderr after "<who>: ". Returns 0; LL_E_INTR when p->cancel_fd became
 * readable; LL_E_INVAL when the counts do not grow with the prompt (no
 * fit); LL_E_IO when a probe failed. Each failure's reason is printed. */
int calib_probe_run(const struct calib_probe *p, struct calib_fit *fit);

/* The first model id p's BASE/models lists (p->model unused): a new
 * string, caller frees; NULL when there is none or the question failed,
 * the reason printed after "<who>: ". */
char *calib_probe_first_model(const struct calib_probe *p);

/* What to try when a GET BASE/models failed (the run's probe and
 * calibrate's ask it), by what came back in r (NULL: nothing yet): its
 * HTTP status (0: no response), its TLS failure (which says whether to
 * look at the URL's scheme, its host name or the CA; cacert_given 1 when
 * --cacert was passed, so the hint does not offer it again), or a 2xx body
 * that passed its bound of 1 MiB while it read as JSON (a model list too
 * long: --model is the way past it). A static string. */
const char *calib_probe_hint(const struct fetch_response *r, int cacert_given);

/* The fit in words, one line each, to f, each after "<who>: ": the line
 * (tokens per word, intercept, residual, probes, source), the spread, and
 * when the intercept passes a token what it means for short prompts. */
void calib_probe_print(FILE *f, const char *who, const struct calib_fit *fit);

#endif
