/* Integration tests of TLS outside the load's own requests: the metrics
 * scrapers reach an https server with the run's --cacert, and the target's
 * credentials reach its own /metrics only; what the /models probe says when
 * TLS fails (a server that does not speak it, a certificate for another
 * host); a --cacert file that is not there, and LLMLOAD_HTTP_CLIENT=native
 * with an https URL, refused before anything is sent.
 *
 * The TLS servers are `openssl s_server` with a certificate made at test
 * time (skipped without the openssl CLI); the plain one is this file's
 * own, forked, on 127.0.0.1. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

static pid_t cur_tls; /* openssl s_server, or 0 */
static pid_t cur_srv; /* the plain server, or 0 */

static int teardown(void **state)
{
    (void)state;
    harness_cleanup((pid_t *const[]){&cur_tls, &cur_srv, NULL});
    return 0;
}

/* server_metrics.jsonl of dir: its lines, and how many are ok, of source
 * "gpu" when gpu, else of the server's. */
static void metrics_lines(const char *dir, int gpu, size_t *lines, size_t *ok)
{
    json_t *all = harness_jsonl_in(dir, "server_metrics.jsonl");
    *lines = *ok = 0;
    size_t i;
    json_t *j;
    json_array_foreach(all, i, j)
    {
        const char *src = json_string_value(json_object_get(j, "source"));
        if ((src && strcmp(src, "gpu") == 0) != (gpu != 0))
            continue;
        (*lines)++;
        *ok += json_is_true(json_object_get(j, "ok"));
    }
    json_decref(all);
}

/* ---- the scrapers over TLS ------------------------------------------------ */

/* A run at an https server with its own CA (--cacert) scrapes the target's
 * /metrics (the default URL) and a --gpu-metrics URL on it with that CA.
 * The parent set neither scraper's CA: the default URL's probe failed
 * ("SSL certificate problem: self-signed certificate"), the note said
 * "pass --metrics-url to set one", and the GPU lines were all "ok": false. */
static void test_metrics_over_tls_cacert(void **state)
{
    (void)state;
    harness_tmp_begin();
    char www[600], path[700], url[64], cert[600], gpu[96], out[600];
    harness_tmp_path(www, sizeof www, "www");
    if (mkdir(www, 0755) != 0)
        fail_msg("mkdir %s: %s", www, strerror(errno));
    snprintf(path, sizeof path, "%s/metrics", www);
    harness_write_file(path, "vllm:num_requests_running{model_name=\"m\"} 0\n"
                             "vllm:num_requests_waiting{model_name=\"m\"} 0\n");
    snprintf(path, sizeof path, "%s/dcgm", www);
    harness_write_file(path, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 100\n");
    const char *why;
    if (harness_tls_files_start("127.0.0.1", "IP:127.0.0.1", www, url, sizeof url, cert,
                                sizeof cert, &cur_tls, &why) != 0) {
        print_message("%s: TLS case skipped\n", why);
        skip();
    }
    snprintf(gpu, sizeof gpu, "%.*s/dcgm", (int)(strlen(url) - 3), url);
    harness_tmp_path(out, sizeof out, "r");
    /* s_server -WWW answers no POST: each request ends at its first-token
     * timeout, and no request ok is exit 6. */
    const char *args[] = {"run",
                          "--url",
                          url,
                          "--model",
                          "m",
                          "--cacert",
                          cert,
                          "--requests",
                          "2",
                          "--rate",
                          "5",
                          "--timeout-first-token",
                          "300ms",
                          "--out",
                          out,
                          "--quiet",
                          "--gpu-metrics",
                          gpu,
                          NULL};
    char *err = NULL;
    free(harness_run_expect(args, 60, 6, &err));
    size_t lines, ok;
    metrics_lines(out, 0, &lines, &ok);
    print_message("server scrapes: %zu, ok %zu\n", lines, ok);
    if (ok < 1)
        fail_msg("with --cacert the default /metrics should scrape ok; stderr:\n%s", err);
    metrics_lines(out, 1, &lines, &ok);
    print_message("GPU scrapes: %zu, ok %zu\n", lines, ok);
    if (ok < 1)
        fail_msg("with --cacert --gpu-metrics should scrape ok; stderr:\n%s", err);
    const char *lacks[] = {"certificate", "pass --metrics-url", NULL};
    harness_text_check("stderr", err, NULL, lacks);
    free(err);
}

/* ---- a plain server ------------------------------------------------------ */

/* The plain server's one job per connection: a TLS handshake (or any
 * bytes that are not HTTP) gets a 400, as a plain server answers an
 * https client; GET /metrics a page and GET /v1/models a list of one
 * model ("auth"), each a 401 without the header "X-Test-Auth: yes";
 * anything else a 404. Then it closes. */
static void *plain_main(void *arg)
{
    int fd = harness_fd_take(arg);
    char buf[8192];
    size_t n = 0;
    while (n + 1 < sizeof buf) {
        ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
        if (buf[0] < 'A' || buf[0] > 'Z' || strstr(buf, "\r\n\r\n"))
            break;
    }
    buf[n] = '\0';
    const char *resp;
    if (n == 0 || buf[0] < 'A' || buf[0] > 'Z')
        resp = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    else if (strncmp(buf, "GET /metrics ", 13) == 0 && strcasestr(buf, "\r\nX-Test-Auth: yes\r\n"))
        resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 44\r\n"
               "Connection: close\r\n\r\nvllm:num_requests_running{model_name=\"m\"} 0\n";
    else if (strncmp(buf, "GET /v1/models ", 15) == 0 &&
             strcasestr(buf, "\r\nX-Test-Auth: yes\r\n"))
        resp = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 24\r\n"
               "Connection: close\r\n\r\n{\"data\":[{\"id\":\"auth\"}]}";
    else if (strncmp(buf, "GET /metrics ", 13) == 0 || strncmp(buf, "GET /v1/models ", 15) == 0)
        resp = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    else
        resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    harness_send_all(fd, resp, strlen(resp), NULL);
    close(fd);
    return NULL;
}

/* Start the plain server; its port. */
static int plain_start(void)
{
    int port;
    int lfd = harness_bind_local(64, &port);
    cur_srv = harness_serve_fork(lfd, 60, plain_main, harness_fd_arg, NULL);
    return port;
}

/* The run's -H lines reach its target's own /metrics (the default URL,
 * or a --metrics-url of the same scheme, host and port), and no other
 * host's: "localhost" is another host name, though the same server. The
 * parent sent no header to any metrics URL. */
static void test_metrics_headers_same_origin(void **state)
{
    (void)state;
    harness_tmp_begin();
    int port = plain_start();
    char url[64], other[80], out[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    snprintf(other, sizeof other, "http://localhost:%d/metrics", port);
    for (int k = 0; k < 2; k++) {
        harness_tmp_path(out, sizeof out, k ? "other" : "own");
        const char *args[] = {"run",
                              "--url",
                              url,
                              "--model",
                              "m",
                              "-H",
                              "X-Test-Auth: yes",
                              "--requests",
                              "2",
                              "--rate",
                              "5",
                              "--out",
                              out,
                              "--quiet",
                              k ? "--metrics-url" : NULL,
                              other,
                              NULL};
        free(harness_run_expect(args, 60, 6, NULL));
        size_t lines, ok;
        metrics_lines(out, 0, &lines, &ok);
        print_message("%s: %zu scrapes, %zu ok\n", k ? other : "the default /metrics", lines, ok);
        if (k == 0 && (lines == 0 || ok != lines))
            fail_msg("the target's own /metrics should get -H: %zu of %zu ok", ok, lines);
        if (k == 1 && (lines == 0 || ok != 0))
            fail_msg("another host's /metrics should not get -H: %zu of %zu ok", ok, lines);
    }
}

/* calibrate -H sends the header with its requests, as run's does: the
 * /models that wants it names the model, and the probes go on (to a 404:
 * this server answers no chat). The parent had no -H (exit 2). Without
 * it, the 401 names --api-key-env and -H, not --model. */
static void test_calibrate_header(void **state)
{
    (void)state;
    harness_tmp_begin();
    char url[64], cal[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", plain_start());
    harness_tmp_path(cal, sizeof cal, "cal.json");
    const char *args[] = {"calibrate", "--url", url, "--out", cal, "-H", "X-Test-Auth: yes", NULL};
    char *err = NULL;
    free(harness_run_expect(args, 30, 3, &err));
    print_message("with -H: %s", err);
    const char *has[] = {"calibrate: probe 1 (4 words): ", "HTTP 404", NULL};
    harness_text_check("stderr", err, has, NULL);
    free(err);
    const char *bare[] = {"calibrate", "--url", url, "--out", cal, NULL};
    free(harness_run_expect(bare, 30, 3, &err));
    print_message("without: %s", err);
    const char *has2[] = {"/models: HTTP 401", "-H", NULL}, *lacks2[] = {"--model", NULL};
    harness_text_check("stderr", err, has2, lacks2);
    free(err);
}

/* ---- the /models probe's hint when TLS fails ------------------------------ */

/* Run without --model at url (the probe decides); its stderr, exit 3. */
static char *probe_fails(const char *url, const char *cacert)
{
    char out[600];
    harness_tmp_path(out, sizeof out, "r");
    const char *args[] = {
        "run",  "--url", url, "--rate",  "20",           "--requests",
        "1",    "--out", out, "--quiet", "--no-metrics", cacert ? "--cacert" : NULL,
        cacert, NULL};
    char *err = NULL;
    free(harness_run_expect(args, 30, 3, &err));
    return err;
}

/* An https:// URL at a plain HTTP server: libcurl reads its 400 as a TLS
 * record ("wrong version number"), which is no certificate question. The
 * hint says to use http://; the parent asked whether the certificate was
 * one this machine trusts and named --cacert. run's own check before the
 * load says so first (runsetup.c); calibrate's /models probe says it in
 * its hint. */
static void test_probe_hint_not_tls(void **state)
{
    (void)state;
    harness_tmp_begin();
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/v1", plain_start());
    char *err = probe_fails(url, NULL);
    print_message("%s", err);
    /* run stops before its probe: the plain GET found an HTTP server */
    const char *has[] = {"answered in plain HTTP: use http://", NULL};
    const char *lacks[] = {"--cacert", "certificate", NULL};
    harness_text_check("stderr", err, has, lacks);
    free(err);
    /* calibrate has no such pre-check: its /models probe names the cause */
    const char *cal[] = {"calibrate", "--url", url, NULL};
    err = NULL;
    free(harness_run_expect(cal, 30, 3, &err));
    print_message("%s", err);
    const char *chas[] = {"cannot ask the target for its model: GET ", "http://", NULL};
    harness_text_check("stderr", err, chas, lacks);
    free(err);
}

/* A certificate for another host name, its CA given: the hint says the
 * certificate names another host, and does not offer the --cacert that
 * was passed (the parent's "--cacert FILE names its CA"). */
static void test_probe_hint_host_mismatch(void **state)
{
    (void)state;
    harness_tmp_begin();
    char url[64], cert[600];
    harness_tls_server_or_skip("other.example", "DNS:other.example", url, sizeof url, cert,
                               sizeof cert, &cur_tls);
    char *err = probe_fails(url, cert);
    print_message("%s", err);
    const char *has[] = {"cannot ask the target for its model: GET ", "another host", NULL};
    const char *lacks[] = {"--cacert FILE", NULL};
    harness_text_check("stderr", err, has, lacks);
    free(err);
}

/* ---- refused with the flags ------------------------------------------------ */

/* Whether path exists. */
static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* A --cacert file that is not there is refused with the flags by run,
 * sweep, replay and calibrate: exit 2, one line naming the flag, the path
 * and the reason, and no results directory. The parent sent the whole
 * load, every record a transport_error "error setting certificate file". */
static void test_cacert_missing_refused(void **state)
{
    (void)state;
    harness_tmp_begin();
    char ca[600], out[600], trace[700], want[800];
    harness_tmp_path(ca, sizeof ca, "nosuch.pem");
    harness_tmp_path(out, sizeof out, "r");
    snprintf(trace, sizeof trace, "%s/workload/trace.jsonl", getenv("LLMLOAD_DATA"));
    snprintf(want, sizeof want, "--cacert: %s: No such file or directory", ca);
    const char *url = "https://127.0.0.1:9/v1";
    const char *cmds[][16] = {
        {"run", "--url", url, "--model", "m", "--rate", "5", "--requests", "1", "--out", out,
         "--cacert", ca, NULL},
        {"sweep", "--url", url, "--model", "m", "--rates", "1,2", "--step-duration", "1s", "--out",
         out, "--cacert", ca, NULL},
        {"replay", trace, "--url", url, "--model", "m", "--out", out, "--cacert", ca, NULL},
        {"calibrate", "--url", url, "--model", "m", "--cacert", ca, NULL},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cmds); i++) {
        harness_expect_usage(cmds[i], want);
        if (exists(out))
            fail_msg("%s: a refused --cacert made a results directory %s", cmds[i][0], out);
    }
    /* A directory is no CA file either. */
    const char *dir[] = {"calibrate", "--url", url, "--cacert", harness_cur_tmp, NULL};
    harness_expect_usage(dir, "Is a directory");
}

/* LLMLOAD_HTTP_CLIENT=native with an https URL is refused as
 * --http-client native is, naming the variable: exit 2, no results
 * directory. The parent probed, made the results directory and failed
 * with exit 3, naming --http-client, which the user never passed. */
static void test_env_native_https_refused(void **state)
{
    (void)state;
    harness_tmp_begin();
    char out[600];
    harness_tmp_path(out, sizeof out, "r");
    const char *args[] = {"run",     "--url",      "https://127.0.0.1:9/v1",
                          "--model", "m",          "--rate",
                          "5",       "--requests", "1",
                          "--out",   out,          NULL};
    const char *was = getenv("LLMLOAD_HTTP_CLIENT");
    char *saved = was ? strdup(was) : NULL;
    setenv("LLMLOAD_HTTP_CLIENT", "native", 1);
    harness_expect_usage(args, "LLMLOAD_HTTP_CLIENT=native: plain http:// only");
    if (saved)
        setenv("LLMLOAD_HTTP_CLIENT", saved, 1);
    else
        unsetenv("LLMLOAD_HTTP_CLIENT");
    free(saved);
    if (exists(out))
        fail_msg("a refused client made a results directory %s", out);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_metrics_over_tls_cacert, teardown),
             cmocka_unit_test_teardown(test_metrics_headers_same_origin, teardown),
             cmocka_unit_test_teardown(test_calibrate_header, teardown),
             cmocka_unit_test_teardown(test_probe_hint_not_tls, teardown),
             cmocka_unit_test_teardown(test_probe_hint_host_mismatch, teardown),
             cmocka_unit_test_teardown(test_cacert_missing_refused, teardown),
             cmocka_unit_test_teardown(test_env_native_https_refused, teardown))
