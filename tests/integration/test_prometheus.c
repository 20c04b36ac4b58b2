/* Integration tests of --prometheus against a real Prometheus (Debian's
 * `prometheus`; scripts/install-deps.sh installs it): the server's side of
 * a run read for two replicas through Prometheus, the energy through
 * Prometheus, llmload's own --expose metrics as Prometheus sees them, and
 * every PromQL expr of deploy/grafana/llmload-dashboard.json.
 *
 * The test writes a Prometheus config (scrape_interval 1s) that scrapes
 * two `llmload sim --gpu-metrics` as replicas (job "sim", pod "a" and
 * "b") and llmload's --expose endpoint (job "llmload", through a relay on
 * a port the test holds, since the run's --expose 127.0.0.1:0 says its
 * port only once it runs), starts Prometheus
 * on a free 127.0.0.1 port with its TSDB in a temporary directory, waits
 * until both sims are up in it, and runs `llmload run --url A --url B
 * --prometheus ... --prometheus-selector '{job="sim"}'`. The sims are
 * those of test_gpu: exact (4 sequences, 10 ms steps whatever the work, no
 * idle power), 8-token prompts and 20 output tokens, so a request costs
 * 8 x 0.005 + 19 x 0.25 = 4.79 J, 0.2395 J per output token. Prometheus
 * is stopped by its PID. A second run sends 9 requests in 10 to replica
 * a at 40/s: each replica's tokens through Prometheus equal its sim's,
 * and the summary's routing-imbalance finding names a. A 2-step sweep
 * (4 and 40 req/s) with the same skew: each replica's tokens per step
 * against the sims' model, the finding in the 40 req/s step alone, and
 * a queue line per replica in report.html. A missing prometheus binary
 * fails the test. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define PROMETHEUS_BIN "/usr/bin/prometheus"
#define SIM_SMALL                                                                                  \
    "--max-num-seqs", "4", "--step-base", "10ms", "--step-per-prefill-token", "0",                 \
        "--step-per-seq", "0", "--gpu-metrics", "--gpus", "1", "--gpu-idle-watts", "0"
#define REQ_J (8 * 0.005 + 19 * 0.25)

static pid_t prom_pid;
static struct harness_sim sim_a, sim_b;
static char *tmp;
static int *relay_to; /* relay_conn's port, shared with the relay's child */
static pid_t relay_pid;
/* A run in the background (the --expose tests), killed by the teardowns
 * when a test fails half-way. */
static pid_t expose_client;

static int teardown(void **state)
{
    (void)state;
    harness_kill_reap(&expose_client);
    harness_kill_reap(&relay_pid);
    if (relay_to) {
        munmap(relay_to, sizeof *relay_to);
        relay_to = NULL;
    }
    if (prom_pid > 0) {
        kill(prom_pid, SIGTERM);
        for (int i = 0; i < 100; i++) {
            if (waitpid(prom_pid, NULL, WNOHANG) == prom_pid) {
                prom_pid = 0;
                break;
            }
            harness_sleep_ms(50);
        }
        harness_kill_reap(&prom_pid);
    }
    harness_sim_stop(&sim_a);
    harness_sim_stop(&sim_b);
    if (tmp) {
        harness_rm_rf(tmp);
        free(tmp);
        tmp = NULL;
    }
    return 0;
}

/* GET path?query=<q percent-encoded>[&time=t] from Prometheus on port;
 * returns the parsed JSON body (caller decrefs), or NULL. */
static json_t *prom_get(int port, const char *q, double time_s)
{
    char req[8192];
    int n = snprintf(req, sizeof req, "GET /api/v1/query?query=");
    for (const unsigned char *p = (const unsigned char *)q; *p && n < 7000; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '_' || *p == '.')
            req[n++] = (char)*p;
        else
            n += snprintf(req + n, sizeof req - (size_t)n, "%%%02X", *p);
    }
    if (!isnan(time_s))
        n += snprintf(req + n, sizeof req - (size_t)n, "&time=%.3f", time_s);
    n += snprintf(req + n, sizeof req - (size_t)n, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    char *resp = NULL;
    size_t len = 0;
    if (harness_http(port, req, (size_t)n, &resp, &len, 5000) != 0)
        return NULL;
    char *body = strstr(resp, "\r\n\r\n");
    json_t *j = body ? json_loads(body + 4, 0, NULL) : NULL;
    free(resp);
    return j;
}

/* The result array of a successful query (borrowed from *root, which the
 * caller decrefs), failing the test on an error answer. */
static json_t *prom_result(int port, const char *q, double time_s, json_t **root)
{
    *root = prom_get(port, q, time_s);
    if (!*root)
        fail_msg("Prometheus did not answer the query %s", q);
    const char *st = json_string_value(json_object_get(*root, "status"));
    if (!st || strcmp(st, "success") != 0) {
        char *d = json_dumps(*root, 0);
        fail_msg("query %s failed: %s", q, d ? d : "?");
    }
    return json_object_get(json_object_get(*root, "data"), "result");
}

/* The first value of a vector answer, NAN when it is empty. */
static double prom_value(int port, const char *q, double time_s)
{
    json_t *root;
    json_t *r = prom_result(port, q, time_s, &root);
    double v = NAN;
    json_t *val = json_object_get(json_array_get(r, 0), "value");
    if (val)
        v = strtod(json_string_value(json_array_get(val, 1)), NULL);
    json_decref(root);
    return v;
}

/* Every run's work (8-token prompts, 20 tokens out) and its Prometheus
 * flags: the sims as the job "sim", asked every 500 ms. */
#define PROM_WORK(prom)                                                                            \
    "--prompt-tokens", "8", "--output-tokens", "20", "--ignore-eos", "--metrics-interval",         \
        "500ms", "--prometheus", (prom), "--prometheus-selector", "{job=\"sim\"}"

/* Start Prometheus scraping the two sims and 127.0.0.1:expose_port, and
 * wait until it has both sims up. Returns its port. */
static int prometheus_start(int expose_port)
{
    if (access(PROMETHEUS_BIN, X_OK) != 0)
        fail_msg("%s not found: this test needs Debian's prometheus package; run "
                 "scripts/install-deps.sh (as root) to install it",
                 PROMETHEUS_BIN);
    char cfg[1200], path[600], tsdb[600], listen[64], log[600];
    snprintf(cfg, sizeof cfg,
             "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
             "scrape_configs:\n"
             "  - job_name: sim\n    static_configs:\n"
             "      - targets: ['127.0.0.1:%d']\n        labels: {pod: a}\n"
             "      - targets: ['127.0.0.1:%d']\n        labels: {pod: b}\n"
             "  - job_name: llmload\n    static_configs:\n"
             "      - targets: ['127.0.0.1:%d']\n",
             sim_a.port, sim_b.port, expose_port);
    snprintf(path, sizeof path, "%s/prometheus.yml", tmp);
    harness_write_file(path, cfg);
    snprintf(tsdb, sizeof tsdb, "--storage.tsdb.path=%s/tsdb", tmp);
    int port = harness_free_port();
    snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", port);
    snprintf(log, sizeof log, "%s/prometheus.log", tmp);
    char cfg_flag[700];
    snprintf(cfg_flag, sizeof cfg_flag, "--config.file=%s", path);
    prom_pid = fork();
    assert_true(prom_pid >= 0);
    if (prom_pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (fd < 0 || in < 0)
            _exit(126);
        dup2(in, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(PROMETHEUS_BIN, PROMETHEUS_BIN, cfg_flag, tsdb, listen, "--log.level=warn",
              (char *)NULL);
        _exit(127);
    }
    /* Up to 30 s for the sims to be up in it (start-up and the first
     * scrapes take a few seconds). */
    for (int i = 0; i < 300; i++) {
        json_t *root = prom_get(port, "sum(up{job=\"sim\"})", NAN);
        double v = NAN;
        if (root) {
            json_t *val = json_object_get(
                json_array_get(json_object_get(json_object_get(root, "data"), "result"), 0),
                "value");
            if (val)
                v = strtod(json_string_value(json_array_get(val, 1)), NULL);
            json_decref(root);
        }
        if (v == 2)
            return port;
        if (waitpid(prom_pid, NULL, WNOHANG) == prom_pid) {
            prom_pid = 0;
            char *l = harness_read_file(log, NULL);
            fail_msg("prometheus exited at start:\n%s", l ? l : "");
        }
        harness_sleep_ms(100);
    }
    fail_msg("prometheus on port %d never had both sims up", port);
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Every "expr" in the dashboard JSON (recursively) into exprs. */
static void dashboard_exprs(json_t *j, json_t *exprs)
{
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            if (strcmp(k, "expr") == 0 && json_is_string(v))
                json_array_append(exprs, v);
            else
                dashboard_exprs(v, exprs);
        }
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            dashboard_exprs(json_array_get(j, i), exprs);
    }
}

/* CLOCK_MONOTONIC now, s: what a command's wall time is printed in. */
static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Step k's replica r's figure at "server.replicas.replicas.<r>.<what>" in
 * sweep summary.json's steps. */
static double step_replica(json_t *steps, size_t k, const char *r, const char *what)
{
    char path[160];
    snprintf(path, sizeof path, "server.replicas.replicas.%s.%s", r, what);
    return harness_num(json_array_get(steps, k), path);
}

/* Run llmload args across sim_a and sim_b (a run or a sweep; what names
 * it on the wall-time line) within timeout_s, and fail the test unless it
 * exits 0 or 1 (harness_run_expect). d[0] and d[1] get the tokens sim_a
 * and sim_b generated meanwhile, by their /metrics before and after.
 * Returns its stdout (caller frees). */
static char *run_on_replicas(const char *const *args, int timeout_s, const char *what, double d[2])
{
    double a0 = harness_sim_metric_sum(&sim_a, "vllm:generation_tokens_total", NULL);
    double b0 = harness_sim_metric_sum(&sim_b, "vllm:generation_tokens_total", NULL);
    double t0 = mono_s();
    char *out = harness_run_expect(args, timeout_s, HARNESS_RC_OK_OR_INVALID, NULL);
    fprintf(stderr, "test_prometheus: %s: wall time %.2f s\n", what, mono_s() - t0);
    d[0] = harness_sim_metric_sum(&sim_a, "vllm:generation_tokens_total", NULL) - a0;
    d[1] = harness_sim_metric_sum(&sim_b, "vllm:generation_tokens_total", NULL) - b0;
    return out;
}

/* A sweep through the same router skew (9 requests in 10 to replica a):
 * at 4 req/s neither replica queues (a's 3.6 req/s is far under its 20
 * req/s of batch: 4 sequences x 200 ms a request); at 40 req/s a's 36
 * req/s overflow it while b's 4 idle. Each step has both replicas, a's
 * share of the generated tokens is the sims' own share over the sweep,
 * the replicas' tokens add up to the step's server figure, the routing
 * finding is the 40 req/s step's alone (summary.json, stdout, report.html,
 * and again after `llmload report` rebuilds from steps.jsonl), and the
 * server queue chart has a line per replica. */
static void sweep_skewed(int port, const char *url_a, const char *url_b)
{
    char prom[64], out[720];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", port);
    snprintf(out, sizeof out, "%s/sweep", tmp);
    const char *args[] = {
        "sweep", "--url",    url_a,  "--url",         url_b,           "--url-weights",
        "9,1",   "--rates",  "4,40", "--arrival",     "constant",      "--step-duration",
        "4s",    "--warmup", "1s",   "--no-recovery", PROM_WORK(prom), "--out",
        out,     "--quiet",  NULL};
    /* Offering is 2 x (1 s warm-up + 4 s hold); the rest is the drain of
     * a's queue, the end's wait for Prometheus and the report. */
    double d[2];
    char *sout = run_on_replicas(args, 180, "sweep (skewed, 10 s of offering)", d);
    double da = d[0], db = d[1];
    json_t *s = harness_summary_load(out);
    json_t *steps = json_object_get(s, "steps");
    assert_int_equal(json_array_size(steps), 2);
    /* Each replica's tokens per second of its own span, against the
     * sims' exact model: a request is 20 tokens; 4 sequences a 10 ms
     * step make a saturated replica's 400 tokens/s. */
    static const double want_tps[2][2] = {{3.6 * 20, 0.4 * 20}, {400, 4 * 20}};
    static const char *const names[2] = {"a", "b"};
    double sum[2] = {0, 0};
    for (size_t k = 0; k < 2; k++) {
        json_t *st = json_array_get(steps, k);
        ASSERT_NEAR(harness_num(st, "server.replicas.count"), 2, 0);
        double t[2];
        for (int r = 0; r < 2; r++) {
            t[r] = step_replica(steps, k, names[r], "generation_tokens");
            double span_s = step_replica(steps, k, names[r], "span_s");
            fprintf(stderr,
                    "test_prometheus: sweep step %zu: replica %s %g tokens over %.3f s "
                    "(%.1f tokens/s, the model's %.0f), waiting mean %.2f\n",
                    k, names[r], t[r], span_s, t[r] / span_s, want_tps[k][r],
                    step_replica(steps, k, names[r], "waiting_mean"));
            /* A request's tokens at each edge of the span. */
            if (fabs(t[r] - want_tps[k][r] * span_s) > 40)
                fail_msg("step %zu replica %s: %g tokens over %.3f s, the model %g", k, names[r],
                         t[r], span_s, want_tps[k][r] * span_s);
            sum[r] += t[r];
        }
        if (t[0] + t[1] > 0)
            ASSERT_NEAR(step_replica(steps, k, "a", "generation_share"), t[0] / (t[0] + t[1]),
                        1e-9);
    }
    /* The steps' windows hold no more than the sims generated in all. */
    fprintf(stderr,
            "test_prometheus: sweep: replicas a %g b %g tokens in the windows, sims %g %g\n",
            sum[0], sum[1], da, db);
    assert_true(sum[0] <= da && sum[1] <= db);
    json_t *imb0 = json_object_get(
        json_object_get(json_object_get(json_array_get(steps, 0), "server"), "replicas"),
        "imbalance");
    assert_true(json_is_null(imb0));
    const char *why = json_string_value(json_object_get(
        json_object_get(json_object_get(json_array_get(steps, 1), "server"), "replicas"),
        "imbalance"));
    if (!why || !strstr(why, "routing imbalance: replica a queued"))
        fail_msg("no routing-imbalance finding for a at 40 req/s: %s", why ? why : "null");
    assert_true(step_replica(steps, 1, "a", "waiting_mean") >= 1);
    const char *text = json_string_value(json_object_get(json_object_get(s, "findings"), "text"));
    HARNESS_HAS(text, "(40 req/s): routing imbalance: replica a queued");
    assert_null(strstr(text, "(4 req/s): routing"));
    HARNESS_HAS(sout, "(40 req/s): routing imbalance: replica a queued");
    for (int pass = 0; pass < 2; pass++) {
        char *html = harness_read_in(out, "report.html");
        HARNESS_HAS(html, "(40 req/s): routing imbalance: replica a queued",
                    "data-series=\"server_waiting_a\"", "data-series=\"server_waiting_b\"");
        free(html);
        if (pass == 0) { /* rebuilt from steps.jsonl and server_metrics.jsonl */
            const char *rargs[] = {"report", out, NULL};
            free(harness_run_expect(rargs, 60, HARNESS_RC_OK_OR_INVALID, NULL));
        }
    }
    json_decref(s);
    free(sout);
}

/* Prometheus is told its targets before the run starts, and the run's
 * --expose port (port 0) is known only once it listens: a relay of the
 * test's own, on a port bound and held from the start (harness_free_port
 * would race), stands in for it in Prometheus's config. Each connection's
 * request head goes to 127.0.0.1:*relay_to and the answer comes back; while
 * *relay_to is 0 (the run has not said its port) the connection is closed,
 * a failed scrape, as a target that is not up yet. */
static void *relay_conn(void *arg)
{
    int fd = harness_fd_take(arg);
    char req[4096];
    size_t n = 0;
    while (n < sizeof req - 1) {
        ssize_t k = recv(fd, req + n, sizeof req - 1 - n, 0);
        if (k <= 0)
            break;
        n += (size_t)k;
        req[n] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    int port = __atomic_load_n(relay_to, __ATOMIC_ACQUIRE);
    char *resp = NULL;
    size_t len = 0;
    if (port > 0 && n > 0 && harness_http(port, req, n, &resp, &len, 2000) == 0)
        harness_send_all(fd, resp, len, NULL);
    free(resp);
    close(fd);
    return NULL;
}

static int expose_client_teardown(void **state)
{
    harness_kill_reap(&expose_client);
    return harness_sim_tmp_teardown(state);
}

/* The whole scenario (one Prometheus start for every check). */
static void test_prometheus_two_replicas(void **state)
{
    (void)state;
    tmp = harness_tmpdir();
    const char *sargs[] = {SIM_SMALL, NULL};
    assert_int_equal(harness_sim_start(&sim_a, sargs), 0);
    assert_int_equal(harness_sim_start(&sim_b, sargs), 0);
    relay_to = harness_shared_map(sizeof *relay_to);
    int relay_port;
    int lfd = harness_bind_local(16, &relay_port);
    relay_pid = harness_serve_fork(lfd, 600, relay_conn, harness_fd_arg, NULL);
    int port = prometheus_start(relay_port);

    char url_a[200], url_b[200], prom[64], out[700], outp[700], errp[700];
    snprintf(url_a, sizeof url_a, "%s/v1", sim_a.url);
    snprintf(url_b, sizeof url_b, "%s/v1", sim_b.url);
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", port);
    snprintf(out, sizeof out, "%s/run", tmp);
    snprintf(outp, sizeof outp, "%s/run.stdout", tmp);
    snprintf(errp, sizeof errp, "%s/run.stderr", tmp);
    /* 40 requests at 10/s, evenly split: 4 s, 20 per replica. */
    const char *args[] = {"run",
                          "--url",
                          url_a,
                          "--url",
                          url_b,
                          "--rate",
                          "10",
                          "--arrival",
                          "constant",
                          "--requests",
                          "40",
                          PROM_WORK(prom),
                          "--prometheus-header",
                          "X-Scope-OrgID: sekrit-tenant-value",
                          "--expose",
                          "127.0.0.1:0",
                          "--out",
                          out,
                          "--quiet",
                          NULL};
    /* In the background: Prometheus scrapes it through the relay from
     * the moment it says its port. */
    expose_client = harness_spawn(args, outp, errp, -1, NULL, NULL);
    __atomic_store_n(relay_to, harness_expose_announced_port(errp), __ATOMIC_RELEASE);
    int rc = harness_reap(expose_client, 120000);
    expose_client = 0;
    char *sout = harness_read_file(outp, NULL);
    char *serr = harness_read_file(errp, NULL);
    assert_non_null(sout);
    assert_non_null(serr);
    if (rc != 0 && rc != 1)
        fail_msg("llmload run exited %d:\n%s%s", rc, sout, serr);
    /* The header's value reaches no output. */
    HARNESS_LACKS(sout, "sekrit");
    HARNESS_LACKS(serr, "sekrit");
    char *runj = harness_read_in(out, "run.json");
    HARNESS_LACKS(runj, "sekrit");
    HARNESS_HAS(runj, "X-Scope-OrgID");
    free(runj);

    json_t *s = harness_summary_load(out);
    double client_tokens = harness_num(s, "tokens.output_tokens");
    ASSERT_NEAR(client_tokens, 800, 0);
    double sims_tokens = harness_sim_metric_sum(&sim_a, "vllm:generation_tokens_total", NULL) +
                         harness_sim_metric_sum(&sim_b, "vllm:generation_tokens_total", NULL);
    ASSERT_NEAR(sims_tokens, 800, 0);

    /* One scrape interval's worth of tokens: 10 req/s x 20 tokens x 1 s. */
    const double interval_tokens = 200;
    double server_delta = harness_num(s, "server.generation_tokens.delta");
    if (fabs(server_delta - client_tokens) > interval_tokens)
        fail_msg("generation tokens through Prometheus %g, client %g", server_delta, client_tokens);
    ASSERT_NEAR(harness_num(s, "server.failed"), 0, 0);
    /* Each replica's own share: 20 requests of 20 tokens each, evenly
     * spread, nobody queued. */
    ASSERT_NEAR(harness_num(s, "server.replicas.count"), 2, 0);
    double rep_a = harness_num(s, "server.replicas.replicas.a.generation_tokens");
    double rep_b = harness_num(s, "server.replicas.replicas.b.generation_tokens");
    if (fabs(rep_a - 400) > interval_tokens / 2 || fabs(rep_b - 400) > interval_tokens / 2)
        fail_msg("replicas generated %g and %g tokens, 400 each sent", rep_a, rep_b);
    assert_true(harness_is_null(json_object_get(s, "server"), "replicas") == 0);
    assert_true(
        harness_is_null(json_object_get(json_object_get(s, "server"), "replicas"), "imbalance"));

    /* server_metrics.jsonl: the Prometheus lines, the last with both
     * replicas, their counters summing to the sims'. */
    char path[800];
    snprintf(path, sizeof path, "%s/server_metrics.jsonl", out);
    json_t *all = harness_jsonl_load(path);
    json_t *last = NULL;
    double durs[400];
    size_t n_dur = 0, with_both = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *l = json_array_get(all, i);
        const char *src = json_string_value(json_object_get(l, "source"));
        assert_non_null(src);
        if (strcmp(src, "prometheus") != 0)
            continue;
        if (!json_is_true(json_object_get(l, "ok")))
            continue;
        last = l;
        if (n_dur < 400)
            durs[n_dur++] = (double)json_integer_value(json_object_get(l, "query_ns"));
        json_t *reps = json_object_get(l, "replicas");
        if (json_is_number(json_object_get(json_object_get(reps, "a"), "waiting")) &&
            json_is_number(json_object_get(json_object_get(reps, "b"), "waiting")))
            with_both++;
    }
    assert_non_null(last);
    assert_true(with_both >= 4); /* per-replica queue series, both replicas */
    ASSERT_NEAR(harness_num(last, "replica_count"), 2, 0);
    assert_string_equal(harness_sval(last, "by"), "pod");
    double last_gen = harness_num(last, "generation_tokens_total");
    if (fabs(last_gen - sims_tokens) > interval_tokens)
        fail_msg("last Prometheus line: %g generation tokens, the sims %g", last_gen, sims_tokens);
    ASSERT_NEAR(harness_num(last, "replicas.a.generation_tokens_total") +
                    harness_num(last, "replicas.b.generation_tokens_total"),
                last_gen, 1e-9);
    ASSERT_IN_RANGE(harness_num(last, "prom_interval_s"), 0.5, 2.0);
    ASSERT_IN_RANGE(harness_num(last, "prom_age_s"), 0, 5);
    qsort(durs, n_dur, sizeof *durs, cmp_double);
    fprintf(stderr,
            "test_prometheus: %zu query rounds, median %.2f ms (max %.2f ms); tokens: "
            "client %g, sims %g, through Prometheus %g (last line %g)\n",
            n_dur, durs[n_dur / 2] / 1e6, durs[n_dur - 1] / 1e6, client_tokens, sims_tokens,
            server_delta, last_gen);

    /* The energy, through Prometheus's DCGM series, against the model. */
    assert_string_equal(harness_sval(json_object_get(s, "energy"), "source"), "energy_counter");
    ASSERT_NEAR(harness_num(s, "energy.gpus"), 2, 0);
    double jpt = harness_num(s, "energy.j_per_output_token");
    double sim_j = (harness_sim_metric_sum(&sim_a, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", NULL) +
                    harness_sim_metric_sum(&sim_b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", NULL)) /
                   1000.0;
    fprintf(stderr,
            "test_prometheus: %.4f J per output token (%.2f J over %.2f s), the sims' counters "
            "%.2f J, model %.4f\n",
            jpt, harness_num(s, "energy.energy_j"), harness_num(s, "energy.span_s"), sim_j,
            REQ_J / 20);
    ASSERT_REL(jpt, REQ_J / 20, 0.02);

    /* Prometheus's view of llmload's own --expose: its largest (final)
     * counters equal summary.json's. */
    double finished = prom_value(port, "max_over_time(llmload_run_finished[5m])", NAN);
    if (finished != 1)
        fail_msg("Prometheus never saw llmload_run_finished 1 (got %g)", finished);
    double exp_tokens = prom_value(port, "max_over_time(llmload_output_tokens_total[5m])", NAN);
    double exp_ok =
        prom_value(port, "max_over_time(llmload_requests_completed_total{kind=\"ok\"}[5m])", NAN);
    double exp_sched = prom_value(port, "max_over_time(llmload_requests_scheduled_total[5m])", NAN);
    fprintf(stderr,
            "test_prometheus: --expose through Prometheus: %g tokens, %g ok, %g scheduled\n",
            exp_tokens, exp_ok, exp_sched);
    ASSERT_NEAR(exp_tokens, client_tokens, 0);
    ASSERT_NEAR(exp_ok, harness_num(s, "requests.ok"), 0);
    ASSERT_NEAR(exp_sched, harness_num(s, "requests.scheduled"), 0);

    /* Every expr of the Grafana dashboard parses and has data at the time
     * of the last question (llmload and the sims still up). */
    char dpath[600];
    snprintf(dpath, sizeof dpath, "%s/../../deploy/grafana/llmload-dashboard.json",
             getenv("LLMLOAD_DATA") ? getenv("LLMLOAD_DATA") : "tests/data");
    json_t *dash = json_load_file(dpath, 0, NULL);
    if (!dash)
        fail_msg("cannot read %s", dpath);
    json_t *exprs = json_array();
    dashboard_exprs(dash, exprs);
    assert_true(json_array_size(exprs) >= 10);
    double at = harness_num(last, "prom_time_s");
    for (size_t i = 0; i < json_array_size(exprs); i++) {
        const char *e = json_string_value(json_array_get(exprs, i));
        json_t *root;
        json_t *r = prom_result(port, e, at, &root);
        if (json_array_size(r) == 0)
            fail_msg("dashboard expr %s: no data at %.3f", e, at);
        json_decref(root);
    }
    fprintf(stderr, "test_prometheus: %zu dashboard exprs answered with data\n",
            json_array_size(exprs));
    json_decref(exprs);
    json_decref(dash);
    json_decref(all);
    json_decref(s);
    free(sout);
    free(serr);

    /* A router's imbalance: 9 requests in 10 to replica a at 40/s (past
     * its 4-sequence batch, so it queues), 1 in 10 to b (which idles).
     * Each replica's own tokens, as Prometheus saw them, equal what its
     * sim counted over the run; the finding names a. */
    char out2[720];
    snprintf(out2, sizeof out2, "%s/skew", tmp);
    const char *args2[] = {
        "run", "--url",         url_a,   "--url",     url_b,      "--url-weights",
        "9,1", "--rate",        "40",    "--arrival", "constant", "--requests",
        "160", PROM_WORK(prom), "--out", out2,        "--quiet",  NULL};
    double d[2];
    sout = run_on_replicas(args2, 120, "run (skewed, 4 s of offering)", d);
    double da = d[0], db = d[1];
    ASSERT_NEAR(da + db, 3200, 0);
    s = harness_summary_load(out2);
    double ra = harness_num(s, "server.replicas.replicas.a.generation_tokens");
    double rb = harness_num(s, "server.replicas.replicas.b.generation_tokens");
    fprintf(stderr,
            "test_prometheus: skewed run: replica a %g tokens (sim %g), b %g (sim %g), "
            "waiting mean a %.2f b %.2f; server total %g\n",
            ra, da, rb, db, harness_num(s, "server.replicas.replicas.a.waiting_mean"),
            harness_num(s, "server.replicas.replicas.b.waiting_mean"),
            harness_num(s, "server.generation_tokens.delta"));
    /* One request's tokens of slack at an edge, on a loaded machine. */
    if (fabs(ra - da) > 20 || fabs(rb - db) > 20)
        fail_msg("replicas' tokens through Prometheus a %g b %g, the sims' a %g b %g", ra, rb, da,
                 db);
    json_t *imb =
        json_object_get(json_object_get(json_object_get(s, "server"), "replicas"), "imbalance");
    const char *why = json_string_value(imb);
    if (!why || !strstr(why, "routing imbalance: replica a queued"))
        fail_msg("no routing-imbalance finding for a: %s", why ? why : "null");
    assert_non_null(strstr(sout, "finding: routing imbalance: replica a queued"));
    json_decref(s);
    free(sout);

    sweep_skewed(port, url_a, url_b);
}

/* Bad flags: one line each, naming the flag; no Prometheus needed. */
static void test_prometheus_bad_flags(void **state)
{
    (void)state;
    HARNESS_EXPECT_USAGES(
        {{"run", "--prometheus", "ftp://x"}, "--prometheus: expected http://"},
        {{"run", "--prometheus", "http://u:p@h:9090"}, "--prometheus: user info"},
        {{"run", "--prometheus", "http://h:9090", "--prometheus-selector", "job=\"x\""},
         "--prometheus-selector: expected label matchers in braces"},
        {{"run", "--prometheus", "http://h:9090", "--prometheus-selector", "{job=x}"},
         "--prometheus-selector: expected a double-quoted value at byte 5"},
        {{"run", "--prometheus", "http://h:9090", "--prometheus-by", "a-b"}, "--prometheus-by"},
        {{"run", "--prometheus", "http://h:9090", "--prometheus-header", "NoColon"},
         "--prometheus-header: expected 'Name: value'"},
        {{"run", "--prometheus-selector", "{}"}, "--prometheus-selector: goes with --prometheus"},
        {{"sweep", "--rates", "1", "--prometheus", "x"}, "--prometheus: expected http://"},
        {{"run", "--rate", "1", "--requests", "1", "--prometheus", "http://h:9090", "--metrics-url",
          "http://h:8000/metrics"},
         "--metrics-url and --prometheus: pick one"},
        {{"sweep", "--rates", "1", "--prometheus", "http://h:9090", "--metrics-url",
          "http://h:8000/metrics"},
         "--metrics-url and --prometheus: pick one"});
    /* A URL that carries a secret is refused without repeating it. */
    static const char *const secret[][4] = {
        {"run", "--prometheus", "h:9090/?token=SECRET7", NULL},
        {"run", "--prometheus", "http://h:9090/api?token=SECRET7", NULL},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(secret); i++) {
        int status = -1;
        char *out = NULL, *err = NULL;
        assert_int_equal(harness_run(secret[i], 30, &status, &out, &err), 0);
        assert_int_equal(status, 2);
        assert_non_null(strstr(err, "--prometheus: "));
        if (strstr(err, "SECRET7") || strstr(out, "SECRET7"))
            fail_msg("the secret of %s reached the output:\n%s%s", secret[i][2], out, err);
        free(out);
        free(err);
    }
}

/* Prometheus unreachable: warnings and counted gaps, the run itself fine. */
static void test_prometheus_unreachable_is_gaps(void **state)
{
    (void)state;
    harness_cur_sim_start(NULL);
    char prom[64];
    snprintf(prom, sizeof prom, "http://127.0.0.1:%d", harness_free_port());
    const char *args[] = {"--rate", "10",           "--requests", "5", "--metrics-interval",
                          "200ms",  "--prometheus", prom,         NULL};
    char *err = NULL;
    char *dir = harness_run_client(NULL, args, HARNESS_RC_OK_OR_INVALID, &err);
    assert_non_null(strstr(err, "warning: querying Prometheus at"));
    json_t *s = harness_summary_load(dir);
    assert_true(harness_num(s, "server.failed") >= 2);
    ASSERT_NEAR(harness_num(s, "requests.ok"), 5, 0);
    json_decref(s);
    free(err);
    harness_results_free(dir);
}

/* --expose on a port another socket holds: one line naming --expose and
 * the address, exit 3, and no --out made (it used to be left with an
 * empty requests.jsonl and a run.json without its outcome). */
static void test_prometheus_expose_port_in_use(void **state)
{
    (void)state;
    char url[200], expose[64], out[600], want[160];
    harness_sim_v1_start(url, sizeof url, NULL);
    harness_tmp_path(out, sizeof out, "run");
    int port;
    int held = harness_bind_local(1, &port);
    snprintf(expose, sizeof expose, "127.0.0.1:%d", port);
    const char *args[] = {"run",      "--url", url,     "--rate", "5",       "--requests", "2",
                          "--expose", expose,  "--out", out,      "--quiet", NULL};
    char *err = NULL;
    char *sout = harness_run_expect(args, 30, 3, &err);
    snprintf(want, sizeof want, "llmload: --expose: bind %s: Address already in use\n", expose);
    assert_string_equal(err, want);
    assert_string_equal(sout, "");
    if (access(out, F_OK) == 0 || errno != ENOENT)
        fail_msg("--out %s was made for a run that could not listen", out);
    free(sout);
    free(err);
    close(held);
}

/* --expose 127.0.0.1:0: the port the OS picked is said on stderr (with
 * --quiet too) and in run.json's expose_addr, and a scrape on it answers.
 * The run has a 3 s warm-up: a page of its first second counts the
 * warm-up's requests (every exposed counter does, docs/server-metrics.md). */
static void test_prometheus_expose_port_zero(void **state)
{
    (void)state;
    char url[200], out[600], outp[700], errp[700];
    harness_sim_v1_start(url, sizeof url, NULL);
    harness_tmp_path(out, sizeof out, "run");
    harness_tmp_path(outp, sizeof outp, "stdout");
    harness_tmp_path(errp, sizeof errp, "stderr");
    const char *args[] = {"run",         "--url",    url,  "--rate",     "10", "--arrival",
                          "constant",    "--warmup", "3s", "--duration", "4s", "--expose",
                          "127.0.0.1:0", "--out",    out,  "--quiet",    NULL};
    expose_client = harness_spawn(args, outp, errp, -1, NULL, NULL);
    int port = harness_expose_announced_port(errp);
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    char *page = NULL;
    double sched = 0;
    for (int i = 0; i < 100 && sched == 0; i++) {
        size_t len = 0;
        free(page);
        page = NULL;
        if (harness_http(port, req, sizeof req - 1, &page, &len, 2000) != 0)
            fail_msg("no answer on the announced port %d", port);
        if (!strstr(page, "200 OK"))
            fail_msg("the announced port %d answered:\n%s", port, page);
        sched = harness_page_value(page, "llmload_requests_scheduled_total");
        if (sched == 0)
            harness_sleep_ms(50);
    }
    /* The first page that counts a request: the live view is updated
     * every second, so it comes well within the warm-up. */
    assert_true(sched >= 1);
    ASSERT_IN_RANGE(harness_page_value(page, "llmload_run_elapsed_seconds"), 0, 2.9);
    free(page);
    int rc = harness_reap(expose_client, 60000);
    expose_client = 0;
    if (rc != 0 && rc != 1)
        fail_msg("llmload run exited %d", rc);
    json_t *run = harness_json_load(out, "run.json");
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", port);
    assert_string_equal(harness_sval(run, "expose_addr"), want);
    json_decref(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_prometheus_two_replicas, teardown),
        cmocka_unit_test(test_prometheus_bad_flags),
        cmocka_unit_test_teardown(test_prometheus_unreachable_is_gaps, harness_sim_teardown),
        cmocka_unit_test_teardown(test_prometheus_expose_port_in_use, harness_sim_tmp_teardown),
        cmocka_unit_test_teardown(test_prometheus_expose_port_zero, expose_client_teardown),
    };
    return harness_run_tests(tests, sizeof tests / sizeof tests[0]);
}
