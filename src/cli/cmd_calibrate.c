/* cmd_calibrate.c: `llmload calibrate`, the words-to-tokens fit of a
 * server's tokenizer (see calibrate.h and docs/workload.md).
 *
 * I send CALIB_PROBES synthetic prompts (the words of wl_prompt_build) of
 * known word counts, one at a time, each a non-streaming request for one
 * output token, and read usage.prompt_tokens back. A server that sends no
 * usage is asked its POST /tokenize (llama.cpp's, at the URL's root)
 * instead, with "add_special": true so the BOS a completions prompt gets is
 * counted (llama.cpp's default is false); that count lacks the chat
 * template, so the intercept is then only the tokenizer's own (BOS), and a
 * chat run's prompts come out longer by the template's tokens (I say so
 * on stderr). The least-squares line is saved. */
#include <curl/curl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/calibrate.h"
#include "cli/cmds.h"
#include "cli/runopts.h"
#include "http/fetch.h"
#include "util/util.h"
#include "workload/wlfile.h"

#define CALIB_PROBES 10
/* Probes that must succeed; a 4xx (a context too short) on a longer one
 * ends the probing there instead of failing. */
#define CALIB_MIN_PROBES 5
#define CALIB_SEED 0x63616c6962ULL   /* "calib": probe text never equals a run's */

/* A prompt of W words is a 4-word nonce, then W - 4 words drawn at random
 * from wl_prompt_build's list. Where the server's count depends on which
 * words were drawn (a small vocabulary, or bytes2 on the sim), a probe's
 * count varies about a line by an error whose variance grows with those
 * random words, so the fit weighs probe i by 1 / (W - 3): the 4-word probe
 * (the nonce alone: no random words) pins the intercept, the long ones the
 * slope. An unweighted fit instead carries the long probes' random error
 * in the slope back to W = 0, several tokens off in the intercept. */
static const unsigned calib_probe_words[CALIB_PROBES] = {4, 8, 16, 32, 64, 128, 256,
                                                         512, 1024, 2048};

struct calib_opts {
    const char *url, *model, *out, *api, *api_key_env, *cacert;
    int completions, insecure;
};

/* What every request of a calibration shares: the connection, the
 * headers and the TLS options. */
struct calib_http {
    struct fetcher *fetch;
    struct fetch_opts opts;
    struct fetch_response resp;
};

/* One HTTP request: GET when body is NULL, else POST of JSON body. Returns
 * the parsed JSON response (caller decrefs) when the status is 2xx, else
 * NULL with the reason in err. */
static json_t *http_json(struct calib_http *h, const char *url, const char *body, char *err,
                         size_t errlen)
{
    char why[256];
    json_t *j = NULL;
    if (fetch_request(h->fetch, url, body, &h->opts, &h->resp, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", url, why);
    } else if (h->resp.status < 200 || h->resp.status > 299) {
        snprintf(err, errlen, "%s: HTTP %ld", url, h->resp.status);
    } else {
        json_error_t je;
        j = json_loadb(h->resp.body ? h->resp.body : "", h->resp.body_len, 0, &je);
        if (!j)
            snprintf(err, errlen, "%s: response is not JSON (%s)", url, je.text);
    }
    return j;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: llmload calibrate [--url BASE] [--model M] [--out FILE]\n"
            "\n"
            "Fit the server's tokens per word of llmload's synthetic prompts, so that\n"
            "`llmload run --calibration FILE` hits prompt lengths on it (docs/workload.md).\n"
            "\n"
            "  --url BASE        OpenAI-compatible base URL (default %s)\n"
            "  --model M         model to ask for (default: the first one BASE/models lists)\n"
            "  --api API         openai-chat (default) or openai-completions\n"
            "  --api-key-env V   environment variable holding the API key (default OPENAI_API_KEY)\n"
            "  --cacert FILE     CA bundle for TLS\n"
            "  --insecure        do not verify TLS certificates\n"
            "  --out FILE        where to save the fit (default calibration.json)\n",
            RUNOPTS_DEFAULT_URL);
}

static const struct runopts_flag calib_flags[] = {
    RUNOPTS_VALUE("url", struct calib_opts, url),
    RUNOPTS_VALUE("model", struct calib_opts, model),
    RUNOPTS_VALUE("out", struct calib_opts, out),
    RUNOPTS_VALUE("api", struct calib_opts, api),
    RUNOPTS_VALUE("api-key-env", struct calib_opts, api_key_env),
    RUNOPTS_VALUE("cacert", struct calib_opts, cacert),
    RUNOPTS_SET("insecure", struct calib_opts, insecure),
    {"help", 'h', RUNOPTS_KIND_HELP, 0, NULL},
};

/* The flags into o: 0, RUNOPTS_HELP, or LL_E_INVAL with the reason in err.
 * calibrate words its errors as it always has: no "needs a value", and
 * no pointer at `llmload calibrate --help`. */
static int parse_args(int argc, char **argv, struct calib_opts *o, char *err, size_t errlen)
{
    const struct runopts_table t = {calib_flags, LL_ARRAY_LEN(calib_flags), o};
    int rc = runopts_walk(argc, argv, &t, 1, err, errlen);
    if (rc == RUNOPTS_NO_VALUE || rc == RUNOPTS_UNKNOWN)
        return runopts_errf(err, errlen, "calibrate: unknown or incomplete option \"%s\" "
                            "(see --help)", argv[optind - 1]);
    if (rc != 0)
        return rc;
    if (optind < argc)
        return runopts_errf(err, errlen, "calibrate: unexpected argument \"%s\"", argv[optind]);
    if (!o->url)
        o->url = RUNOPTS_DEFAULT_URL;
    if (runopts_check_url(o->url, err, errlen) != 0)
        return LL_E_INVAL;
    if (!o->out)
        o->out = "calibration.json";
    if (o->api) {
        if (strcmp(o->api, "openai-completions") == 0 || strcmp(o->api, "completions") == 0)
            o->completions = 1;
        else if (strcmp(o->api, "openai-chat") != 0 && strcmp(o->api, "chat") != 0)
            return runopts_errf(err, errlen, "--api: expected openai-chat or "
                                "openai-completions, got \"%s\"", o->api);
    }
    return 0;
}

/* base with any trailing '/' dropped, then suffix. Caller frees. */
static char *join_url(const char *base, const char *suffix)
{
    size_t a = strlen(base), b = strlen(suffix);
    while (a > 0 && base[a - 1] == '/')
        a--;
    char *p = ll_malloc(a + b + 1);
    memcpy(p, base, a);
    memcpy(p + a, suffix, b + 1);
    return p;
}

/* The URL's root for /tokenize: base without a trailing "/v1". */
static char *tokenize_url(const char *base)
{
    size_t a = strlen(base);
    while (a > 0 && base[a - 1] == '/')
        a--;
    if (a >= 3 && memcmp(base + a - 3, "/v1", 3) == 0)
        a -= 3;
    char *p = ll_malloc(a + sizeof "/tokenize");
    memcpy(p, base, a);
    memcpy(p + a, "/tokenize", sizeof "/tokenize");
    return p;
}

/* The server's token count of text: usage.prompt_tokens of a one-token
 * request, or /tokenize's count when usage is absent (*source says which).
 * Returns >= 0, or -1 with the reason in err. */
static double probe_count(struct calib_http *h, const struct calib_opts *o, const char *model,
                          const char *text, int *use_tokenize, char *err, size_t errlen)
{
    double n = -1;
    if (!*use_tokenize) {
        json_t *req = json_object();
        json_object_set_new(req, "model", json_string(model));
        if (o->completions) {
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
        char *url = join_url(o->url, o->completions ? "/completions" : "/chat/completions");
        json_t *resp = http_json(h, url, body, err, errlen);
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
        *use_tokenize = 1;
    }
    json_t *req = json_pack("{s:s, s:b}", "content", text, "add_special", 1);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char *url = tokenize_url(o->url);
    json_t *resp = http_json(h, url, body, err, errlen);
    free(url);
    free(body);
    if (!resp) {
        size_t at = strlen(err);
        snprintf(err + at, errlen - at, " (the server sends no usage.prompt_tokens either)");
        return -1;
    }
    json_t *toks = json_object_get(resp, "tokens");
    if (json_is_array(toks))
        n = (double)json_array_size(toks);
    else
        snprintf(err, errlen, "/tokenize: expected {\"tokens\": [...]}");
    json_decref(resp);
    return n;
}

/* --model, or the first id BASE/models lists. Caller frees; NULL with the
 * reason printed. */
static char *calib_model(struct calib_http *h, const struct calib_opts *o)
{
    if (o->model)
        return ll_strdup(o->model);
    char err[RUNOPTS_ERR_MAX] = "", *model = NULL;
    char *url = join_url(o->url, "/models");
    json_t *m = http_json(h, url, NULL, err, sizeof err);
    free(url);
    json_t *id = json_object_get(json_array_get(json_object_get(m, "data"), 0), "id");
    if (json_is_string(id))
        model = ll_strdup(json_string_value(id));
    json_decref(m);
    if (!model)
        ll_errorf("calibrate: no model (give --model M): %s",
                  *err ? err : "BASE/models listed none");
    return model;
}

/* Send the CALIB_PROBES probes in turn: words, tokens and weights of the
 * *probes that were counted. 0, or -1 with the reason printed. */
static int calib_probe_all(struct calib_http *h, const struct calib_opts *o, const char *model,
                           double *words, double *tokens, double *weight, int *use_tokenize,
                           size_t *probes)
{
    char err[RUNOPTS_ERR_MAX] = "";
    size_t cap = 5 * (size_t)calib_probe_words[CALIB_PROBES - 1] + 16;
    char *text = ll_malloc(cap + 1);
    int rc = 0;
    for (size_t i = 0; i < CALIB_PROBES; i++) {
        size_t n = wl_prompt_build(CALIB_SEED, i, calib_probe_words[i], -1, 0, text, cap);
        text[n] = 0;
        words[i] = calib_probe_words[i];
        weight[i] = 1.0 / ((double)calib_probe_words[i] - 3.0);
        tokens[i] = probe_count(h, o, model, text, use_tokenize, err, sizeof err);
        if (tokens[i] < 0 && i >= CALIB_MIN_PROBES && strstr(err, ": HTTP 4")) {
            /* A server with a short context refuses the long probes: fit
             * the ones it took (its prompts cannot be longer anyway). */
            fprintf(stderr, "calibrate: probe %zu (%u words) refused (%s); fitting the %zu "
                    "shorter probes\n", i, calib_probe_words[i], err, i);
            break;
        }
        if (tokens[i] < 0) {
            ll_errorf("calibrate: probe %zu (%u words): %s", i, calib_probe_words[i], err);
            rc = -1;
            break;
        }
        (*probes)++;
    }
    free(text);
    return rc;
}

int calibrate_main(int argc, char **argv)
{
    struct calib_opts o = {0};
    char err[RUNOPTS_ERR_MAX] = "";
    int rc = parse_args(argc, argv, &o, err, sizeof err);
    if (rc != 0)
        return runopts_usage_exit(rc, err, usage);
    err[0] = '\0';
    int status = LL_EXIT_RUNTIME;
    struct curl_slist *headers = NULL;
    char *auth = NULL, *model = NULL;
    struct calib_http h = {0};
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        ll_errorf("calibrate: libcurl did not initialise");
        return LL_EXIT_RUNTIME;
    }
    h.fetch = fetch_new();
    if (!h.fetch) {
        ll_errorf("calibrate: libcurl did not initialise");
        goto fail;
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    const char *key = getenv(o.api_key_env ? o.api_key_env : "OPENAI_API_KEY");
    if (key && *key) {
        size_t n = strlen(key) + sizeof "Authorization: Bearer ";
        auth = ll_malloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", key);
        headers = curl_slist_append(headers, auth);
    }
    h.opts.headers = headers;
    h.opts.cacert = o.cacert;
    h.opts.insecure = o.insecure;
    h.opts.timeout_ns = 120 * LL_NS_PER_SEC;
    h.opts.connect_timeout_ns = 10 * LL_NS_PER_SEC;
    h.opts.max_body_bytes = (size_t)64 << 20;
    model = calib_model(&h, &o);
    if (!model)
        goto fail;
    double words[CALIB_PROBES], tokens[CALIB_PROBES], weight[CALIB_PROBES];
    int use_tokenize = 0;
    size_t probes = 0;
    if (calib_probe_all(&h, &o, model, words, tokens, weight, &use_tokenize, &probes) != 0)
        goto fail;
    struct calib_fit fit;
    memset(&fit, 0, sizeof fit);
    snprintf(fit.model, sizeof fit.model, "%s", model);
    snprintf(fit.source, sizeof fit.source, "%s", use_tokenize ? "tokenize" : "usage");
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(fit.date, sizeof fit.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (calib_fit_compute_weighted(words, tokens, weight, probes, &fit) != 0) {
        ll_errorf("calibrate: the server's counts do not grow with the prompt (no fit)");
        status = LL_EXIT_FAIL;
        goto fail;
    }
    if (calib_fit_save(o.out, &fit, err, sizeof err) != 0) {
        ll_errorf("calibrate: %s", err);
        goto fail;
    }
    if (use_tokenize && !o.completions)
        fprintf(stderr, "calibrate: warning: the server sends no usage, so the fit comes from "
                "/tokenize, which does not count the chat template: openai-chat prompts will "
                "be longer than asked by the template's tokens\n");
    printf("calibrate: %s: %.4f tokens per word, intercept %.2f tokens, residual %.2f "
           "tokens over %zu probes (%s); saved to %s\n",
           model, fit.slope, fit.intercept, fit.residual, fit.probes, fit.source, o.out);
    status = LL_EXIT_OK;
fail:
    free(model);
    curl_slist_free_all(headers);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    fetch_response_free(&h.resp);
    fetch_free(h.fetch);
    curl_global_cleanup();
    return status;
}
