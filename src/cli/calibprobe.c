/* calibprobe.c: the probes, the fit and its spread (calibprobe.h).
 *
 * I send CALIB_PROBES synthetic prompts (the words of wl_prompt_build) of
 * known word counts, one at a time, each a non-streaming request for one
 * output token, and read usage.prompt_tokens back. A server that sends no
 * usage is asked its POST /tokenize (llama.cpp's, at the URL's root)
 * instead, with "add_special": true so the BOS a completions prompt gets is
 * counted (llama.cpp's default is false); that count lacks the chat
 * template, so the intercept is then only the tokenizer's own (BOS), and a
 * chat run's prompts come out longer by the template's tokens (I say so
 * on stderr). The least-squares line is the fit; then the spread. */
#include "cli/calibprobe.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/fetch.h"
#include "measure/statushint.h"
#include "util/util.h"
#include "workload/synthprompt.h"
#include "workload/wlfile.h"
#include "workload/workload.h"

#define CALIB_PROBES 10
/* Probes that must succeed; a 4xx (a context too short) on a longer one
 * ends the probing there instead of failing. */
#define CALIB_MIN_PROBES 5
/* The most of BASE/models' answer read (as the run's probe reads). */
#define CALIB_MODELS_MAX_BODY_BYTES (1u << 20)
#define CALIB_SEED 0x63616c6962ULL          /* "calib": probe text never equals a run's */
#define CALIB_SPREAD_SEED 0x737072656164ULL /* "spread": fresh draws, not the probes' */

/* The spread's targets: those of these lengths (tokens) that are at least
 * twice the fit's intercept (shorter ones are mostly template: a run warns
 * about them, runopts_calib_short) and no longer than the longest probe
 * the server counted (a longer one may pass its context); each gets
 * CALIB_SPREAD_PER_TARGET prompts. */
static const unsigned calib_spread_targets[] = {32, 64, 128, 256, 512, 1024};
#define CALIB_SPREAD_PER_TARGET 8

/* A prompt of W words is a 4-word nonce, then W - 4 words drawn at random
 * from wl_prompt_build's list. Where the server's count depends on which
 * words were drawn (a small vocabulary, or bytes2 on the sim), a probe's
 * count varies about a line by an error whose variance grows with those
 * random words, so the fit weighs probe i by 1 / (W - 3): the 4-word probe
 * (the nonce alone: no random words) pins the intercept, the long ones the
 * slope. An unweighted fit instead carries the long probes' random error
 * in the slope back to W = 0, several tokens off in the intercept. */
static const unsigned calib_probe_words[CALIB_PROBES] = {4,   8,   16,  32,   64,
                                                         128, 256, 512, 1024, 2048};

/* What every request of a calibration shares: the connection, the
 * options, and where its answers go. */
struct calib_http {
    const struct calib_probe *p;
    struct fetcher *fetch;
    struct fetch_opts opts;
    struct fetch_response resp;
    int use_tokenize; /* the server sends no usage: ask /tokenize */
};

/* The URL's root for /tokenize: base without a trailing "/v1". */
static char *tokenize_url(const char *base)
{
    size_t a = ll_url_root_len(base);
    char *p = ll_malloc(a + sizeof "/tokenize");
    memcpy(p, base, a);
    memcpy(p + a, "/tokenize", sizeof "/tokenize");
    return p;
}

/* The server's token count of text: usage.prompt_tokens of a one-token
 * request, or /tokenize's count when usage is absent (h->use_tokenize
 * says which, from then on). Returns >= 0, or -1 with the reason in err
 * and *rc LL_E_INTR (abandoned) or LL_E_IO. */
static double probe_count(struct calib_http *h, const char *text, int *rc, char *err, size_t errlen)
{
    const struct calib_probe *p = h->p;
    double n = -1;
    if (!h->use_tokenize) {
        json_t *req = json_object();
        json_object_set_new(req, "model", json_string(p->model));
        if (p->completions) {
            json_object_set_new(req, "prompt", json_string(text));
        } else {
            json_t *msgs = json_array();
            json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", text));
            json_object_set_new(req, "messages", msgs);
        }
        json_object_set_new(req, "max_tokens", json_integer(1));
        json_object_set_new(req, "stream", json_false());
        char *body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        char *url = ll_url_join(p->url, p->completions ? "/completions" : "/chat/completions");
        json_t *resp = fetch_json(h->fetch, url, body, &h->opts, &h->resp, rc, err, errlen);
        free(url);
        free(body);
        if (!resp)
            return -1;
        json_t *pt = json_object_get(json_object_get(resp, "usage"), "prompt_tokens");
        if (json_is_integer(pt) && json_integer_value(pt) >= 0)
            n = (double)json_integer_value(pt);
        json_decref(resp);
        if (n >= 0)
            return n;
        h->use_tokenize = 1;
    }
    json_t *req = json_pack("{s:s, s:b}", "content", text, "add_special", 1);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char *url = tokenize_url(p->url);
    json_t *resp = fetch_json(h->fetch, url, body, &h->opts, &h->resp, rc, err, errlen);
    free(url);
    free(body);
    if (!resp) {
        size_t at = strlen(err);
        if (*rc != LL_E_INTR)
            snprintf(err + at, errlen - at, " (the server sends no usage.prompt_tokens either)");
        return -1;
    }
    json_t *toks = json_object_get(resp, "tokens");
    if (json_is_array(toks)) {
        n = (double)json_array_size(toks);
    } else {
        *rc = LL_E_IO;
        snprintf(err, errlen, "/tokenize: expected {\"tokens\": [...]}");
    }
    json_decref(resp);
    return n;
}

/* Send the CALIB_PROBES probes in turn: words, tokens and weights of the
 * *probes that were counted. 0, or LL_E_INTR / LL_E_IO with the reason
 * printed. Messages number the probes from 1, as a reader counts them
 * ("probe 7 (256 words) refused; fitting the 6 shorter probes"). */
static int calib_probe_all(struct calib_http *h, double *words, double *tokens, double *weight,
                           size_t *probes)
{
    const char *who = h->p->who;
    char err[512] = "";
    size_t cap = 5 * (size_t)calib_probe_words[CALIB_PROBES - 1] + 16;
    char *text = ll_malloc(cap + 1);
    int rc = 0;
    for (size_t i = 0; i < CALIB_PROBES; i++) {
        size_t n = wl_prompt_build(CALIB_SEED, i, calib_probe_words[i], -1, 0, text, cap);
        text[n] = 0;
        words[i] = calib_probe_words[i];
        weight[i] = 1.0 / ((double)calib_probe_words[i] - 3.0);
        int prc = 0;
        tokens[i] = probe_count(h, text, &prc, err, sizeof err);
        if (tokens[i] < 0 && prc != LL_E_INTR && i >= CALIB_MIN_PROBES && strstr(err, ": HTTP 4")) {
            /* A server with a short context refuses the long probes: fit
             * the ones it took (its prompts cannot be longer anyway). */
            fprintf(stderr,
                    "%s: probe %zu (%u words) refused (%s); fitting the %zu "
                    "shorter probes\n",
                    who, i + 1, calib_probe_words[i], err, i);
            break;
        }
        if (tokens[i] < 0) {
            ll_errorf("%s: probe %zu (%u words): %s", who, i + 1, calib_probe_words[i], err);
            rc = prc;
            break;
        }
        (*probes)++;
    }
    free(text);
    return rc;
}

/* The spread of fit (calibprobe.h): prompts built for each target as a
 * calibrated run builds them, counted by the server; max_tokens is the
 * longest probe's count. A target the server refuses (a 4xx) ends it
 * there. 0, or LL_E_INTR / LL_E_IO with the reason printed. */
static int calib_spread_measure(struct calib_http *h, double max_tokens, struct calib_fit *fit)
{
    struct calib_spread *sp = &fit->spread;
    const struct workload_calib wc = {fit->slope, fit->intercept};
    memset(sp, 0, sizeof *sp);
    double sum = 0;
    char err[512] = "";
    char *text = NULL;
    size_t cap = 0;
    for (size_t t = 0; t < LL_ARRAY_LEN(calib_spread_targets); t++) {
        unsigned target = calib_spread_targets[t];
        if ((double)target < 2 * fit->intercept || (double)target > max_tokens)
            continue;
        uint32_t words = workload_calib_words(&wc, target);
        if (5 * (size_t)words + 16 > cap) {
            cap = 5 * (size_t)words + 16;
            free(text);
            text = ll_malloc(cap + 1);
        }
        for (unsigned k = 0; k < CALIB_SPREAD_PER_TARGET; k++) {
            uint64_t index = (uint64_t)t * CALIB_SPREAD_PER_TARGET + k;
            size_t n = wl_prompt_build(CALIB_SPREAD_SEED, index, words, -1, 0, text, cap);
            text[n] = 0;
            int prc = 0;
            double got = probe_count(h, text, &prc, err, sizeof err);
            if (got < 0 && prc != LL_E_INTR && strstr(err, ": HTTP 4")) {
                fprintf(stderr,
                        "%s: a prompt of %u tokens refused (%s); the spread stops "
                        "there\n",
                        h->p->who, target, err);
                if (k > 0)
                    sp->targets[sp->n_targets++] = target;
                goto done;
            }
            if (got < 0) {
                ll_errorf("%s: spread, a prompt of %u tokens: %s", h->p->who, target, err);
                free(text);
                memset(sp, 0, sizeof *sp);
                return prc;
            }
            double e = (got - target) / target;
            if (sp->requests == 0 || e < sp->error_min)
                sp->error_min = e;
            if (sp->requests == 0 || e > sp->error_max)
                sp->error_max = e;
            sum += e;
            sp->requests++;
        }
        sp->targets[sp->n_targets++] = target;
    }
done:
    free(text);
    /* Clamped: the rounding of a mean of equal values may pass them. */
    if (sp->requests > 0)
        sp->error_mean = LL_MIN(LL_MAX(sum / (double)sp->requests, sp->error_min), sp->error_max);
    return 0;
}

/* h's connection and options for p's requests: 0, or LL_E_IO (printed)
 * when libcurl cannot make a handle. */
static int calib_http_open(struct calib_http *h, const struct calib_probe *p)
{
    *h = (struct calib_http){.p = p};
    h->fetch = fetch_new();
    if (!h->fetch) {
        ll_errorf("%s: libcurl did not initialise", p->who);
        return LL_E_IO;
    }
    h->opts.headers = p->headers;
    h->opts.cacert = p->cacert;
    h->opts.insecure = p->insecure;
    h->opts.timeout_ns = 120 * LL_NS_PER_SEC;
    h->opts.connect_timeout_ns = 10 * LL_NS_PER_SEC;
    h->opts.max_body_bytes = (size_t)64 << 20;
    if (p->cancel_fd >= 0) {
        h->opts.cancel_fds = &p->cancel_fd;
        h->opts.n_cancel_fds = 1;
    }
    return 0;
}

static void calib_http_close(struct calib_http *h)
{
    fetch_response_free(&h->resp);
    fetch_free(h->fetch);
}

/* Whether the body cut at the probe's bound began as JSON does ('{' or
 * '[' after any white space), rather than as a web page. */
static int body_json_like(const struct fetch_response *r)
{
    const char *p = r->body ? r->body : "";
    p += strspn(p, " \t\r\n");
    return *p == '{' || *p == '[';
}

/* A 404 is most often a --url without the API's base path
 * (http://HOST:PORT instead of http://HOST:PORT/v1), and --model would not
 * help; no answer at all is a server that is not there. A 5xx is not "a
 * server without /models": it is one not ready (llama.cpp answers 503
 * while its model loads), or a proxy or gateway whose backend is down
 * (502, 504); a 407 is the proxy's own. A TLS failure is one of three: a
 * plain HTTP server at an https URL (it answered in plain text, which
 * libcurl read as a TLS record: "wrong version number"), a certificate
 * for another host name (no CA file changes that), or a certificate this
 * machine does not trust. A 2xx body over the bound that began as JSON
 * is a model list too long to read (an aggregator with thousands of
 * models), not a web page. */
const char *calib_probe_hint(const struct fetch_response *r, int cacert_given)
{
    long status = r ? r->status : 0;
    if (r && r->tls_failed == FETCH_TLS_NOT_TLS)
        return "the server there does not speak TLS: is it plain HTTP? then use http:// in "
               "--url";
    if (r && r->tls_failed == FETCH_TLS_HOST)
        return "its certificate names another host: use the host name it was issued for in "
               "--url; --insecure skips the check";
    if (r && r->tls_failed && cacert_given)
        return "is its certificate signed by the CA in the --cacert file? --insecure skips "
               "the check";
    if (r && r->tls_failed)
        return "is its certificate one this machine trusts? --cacert FILE names its CA, "
               "--insecure skips the check";
    if (status == 0)
        return "is the server up at that address?";
    if (status == 404)
        return STATUS_HINT_BASE " a server without /models: pass --model";
    if (status_cause_of((int)status) == STATUS_CAUSE_AUTH)
        return STATUS_HINT_AUTH;
    if (status == 407)
        return "the proxy in the environment wants credentials: "
               "http_proxy=http://USER:PASSWORD@HOST:PORT";
    if (status >= 500)
        return "an error from the server, or a proxy or gateway before it: is it up and "
               "ready? a model still loading answers 503";
    if (status >= 200 && status <= 299 && r->body_over && body_json_like(r))
        return "the model list is over 1 MiB: pass --model NAME";
    if (status >= 200 && status <= 299)
        return "a page that is not a model list, such as a web page or a login portal: is "
               "--url the API's base, such as http://HOST:PORT/v1?";
    return "a server without /models: pass --model";
}

char *calib_probe_first_model(const struct calib_probe *p)
{
    struct calib_http h;
    if (calib_http_open(&h, p) != 0)
        return NULL;
    char err[512] = "", *model = NULL;
    int rc;
    h.opts.max_body_bytes = CALIB_MODELS_MAX_BODY_BYTES;
    char *url = ll_url_join(p->url, "/models");
    json_t *m = fetch_json(h.fetch, url, NULL, &h.opts, &h.resp, &rc, err, sizeof err);
    json_t *id = json_object_get(json_array_get(json_object_get(m, "data"), 0), "id");
    if (json_is_string(id))
        model = ll_strdup(json_string_value(id));
    /* As the run says it: what failed, and what to try by what came back;
     * "give --model" only where /models answered without a model. */
    if (!m && rc != LL_E_INTR)
        ll_errorf("%s: cannot ask the target for its model: GET %s (%s)", p->who, err,
                  calib_probe_hint(&h.resp, p->cacert != NULL));
    else if (m && !model)
        ll_errorf("%s: %s lists no model id; give --model M", p->who, url);
    free(url);
    json_decref(m);
    calib_http_close(&h);
    return model;
}

int calib_probe_run(const struct calib_probe *p, struct calib_fit *fit)
{
    struct calib_http h;
    memset(fit, 0, sizeof *fit);
    if (calib_http_open(&h, p) != 0)
        return LL_E_IO;
    double words[CALIB_PROBES], tokens[CALIB_PROBES], weight[CALIB_PROBES];
    size_t probes = 0;
    int rc = calib_probe_all(&h, words, tokens, weight, &probes);
    if (rc != 0)
        goto out;
    snprintf(fit->model, sizeof fit->model, "%s", p->model);
    snprintf(fit->source, sizeof fit->source, "%s", h.use_tokenize ? "tokenize" : "usage");
    snprintf(fit->api, sizeof fit->api, "%s",
             p->completions ? "openai-completions" : "openai-chat");
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(fit->date, sizeof fit->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (calib_fit_compute_weighted(words, tokens, weight, probes, fit) != 0) {
        ll_errorf("%s: the server's counts do not grow with the prompt (no fit)", p->who);
        rc = LL_E_INVAL;
        goto out;
    }
    rc = calib_spread_measure(&h, tokens[probes - 1], fit);
    if (rc == 0 && h.use_tokenize && !p->completions)
        fprintf(stderr,
                "%s: warning: the server sends no usage, so the fit comes from "
                "/tokenize, which does not count the chat template: openai-chat prompts will "
                "be longer than asked by the template's tokens\n",
                p->who);
out:
    calib_http_close(&h);
    return rc;
}

void calib_probe_print(FILE *f, const char *who, const struct calib_fit *fit)
{
    fprintf(f,
            "%s: %s: %.4f tokens per word, intercept %.2f tokens, residual %.2f tokens "
            "over %zu probes (%s)\n",
            who, fit->model, fit->slope, fit->intercept, fit->residual, fit->probes, fit->source);
    const struct calib_spread *sp = &fit->spread;
    if (sp->requests > 0) {
        fprintf(f,
                "%s: spread: %zu prompts built by the fit for %u to %u tokens came out "
                "%+.1f%% to %+.1f%% of their length (mean %+.1f%%)\n",
                who, sp->requests, sp->targets[0], sp->targets[sp->n_targets - 1],
                100 * sp->error_min, 100 * sp->error_max, 100 * sp->error_mean);
    } else {
        fprintf(f,
                "%s: spread: not measured (no target length of %u to %u tokens is both "
                "twice the intercept and within the longest probe)\n",
                who, calib_spread_targets[0],
                calib_spread_targets[LL_ARRAY_LEN(calib_spread_targets) - 1]);
    }
    if (fit->intercept > 1)
        fprintf(f,
                "%s: note: the server adds %.1f tokens to every prompt (its template, a BOS): "
                "a prompt under %.0f tokens (twice that) is mostly template and keeps its "
                "length worse, and one under %.0f (the template and one word) cannot be "
                "reached; a run warns when it asks for them\n",
                who, fit->intercept, ceil(2 * fit->intercept), ceil(fit->intercept + fit->slope));
}
