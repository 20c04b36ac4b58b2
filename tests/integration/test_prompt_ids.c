/* Integration tests of --prompt-ids: prompts sent to /v1/completions as
 * token IDs.
 *
 * - The sim takes "prompt": [ids] and [[ids]]: its usage counts one token
 *   per ID and its prefix cache hits a shared prefix of IDs exactly as it
 *   does a text one; bad ID arrays get a 400 naming the field.
 * - The client sends the IDs chatbody_prompt_ids builds for each request
 *   (checked byte for byte against a capturing server in this file).
 * - A run against the sim: the server's prompt count is the requested one
 *   for every request, and the cached-token ratio of shared prefixes is
 *   the one test_workload.c asserts for text prompts.
 * - Flags that cannot go with token IDs exit 2 with one line. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "workload/chatbody.h"
#include "harness.h"
#include "workload/tokenizer.h"
#include "test.h"
#include "workload/workload.h"

#include "util/util.h"

#define IO_TIMEOUT_MS 5000

static const char *const no_metrics[] = {"--no-metrics", NULL};

/* ---- raw requests to the sim ---- */

/* POST body to /v1/completions with Connection: close; returns the status
 * and, in *body_out (caller frees), the response body. */
static int post_completions(int port, const char *body, char **body_out)
{
    size_t blen = strlen(body);
    size_t n = blen + 256;
    char *req = malloc(n);
    assert_non_null(req);
    snprintf(req, n,
             "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nConnection: close\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             blen, body);
    char *resp = NULL;
    size_t rlen = 0;
    assert_int_equal(harness_http(port, req, strlen(req), &resp, &rlen, IO_TIMEOUT_MS), 0);
    free(req);
    assert_true(rlen > 12);
    assert_int_equal(strncmp(resp, "HTTP/1.1 ", 9), 0);
    int status = (int)strtol(resp + 9, NULL, 10);
    const char *b = strstr(resp, "\r\n\r\n");
    assert_non_null(b);
    *body_out = strdup(b + 4);
    assert_non_null(*body_out);
    free(resp);
    return status;
}

/* A non-stream completions body whose prompt is spec's IDs (seed 1),
 * wrapped in one more array when nested. Caller frees. */
static char *ids_body(const struct req_spec *spec, int nested)
{
    size_t n = chatbody_prompt_ids(1, NULL, spec, NULL, 0);
    size_t cap = n + 128;
    char *b = malloc(cap);
    assert_non_null(b);
    int at = snprintf(b, cap, "{\"model\":\"m\",\"prompt\":%s", nested ? "[[" : "[");
    assert_int_equal(chatbody_prompt_ids(1, NULL, spec, b + at, n), n);
    snprintf(b + at + n, cap - (size_t)at - n, "%s,\"max_tokens\":2,\"ignore_eos\":true}",
             nested ? "]]" : "]");
    return b;
}

/* The usage of a 200 non-stream answer: prompt and cached tokens. */
static void usage_of(const char *body, int64_t *prompt, int64_t *cached)
{
    json_error_t je;
    json_t *j = json_loads(body, 0, &je);
    if (!j)
        fail_msg("not JSON: %s: %s", je.text, body);
    json_t *u = json_object_get(j, "usage");
    *prompt = harness_ival(u, "prompt_tokens");
    *cached = harness_ival(json_object_get(u, "prompt_tokens_details"), "cached_tokens");
    json_decref(j);
}

static void spec_at(uint64_t index, uint32_t prompt_tokens, int64_t group,
                    uint32_t prefix_tokens, struct req_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->index = index;
    spec->prompt_tokens = prompt_tokens;
    spec->max_tokens = 2;
    spec->prefix_id = group;
    spec->prefix_tokens = group >= 0 ? prefix_tokens : 0;
    spec->class_idx = -1;
    spec->api = -1;
    spec->session = -1;
    spec->turn = -1;
    spec->dataset_entry = -1;
}

/* Usage counts one token per ID, in both array forms; a second request of
 * one prefix group is served its 128 shared IDs (8 blocks of 16) from the
 * cache, a request without a prefix nothing. */
static void test_sim_accepts_ids(void **state)
{
    harness_instant_sim_start();
    int port = harness_cur_sim.port;
    struct req_spec spec;
    int64_t prompt, cached;
    char *body, *resp;

    static const struct {
        uint64_t index;
        int64_t group;
        int nested;
        int64_t cached;
    } steps[] = {
        {10, 3, 0, 0},   /* the group's first request computes the prefix */
        {11, 3, 1, 128}, /* the next one, nested form, hits all of it */
        {12, 3, 0, 128},
        {13, -1, 0, 0},  /* no prefix: the nonce comes first */
        {14, 4, 1, 0},   /* another group: its first request misses */
        {15, 4, 0, 128},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        spec_at(steps[i].index, 256, steps[i].group, 128, &spec);
        body = ids_body(&spec, steps[i].nested);
        int status = post_completions(port, body, &resp);
        if (status != 200)
            fail_msg("step %zu: HTTP %d: %s", i, status, resp);
        usage_of(resp, &prompt, &cached);
        assert_int_equal(prompt, 256);
        if (cached != steps[i].cached)
            fail_msg("step %zu: cached_tokens %lld, expected %lld", i, (long long)cached,
                     (long long)steps[i].cached);
        free(body);
        free(resp);
    }

    /* One ID is one token; so are the lowest and highest IDs. */
    assert_int_equal(post_completions(port, "{\"prompt\":[0],\"max_tokens\":1}", &resp), 200);
    usage_of(resp, &prompt, &cached);
    assert_int_equal(prompt, 1);
    free(resp);
    assert_int_equal(post_completions(port, "{\"prompt\":[[262143, 5, 0]],\"max_tokens\":1}",
                                      &resp),
                     200);
    usage_of(resp, &prompt, &cached);
    assert_int_equal(prompt, 3);
    free(resp);
}

/* Each bad ID array gets a 400 whose message names the field (and the
 * element) and says what was expected. */
static void test_sim_rejects_bad_ids(void **state)
{
    harness_instant_sim_start();
    static const struct {
        const char *prompt;
        const char *code;
        const char *msg;
    } cases[] = {
        {"[]", "invalid_field", "\\\"prompt\\\" must not be an empty array"},
        {"[[]]", "invalid_field", "\\\"prompt\\\"[0] must not be an empty array"},
        {"[5, \"x\"]", "invalid_field",
         "\\\"prompt\\\"[1] must be an integer token ID (0 to 262143), got a string"},
        {"[5, 1.5]", "invalid_field", "\\\"prompt\\\"[1] must be an integer token ID"},
        {"[5, 6, -2]", "invalid_field",
         "\\\"prompt\\\"[2]: token ID -2 is negative; IDs are 0 to 262143"},
        {"[262144]", "invalid_field",
         "\\\"prompt\\\"[0]: token ID 262144 is above the vocabulary; IDs are 0 to 262143"},
        {"[[1, 2], [3]]", "unsupported", "\\\"prompt\\\": a batch of several prompts"},
        /* Past int64: out of range, its text cut at 40 bytes and marked. */
        {"[123456789012345678901234567890123456789012345]", "invalid_field",
         "\\\"prompt\\\"[0]: token ID 1234567890123456789012345678901234567890... is above "
         "the vocabulary"},
        {"[-99999999999999999999]", "invalid_field",
         "\\\"prompt\\\"[0]: token ID -99999999999999999999 is negative"},
        {"[[1, null]]", "invalid_field", "\\\"prompt\\\"[0][1] must be an integer token ID"},
        {"[5, [6]]", "invalid_field", "\\\"prompt\\\"[1] must be an integer token ID"},
        {"7", "invalid_field", "\\\"prompt\\\" must be a string, an array of token IDs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[200], *resp;
        snprintf(body, sizeof body, "{\"prompt\":%s,\"max_tokens\":1}", cases[i].prompt);
        int status = post_completions(harness_cur_sim.port, body, &resp);
        if (status != 400 || !strstr(resp, cases[i].msg) || !strstr(resp, cases[i].code))
            fail_msg("prompt %s: HTTP %d %s; expected 400 %s with: %s", cases[i].prompt,
                     status, resp, cases[i].code, cases[i].msg);
        assert_non_null(strstr(resp, "\"type\":\"invalid_request_error\""));
        free(resp);
    }
    /* Chat still wants messages, IDs or not. */
    const char *chat = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                       "Content-Length: 14\r\n\r\n{\"prompt\":[1]}";
    char *resp = NULL;
    size_t rlen = 0;
    assert_int_equal(harness_http(harness_cur_sim.port, chat, strlen(chat), &resp, &rlen,
                                  IO_TIMEOUT_MS),
                     0);
    assert_int_equal(strncmp(resp, "HTTP/1.1 400", 12), 0);
    assert_non_null(strstr(resp, "missing required field \\\"messages\\\""));
    free(resp);
}

/* The meta.n_vocab of the sim's GET /v1/models. */
static int64_t models_n_vocab(int port)
{
    const char *req = "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    char *resp = NULL;
    size_t rlen = 0;
    assert_int_equal(harness_http(port, req, strlen(req), &resp, &rlen, IO_TIMEOUT_MS), 0);
    const char *b = strstr(resp, "\r\n\r\n");
    assert_non_null(b);
    json_t *j = json_loads(b + 4, 0, NULL);
    assert_non_null(j);
    json_t *m0 = json_array_get(json_object_get(j, "data"), 0);
    int64_t n = harness_ival(json_object_get(m0, "meta"), "n_vocab");
    json_decref(j);
    free(resp);
    return n;
}

/* --vocab 512: /v1/models says so where llama.cpp does; IDs 0 to 511
 * pass, in both array forms; one of 512 or more gets llama.cpp's 400,
 * naming the first such ID and where it is. Without --vocab: 262144. */
static void test_sim_vocab(void **state)
{
    const char *dflt[] = {"--profile", "instant", NULL};
    harness_cur_sim_start(dflt);
    assert_int_equal(models_n_vocab(harness_cur_sim.port), 262144);
    harness_sim_stop(&harness_cur_sim);

    const char *sargs[] = {"--profile", "instant", "--vocab", "512", NULL};
    harness_cur_sim_start(sargs);
    int port = harness_cur_sim.port;
    assert_int_equal(models_n_vocab(port), 512);
    char *resp;
    int64_t prompt, cached;
    assert_int_equal(post_completions(port, "{\"prompt\":[0,511,3],\"max_tokens\":1}", &resp), 200);
    usage_of(resp, &prompt, &cached);
    assert_int_equal(prompt, 3);
    free(resp);
    static const struct {
        const char *prompt, *msg;
    } cases[] = {
        {"[5,512]", "Prompt contains invalid tokens: token ID 512 (at 1) is outside the "
                    "vocabulary of 512 (IDs 0 to 511)"},
        {"[[1000,2,3000]]", "token ID 1000 (at 0) is outside the vocabulary of 512"},
        {"[262143]", "token ID 262143 (at 0)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[200];
        snprintf(body, sizeof body, "{\"prompt\":%s,\"max_tokens\":1}", cases[i].prompt);
        int status = post_completions(port, body, &resp);
        if (status != 400 || !strstr(resp, cases[i].msg) ||
            !strstr(resp, "\"code\":\"invalid_tokens\""))
            fail_msg("prompt %s: HTTP %d %s; expected 400 invalid_tokens with: %s", cases[i].prompt,
                     status, resp, cases[i].msg);
        free(resp);
    }
    /* Text prompts are not IDs: unaffected. */
    assert_int_equal(post_completions(port, "{\"prompt\":\"zz top\",\"max_tokens\":1}", &resp),
                     200);
    free(resp);
}

/* ---- what the client sends: a capturing server ---- */

#define CAPTURE_MAX 16

/* A one-thread HTTP/1.1 server on 127.0.0.1: answers GET .../models with
 * one model and every POST with a fixed non-stream completion, closing
 * each connection, and keeps the POST bodies. */
struct capture {
    int lfd;
    int port;
    atomic_int stop;
    pthread_t thread;
    char *bodies[CAPTURE_MAX];
    size_t n;                  /* bodies kept (the thread's until joined) */
};

/* Read one request from fd: returns its bytes (caller frees) with *head_len
 * the head's length (through the blank line) and *body_len the body's, or
 * NULL on a timeout or a closed peer. */
static char *read_request(int fd, size_t *head_len, size_t *body_len)
{
    size_t cap = 1 << 16, n = 0, want = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return NULL;
    for (;;) {
        buf[n] = '\0';
        char *he = strstr(buf, "\r\n\r\n");
        if (he && !want) {
            *head_len = (size_t)(he - buf) + 4;
            size_t cl = 0;
            for (char *h = buf; h && h < he; h = strstr(h, "\r\n"), h = h ? h + 2 : NULL) {
                if (strncasecmp(h, "Content-Length:", 15) == 0)
                    cl = (size_t)strtoul(h + 15, NULL, 10);
            }
            want = *head_len + cl;
            *body_len = cl;
            if (want > cap) {
                cap = want;
                char *nb = realloc(buf, cap + 1);
                if (!nb) {
                    free(buf);
                    return NULL;
                }
                buf = nb;
            }
        }
        if (want && n >= want)
            return buf;
        if (n == cap) {
            free(buf);
            return NULL; /* a head over 64 KiB */
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, IO_TIMEOUT_MS) <= 0) {
            free(buf);
            return NULL;
        }
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r <= 0) {
            free(buf);
            return NULL;
        }
        n += (size_t)r;
    }
}

static void *capture_main(void *ud)
{
    struct capture *c = ud;
    static const char models[] = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}";
    static const char done[] =
        "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":0,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"text\":\" ab\",\"logprobs\":null,\"finish_reason\":\"length\"}],"
        "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":1,\"total_tokens\":41}}";
    while (!atomic_load(&c->stop)) {
        struct pollfd p = {.fd = c->lfd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(c->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        size_t head_len = 0, body_len = 0;
        char *req = read_request(fd, &head_len, &body_len);
        if (req) {
            int post = strncmp(req, "POST ", 5) == 0;
            const char *body = post ? done : models;
            char head[256];
            int hn = snprintf(head, sizeof head,
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                              strlen(body));
            if (post && c->n < CAPTURE_MAX) {
                char *keep = malloc(body_len + 1);
                if (keep) {
                    memcpy(keep, req + head_len, body_len);
                    keep[body_len] = '\0';
                    c->bodies[c->n++] = keep;
                }
            }
            (void)harness_send_all(fd, head, (size_t)hn, NULL);
            (void)harness_send_all(fd, body, strlen(body), NULL);
            free(req);
        }
        close(fd);
    }
    return NULL;
}

static void capture_start(struct capture *c)
{
    memset(c, 0, sizeof *c);
    c->lfd = harness_bind_local(64, &c->port);
    atomic_init(&c->stop, 0);
    assert_int_equal(pthread_create(&c->thread, NULL, capture_main, c), 0);
}

static void capture_stop(struct capture *c)
{
    atomic_store(&c->stop, 1);
    pthread_join(c->thread, NULL);
    close(c->lfd);
    c->lfd = -1;
}

static void capture_free(struct capture *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->bodies[i]);
    c->n = 0;
}

/* The running test's capture, which capture_teardown stops. */
static struct capture cur_cap;

/* cmocka teardown: stop cur_cap when it runs (a test that failed half-way
 * left it so), free its bodies, and remove harness_cur_tmp. */
static int capture_teardown(void **state)
{
    if (cur_cap.lfd > 0)
        capture_stop(&cur_cap);
    capture_free(&cur_cap);
    harness_tmp_end();
    return 0;
}

/* Three requests of 40 tokens, all in one prefix group of 16, under
 * --seed 9 --prompt-salt 4: each body's "prompt" is exactly the ID array
 * chatbody_prompt_ids gives its request under that seed and salt
 * (workload_content_seed), so the same seed and salt send the same bytes
 * again, and the first 16 IDs of every body are the same. */
static void test_client_sends_ids(void **state)
{
    struct capture *cap = &cur_cap;
    capture_start(cap);
    harness_tmp_begin();
    char out[600], url[200];
    harness_tmp_path(out, sizeof out, "r");
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", cap->port);
    const char *args[] = {"run",
                          "--url",
                          url,
                          "--out",
                          out,
                          "--quiet",
                          "--model",
                          "m",
                          "--api",
                          "openai-completions",
                          "--prompt-ids",
                          "--no-stream",
                          "--rate",
                          "20",
                          "--requests",
                          "3",
                          "--prompt-tokens",
                          "40",
                          "--output-tokens",
                          "1",
                          "--prefix-fraction",
                          "1",
                          "--prefix-tokens",
                          "16",
                          "--seed",
                          "9",
                          "--prompt-salt",
                          "4",
                          "--threads",
                          "1",
                          NULL};
    free(harness_run_expect(args, 30, HARNESS_RC_OK_OR_INVALID, NULL));
    capture_stop(cap);

    struct workload w;
    harness_workload(&w, 9, "40", "1", 0);
    w.prefix = (struct wl_prefix){.fraction = 1, .groups = 1, .tokens = 16};
    json_t *expect[3];
    for (uint64_t i = 0; i < 3; i++) {
        struct req_spec spec;
        workload_spec(&w, i, &spec);
        char buf[512];
        size_t n =
            chatbody_prompt_ids(workload_content_seed(9, 4), NULL, &spec, buf + 1, sizeof buf - 2);
        assert_true(n < sizeof buf - 2);
        buf[0] = '[';
        buf[n + 1] = ']';
        expect[i] = json_loadb(buf, n + 2, 0, NULL);
        assert_non_null(expect[i]);
        assert_int_equal(json_array_size(expect[i]), 40);
    }
    assert_int_equal(cap->n, 3);
    int seen[3] = {0, 0, 0};
    json_t *first = NULL;
    for (size_t k = 0; k < cap->n; k++) {
        json_error_t je;
        json_t *b = json_loads(cap->bodies[k], 0, &je);
        if (!b)
            fail_msg("body %zu is not JSON: %s: %s", k, je.text, cap->bodies[k]);
        json_t *p = json_object_get(b, "prompt");
        if (!json_is_array(p))
            fail_msg("body %zu: \"prompt\" is not an array of IDs: %s", k, cap->bodies[k]);
        int matched = 0;
        for (size_t i = 0; i < 3; i++) {
            if (json_equal(p, expect[i])) {
                seen[i]++;
                matched = 1;
            }
        }
        if (!matched)
            fail_msg("body %zu: prompt matches no request's IDs: %s", k, cap->bodies[k]);
        if (!first)
            first = json_incref(p);
        for (size_t i = 0; i < 16; i++)
            assert_int_equal(json_integer_value(json_array_get(p, i)),
                             json_integer_value(json_array_get(first, i)));
        json_decref(b);
    }
    assert_int_equal(seen[0] + seen[1] + seen[2], 3);
    assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    json_decref(first);
    for (size_t i = 0; i < 3; i++)
        json_decref(expect[i]);
    capture_free(cap);
}

/* ---- a run against the sim ---- */

/* As test_workload's prefix test, with IDs: half the requests begin with
 * one of two shared 128-token prefixes; the sim counts 256 prompt tokens
 * for every request, serves a shared request 128 cached tokens once its
 * group's prefix is computed and an unshared one none; --all-unique hits
 * nothing. */
static void test_run_prefix_ids(void **state)
{
    const char *args[] = {"--api", "openai-completions", "--prompt-ids", HARNESS_PREFIX_RUN,
                          "--duration", "3s", NULL};
    char *dir = harness_run_on_sim(NULL, no_metrics, args);

    json_t *run = harness_json_load(dir, "run.json");
    assert_true(json_is_true(json_object_get(json_object_get(run, "config"), "prompt_ids")));
    json_decref(run);
    harness_check_prefix_hits(dir);
    harness_results_free(dir);

    const char *args2[] = {"--api", "openai-completions", "--prompt-ids", HARNESS_PREFIX_RUN,
                           "--duration", "2s", "--all-unique", NULL};
    dir = harness_run_on_sim(NULL, no_metrics, args2);
    harness_check_no_prefix_hits(dir);
    harness_results_free(dir);
}

/* ---- the server's vocabulary ---- */

/* A sim of 512 tokens (llama.cpp's stories260K): the default IDs
 * (1000-17383) would all be refused, so the run is refused up front, exit
 * 2 and one line naming the vocabulary's size and --prompt-id-range, and
 * the sim sees no completion request (with --model too: the question is
 * then waited for); a range that does not fit either is refused, naming
 * --prompt-id-range. --prompt-id-range 256,511 fits: every request is ok,
 * its prompt counted as asked, its IDs (the sim refuses any other) all
 * below 512; run.json keeps the range. */
static void test_vocab_refused_up_front(void **state)
{
    char logp[600];
    const char *sargs[] = {"--profile", "instant", "--vocab", "512", NULL};
    harness_logged_sim_start(logp, sizeof logp, sargs);
    static const char *const refused[][5] = {
        {NULL},
        {"--model", "whatever", NULL},
        {"--prompt-id-range", "300,600", NULL},
    };
    static const char *const why[] = {
        ("--prompt-ids: the model's vocabulary has 512 tokens (IDs 0 to 511, /models "
         "meta.n_vocab) but the prompt IDs are drawn from [1000, 17383]; pass --prompt-id-range "
         "A,B with B below 512 (e.g. --prompt-id-range 256,511)"),
        "--prompt-ids: the model's vocabulary has 512 tokens",
        ("--prompt-id-range: the model's vocabulary has 512 tokens (IDs 0 to 511, /models "
         "meta.n_vocab) but the prompt IDs are drawn from [300, 600]"),
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(refused); i++) {
        const char *fixed[] = {
            "--api", "openai-completions", "--prompt-ids", "--rate",          "50", "--requests",
            "10",    "--prompt-tokens",    "32",           "--output-tokens", "2",  "--no-metrics",
            NULL};
        int status = -1;
        char *out = NULL, *err = NULL;
        char *dir = harness_run_against_sim("run", fixed, refused[i], 30, &status, &out, &err);
        if (status != 2 || !strstr(err, why[i]) || strchr(err, '\n') != strrchr(err, '\n'))
            fail_msg("case %zu: exit %d, stderr:\n%s\nexpected exit 2 and one line with: %s", i,
                     status, err, why[i]);
        free(out);
        free(err);
        harness_results_free(dir);
    }
    const char *fixed[] = {"--api",
                           "openai-completions",
                           "--prompt-ids",
                           "--rate",
                           "50",
                           "--requests",
                           "40",
                           "--prompt-tokens",
                           "uniform:16,64",
                           "--output-tokens",
                           "2",
                           "--no-metrics",
                           "--prompt-id-range",
                           "256,511",
                           "--prefix-fraction",
                           "0.5",
                           "--prefix-tokens",
                           "16",
                           NULL};
    char *dir;
    struct harness_recs *recs = harness_run_recs(NULL, fixed, 40, &dir);
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        if (strcmp(harness_sval(r, "kind"), "ok") != 0)
            fail_msg("record %zu: %s %s", i, harness_sval(r, "kind"), harness_sval(r, "detail"));
        assert_int_equal(harness_ival_req(r, "prompt_tokens_server"),
                         harness_ival_req(r, "prompt_tokens"));
    }
    harness_recs_free(recs);
    json_t *run = harness_json_load(dir, "run.json");
    json_t *range = json_object_get(json_object_get(run, "config"), "prompt_id_range");
    assert_int_equal(json_array_size(range), 2);
    assert_int_equal(json_integer_value(json_array_get(range, 0)), 256);
    assert_int_equal(json_integer_value(json_array_get(range, 1)), 511);
    json_decref(run);
    harness_results_free(dir);
    /* The refused runs sent nothing: the sim logged only the 40. */
    json_t *log = harness_jsonl_load(logp);
    assert_int_equal(json_array_size(log), 40);
    for (size_t i = 0; i < json_array_size(log); i++)
        assert_int_equal(harness_ival_req(json_array_get(log, i), "status"), 200);
    json_decref(log);
    harness_tmp_end();
}

/* ---- flags that cannot go with token IDs ---- */

static void test_cli_rejects(void **state)
{
    harness_tmp_begin();
    char wl_chat[600], wl_plain[600], data[600], calib[600], trace[600], out[600];
    harness_tmp_path(out, sizeof out, "r");
    harness_tmp_file(wl_chat, sizeof wl_chat, "chat.json",
                     "{\"version\": 1, \"classes\": ["
                     "{\"name\": \"short\", \"weight\": 1, \"prompt_tokens\": 32, "
                     "\"output_tokens\": 4, \"api\": \"completions\"},"
                     "{\"name\": \"talk\", \"weight\": 1, \"prompt_tokens\": 32, "
                     "\"output_tokens\": 4, \"api\": \"chat\"}]}\n");
    harness_tmp_file(wl_plain, sizeof wl_plain, "plain.json",
                     "{\"version\": 1, \"classes\": ["
                     "{\"name\": \"plain\", \"weight\": 1, \"prompt_tokens\": 32, "
                     "\"output_tokens\": 4}]}\n");
    harness_tmp_file(data, sizeof data, "data.jsonl",
                     "{\"prompt\": \"hello there\", \"output_tokens\": 4}\n");
    harness_tmp_file(calib, sizeof calib, "calib.json", "{\"slope\": 1.0, \"intercept\": 0.0}\n");
    harness_tmp_file(trace, sizeof trace, "trace.jsonl",
                     "{\"t\": 0, \"prompt_tokens\": 8, \"output_tokens\": 2}\n"
                     "{\"t\": 0.1, \"prompt\": \"some words\", \"output_tokens\": 2}\n");
    const char *url = "http://127.0.0.1:9/v1"; /* never reached */
#define RUN(...) {"run", "--url", url, "--out", out, "--quiet", "--rate", "1", "--requests", \
                  "1", "--prompt-ids", __VA_ARGS__, NULL}
    {
        const char *a[] = RUN("--prompt-tokens", "8");
        harness_expect_usage(a, "--prompt-ids: token-ID prompts go to /v1/completions; add --api "
                        "openai-completions");
    }
    {
        const char *a[] = RUN("--api", "openai-chat");
        harness_expect_usage(a, "--prompt-ids: token-ID prompts go to /v1/completions");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--workload", wl_chat);
        harness_expect_usage(a, "--prompt-ids: class \"talk\" of");
    }
    {
        const char *a[] = RUN("--workload", wl_plain);
        harness_expect_usage(a, "--prompt-ids: class \"plain\" of");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--dataset", data);
        harness_expect_usage(a, "--prompt-ids: --dataset prompts are text");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--calibration", calib);
        harness_expect_usage(a, "--prompt-ids: an ID prompt's length is exact");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--prompt-id-range", "9,x");
        harness_expect_usage(a, "--prompt-id-range: expected A,B, two whole numbers from 0 to "
                                "4294967295 (the IDs are drawn from [A, B]), got \"9,x\"");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--prompt-id-range", "511,3");
        harness_expect_usage(a, "--prompt-id-range: A must be below B");
    }
    {
        const char *a[] = RUN("--api", "openai-completions", "--prompt-id-range", "-3,511");
        harness_expect_usage(a, "--prompt-id-range: token IDs are 0 or more, got \"-3,511\"");
    }
#undef RUN
    {
        const char *a[] = {"run",
                           "--url",
                           url,
                           "--out",
                           out,
                           "--quiet",
                           "--rate",
                           "1",
                           "--requests",
                           "1",
                           "--prompt-id-range",
                           "3,511",
                           NULL};
        harness_expect_usage(a, "--prompt-id-range: goes with --prompt-ids");
    }
    {
        const char *a[] = {"run", "--url", url, "--out", out, "--quiet", "--sessions", "1",
                           "--requests", "1", "--api", "openai-completions", "--prompt-ids",
                           NULL};
        harness_expect_usage(a, "--sessions does not take token-ID prompts");
    }
    {
        const char *a[] = {"replay", trace, "--url", url, "--out", out, "--quiet", "--api",
                           "openai-completions", "--prompt-ids", NULL};
        harness_expect_usage(a, ":2: the line carries prompt text");
    }
    harness_tmp_end();
}

static int tmp_teardown(void **state)
{
    harness_tmp_end();
    return 0;
}

static int sim_tmp_teardown(void **state)
{
    harness_sim_teardown(state);
    return tmp_teardown(state);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_sim_accepts_ids, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sim_rejects_bad_ids, harness_sim_teardown),
             cmocka_unit_test_teardown(test_sim_vocab, harness_sim_teardown),
             cmocka_unit_test_teardown(test_cli_rejects, tmp_teardown),
             cmocka_unit_test_teardown(test_run_prefix_ids, harness_sim_teardown),
             cmocka_unit_test_teardown(test_vocab_refused_up_front, sim_tmp_teardown),
             cmocka_unit_test_teardown(test_client_sends_ids, capture_teardown))
