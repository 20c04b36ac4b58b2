/* contract.h: the benchmark contract of a run, run.json's "contract": what
 * the server says about itself (asked once at the start, where it says it)
 * and the sampling parameters llmload sent, so that two runs can be checked
 * for "the same benchmark contract". docs/formats.md ("run.json") lists
 * the fields. */
#ifndef LL_CONTRACT_H
#define LL_CONTRACT_H

#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "cli/runopts.h"
#include "driver/driver.h"
#include "http/fetch.h"

/* Each question's time limit (connecting included): an endpoint the
 * server does not serve costs at most this, and a target that does not
 * answer at all ends the questions at its first. */
#define CONTRACT_TIMEOUT_NS (2 * LL_NS_PER_SEC)

/* The root BASE's engine endpoints live at: base_url without a trailing
 * "/v1" (or "/v1/"); base_url itself otherwise. Into buf (len bytes). */
void contract_root_url(const char *base_url, char *buf, size_t len);

/* The options of a question to the target before the load (the /models
 * probe's, contract_server_probe's): the run's headers and its TLS
 * settings (tc's --cacert and --insecure), the whole request within
 * timeout_ns and its connect within connect_timeout_ns, an answer of at
 * most max_body_bytes, abandoned when *cancel_fd (-1: none) becomes
 * readable. Borrows headers and cancel_fd: both must outlive the requests
 * made with the options. */
struct fetch_opts contract_fetch_opts(const struct transport_config *tc,
                                      const struct curl_slist *headers, const int *cancel_fd,
                                      uint64_t timeout_ns, uint64_t connect_timeout_ns,
                                      size_t max_body_bytes);

/* Ask the target about itself, through f (the /models probe's, so its
 * connection is reused; NULL: nothing is asked): GET ROOT/version (vLLM), ROOT/props
 * (llama.cpp), ROOT/get_server_info (SGLang) and ROOT/info (TGI), with
 * the run's headers (sent, never stored), each within CONTRACT_TIMEOUT_NS,
 * abandoned when cancel_fd (-1: none) becomes readable. Returns
 * contract.server: "root", "header" (server_header, the /models answer's
 * Server header, else the first one these answers carry; null when none)
 * and one object per endpoint that answered
 * 200 with a JSON object, named as the endpoint ("version", "props",
 * "get_server_info", "info"), holding only the fields that say what runs
 * (contract_keep). Never fails: what does not answer is absent. Caller
 * owns the object. */
json_t *contract_server_probe(struct fetcher *f, const struct transport_config *tc,
                              const struct curl_slist *headers, const char *server_header,
                              int cancel_fd);

/* The fields kept of one endpoint's answer (its name, as in
 * contract_server_probe): a new object of the scalar fields that say what
 * runs and how (llama.cpp's /props: build_info, model_path, model_alias,
 * total_slots and n_ctx, from default_generation_settings where it is
 * there, and its params' temperature, top_p and top_k as default_*;
 * never its chat template). Caller owns it. */
json_t *contract_keep(const char *endpoint, json_t *answer);

/* contract.sampling: what llmload sent that shapes the output:
 * temperature and top_p (null: not sent, the server's defaults apply),
 * ignore_eos, stream, and max_tokens {"distribution": text}: the
 * --output-tokens distribution, "per class: --workload FILE", or
 * "the trace's" (replay). Caller owns it. */
json_t *contract_sampling_json(const struct run_opts *o, const struct run_config *cfg,
                               const char *command);

#endif
