/* runsetup.c: the sequence run, replay and sweep share (runsetup.h).
 * Each command had its own copy of it, with its own goto ladder; the
 * steps and the one cleanup are here, the commands keep what differs:
 * their flags, run.json's config object, and what they print. */
#include "cli/runsetup.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/timex.h>
#include <unistd.h>

#include "cli/calibprobe.h"
#include "cli/contract.h"
#include "cli/ctxcheck.h"
#include "cli/shard.h"
#include "http/fetch.h"
#include "measure/expect.h"
#include "measure/results.h"
#include "measure/verdict.h"
#include "report/report_run.h"
#include "util/util.h"
#include "workload/trace.h"
#include "workload/wlfile.h"

/* ---- the target -------------------------------------------------------- */

/* Does a -H name this header ("Name: value" or "Name:")? */
static int user_header(const struct run_opts *o, const char *name)
{
    return runopts_header_named(o->headers, o->n_headers, name);
}

/* The background GET BASE/models of a run given --model: run.json's
 * target.models and server_header, never waited for. */
#define RUN_BG_PROBE_NS (2 * LL_NS_PER_SEC)

struct bg_probe {
    struct transport_config tc; /* a copy: the run goes on changing cfg's */
    const struct curl_slist *headers;
    int cancel[2]; /* a pipe: a byte on it abandons the probe */
    pthread_t th;
    json_t *models; /* its answers, read after the join */
    char server[128];
    char *first_id;
    json_t *contract; /* contract.server, when /models answered */
};

/* The most of /models' answer the probe reads (calib_probe_hint names it). */
#define PROBE_MAX_BODY_BYTES (1u << 20)

/* GET BASE/models through f: the target's answer (parsed), its Server
 * header, and the first model id, within timeout_ns (connect: 5 s or
 * less), abandoned as soon as cancel_fd (-1: none) is readable. *answered
 * is the HTTP status when a response came, whatever it was, else 0; *hint
 * what to try when it failed (calib_probe_hint). Returns 0, LL_E_INTR when
 * abandoned, or -1 with a reason in err. */
static int probe_target(struct fetcher *f, const struct transport_config *tc,
                        const struct curl_slist *headers, uint64_t timeout_ns, int cancel_fd,
                        json_t **models, char *server, char **first_id, int *answered,
                        const char **hint, char *err, size_t errlen)
{
    char url[1100], why[512];
    snprintf(url, sizeof url, "%.*s/models", (int)ll_url_base_len(tc->base_url), tc->base_url);
    *answered = 0;
    *hint = calib_probe_hint(NULL, 0);
    if (!f) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -1;
    }
    /* 5 s to connect, or --timeout-connect where it is shorter (a target
     * whose connects hang would otherwise cost 5 s before the run). */
    uint64_t connect_ns = LL_MIN(5 * LL_NS_PER_SEC, timeout_ns);
    if (tc->connect_timeout_ns && tc->connect_timeout_ns < connect_ns)
        connect_ns = LL_MAX(tc->connect_timeout_ns, LL_NS_PER_MS);
    struct fetch_opts fo =
        contract_fetch_opts(tc, headers, &cancel_fd, timeout_ns, connect_ns, PROBE_MAX_BODY_BYTES);
    struct fetch_response r = {0};
    int frc;
    *models = fetch_json(f, url, NULL, &fo, &r, &frc, why, sizeof why);
    *answered = frc != LL_E_INTR ? (int)r.status : 0;
    *hint = calib_probe_hint(&r, tc->cacert != NULL);
    snprintf(server, sizeof r.server, "%s", r.server);
    int rc = frc == LL_E_INTR ? LL_E_INTR : -1;
    if (!*models) {
        if (rc != LL_E_INTR)
            snprintf(err, errlen, "GET %.480s", why);
        goto out;
    }
    json_t *data = json_object_get(*models, "data");
    json_t *first = json_is_array(data) ? json_array_get(data, 0) : NULL;
    const char *id = json_string_value(json_object_get(first, "id"));
    if (id)
        *first_id = ll_strdup(id);
    rc = 0;
out:
    fetch_response_free(&r);
    return rc;
}

/* Does a /models answer list model id? */
static int models_list(const json_t *models, const char *id)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(models, "data"), i, m)
    {
        const char *mid = json_string_value(json_object_get(m, "id"));
        if (mid && strcmp(mid, id) == 0)
            return 1;
    }
    return 0;
}

/* Several --url without --model: the first endpoint named the model;
 * every other one must answer /models and list it too (replicas of one
 * model), else the run stops before its load. Returns LL_EXIT_OK,
 * LL_EXIT_RUNTIME with the reason on stderr, or LL_EXIT_INTR (*stopped)
 * when a stop signal came. */
static int probe_other_endpoints(const struct transport_config *tc, const struct curl_slist *h,
                                 const char *model, int sig_fd, int *stopped)
{
    for (uint32_t i = 1; i < tc->endpoints.n; i++) {
        struct transport_config one = *tc;
        one.base_url = tc->endpoints.url[i];
        json_t *models = NULL;
        char server[128], err[512];
        char *first = NULL;
        int answered;
        const char *hint;
        struct fetcher *f = fetch_new();
        int prc = probe_target(f, &one, h, 10 * LL_NS_PER_SEC, sig_fd, &models, server, &first,
                               &answered, &hint, err, sizeof err);
        fetch_free(f);
        free(first);
        int listed = prc == 0 && models_list(models, model);
        json_decref(models);
        if (prc == LL_E_INTR) {
            *stopped = 1;
            return LL_EXIT_OK;
        }
        if (prc != 0) {
            ll_errorf("--url %s (endpoint %u): %s (%s)", one.base_url, i, err, hint);
            return LL_EXIT_RUNTIME;
        }
        if (!listed) {
            ll_errorf("--url %s (endpoint %u): its /models does not list \"%s\", the model "
                      "of the first --url; spread over replicas of one model, or pass --model",
                      one.base_url, i, model);
            return LL_EXIT_RUNTIME;
        }
    }
    return LL_EXIT_OK;
}

static void *bg_probe_main(void *arg)
{
    struct bg_probe *b = arg;
    char err[512];
    int answered;
    const char *hint;
    struct fetcher *f = fetch_new();
    probe_target(f, &b->tc, b->headers, RUN_BG_PROBE_NS, b->cancel[0], &b->models, b->server,
                 &b->first_id, &answered, &hint, err, sizeof err);
    /* The server's account of itself, over the same connection. */
    if (answered)
        b->contract = contract_server_probe(f, &b->tc, b->headers, b->server, b->cancel[0]);
    fetch_free(f);
    return NULL;
}

/* --model names a model the target's /models does not list: warn on
 * stderr, naming what it lists. vLLM refuses such a request (404, each
 * record an http_4xx), but llama.cpp answers any name with the one model
 * it has: against it `--model nosuch` ran 20 ok requests of
 * stories260K.gguf while the summary's model line said "nosuch". Nothing
 * when /models did not answer or lists no id. Returns 1 when it warned. */
static int model_unlisted_warn(const struct run_target *t)
{
    const json_t *data = json_object_get(t->models, "data");
    if (!t->model || !json_array_size(data) || models_list(t->models, t->model))
        return 0;
    char ids[200] = "";
    size_t at = 0, i;
    const json_t *m;
    json_array_foreach(data, i, m)
    {
        const char *id = json_string_value(json_object_get(m, "id"));
        if (!id || at >= sizeof ids)
            continue;
        int n = snprintf(ids + at, sizeof ids - at, "%s\"%s\"", at ? ", " : "", id);
        at += n > 0 ? (size_t)n : 0;
    }
    char shown[200];
    ll_printable(ids, strnlen(ids, sizeof ids), shown, sizeof shown);
    ll_errorf("warning: --model %s: the target's /models does not list it (it lists %s): a "
              "server that answers any name (llama.cpp does) served its own model, whatever "
              "the summary's model line says",
              t->model, shown);
    return 1;
}

/* Start the background probe (with the stop signals blocked: the thread
 * inherits the mask). NULL when it cannot start: run.json goes without. */
static struct bg_probe *bg_probe_start(const struct transport_config *tc,
                                       const struct curl_slist *headers)
{
    struct bg_probe *b = ll_calloc(1, sizeof *b);
    b->tc = *tc;
    b->headers = headers;
    if (pipe2(b->cancel, O_CLOEXEC) != 0) {
        free(b);
        return NULL;
    }
    if (pthread_create(&b->th, NULL, bg_probe_main, b) != 0) {
        close(b->cancel[0]);
        close(b->cancel[1]);
        free(b);
        return NULL;
    }
    return b;
}

/* Abandon the background probe if it still runs, join it and keep its
 * answers in t (when t has none). Nothing when there is none. */
static void bg_probe_join(struct run_target *t)
{
    struct bg_probe *b = t->bg;
    if (!b)
        return;
    ssize_t w;
    do
        w = write(b->cancel[1], "x", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(b->th, NULL);
    close(b->cancel[0]);
    close(b->cancel[1]);
    if (!t->models) {
        t->models = b->models;
        b->models = NULL;
        snprintf(t->server, sizeof t->server, "%s", b->server);
    }
    if (!t->contract_server) {
        t->contract_server = b->contract;
        b->contract = NULL;
    }
    json_decref(b->contract);
    json_decref(b->models);
    free(b->first_id);
    free(b);
    t->bg = NULL;
    t->model_unlisted = model_unlisted_warn(t);
    if (t->workload)
        ctx_warn(t->models, t->contract_server, t->model, t->workload, t->max_requests,
                 t->no_output);
}

const char *run_setup_model_note(struct run_setup *rs)
{
    bg_probe_join(&rs->target);
    return rs->target.model_unlisted ? "not listed by the target's /models: see the warning" : NULL;
}

/* An https:// --url at a server that speaks plain HTTP: stop before the
 * load with the one thing to change, instead of a run whose every request
 * waits out --timeout-connect and reads as a slow server
 * (fetch_plain_http_at; docs/http-client.md). Asked of each https://
 * endpoint: one TLS handshake (2 s, or --timeout-connect where it is
 * shorter), and a plain GET (1 s) only where it failed. Returns LL_EXIT_OK,
 * LL_EXIT_RUNTIME with the hint on stderr, or LL_EXIT_OK with *stopped set
 * when a stop signal came. */
static int refuse_plain_http(const struct transport_config *tc, int sig_fd, int *stopped)
{
    uint64_t connect_ns = 2 * LL_NS_PER_SEC;
    if (tc->connect_timeout_ns && tc->connect_timeout_ns < connect_ns)
        connect_ns = LL_MAX(tc->connect_timeout_ns, LL_NS_PER_MS);
    struct fetch_opts fo = contract_fetch_opts(tc, NULL, &sig_fd, connect_ns, connect_ns, 0);
    uint32_t n = tc->endpoints.n > 1 ? tc->endpoints.n : 1;
    for (uint32_t i = 0; i < n; i++) {
        const char *url = tc->endpoints.n > 1 ? tc->endpoints.url[i] : tc->base_url;
        if (strncasecmp(url, "https://", 8) != 0)
            continue;
        char hostport[300];
        int rc = fetch_plain_http_at(url, &fo, hostport, sizeof hostport);
        if (rc == LL_E_INTR) {
            *stopped = 1;
            return LL_EXIT_OK;
        }
        if (rc == 1) {
            ll_errorf("the server at %s answered in plain HTTP: use http://", hostport);
            return LL_EXIT_RUNTIME;
        }
    }
    return LL_EXIT_OK;
}

/* libcurl, the request headers, the probe and the model (run_setup_open).
 * With --model the probe runs in the background (run.json's target only);
 * without, it is waited for, unless a stop signal comes (sig_fd): then
 * *stopped is set and the model may stay NULL. */
static int target_open(const struct run_opts *o, struct run_config *cfg, struct run_target *t,
                       int sig_fd, int *stopped)
{
    char err[512];
    memset(t, 0, sizeof *t);
    t->workload = cfg->trace ? NULL : &cfg->workload;
    t->max_requests = cfg->max_requests;
    t->no_output = cfg->transport.api == OAI_API_EMBEDDINGS;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        ll_errorf("curl_global_init failed");
        return LL_EXIT_RUNTIME;
    }
    t->curl_up = 1;
    /* Our default headers, each unless a -H names it: the user's replaces
     * it (one Authorization, not the key's and then theirs: a server reads
     * the first), and "-H 'Name:'" removes it. */
    if (!user_header(o, "Content-Type"))
        t->headers = curl_slist_append(t->headers, "Content-Type: application/json");
    if (!user_header(o, "Expect"))
        t->headers = curl_slist_append(t->headers, "Expect:"); /* no 100-continue round trip */
    if (!user_header(o, "Accept"))
        t->headers = curl_slist_append(t->headers, "Accept: text/event-stream, application/json");
    /* Which APIs the requests speak: --api, and each class's own. An
     * anthropic-messages request carries its key as x-api-key and the
     * API's version; an OpenAI one as a Bearer token. */
    int anth = cfg->transport.api == OAI_API_ANTHROPIC, openai = !anth;
    const struct wl_file *wf = cfg->workload.classes;
    if (wf) {
        openai = 0;
        for (size_t i = 0; i < wf->n; i++) {
            int a = wf->classes[i].api >= 0 ? wf->classes[i].api : (int)cfg->transport.api;
            anth |= a == OAI_API_ANTHROPIC;
            openai |= a != OAI_API_ANTHROPIC;
        }
    }
    for (size_t i = 0; cfg->trace && i < cfg->trace->n; i++) { /* a dumped class's "api" */
        int a = cfg->trace->entries[i].api;
        anth |= a == OAI_API_ANTHROPIC;
        openai |= a >= 0 && a != OAI_API_ANTHROPIC;
    }
    if (anth && !user_header(o, "anthropic-version"))
        t->headers = curl_slist_append(t->headers, "anthropic-version: 2023-06-01");
    const char *key_env = runopts_api_key_env(o, cfg->transport.api);
    const char *key = getenv(key_env);
    if (o->api_key_env && (!key || !*key)) {
        ll_errorf("--api-key-env: $%s is not set", key_env);
        return LL_EXIT_USAGE;
    }
    if (anth && key && *key && !user_header(o, "x-api-key")) {
        size_t n = strlen(key) + 16;
        t->xkey = ll_malloc(n);
        snprintf(t->xkey, n, "x-api-key: %s", key);
        t->headers = curl_slist_append(t->headers, t->xkey);
    }
    if (openai && key && *key && !user_header(o, "Authorization")) {
        size_t n = strlen(key) + 32;
        t->auth = ll_malloc(n);
        snprintf(t->auth, n, "Authorization: Bearer %s", key);
        t->headers = curl_slist_append(t->headers, t->auth);
    }
    for (size_t i = 0; i < o->n_headers; i++)
        t->headers = curl_slist_append(t->headers, o->headers[i]);
    cfg->transport.headers = t->headers;
    /* What the target's own /metrics gets: the credentials, without the
     * JSON and SSE defaults meant for the API (docs/server-metrics.md). */
    if (t->auth)
        t->own_headers = curl_slist_append(t->own_headers, t->auth);
    if (t->xkey)
        t->own_headers = curl_slist_append(t->own_headers, t->xkey);
    for (size_t i = 0; i < o->n_headers; i++)
        t->own_headers = curl_slist_append(t->own_headers, o->headers[i]);

    int prc0 = refuse_plain_http(&cfg->transport, sig_fd, stopped);
    if (prc0 != LL_EXIT_OK || *stopped)
        return prc0;
    /* --prompt-ids waits for the answer even with --model: the vocabulary
     * in it decides whether the IDs can be sent at all. */
    if (o->model && !cfg->transport.prompt_ids) {
        t->bg = bg_probe_start(&cfg->transport, t->headers);
        t->model = o->model;
        cfg->transport.model = t->model;
        return LL_EXIT_OK;
    }
    int answered;
    const char *hint;
    struct fetcher *f = fetch_new();
    int prc = probe_target(f, &cfg->transport, t->headers,
                           o->model ? RUN_BG_PROBE_NS : 10 * LL_NS_PER_SEC, sig_fd, &t->models,
                           t->server, &t->first_id, &answered, &hint, err, sizeof err);
    /* What the server says about itself, where it says it (run.json's
     * contract), over the same connection: a few quick questions, none
     * of which may fail the run. */
    if (prc != LL_E_INTR && answered)
        t->contract_server =
            contract_server_probe(f, &cfg->transport, t->headers, t->server, sig_fd);
    fetch_free(f);
    if (prc == LL_E_INTR) {
        *stopped = 1;
        return LL_EXIT_OK;
    }
    if (prc != 0 && !o->model) {
        ll_errorf("cannot ask the target for its model: %s (%s)", err, hint);
        return LL_EXIT_RUNTIME;
    }
    /* With --model, a failed question is no answer, as in the background. */
    t->model = o->model ? o->model : t->first_id;
    if (!t->model) {
        /* The URL the probe asked: without the base's trailing '/'s. */
        ll_errorf("%.*s/models lists no model id; pass --model",
                  (int)ll_url_base_len(cfg->transport.base_url), cfg->transport.base_url);
        return LL_EXIT_RUNTIME;
    }
    cfg->transport.model = t->model;
    if (!o->model) {
        int prc2 = probe_other_endpoints(&cfg->transport, t->headers, t->model, sig_fd, stopped);
        if (prc2 != LL_EXIT_OK || *stopped)
            return prc2;
    }
    if (cfg->transport.prompt_ids &&
        runopts_vocab_check(t->models, t->model, &cfg->transport.prompt_id_range,
                            o->prompt_id_range != NULL, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_USAGE;
    }
    if (t->workload)
        ctx_warn(t->models, t->contract_server, t->model, t->workload, t->max_requests,
                 t->no_output);
    return LL_EXIT_OK;
}

static void target_close(struct run_target *t)
{
    bg_probe_join(t);
    int curl_up = t->curl_up;
    json_decref(t->models);
    json_decref(t->contract_server);
    free(t->first_id);
    if (t->xkey) {
        memset(t->xkey, 0, strlen(t->xkey));
        free(t->xkey);
        t->xkey = NULL;
    }
    if (t->auth) {
        memset(t->auth, 0, strlen(t->auth));
        free(t->auth);
    }
    curl_slist_free_all(t->headers);
    curl_slist_free_all(t->own_headers);
    memset(t, 0, sizeof *t);
    if (curl_up)
        curl_global_cleanup();
}

/* The run.json root: schema, version, command, config (taken over), host
 * and target. Caller owns it. */
static json_t *run_json(const char *command, json_t *config, const struct run_config *cfg,
                        const struct run_target *t)
{
    json_t *run = json_object();
    json_object_set_new(run, "schema", json_string(RESULTS_RUN_SCHEMA));
    json_object_set_new(run, "version", json_string(LL_VERSION));
    json_object_set_new(run, "command", json_string(command));
    json_object_set_new(run, "config", config);
    results_add_host_info(run);
    json_t *target = json_object();
    json_object_set_new(target, "url", json_string(cfg->transport.base_url));
    /* Several --url: each endpoint, its index in the records and its
     * share. --url refuses user info, so no credentials are here. */
    const struct endpoints *e = &cfg->transport.endpoints;
    if (e->n > 1) {
        json_t *arr = json_array();
        for (uint32_t i = 0; i < e->n; i++)
            json_array_append_new(arr, json_pack("{s:I,s:s,s:I}", "index", (json_int_t)i, "url",
                                                 e->url[i], "weight", (json_int_t)e->weight[i]));
        json_object_set_new(target, "endpoints", arr);
    }
    json_object_set_new(target, "server_header",
                        t->server[0] ? json_string(t->server) : json_null());
    json_object_set_new(target, "models", t->models ? json_incref(t->models) : json_null());
    json_object_set_new(run, "target", target);
    return run;
}

/* run.json's "contract": the server's account of itself (asked by
 * run_setup_open) and the sampling parameters sent. */
static json_t *contract_json(const struct run_opts *o, const struct run_config *cfg,
                             const struct run_target *t, const char *command)
{
    json_t *c = json_object();
    json_object_set_new(c, "server",
                        t->contract_server ? json_incref(t->contract_server) : json_null());
    json_object_set_new(c, "sampling", contract_sampling_json(o, cfg, command));
    return c;
}

/* run.json's target once the background probe is over: its Server
 * header and its /models answer, when it had them. */
static void target_json_update(json_t *run, struct run_target *t)
{
    bg_probe_join(t);
    json_t *target = json_object_get(run, "target");
    if (!target)
        return;
    if (t->server[0])
        json_object_set_new(target, "server_header", json_string(t->server));
    if (t->models)
        json_object_set(target, "models", t->models);
    json_t *contract = json_object_get(run, "contract");
    if (t->contract_server && json_is_null(json_object_get(contract, "server")))
        json_object_set(contract, "server", t->contract_server);
}

/* ---- the stop signals -------------------------------------------------- */

static void stop_sigset(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

/* Wait up to ns for SIGINT or SIGTERM and take it: the signal, 0 when
 * none came (or a wait cut short by another signal), -1 on an error. */
static int stop_signal_wait(uint64_t ns)
{
    sigset_t set;
    struct timespec t = {(time_t)(ns / LL_NS_PER_SEC), (long)(ns % LL_NS_PER_SEC)};
    stop_sigset(&set);
    int sig = sigtimedwait(&set, NULL, &t);
    if (sig == SIGINT || sig == SIGTERM)
        return sig;
    return sig < 0 && errno != EINTR && errno != EAGAIN ? -1 : 0;
}

/* Take a pending SIGINT or SIGTERM: the signal, or 0 when none waits. */
static int stop_signal_take(void)
{
    int sig = stop_signal_wait(0);
    return sig > 0 ? sig : 0;
}

int run_setup_linger(struct run_setup *rs, uint64_t ns)
{
    uint64_t now = ll_now_ns();
    uint64_t deadline = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
    for (int sig = 0; sig == 0 && (now = ll_now_ns()) < deadline;) {
        sig = stop_signal_wait(deadline - now);
        if (sig < 0)
            ll_errorf("warning: sigtimedwait: %s", strerror(errno));
        if (sig)
            return sig > 0;
    }
    return 0;
}

int run_setup_wait_ready(const struct run_config *cfg, uint64_t timeout_ns, char *err,
                         size_t errlen)
{
    uint64_t deadline = ll_now_ns() + timeout_ns;
    char why[512] = "no answer";
    for (;;) {
        sigset_t pend;
        if (sigpending(&pend) == 0 &&
            (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1))
            return LL_E_INTR;
        uint64_t now = ll_now_ns();
        if (now >= deadline)
            break;
        json_t *models = NULL;
        char server[128], *first = NULL;
        uint64_t left = deadline - now;
        int answered;
        const char *hint;
        struct fetcher *f = fetch_new();
        int rc = probe_target(f, &cfg->transport, cfg->transport.headers,
                              LL_MIN(left, 2 * LL_NS_PER_SEC), -1, &models, server, &first,
                              &answered, &hint, why, sizeof why);
        fetch_free(f);
        json_decref(models);
        free(first);
        if (rc == 0)
            return 0;
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "%s", why);
    return LL_E_AGAIN;
}

int run_setup_stopped(struct run_setup *rs, const char *phase)
{
    if (rs->stopped_in)
        return 1;
    ll_test_hold(phase);
    int sig = stop_signal_take();
    if (!sig)
        return 0;
    ll_errorf("%s during the %s: stopping", sig == SIGINT ? "interrupt" : "terminated", phase);
    rs->stopped_in = phase;
    return 1;
}

/* ---- the steps --------------------------------------------------------- */

int run_setup_open(struct run_setup *rs, const struct run_opts *o, struct run_config *cfg)
{
    memset(rs, 0, sizeof *rs);
    rs->records_fd = -1;
    rs->hist_fd = -1;
    rs->sig_fd = -1;
    runopts_raise_nofile();
    signal(SIGPIPE, SIG_IGN);
    /* Before any thread starts: every thread inherits the mask, so a stop
     * signal always waits for whoever takes it. */
    sigset_t set;
    stop_sigset(&set);
    rs->masked = pthread_sigmask(SIG_BLOCK, &set, &rs->old_mask) == 0;
    rs->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    rs->prom = &o->prom;
    rs->prom_gpu = cfg->shard_launcher == NULL;
    rs->base_url = cfg->transport.base_url;
    rs->cacert = cfg->transport.cacert;
    rs->insecure = cfg->transport.insecure;
    int stopped = 0;
    int rc = target_open(o, cfg, &rs->target, rs->sig_fd, &stopped);
    if (rc == LL_EXIT_OK && stopped)
        run_setup_stopped(rs, "probe");
    return rc;
}

/* 1, with why in msg, when fit was made with an API whose prompts a
 * server counts differently from api's: a chat template (openai-chat,
 * which a run of anthropic-messages or openai-responses is fitted with,
 * as calibrate speaks neither) or none (openai-completions, and
 * openai-embeddings, whose input carries none). A fit that does not say
 * (a file from before calibrate recorded its API) is not judged. Without
 * it, a completions run with a chat fit warned only after the load, "the
 * server counted 0.70x the requested prompt tokens". */
static int calib_api_mismatch(const struct calib_fit *fit, enum oai_api api, char *msg, size_t len)
{
    if (!fit->api[0])
        return 0;
    int raw = api == OAI_API_COMPLETIONS || api == OAI_API_EMBEDDINGS;
    int fit_raw = strcmp(fit->api, "openai-completions") == 0;
    if (raw == fit_raw)
        return 0;
    snprintf(msg, len,
             "fitted with --api %s, but this run uses --api %s, whose prompts carry %s chat "
             "template: prompt lengths will be off (calibrate again with --api %s)",
             fit->api, oai_api_name(api), raw ? "no" : "a",
             raw ? "openai-completions" : "openai-chat");
    return 1;
}

int run_setup_calibrate(struct run_setup *rs, const struct run_opts *o, struct run_config *cfg)
{
    if (o->calibrate && !rs->stopped_in) {
        const struct calib_probe p = {
            .url = cfg->transport.base_url,
            .model = rs->target.model,
            .completions = cfg->transport.api == OAI_API_COMPLETIONS,
            .headers = rs->target.headers,
            .cacert = cfg->transport.cacert,
            .insecure = cfg->transport.insecure,
            .cancel_fd = rs->sig_fd,
            .who = "calibrate",
        };
        int rc = calib_probe_run(&p, &cfg->calib_fit);
        /* A signal abandoned the probes (LL_E_INTR), or came after them:
         * take it here. */
        if (run_setup_stopped(rs, "calibrate"))
            return LL_EXIT_OK;
        if (rc != 0) {
            ll_errorf("--calibrate auto: the calibration failed (above); the run did not start");
            return LL_EXIT_RUNTIME;
        }
        cfg->workload.calib.tokens_per_word = cfg->calib_fit.slope;
        cfg->workload.calib.intercept_tokens = cfg->calib_fit.intercept;
        calib_probe_print(stderr, "calibrate", &cfg->calib_fit);
    }
    char msg[512];
    if (o->calibration && calib_api_mismatch(&cfg->calib_fit, cfg->transport.api, msg, sizeof msg))
        ll_errorf("warning: --calibration %s: %s", o->calibration, msg);
    if (runopts_calib_short(cfg, msg, sizeof msg))
        ll_errorf("warning: %s", msg);
    return LL_EXIT_OK;
}

/* The host's clock as the kernel says it (adjtimex(2), read-only): its
 * clock source, whether NTP (chrony, ntpd) keeps it synchronised, and the
 * kernel's estimated and maximum error, microseconds. */
static json_t *clock_json(void)
{
    json_t *c = json_object();
    char src[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (fgets(src, sizeof src, f))
            src[strcspn(src, "\n")] = '\0';
        fclose(f);
    }
    json_object_set_new(c, "source", src[0] ? json_string(src) : json_null());
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    int state = adjtimex(&tx);
    if (state < 0) {
        json_object_set_new(c, "synced", json_null());
        return c;
    }
    json_object_set_new(c, "synced",
                        json_boolean(state != TIME_ERROR && !(tx.status & STA_UNSYNC)));
    json_object_set_new(c, "esterror_us", json_integer((json_int_t)tx.esterror));
    json_object_set_new(c, "maxerror_us", json_integer((json_int_t)tx.maxerror));
    return c;
}

/* --out with {shard} and {host} filled in (shard.h) into buf; NULL (the
 * default directory) when there is no --out. */
static const char *out_dir(const struct run_opts *o, const struct run_config *cfg, char *buf,
                           size_t len, char *err, size_t errlen, int *bad)
{
    *bad = 0;
    if (!o->out)
        return NULL;
    char host[256] = "localhost";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    if (shard_expand_out(o->out, cfg->shard, host, buf, len, err, errlen) != 0)
        *bad = 1;
    return buf;
}

int run_setup_results(struct run_setup *rs, const struct run_opts *o, const char *command,
                      json_t *config, struct run_config *cfg, const struct expect_set *ex)
{
    char err[1200], out[1024];
    int bad;
    const char *dir = out_dir(o, cfg, out, sizeof out, err, sizeof err, &bad);
    if (bad) {
        json_decref(config);
        ll_errorf("%s", err);
        return LL_EXIT_USAGE;
    }
    if (results_dir_prepare(dir, o->force, rs->dir, sizeof rs->dir, err, sizeof err) != 0) {
        json_decref(config);
        ll_errorf("%s%s", o->out ? "--out: " : "", err); /* as merge, compare and demo */
        return LL_EXIT_USAGE;
    }
    char hash[17];
    shard_config_hash(config, hash);
    rs->run = run_json(command, config, cfg, &rs->target);
    json_object_set_new(rs->run, "config_hash", json_string(hash));
    if (cfg->start_at_unix_ns) {
        json_t *st = json_object();
        json_object_set_new(st, "start_at_unix_ns", json_integer(cfg->start_at_unix_ns));
        json_object_set_new(st, "woke_unix_ns", json_null());
        json_object_set_new(st, "late_ns", json_null());
        json_object_set_new(st, "clock", clock_json());
        json_object_set_new(rs->run, "start", st);
    }
    json_object_set_new(rs->run, "tags", runopts_tags_json(o));
    json_object_set_new(rs->run, "contract", contract_json(o, cfg, &rs->target, command));
    /* Outside config: a threshold is a judgement of the run, not what it
     * offered, so config_hash (merge, compare) does not hang on it. */
    if (ex && ex->n) {
        char spec[EXPECT_MAX * sizeof ex->item[0].text];
        expect_format(ex, spec, sizeof spec);
        json_object_set_new(rs->run, "expect", json_string(spec));
    }
    if (results_write_json_atomic(rs->dir, "run.json", rs->run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_RUNTIME;
    }
    snprintf(rs->records_path, sizeof rs->records_path, "%s/requests.jsonl", rs->dir);
    rs->records_fd = open(rs->records_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                          0644);
    if (rs->records_fd < 0) {
        ll_errorf("%s: %s", rs->records_path, strerror(errno));
        return LL_EXIT_RUNTIME;
    }
    cfg->records_fd = rs->records_fd;
    char hist_path[1100];
    snprintf(hist_path, sizeof hist_path, "%s/hist.jsonl", rs->dir);
    rs->hist_fd = open(hist_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (rs->hist_fd < 0) {
        ll_errorf("%s: %s", hist_path, strerror(errno));
        return LL_EXIT_RUNTIME;
    }
    cfg->hist_fd = rs->hist_fd;
    cfg->progress = o->quiet ? 0 : (isatty(STDERR_FILENO) ? 1 : 2);
    cfg->progress_interval_ns = cfg->progress == 1 ? LL_NS_PER_SEC : 5 * LL_NS_PER_SEC;
    return LL_EXIT_OK;
}

int run_setup_drive(struct run_setup *rs, const struct run_config *cfg)
{
    char err[512];
    if (driver_run(cfg, &rs->res, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        driver_result_free(&rs->res);
        return -1;
    }
    rs->have_res = 1;
    if (rs->res.interrupted && !rs->stopped_in)
        rs->stopped_in = rs->res.stopped_in;
    return 0;
}

int run_setup_finish(struct run_setup *rs, json_t *sj, const struct summary_info *info)
{
    const char *dir = rs->dir;
    json_t *run = rs->run;
    const struct driver_result *res = &rs->res;
    char err[1200], path[1100];
    json_object_set_new(sj, "sent_in_window", json_integer((json_int_t)res->sent_in_window));
    json_object_set_new(sj, "run_start_monotonic_ns",
                        json_integer((json_int_t)res->run_start_abs_ns));
    json_object_set_new(sj, "warmup_records", json_integer((json_int_t)res->warmup_records));
    json_object_set_new(sj, "stop_reason",
                        res->stop_reason[0] ? json_string(res->stop_reason) : json_null());
    int usage = res->worker_wall_ns > 0; /* 0: the workers' times are not known */
    struct summary_late late = {
        .late_sends = res->late_sends,
        .asleep = res->late_asleep,
        .cpu_s = usage ? (double)res->worker_cpu_ns / 1e9 : NAN,
        .wall_s = usage ? (double)res->worker_wall_ns / 1e9 : NAN,
        .invol_switches = res->worker_invol_switches,
        .cause = verdict_late_cause(res->late_sends, res->late_asleep, res->worker_cpu_ns,
                                    res->worker_wall_ns, res->worker_invol_switches),
    };
    json_object_set_new(sj, "lateness_diagnosis", summary_late_json(&late));
    snprintf(path, sizeof path, "%s/summary.json", dir);
    int wrc = results_write_json_path_atomic(path, sj, err, sizeof err);
    json_decref(sj);
    if (wrc != 0)
        ll_errorf("%s", err);
    run_setup_stopped(rs, "summary");
    int code = run_exit_status(rs, info, wrc != 0);
    json_t *o = json_object();
    json_object_set_new(o, "exit_status", json_integer(code));
    json_object_set_new(o, "invalid", json_boolean(info->invalid));
    json_object_set_new(o, "invalid_reason",
                        info->invalid ? json_string(info->invalid_reason) : json_null());
    json_object_set_new(o, "interrupted", json_boolean(rs->stopped_in != NULL));
    json_object_set_new(o, "stopped_in",
                        rs->stopped_in ? json_string(rs->stopped_in) : json_null());
    json_object_set_new(o, "stop_reason",
                        res->stop_reason[0] ? json_string(res->stop_reason) : json_null());
    json_object_set_new(o, "records_lost", json_integer((json_int_t)res->records_lost));
    json_object_set_new(o, "cut_short_warning",
                        info->cut_short_warning[0] ? json_string(info->cut_short_warning)
                                                   : json_null());
    json_object_set_new(run, "outcome", o);
    json_t *st = json_object_get(run, "start");
    if (st && res->start_woke_unix_ns) {
        json_object_set_new(st, "woke_unix_ns", json_integer(res->start_woke_unix_ns));
        json_object_set_new(st, "late_ns", json_integer((json_int_t)res->start_late_ns));
    }
    target_json_update(run, &rs->target);
    if (results_write_json_atomic(dir, "run.json", run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return run_exit_combine(code, LL_EXIT_RUNTIME);
    }
    int hrc = report_run_write(dir, stdout, err, sizeof err);
    if (hrc != 0)
        ll_errorf("%s", err);
    return hrc != 0 ? run_exit_combine(code, LL_EXIT_RUNTIME) : code;
}

int run_setup_end(struct run_setup *rs, int code, const char *stop_reason)
{
    char err[1200];
    if (!rs->run)
        return code;
    json_t *o = json_object();
    json_object_set_new(o, "exit_status", json_integer(code));
    json_object_set_new(o, "interrupted", json_boolean(rs->stopped_in != NULL));
    json_object_set_new(o, "stopped_in",
                        rs->stopped_in ? json_string(rs->stopped_in) : json_null());
    json_object_set_new(o, "stop_reason", stop_reason ? json_string(stop_reason) : json_null());
    json_object_set_new(rs->run, "outcome", o);
    target_json_update(rs->run, &rs->target);
    if (results_write_json_atomic(rs->dir, "run.json", rs->run, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return run_exit_combine(code, LL_EXIT_RUNTIME);
    }
    return code;
}

void run_setup_close(struct run_setup *rs)
{
    scraper_free(rs->scraper);
    rs->scraper = NULL;
    for (size_t i = 0; i < rs->n_gpu; i++)
        scraper_free(rs->gpu_scrapers[i]);
    rs->n_gpu = 0;
    if (rs->have_res)
        driver_result_free(&rs->res);
    rs->have_res = 0;
    if (rs->records_fd >= 0)
        close(rs->records_fd);
    rs->records_fd = -1;
    if (rs->hist_fd >= 0)
        close(rs->hist_fd);
    rs->hist_fd = -1;
    json_decref(rs->run);
    rs->run = NULL;
    target_close(&rs->target);
    if (rs->sig_fd >= 0)
        close(rs->sig_fd);
    rs->sig_fd = -1;
    if (rs->masked) {
        /* One that came after the last look would end the process by its
         * default action once unblocked: the run is over, take it. */
        while (stop_signal_take())
            ;
        pthread_sigmask(SIG_SETMASK, &rs->old_mask, NULL);
    }
    rs->masked = 0;
}
