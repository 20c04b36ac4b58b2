/* contract.c: run.json's "contract" (contract.h): the server's account of
 * itself and the sampling parameters llmload sent. */
#include "cli/contract.h"

#include <stdio.h>
#include <string.h>

#include "http/fetch.h"
#include "util/util.h"
#include "workload/dist.h"

void contract_root_url(const char *base_url, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)ll_url_root_len(base_url), base_url);
}

/* The fields each endpoint keeps: what runs (engine, version, model) and
 * how (parallelism, precision, context and batch bounds). Scalars only. */
static const char *const keep_version[] = {"version", NULL};
static const char *const keep_props[] = {"build_info",  "model_path", "model_alias",
                                         "total_slots", "n_ctx",      NULL};
static const char *const keep_sglang[] = {"version",
                                          "model_path",
                                          "served_model_name",
                                          "tp_size",
                                          "dp_size",
                                          "pp_size",
                                          "dtype",
                                          "quantization",
                                          "kv_cache_dtype",
                                          "context_length",
                                          "max_running_requests",
                                          "max_total_num_tokens",
                                          "chunked_prefill_size",
                                          "attention_backend",
                                          "schedule_policy",
                                          "disable_radix_cache",
                                          "speculative_algorithm",
                                          "mem_fraction_static",
                                          NULL};
static const char *const keep_tgi[] = {"model_id",
                                       "model_sha",
                                       "model_dtype",
                                       "model_device_type",
                                       "max_concurrent_requests",
                                       "max_input_tokens",
                                       "max_input_length",
                                       "max_total_tokens",
                                       "max_batch_total_tokens",
                                       "max_batch_prefill_tokens",
                                       "max_batch_size",
                                       "max_waiting_tokens",
                                       "waiting_served_ratio",
                                       "router",
                                       "version",
                                       "sha",
                                       "docker_label",
                                       NULL};

static const struct {
    const char *name; /* the endpoint, without its '/' */
    const char *const *keep;
} endpoints[] = {
    {"version", keep_version},
    {"props", keep_props},
    {"get_server_info", keep_sglang},
    {"info", keep_tgi},
};

static void keep_scalar(json_t *out, const char *k, json_t *v)
{
    if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
        json_object_set(out, k, v);
}

json_t *contract_keep(const char *endpoint, json_t *answer)
{
    json_t *out = json_object();
    const char *const *keep = NULL;
    for (size_t i = 0; i < LL_ARRAY_LEN(endpoints); i++)
        if (strcmp(endpoints[i].name, endpoint) == 0)
            keep = endpoints[i].keep;
    if (!keep || !json_is_object(answer))
        return out;
    for (size_t i = 0; keep[i]; i++)
        keep_scalar(out, keep[i], json_object_get(answer, keep[i]));
    /* llama.cpp says its context in its default generation settings, and
     * in their params the sampling a request that names none gets (as
     * llmload's do): default_temperature, default_top_p, default_top_k. */
    if (strcmp(endpoint, "props") == 0) {
        json_t *dgs = json_object_get(answer, "default_generation_settings");
        if (!json_object_get(out, "n_ctx"))
            keep_scalar(out, "n_ctx", json_object_get(dgs, "n_ctx"));
        static const char *const params[] = {"temperature", "top_p", "top_k"};
        for (size_t i = 0; i < LL_ARRAY_LEN(params); i++) {
            char k[32];
            snprintf(k, sizeof k, "default_%s", params[i]);
            keep_scalar(out, k, json_object_get(json_object_get(dgs, "params"), params[i]));
        }
    }
    return out;
}

struct fetch_opts contract_fetch_opts(const struct transport_config *tc,
                                      const struct curl_slist *headers, const int *cancel_fd,
                                      uint64_t timeout_ns, uint64_t connect_timeout_ns,
                                      size_t max_body_bytes)
{
    return (struct fetch_opts){
        .headers = headers,
        .cacert = tc->cacert,
        .insecure = tc->insecure,
        .timeout_ns = timeout_ns,
        .connect_timeout_ns = connect_timeout_ns,
        .max_body_bytes = max_body_bytes,
        .cancel_fds = cancel_fd,
        .n_cancel_fds = *cancel_fd >= 0,
    };
}

json_t *contract_server_probe(struct fetcher *f, const struct transport_config *tc,
                              const struct curl_slist *headers, const char *server_header,
                              int cancel_fd)
{
    char root[1100];
    contract_root_url(tc->base_url, root, sizeof root);
    json_t *srv = json_object();
    json_object_set_new(srv, "root", json_string(root));
    json_object_set_new(srv, "header",
                        server_header && *server_header ? json_string(server_header) : json_null());
    if (!f)
        return srv;
    /* 4 MiB: llama.cpp's /props holds its chat template. */
    struct fetch_opts fo = contract_fetch_opts(tc, headers, &cancel_fd, CONTRACT_TIMEOUT_NS,
                                               CONTRACT_TIMEOUT_NS, 4u << 20);
    struct fetch_response r = {0};
    for (size_t i = 0; i < LL_ARRAY_LEN(endpoints); i++) {
        char url[1200], why[256];
        snprintf(url, sizeof url, "%s/%s", root, endpoints[i].name);
        int rc = fetch_request(f, url, NULL, &fo, &r, why, sizeof why);
        if (rc == LL_E_INTR || rc == LL_E_IO) /* a stop signal, or no answer at all */
            break;
        if (r.server[0] && json_is_null(json_object_get(srv, "header")))
            json_object_set_new(srv, "header", json_string(r.server));
        if (rc != 0 || r.status != 200 || !r.body)
            continue;
        json_t *answer = json_loadb(r.body, r.body_len, 0, NULL);
        if (json_is_object(answer))
            json_object_set_new(srv, endpoints[i].name, contract_keep(endpoints[i].name, answer));
        json_decref(answer);
    }
    fetch_response_free(&r);
    return srv;
}

json_t *contract_sampling_json(const struct run_opts *o, const struct run_config *cfg,
                               const char *command)
{
    json_t *s = json_object();
    /* Unless the extra bodies send them, the server's own defaults apply.
     * With classes every request carries its class's merged body
     * (extra[1 + class]); one value for all, else "per class". */
    const struct transport_config *tc = &cfg->transport;
    size_t first = tc->n_extra > 1 ? 1 : 0, end = tc->extra ? LL_MAX(tc->n_extra, 1) : 0;
    const char *const sampling[] = {"temperature", "top_p"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = NULL;
        int varies = 0;
        for (size_t k = first; k < end; k++) {
            json_t *x = tc->extra[k].json ? json_object_get(tc->extra[k].json, sampling[i]) : NULL;
            if (k == first)
                v = x;
            else if (!json_equal(x ? x : json_null(), v ? v : json_null()))
                varies = 1;
        }
        json_object_set_new(s, sampling[i],
                            varies ? json_string("per class")
                            : v    ? json_incref(v)
                                   : json_null());
    }
    json_object_set_new(s, "ignore_eos", json_boolean(cfg->transport.ignore_eos));
    json_object_set_new(s, "stream", json_boolean(cfg->transport.stream));
    char buf[DIST_SPEC_MAX + 64];
    if (strcmp(command, "replay") == 0)
        snprintf(buf, sizeof buf, "the trace's");
    else if (cfg->workload.classes)
        snprintf(buf, sizeof buf, "per class: --workload %s", o->workload ? o->workload : "");
    else if (cfg->workload.output_emp)
        snprintf(buf, sizeof buf, "%s", o->output_tokens ? o->output_tokens : "empirical");
    else
        dist_format(&cfg->workload.output_tokens, buf, sizeof buf);
    json_t *mt = json_object();
    json_object_set_new(mt, "distribution", json_string(buf));
    json_object_set_new(s, "max_tokens", mt);
    return s;
}
