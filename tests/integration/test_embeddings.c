/* Integration tests of --api openai-embeddings: against `llmload sim` as
 * ground truth (every record matched to its line of the sim's --log:
 * inputs, prompt tokens from the usage, E2E on one clock; the faults'
 * kinds), against a server of this file that answers what a broken one
 * would (a body cut short, not JSON, an error status, the wrong number of
 * embeddings, and llama.cpp's own capture), the flags the API refuses, and
 * a sweep that makes steps and a report without the charts of a stream.
 *
 * Tolerances are stated beside each check and are meant for a shared,
 * noisy 2-core machine. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MS 1000000.0

static pid_t cur_srv; /* this file's own server, or 0 */

static int teardown(void **state)
{
    harness_cleanup((pid_t *const[]){&cur_srv, NULL});
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The p-th percentile (nearest rank) of v[0, n), sorted in place. */
static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

/* The sim's log line for client record r: the same prompt tokens (the sum
 * of the inputs), nearest in arrival to the record's send, unused so far. */
static json_t *match_log(json_t *log, char *used, json_t *r, int64_t t0)
{
    int64_t pt = harness_ival_req(r, "prompt_tokens");
    int64_t sent = t0 + harness_ival_req(r, "sent_ns");
    size_t best = SIZE_MAX;
    int64_t best_d = INT64_MAX;
    for (size_t j = 0; j < json_array_size(log); j++) {
        json_t *l = json_array_get(log, j);
        if (used[j] || harness_ival_req(l, "prompt_tokens") != pt)
            continue;
        int64_t d = llabs(harness_ival_req(l, "arrival_ns") - sent);
        if (d < best_d) {
            best_d = d;
            best = j;
        }
    }
    if (best == SIZE_MAX)
        fail_msg("record %lld (%lld prompt tokens) has no line in the sim's log",
                 (long long)harness_ival_req(r, "id"), (long long)pt);
    used[best] = 1;
    return json_array_get(log, best);
}

/* Run `llmload run --url url --out <harness_cur_tmp>/r --api
 * openai-embeddings <args...>` (dir gets the results dir) with a 60 s
 * timeout, failing the test unless it exits want_status
 * (harness_run_expect). Returns its stdout (caller frees); *err its
 * stderr. */
static char *emb_run(const char *url, char *dir, size_t dir_len, const char *const *args,
                     int want_status, char **err)
{
    harness_tmp_path(dir, dir_len, "r");
    const char *head[] = {"run", "--url", url, "--out", dir, "--api", "openai-embeddings", NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, args);
    return harness_run_expect(a.v, 60, want_status, err);
}

/* Poisson 40/s for 3 s, batches of 1 to 4 inputs of 8 to 400 tokens,
 * against a sim whose steps cost 2 ms plus 5 us a prompt token, logged.
 * Every scheduled request is one record; each ok one matches its log
 * line on inputs and prompt tokens (requested = the usage's = the sim's,
 * exact under its words tokenizer), has no first token and no output, and
 * its E2E from the send agrees with the sim's (read to written) within
 * 2 ms at p50 and 20 ms at p99 (10x under a sanitizer): the client's own
 * part is a send and a read. The summary has no stream rows, and its
 * inputs and prompt tokens per second are the records' sums over the
 * window. */
static void test_sim_agreement(void **state)
{
    char logp[600], url[300];
    const char *sargs[] = {"--step-base",
                           "2ms",
                           "--step-per-prefill-token",
                           "5us",
                           "--prefill-chunk",
                           "8192",
                           "--kv-tokens",
                           "4000000",
                           NULL};
    harness_logged_sim_start(logp, sizeof logp, sargs);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    char dir[600];
    const char *args[] = {"--rate",
                          "40",
                          "--duration",
                          "3s",
                          "--seed",
                          "6",
                          "--batch",
                          "uniform:1,4",
                          "--prompt-tokens",
                          "uniform:8,400",
                          "--slo",
                          "e2e=10s",
                          NULL};
    char *err = NULL;
    char *out = emb_run(url, dir, sizeof dir, args, HARNESS_RC_OK_OR_INVALID, &err);
    harness_sim_stop(&harness_cur_sim);
    /* The terminal summary: E2E, and none of a stream's rows. */
    HARNESS_HAS(out, "\nE2E ", "inputs/s");
    HARNESS_LACKS(out, "TTFT", "TPOT", "ITL");
    free(out);
    free(err);

    json_t *recs = harness_jsonl_load(strcat(strcpy((char[700]){0}, dir), "/requests.jsonl"));
    json_t *sum = harness_summary_load(dir);
    json_t *log = harness_jsonl_load(logp);
    int64_t t0 = harness_ival_req(sum, "run_start_monotonic_ns");
    size_t n = json_array_size(recs);
    assert_int_equal(n, harness_ival_req(json_object_get(sum, "requests"), "scheduled"));
    assert_int_equal(n, json_array_size(log));
    assert_true(n >= 80); /* 120 expected; 80 is over 3.5 sigma below */

    char *used = calloc(n, 1);
    double *diff = calloc(n, sizeof(double));
    assert_true(used && diff);
    int64_t inputs = 0, prompt = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(recs, i);
        assert_string_equal(harness_sval(r, "kind"), "ok");
        json_t *l = match_log(log, used, r, t0);
        assert_string_equal(harness_sval(l, "path"), "/v1/embeddings");
        assert_int_equal(harness_ival_req(l, "status"), 200);
        int64_t k = harness_ival_req(r, "inputs");
        assert_true(k >= 1 && k <= 4);
        assert_int_equal(k, harness_ival_req(l, "inputs"));
        /* Every input is the same length: the request's prompt is k of it. */
        assert_int_equal(harness_ival_req(r, "prompt_tokens") % k, 0);
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"),
                         harness_ival_req(l, "prompt_tokens"));
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"),
                         harness_ival_req(r, "prompt_tokens"));
        assert_int_equal(harness_ival_req(r, "output_tokens"), 0);
        assert_int_equal(harness_ival_req(l, "output_tokens"), 0);
        assert_string_equal(harness_sval(r, "tokens_source"), "usage");
        assert_true(harness_is_null(r, "first_ns"));
        assert_true(harness_is_null(l, "first_token_ns"));
        int64_t sent = t0 + harness_ival_req(r, "sent_ns");
        int64_t end = t0 + harness_ival_req(r, "end_ns");
        int64_t s_arr = harness_ival_req(l, "arrival_ns"), s_end = harness_ival_req(l, "end_ns");
        /* Causality on one clock (the sim stamps a request when its loop
         * wakes, up to 100 us before the read). */
        if (!(sent <= s_arr + 100000 && s_end <= end))
            fail_msg("id %lld: sent %lld, sim read %lld, sim wrote %lld, client read %lld",
                     (long long)harness_ival_req(r, "id"), (long long)sent, (long long)s_arr,
                     (long long)s_end, (long long)end);
        diff[i] = (double)((end - sent) - (s_end - s_arr));
        inputs += k;
        prompt += harness_ival_req(r, "prompt_tokens_server");
    }
    double lim = getenv("LLMLOAD_SANITIZED") ? 10.0 : 1.0;
    double p50 = pct(diff, n, 50), p99 = pct(diff, n, 99);
    print_message("client-added E2E over %zu embeddings requests: p50 %.0f us, p99 %.0f us\n", n,
                  p50 / 1e3, p99 / 1e3);
    ASSERT_IN_RANGE(p50, 0, 2 * MS * lim);
    ASSERT_IN_RANGE(p99, 0, 20 * MS * lim);

    /* summary.json: the stream's histograms are empty, inputs counted. */
    assert_int_equal(harness_num(sum, "latency_ns.ttft.count"), 0);
    assert_int_equal(harness_num(sum, "latency_ns.e2e.count"), (double)n);
    assert_int_equal(harness_num(sum, "tokens.inputs"), (double)inputs);
    assert_int_equal(harness_num(sum, "tokens.prompt_tokens"), (double)prompt);
    assert_int_equal(harness_num(sum, "tokens.output_tokens"), 0);
    double w = harness_num(sum, "window_ns") / 1e9;
    /* Every request ends inside the window (40/s, about 10 ms each) but
     * those the --duration cut leaves to the grace: within 5%. */
    ASSERT_IN_RANGE(harness_num(sum, "throughput.inputs_per_s"), 0.95 * inputs / w,
                    1.0001 * inputs / w);
    ASSERT_IN_RANGE(harness_num(sum, "throughput.input_tokens_per_s"), 0.95 * prompt / w,
                    1.0001 * prompt / w);
    /* The SLO is judged by E2E alone: every request met 10 s. */
    ASSERT_IN_RANGE(harness_num(sum, "throughput.attainment"), 0.999, 1.0);
    free(used);
    free(diff);
    json_decref(recs);
    json_decref(sum);
    json_decref(log);
}

/* The sim's faults on /v1/embeddings: 503 is http_5xx, malformed (half the
 * body) malformed_event, cut (closed without an answer) connect_error
 * "closed the connection with no response", unless the connection had
 * served a request before: then the client sends it again on a new one
 * (docs/http-client.md), and the sim logs both tries and draws a fault for
 * each. So the log holds 100 lines plus one per retried cut, each kind is
 * counted as often as the log has its fault (a record is its last try),
 * and every request is still one record. */
static void test_sim_faults(void **state)
{
    char logp[600];
    const char *sargs[] = {"--step-base",   "1ms",     "--fault", "503:0.2", "--fault",
                           "malformed:0.2", "--fault", "cut:0.1", NULL};
    harness_logged_sim_start(logp, sizeof logp, sargs);
    const char *args[] = {"--api", "openai-embeddings", "--rate", "50", "--requests",
                          "100",   "--batch",           "3",      NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    json_t *recs = harness_jsonl_load(strcat(strcpy((char[700]){0}, dir), "/requests.jsonl"));
    json_t *log = harness_jsonl_load(logp);
    size_t nlog = json_array_size(log);
    assert_int_equal(json_array_size(recs), 100);
    size_t f503 = 0, fmal = 0, fcut = 0, fnone = 0, k5xx = 0, kmal = 0, kok = 0, kcut = 0;
    for (size_t j = 0; j < nlog; j++) {
        json_t *l = json_array_get(log, j);
        const char *f = json_is_string(json_object_get(l, "fault")) ? harness_sval(l, "fault") : "";
        f503 += strcmp(f, "503") == 0;
        fmal += strcmp(f, "malformed") == 0;
        fcut += strcmp(f, "cut") == 0;
        fnone += f[0] == '\0';
        assert_int_equal(harness_ival_req(l, "inputs"), 3);
    }
    for (size_t i = 0; i < 100; i++) {
        json_t *r = json_array_get(recs, i);
        const char *k = harness_sval(r, "kind");
        assert_int_equal(harness_ival_req(r, "inputs"), 3);
        if (strcmp(k, "ok") == 0)
            kok++;
        else if (strcmp(k, "http_5xx") == 0)
            k5xx++;
        else if (strcmp(k, "malformed_event") == 0)
            kmal++;
        else if (strcmp(k, "connect_error") == 0 &&
                 strstr(harness_sval(r, "detail"), "closed the connection with no response"))
            kcut++;
        else
            fail_msg("record %zu: kind %s (%s)", i, k, harness_sval(r, "detail"));
    }
    print_message("sim log: %zu lines, faults 503 %zu, malformed %zu, cut %zu (%zu retried)\n",
                  nlog, f503, fmal, fcut, nlog - 100);
    assert_true(f503 > 0 && fmal > 0 && fcut > 0);
    assert_int_equal(k5xx, f503);
    assert_int_equal(kmal, fmal);
    assert_int_equal(kok, fnone);
    assert_int_equal(kcut, fcut - (nlog - 100));
    json_decref(recs);
    json_decref(log);
    harness_results_free(dir);
}

/* ---- a server that answers what it is told ------------------------------ */

enum emb_mode {
    EM_CAPTURE,   /* llama.cpp's own answer (tests/data/sse/embeddings.http) */
    EM_CUT,       /* Content-Length 400, 40 bytes of it, then close */
    EM_NOT_JSON,  /* a whole body that is not JSON */
    EM_HTTP_400,  /* llama.cpp's 400 with its error body */
    EM_TOO_FEW,   /* one embedding for every request, whatever it sent */
    EM_ERROR_200, /* a 200 whose body is an error object */
};

struct emb_conn {
    int fd;
    enum emb_mode mode;
    const char *capture; /* EM_CAPTURE: the whole HTTP answer */
    size_t capture_len;
};

static void send_answer(int fd, const char *status, const char *body, size_t declared)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     status, declared);
    harness_send_all(fd, head, (size_t)n, NULL);
    harness_send_all(fd, body, strlen(body), NULL);
}

static void *emb_conn_main(void *arg)
{
    struct emb_conn c = *(struct emb_conn *)arg;
    free(arg);
    char *buf = malloc(1 << 20);
    size_t body_len;
    int kept;
    while (buf) {
        size_t head = harness_read_request(c.fd, buf, 1 << 20, &body_len, &kept);
        if (head == 0)
            break;
        if (strncmp(buf, "GET ", 4) == 0) {
            const char *models = "{\"object\":\"list\",\"data\":[{\"id\":\"emb\"}]}";
            send_answer(c.fd, "200 OK", models, strlen(models));
            continue;
        }
        static const char one[] = "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\","
                                  "\"index\":0,\"embedding\":[0.5,-0.25]}],\"model\":\"emb\","
                                  "\"usage\":{\"prompt_tokens\":7,\"total_tokens\":7}}";
        switch (c.mode) {
        case EM_CAPTURE: harness_send_all(c.fd, c.capture, c.capture_len, NULL); break;
        case EM_CUT:
            send_answer(c.fd, "200 OK", "{\"object\":\"list\",\"data\":[{\"embedd", 400);
            break;
        case EM_NOT_JSON: send_answer(c.fd, "200 OK", "{\"data\":[1,2,", 13); break;
        case EM_HTTP_400: {
            const char *e = "{\"error\":{\"code\":400,\"message\":\"input is too large to "
                            "process. increase the physical batch size\",\"type\":"
                            "\"invalid_request_error\"}}";
            send_answer(c.fd, "400 Bad Request", e, strlen(e));
            break;
        }
        case EM_TOO_FEW: send_answer(c.fd, "200 OK", one, sizeof one - 1); break;
        case EM_ERROR_200: {
            const char *e = "{\"error\":{\"message\":\"model is loading\"}}";
            send_answer(c.fd, "200 OK", e, strlen(e));
            break;
        }
        }
        if (c.mode == EM_CUT || c.mode == EM_CAPTURE)
            break; /* the capture says Connection: close */
    }
    close(c.fd);
    free(buf);
    return NULL;
}

static void *emb_arg(int fd, void *ud)
{
    return harness_conn_copy(ud, sizeof(struct emb_conn), offsetof(struct emb_conn, fd), fd);
}

/* Start this file's server in mode m: its URL (…/v1) into url. */
static void emb_server_start(enum emb_mode m, char *url, size_t url_len)
{
    struct emb_conn proto = {.fd = -1, .mode = m};
    char *cap = NULL;
    if (m == EM_CAPTURE) {
        char p[600];
        snprintf(p, sizeof p, "%s/sse/embeddings.http", getenv("LLMLOAD_DATA"));
        cap = harness_read_file(p, &proto.capture_len);
        assert_non_null(cap);
        proto.capture = cap;
    }
    int port;
    int lfd = harness_bind_local(64, &port);
    cur_srv = harness_serve_fork(lfd, 60, emb_conn_main, emb_arg, &proto);
    free(cap);
    snprintf(url, url_len, "http://127.0.0.1:%d/v1", port);
}

/* Ten requests of batch bs against the server in mode m: each is one
 * record of kind want, whose detail contains detail (when not NULL).
 * Returns the records (caller decrefs). */
static json_t *hostile(enum emb_mode m, const char *bs, const char *want, const char *detail)
{
    harness_tmp_begin();
    char url[100], dir[600];
    emb_server_start(m, url, sizeof url);
    const char *args[] = {"--rate",  "20",           "--requests",      "10",  "--batch", bs,
                          "--quiet", "--no-metrics", "--timeout-total", "10s", NULL};
    char *err = NULL;
    char *out =
        emb_run(url, dir, sizeof dir, args, want[0] == 'o' ? HARNESS_RC_OK_OR_INVALID : 6, &err);
    free(out);
    free(err);
    json_t *recs = harness_jsonl_load(strcat(strcpy((char[700]){0}, dir), "/requests.jsonl"));
    assert_int_equal(json_array_size(recs), 10);
    for (size_t i = 0; i < 10; i++) {
        json_t *r = json_array_get(recs, i);
        if (strcmp(harness_sval(r, "kind"), want) != 0)
            fail_msg("record %zu: kind %s, detail %s; expected %s", i, harness_sval(r, "kind"),
                     harness_is_null(r, "detail") ? "null" : harness_sval(r, "detail"), want);
        if (detail && !strstr(harness_sval(r, "detail"), detail))
            fail_msg("record %zu: detail \"%s\" lacks \"%s\"", i, harness_sval(r, "detail"),
                     detail);
        assert_true(harness_is_null(r, "first_ns"));
    }
    harness_kill_reap(&cur_srv);
    harness_tmp_end(); /* a test calls this several times: one directory each */
    return recs;
}

/* llama.cpp's real answer: ok, its usage (5 prompt tokens) in every
 * record. */
static void test_capture(void **state)
{
    json_t *recs = hostile(EM_CAPTURE, "1", "ok", NULL);
    for (size_t i = 0; i < 10; i++) {
        json_t *r = json_array_get(recs, i);
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"), 5);
        assert_int_equal(harness_ival_req(r, "output_tokens"), 0);
        assert_int_equal(harness_ival_req(r, "inputs"), 1);
    }
    json_decref(recs);
}

/* What a broken server answers, each its own kind, with the reason. */
static void test_hostile_answers(void **state)
{
    json_decref(hostile(EM_NOT_JSON, "1", "malformed_event", "not the expected JSON"));
    json_decref(hostile(EM_TOO_FEW, "2", "malformed_event", "1 embeddings in the answer to 2"));
    json_decref(hostile(EM_HTTP_400, "1", "http_4xx", "input is too large"));
    json_decref(hostile(EM_ERROR_200, "1", "server_error_event", "model is loading"));
    /* A body cut short of its Content-Length, as a cut stream. */
    json_decref(hostile(EM_CUT, "1", "stream_truncated", "before the end of the body"));
}

/* What the API cannot do is refused before anything is sent: one line
 * naming the flag and the API, exit 2. */
static void test_refusals(void **state)
{
    HARNESS_EXPECT_USAGES(
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--slo", "ttft=1s"},
         "--slo: ttft has no meaning for openai-embeddings"},
        {{"run", "--api", "embeddings", "--rate", "1", "--slo", "e2e=2s,tpot=20ms"},
         "--slo: tpot has no meaning for openai-embeddings"},
        {{"run", "--rate", "1", "--batch", "4"}, "--batch: inputs per request go with --api"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--batch", "2049"},
         "--batch: at most 2048 inputs"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--batch", "exponential:4"},
         "--batch: at most 2048 inputs"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--batch", "zero"}, "--batch:"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--output-tokens", "9"},
         "--output-tokens: not with --api openai-embeddings"},
        {{"run", "--api", "openai-embeddings", "--sessions", "1"},
         "--sessions: not with --api openai-embeddings"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--prefix-fraction", "0.5",
          "--prefix-tokens", "10"},
         "--prefix-fraction: not with --api openai-embeddings"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--cancel-fraction", "0.5",
          "--cancel-after", "1s"},
         "--cancel-fraction: not with --api openai-embeddings"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--prompt-ids"},
         "--prompt-ids: not with --api openai-embeddings"},
        {{"run", "--api", "openai-embeddings", "--rate", "1", "--calibrate", "auto"},
         "--calibrate: not with --api openai-embeddings: its probes speak OpenAI chat, whose "
         "template an embedding's input lacks; fit with llmload calibrate --api "
         "openai-completions"},
        {{"sweep", "--api", "openai-embeddings", "--rates", "1,2", "--slo", "ttft=1s"},
         "--slo: ttft has no meaning for openai-embeddings"},
        {{"replay", "/nonexistent/trace.jsonl", "--api", "openai-embeddings"},
         "--api openai-embeddings: not with llmload replay"},
        {{"demo", "--api", "openai-embeddings"}, "--api: the demo judges TTFT and TPOT"});
}

/* The fit an embeddings run is told to use is the one that keeps its
 * lengths. Under the sim's bytes2 tokenizer a chat prompt carries a
 * 10-token template and a completions prompt a BOS, and an embedding's
 * input, like a completions prompt, no template: calibrate's chat fit
 * (intercept about 10) leaves 128-token inputs 119 tokens long, its
 * completions fit (intercept about 1) sends them at 128 (against
 * llama.cpp: 0.69x and 0.98x). So the uncalibrated run's warning, and
 * the refusal of --calibrate auto above, name the completions fit, never
 * --calibrate auto, which this API refuses. */
static void test_calibration_advice(void **state)
{
    const char *sargs[] = {"--tokenizer", "bytes2", "--profile", "instant", NULL};
    harness_cur_sim_start(sargs);
    harness_tmp_begin();
    char url[160], fit_chat[600], fit_cmpl[600];
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    harness_tmp_path(fit_chat, sizeof fit_chat, "chat.json");
    harness_tmp_path(fit_cmpl, sizeof fit_cmpl, "cmpl.json");
    const char *cal_chat[] = {"calibrate", "--url", url, "--out", fit_chat, NULL};
    const char *cal_cmpl[] = {"calibrate",          "--url", url,      "--api",
                              "openai-completions", "--out", fit_cmpl, NULL};
    free(harness_run_expect(cal_chat, 60, 0, NULL));
    free(harness_run_expect(cal_cmpl, 60, 0, NULL));
    const char *fixed[] = {
        "--api", "openai-embeddings", "--rate", "50",           "--requests", "20", "--seed",
        "4",     "--prompt-tokens",   "128",    "--no-metrics", NULL};
    const char *fits[] = {fit_cmpl, fit_chat};
    double mean[2];
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"--calibration", fits[i], NULL};
        char *dir = harness_run_client(fixed, args, HARNESS_RC_OK_OR_INVALID, NULL);
        struct harness_recs *r = harness_requests_load(dir);
        assert_int_equal(r->n, 20);
        double sum = 0;
        for (size_t k = 0; k < r->n; k++)
            sum += (double)harness_ival(r->items[k], "prompt_tokens_server");
        mean[i] = sum / (double)r->n;
        harness_recs_free(r);
        harness_results_free(dir);
    }
    print_message("128-token inputs: %.1f tokens with the completions fit, %.1f with chat's\n",
                  mean[0], mean[1]);
    ASSERT_NEAR(mean[0], 128, 128 * 0.02);
    assert_true(mean[1] < 128 * 0.95); /* the premise: the chat fit is the wrong one */

    char *err = NULL;
    const char *none[] = {NULL};
    char *dir = harness_run_client(fixed, none, HARNESS_RC_OK_OR_INVALID, &err);
    json_t *sj = harness_summary_load(dir);
    const char *w = harness_sval(sj, "prompt_warning");
    const char *has[] = {"the server counted",
                         "llmload calibrate --url BASE --api openai-completions", NULL};
    const char *lacks[] = {"--calibrate auto", NULL};
    harness_text_check("summary.json prompt_warning", w, has, lacks);
    harness_text_check("stderr", err, has, lacks);
    json_decref(sj);
    free(err);
    harness_results_free(dir);
}

/* The sim of the sweep and compare tests below: 2 ms a step. */
static const char *const step_2ms[] = {"--step-base", "2ms", NULL};

/* llmload sweep --api openai-embeddings against the sim: its load steps
 * and the recovery step are in summary.json with E2E and no TTFT (null),
 * and report.html has the E2E
 * chart and none of a stream's: no TTFT, TPOT or TTFT-distribution
 * chart. */
static void test_sweep_report(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(step_2ms);
    const char *args[] = {
        "--api", "openai-embeddings", "--rates", "10,20", "--batch", "2", "--step-duration",
        "2s",    "--warmup",          "1s",      "--slo", "e2e=2s",  NULL};
    char *out = NULL;
    char *dir = harness_sweep_ok(args, 120, &out, NULL);
    json_t *sum = harness_summary_load(dir);
    json_t *steps = json_object_get(sum, "steps");
    size_t n = json_array_size(steps), load = 0;
    assert_true(n >= 3); /* two rates and the recovery step */
    for (size_t i = 0; i < n; i++) {
        json_t *st = json_array_get(steps, i);
        load += strcmp(harness_sval(st, "kind"), "load") == 0;
        json_t *lat = json_object_get(st, "latency_ns");
        assert_true(json_is_null(json_object_get(json_object_get(lat, "ttft"), "p99")));
        assert_true(harness_num(st, "latency_ns.e2e.p99") > 0);
        assert_true(harness_ival_req(st, "ok") > 0);
    }
    assert_int_equal(load, 2);
    /* The terminal table: no TTFT figure, "-" in its columns. */
    HARNESS_HAS(out, "TTFT p50");
    HARNESS_LACKS(out, "0.00us");
    char *html = harness_read_in(dir, "report.html");
    HARNESS_HAS(html, "<h3>End-to-end latency");
    HARNESS_LACKS(html, "id=\"chart-ttft", "id=\"chart-tpot", "TTFT distribution per step");
    free(html);
    free(out);
    json_decref(sum);
    harness_results_free(dir);
}

/* compare of two embeddings runs: E2E, the rates and the errors, and no
 * TTFT, TPOT, ITL or output tok/s rows (an embedding has no first token
 * and no output); a --fail-on on one of those is refused, naming it. */
static void test_compare_rows(void **state)
{
    harness_tmp_begin();
    harness_cur_sim_start(step_2ms);
    const char *fixed[] = {"--api", "openai-embeddings", "--rate", "40",           "--requests",
                           "40",    "--batch",           "2",      "--no-metrics", NULL};
    const char *a[] = {"--seed", "1", NULL};
    const char *b[] = {"--seed", "2", NULL};
    char *da = harness_run_client(fixed, a, HARNESS_RC_OK_OR_INVALID, NULL);
    char *db = harness_run_client(fixed, b, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    char outdir[600];
    harness_tmp_path(outdir, sizeof outdir, "cmp");
    const char *cargs[] = {"compare", da, db, "--out", outdir, NULL};
    char *err = NULL;
    char *out = harness_run_expect(cargs, 60, 0, &err);
    HARNESS_HAS(out, "E2E p99");
    HARNESS_LACKS(out, "TTFT", "TPOT", "ITL", "output tok/s");
    free(out);
    free(err);
    json_t *doc = harness_json_load(outdir, "compare.json");
    json_t *rows = json_object_get(json_array_get(json_object_get(doc, "candidates"), 0), "rows");
    size_t e2e = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const char *name = harness_sval(json_array_get(rows, i), "row");
        assert_true(strncmp(name, "ttft", 4) != 0 && strncmp(name, "tpot", 4) != 0 &&
                    strncmp(name, "itl", 3) != 0 && strcmp(name, "output_tokens_per_s") != 0);
        e2e += strncmp(name, "e2e_p", 5) == 0;
    }
    assert_int_equal(e2e, 3);
    json_decref(doc);

    /* Another --batch is other work: refused, naming it (run.json's
     * config.batch). */
    harness_cur_sim_start(step_2ms);
    const char *c3[] = {"--seed", "3", "--batch", "3", NULL};
    char *dc = harness_run_client(fixed, c3, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    const char *other[] = {"compare", da, dc, "--quiet", NULL};
    out = harness_run_expect(other, 60, 2, &err);
    HARNESS_HAS(err, "batch");
    free(out);
    free(err);
    harness_results_free(dc);

    const char *gate[] = {"compare", da, db, "--quiet", "--fail-on", "ttft_p99:+10%", NULL};
    out = harness_run_expect(gate, 60, 2, &err);
    HARNESS_HAS(err, "--fail-on: ttft_p99: openai-embeddings");
    free(out);
    free(err);
    harness_results_free(da);
    harness_results_free(db);
}

/* A --workload whose class gives no output_tokens, sent with --api
 * openai-embeddings: accepted (an embedding has no output; the file had
 * to name one that was never sent), every request ok, its inputs the
 * class's 48 tokens. */
static void test_workload_no_output(void **state)
{
    harness_tmp_begin();
    char wl[600];
    harness_tmp_file(wl, sizeof wl, "emb.json",
                     "{\"classes\": [{\"name\": \"docs\", \"prompt_tokens\": 48}]}\n");
    harness_cur_sim_start(NULL);
    const char *args[] = {
        "--api", "openai-embeddings", "--workload", wl, "--rate", "20", "--requests",
        "10",    "--no-metrics",      NULL};
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, NULL);
    struct harness_recs *r = harness_requests_load(dir);
    assert_int_equal(r->n, 10);
    for (size_t k = 0; k < r->n; k++) {
        assert_string_equal(harness_sval(r->items[k], "kind"), "ok");
        assert_int_equal(harness_ival_req(r->items[k], "prompt_tokens"), 48);
    }
    harness_recs_free(r);
    harness_results_free(dir);
    harness_tmp_end();
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sim_agreement, teardown),
        cmocka_unit_test_teardown(test_sim_faults, teardown),
        cmocka_unit_test_teardown(test_capture, teardown),
        cmocka_unit_test_teardown(test_hostile_answers, teardown),
        cmocka_unit_test_teardown(test_refusals, teardown),
        cmocka_unit_test_teardown(test_calibration_advice, teardown),
        cmocka_unit_test_teardown(test_sweep_report, teardown),
        cmocka_unit_test_teardown(test_compare_rows, teardown),
        cmocka_unit_test_teardown(test_workload_no_output, teardown),
    };
    return harness_run_tests(tests, sizeof tests / sizeof tests[0]);
}
