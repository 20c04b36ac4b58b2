/* cmd_calibrate.c: `llmload calibrate`, the words-to-tokens fit of a
 * server's tokenizer (see calibprobe.h, calibrate.h and docs/workload.md):
 * its flags, the model to ask for, the probes (calibprobe.c, which run
 * --calibrate auto shares), the file and what it prints. */
#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/badarg.h"
#include "cli/calibprobe.h"
#include "cli/cmds.h"
#include "cli/runopts.h"
#include "util/util.h"

struct calib_opts {
    const char *url, *model, *out, *api, *api_key_env, *cacert;
    int completions, insecure;
    const char *headers[RUNOPTS_MAX_HEADERS]; /* -H lines, n_headers of them */
    size_t n_headers;
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: llmload calibrate [--url BASE] [--model M] [--out FILE]\n"
        "\n"
        "Fit the server's tokens per word of llmload's synthetic prompts, so that\n"
        "`llmload run --calibration FILE` hits prompt lengths on it (docs/workload.md).\n"
        "\n"
        "  --url BASE        OpenAI-compatible base URL (default %s)\n"
        "  --model M         model to ask for (default: the first one BASE/models lists)\n"
        "  --api API         openai-chat (default) or openai-completions\n"
        "  --api-key-env V   environment variable holding the API key (default OPENAI_API_KEY)\n"
        "  -H, --header H    extra request header \"Name: value\" (repeatable)\n"
        "  --cacert FILE     CA bundle for TLS\n"
        "  --insecure        do not verify TLS certificates\n"
        "  --out FILE        where to save the fit (default calibration.json)\n",
        RUNOPTS_DEFAULT_URL);
}

/* -H, as run's (one parser). */
static int take_header(void *dst, const char *a, char *err, size_t errlen)
{
    struct calib_opts *o = dst;
    return runopts_header_add(o->headers, &o->n_headers, a, err, errlen);
}

static const struct runopts_flag calib_flags[] = {
    RUNOPTS_VALUE("url", struct calib_opts, url),
    RUNOPTS_VALUE("model", struct calib_opts, model),
    RUNOPTS_VALUE("out", struct calib_opts, out),
    RUNOPTS_VALUE("api", struct calib_opts, api),
    RUNOPTS_VALUE("api-key-env", struct calib_opts, api_key_env),
    RUNOPTS_VALUE("cacert", struct calib_opts, cacert),
    RUNOPTS_SET("insecure", struct calib_opts, insecure),
    {"header", 'H', RUNOPTS_KIND_CALL, 0, take_header},
    {"help", 'h', RUNOPTS_KIND_HELP, 0, NULL},
};

/* The flags into o: 0, RUNOPTS_HELP, or LL_E_INVAL with the reason in err. */
static int parse_args(int argc, char **argv, struct calib_opts *o, char *err, size_t errlen)
{
    const struct runopts_table t = {calib_flags, LL_ARRAY_LEN(calib_flags), o};
    int rc = runopts_walk(argc, argv, "calibrate", &t, 1, err, errlen);
    if (rc != 0)
        return rc;
    if (optind < argc) {
        badarg_operand(err, errlen, "calibrate", argv[optind], 1);
        return LL_E_INVAL;
    }
    if (!o->url)
        o->url = RUNOPTS_DEFAULT_URL;
    if (runopts_check_url(o->url, err, errlen) != 0)
        return LL_E_INVAL;
    if (o->cacert && runopts_check_cacert(o->cacert, err, errlen) != 0)
        return LL_E_INVAL;
    /* As run refuses it: a key named and not there would send no key at
     * all, and the probes' 401 would say less than this. */
    const char *key = o->api_key_env ? getenv(o->api_key_env) : NULL;
    if (o->api_key_env && (!key || !*key))
        return runopts_errf(err, errlen, "--api-key-env: $%s is not set", o->api_key_env);
    if (!o->out)
        o->out = "calibration.json";
    /* What can be told before the probes run (they take a while, and
     * their fit would be lost): an empty path, or a directory. */
    struct stat sb;
    if (!o->out[0])
        return runopts_errf(err, errlen, "--out: expected a file name, got \"\"");
    if (stat(o->out, &sb) == 0 && S_ISDIR(sb.st_mode))
        return runopts_errf(err, errlen, "--out: \"%s\" is a directory; expected a file name",
                            o->out);
    const char *slash = strrchr(o->out, '/');
    if (slash) {
        char parent[4096];
        int n = slash == o->out ? 1 : (int)(slash - o->out);
        snprintf(parent, sizeof parent, "%.*s", n, o->out);
        if (stat(parent, &sb) != 0 || !S_ISDIR(sb.st_mode))
            return runopts_errf(err, errlen, "--out: no directory \"%s\" to write \"%s\" in",
                                parent, o->out);
    }
    if (o->api) {
        if (strcmp(o->api, "openai-completions") == 0 || strcmp(o->api, "completions") == 0)
            o->completions = 1;
        else if (oai_api_from_name(o->api) == OAI_API_ANTHROPIC ||
                 oai_api_from_name(o->api) == OAI_API_RESPONSES)
            return runopts_errf(err, errlen,
                                "--api: calibrate's probes speak openai-chat or "
                                "openai-completions, not %s; calibrate against "
                                "an OpenAI chat endpoint of the same model",
                                oai_api_name((enum oai_api)oai_api_from_name(o->api)));
        else if (strcmp(o->api, "openai-chat") != 0 && strcmp(o->api, "chat") != 0)
            return runopts_errf(err, errlen, "--api: expected openai-chat or "
                                "openai-completions, got \"%s\"", o->api);
    }
    return 0;
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
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        ll_errorf("calibrate: libcurl did not initialise");
        return LL_EXIT_RUNTIME;
    }
    /* As run's: a -H naming a header of ours replaces it. */
    if (!runopts_header_named(o.headers, o.n_headers, "Content-Type"))
        headers = curl_slist_append(headers, "Content-Type: application/json");
    const char *key = getenv(o.api_key_env ? o.api_key_env : "OPENAI_API_KEY");
    if (key && *key && !runopts_header_named(o.headers, o.n_headers, "Authorization")) {
        size_t n = strlen(key) + sizeof "Authorization: Bearer ";
        auth = ll_malloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", key);
        headers = curl_slist_append(headers, auth);
    }
    for (size_t i = 0; i < o.n_headers; i++)
        headers = curl_slist_append(headers, o.headers[i]);
    struct calib_probe p = {
        .url = o.url,
        .completions = o.completions,
        .headers = headers,
        .cacert = o.cacert,
        .insecure = o.insecure,
        .cancel_fd = -1,
        .who = "calibrate",
    };
    model = o.model ? ll_strdup(o.model) : calib_probe_first_model(&p);
    if (!model)
        goto fail;
    p.model = model;
    struct calib_fit fit;
    rc = calib_probe_run(&p, &fit);
    if (rc != 0) {
        status = rc == LL_E_INVAL ? LL_EXIT_FAIL : LL_EXIT_RUNTIME;
        goto fail;
    }
    if (calib_fit_save(o.out, &fit, err, sizeof err) != 0) {
        ll_errorf("calibrate: %s", err);
        goto fail;
    }
    calib_probe_print(stdout, "calibrate", &fit);
    printf("calibrate: saved to %s\n", o.out);
    status = LL_EXIT_OK;
fail:
    free(model);
    curl_slist_free_all(headers);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    curl_global_cleanup();
    return status;
}
