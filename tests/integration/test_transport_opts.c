/* test_transport_opts.c: the flags that shape what goes on the wire and
 * what the terminal shows, checked from the far side of the wire.
 *
 *   - credentials (--api-key-env, the OPENAI_API_KEY default, -H) and the
 *     model taken from GET /v1/models, as a server of this file's own
 *     records them, on both HTTP clients;
 *   - kept-alive connections: a closed loop of U users whose requests
 *     overlap carries them all on exactly U connections, on both clients;
 *   - --threads splits the open-loop schedule without changing it;
 *   - --insecure against a self-signed certificate for another host name
 *     (openssl s_server);
 *   - the progress lines on a pipe (one every 5 s, so that test runs 5.4 s)
 *     and on a terminal, and --quiet.
 *
 * The recording server is a forked child listening on 127.0.0.1 (port 0),
 * one thread per connection. It answers GET /v1/models with one model id,
 * every POST with a short, correct chat stream (chunked, kept alive), and
 * anything else with 404. Each request it reads (head and body, cut to a
 * few KiB) goes into a slot of a MAP_SHARED page with the index of the
 * connection it came on, so the test reads afterwards exactly what arrived.
 *
 * The client is forked here rather than through harness_run, so that the
 * API key lives in the client's environment only, and so that stderr can
 * be a pseudo-terminal. Every run is bounded (a few dozen requests, at most
 * 200 a second) and the file runs in about 15 s. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MAX_ARGS 64
#define CLIENT_TIMEOUT_S 20  /* a client still running past this is a hang */
#define SLOTS 128            /* requests the recording server keeps */
#define SLOT_HEAD_BYTES 3072 /* request line and headers kept per request */
#define SLOT_BODY_BYTES 4096 /* body bytes kept per request (16-token prompts fit) */
#define REQ_BUF_BYTES 65536  /* the largest request head + body the server reads */

#define MODEL_ID "zeta-7b-test"
/* Secrets that must reach the server and nothing else. */
#define KEY_MINE "sk-mine-7Qx2-transport-opts"
#define KEY_DEFAULT "sk-default-9Rw4-transport-opts"

/* ---- the recording server ------------------------------------------------ */

struct seen_req {
    _Atomic int ready;          /* 1 once the fields below are written */
    uint32_t conn;              /* the connection's accept index, from 1 */
    char head[SLOT_HEAD_BYTES]; /* request line and headers, NUL-terminated */
    char body[SLOT_BODY_BYTES]; /* the body, NUL-terminated (cut when longer) */
};

/* Shared between the test and the server child (MAP_SHARED). */
struct seen {
    _Atomic uint32_t accepts;  /* connections accepted */
    _Atomic uint32_t n;        /* requests read (slots claimed, may pass SLOTS) */
    struct seen_req req[SLOTS];
};

struct conn {
    int fd;
    uint32_t idx;
};

/* ---- per-test state, undone by the teardown ----------------------------- */

static pid_t cur_srv;        /* the recording server, or 0 */
static int cur_srv_port;
static struct seen *cur_seen;
static pid_t cur_client;     /* a client running, or 0 */
static pid_t cur_aux;        /* openssl s_server, or 0 */
/* How long the recording server started next waits before it answers a
 * POST (0: at once). */
static unsigned post_delay_ms;

static int teardown(void **state)
{
    harness_cleanup((pid_t *const[]){&cur_client, &cur_srv, &cur_aux, NULL});
    if (cur_seen) {
        munmap(cur_seen, sizeof *cur_seen);
        cur_seen = NULL;
    }
    return 0;
}

/* ---- server: writing ---------------------------------------------------- */

static int send_str(int fd, const char *s)
{
    return harness_send_all(fd, s, strlen(s), NULL);
}

#define EV_CONTENT                                                                     \
    "data: {\"id\":\"t\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0," \
    "\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}\n\n"
/* Three content events, the finish, the usage and [DONE]. */
#define STREAM_BODY                                                                         \
    EV_CONTENT EV_CONTENT EV_CONTENT                                                        \
    "data: {\"id\":\"t\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"     \
    "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"                                        \
    "data: {\"id\":\"t\",\"object\":\"chat.completion.chunk\",\"choices\":[],"                \
    "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n"       \
    "data: [DONE]\n\n"

/* Answer one POST: the stream as one chunk, then the last chunk. */
static int answer_post(int fd)
{
    static const char body[] = STREAM_BODY;
    char head[256];
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
             "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n",
             sizeof body - 1);
    if (send_str(fd, head) != 0 || harness_send_all(fd, body, sizeof body - 1, NULL) != 0)
        return -1;
    return send_str(fd, "\r\n0\r\n\r\n");
}

static int answer_models(int fd)
{
    static const char models[] = "{\"object\":\"list\",\"data\":[{\"id\":\"" MODEL_ID "\","
                                 "\"object\":\"model\",\"owned_by\":\"test\"}]}";
    char head[160];
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             sizeof models - 1);
    if (send_str(fd, head) != 0)
        return -1;
    return send_str(fd, models);
}

/* ---- server: reading and recording ---------------------------------------- */

/* Copy at most cap - 1 bytes of s[0, len) and a NUL into dst. */
static void copy_cut(char *dst, size_t cap, const char *s, size_t len)
{
    size_t k = len < cap - 1 ? len : cap - 1;
    memcpy(dst, s, k);
    dst[k] = '\0';
}

static void record_request(uint32_t conn, const char *buf, size_t head, size_t body)
{
    uint32_t i = atomic_fetch_add(&cur_seen->n, 1);
    if (i >= SLOTS)
        return; /* counted in n; the test fails on it */
    struct seen_req *s = &cur_seen->req[i];
    s->conn = conn;
    copy_cut(s->head, sizeof s->head, buf, head);
    copy_cut(s->body, sizeof s->body, buf + head, body);
    atomic_store_explicit(&s->ready, 1, memory_order_release);
}

static void *conn_main(void *arg)
{
    struct conn c = *(struct conn *)arg;
    free(arg);
    char *buf = malloc(REQ_BUF_BYTES);
    for (;;) {
        size_t body = 0, head = 0;
        int kept = 0;
        if (buf)
            head = harness_read_request(c.fd, buf, REQ_BUF_BYTES, &body, &kept);
        if (head == 0 || !kept) /* (a body too long to record: none this file sends) */
            break;
        record_request(c.idx, buf, head, body);
        int rc;
        if (strncmp(buf, "POST ", 5) == 0) {
            if (post_delay_ms)
                harness_sleep_ms(post_delay_ms);
            rc = answer_post(c.fd);
        }
        else if (strncmp(buf, "GET /v1/models ", 15) == 0)
            rc = answer_models(c.fd);
        else
            rc = send_str(c.fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        if (rc != 0)
            break;
    }
    close(c.fd);
    free(buf);
    return NULL;
}

/* One recording connection's thread argument (harness_serve_forever). */
static void *recorder_arg(int fd, void *ud)
{
    (void)ud;
    struct conn *c = malloc(sizeof *c);
    if (c)
        *c = (struct conn){.fd = fd, .idx = atomic_fetch_add(&cur_seen->accepts, 1) + 1};
    return c;
}

/* Start the recording server on a free port of 127.0.0.1, with nothing
 * recorded yet. It listens before this returns. url gets its base URL
 * (http://127.0.0.1:PORT/v1). */
static void recorder_start(char *url, size_t url_len)
{
    harness_kill_reap(&cur_srv);
    if (!cur_seen)
        cur_seen = harness_shared_map(sizeof *cur_seen);
    memset(cur_seen, 0, sizeof *cur_seen);
    int lfd = harness_bind_local(128, &cur_srv_port);
    snprintf(url, url_len, "http://127.0.0.1:%d/v1", cur_srv_port);
    cur_srv = harness_serve_fork(lfd, 60, conn_main, recorder_arg, NULL);
}

/* The requests recorded since recorder_start; fails the test when more
 * arrived than the slots hold or one was claimed but never written. */
static uint32_t seen_count(void)
{
    uint32_t n = atomic_load(&cur_seen->n);
    if (n > SLOTS)
        fail_msg("the server read %u requests, more than its %d slots", n, SLOTS);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(atomic_load_explicit(&cur_seen->req[i].ready, memory_order_acquire),
                         1);
    return n;
}

static int seen_is_post(const struct seen_req *s)
{
    return strncmp(s->head, "POST ", 5) == 0;
}

static int seen_is_models(const struct seen_req *s)
{
    return strncmp(s->head, "GET /v1/models ", 15) == 0;
}

/* One of the questions of run.json's contract, at the URL's root. */
static int seen_is_contract(const struct seen_req *s)
{
    static const char *const gets[] = {"GET /version ", "GET /props ", "GET /get_server_info ",
                                       "GET /info "};
    for (size_t i = 0; i < LL_ARRAY_LEN(gets); i++)
        if (strncmp(s->head, gets[i], strlen(gets[i])) == 0)
            return 1;
    return 0;
}

/* The values of every header called name in a recorded head, in order:
 * up to max of them into vals (each cut to 255 bytes), with the blanks
 * around the value trimmed. Returns how many there were. */
static int head_values(const char *head, const char *name, char (*vals)[256], int max)
{
    size_t nl = strlen(name);
    int n = 0;
    for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, nl) != 0 || h[nl] != ':')
            continue;
        const char *v = h + nl + 1, *e = strstr(v, "\r\n");
        if (!e)
            e = v + strlen(v);
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (n < max)
            copy_cut(vals[n], sizeof vals[n], v, (size_t)(e - v));
        n++;
    }
    return n;
}

/* Fail unless header name occurs exactly once in s, with value want. */
static void assert_header_once(const struct seen_req *s, const char *name, const char *want)
{
    char vals[4][256];
    int n = head_values(s->head, name, vals, 4);
    if (n != 1 || strcmp(vals[0], want) != 0)
        fail_msg("expected one \"%s: %s\", found %d (first \"%s\") in:\n%s", name, want, n,
                 n ? vals[0] : "", s->head);
}

static void assert_no_header(const struct seen_req *s, const char *name)
{
    char vals[1][256];
    if (head_values(s->head, name, vals, 1) != 0)
        fail_msg("expected no %s header, found \"%s\" in:\n%s", name, vals[0], s->head);
}

/* ---- the client --------------------------------------------------------- */

struct client_res {
    int status;     /* exit code, or 128 + signal */
    char *out, *err; /* stdout and stderr (a terminal's bytes when tty) */
};

static void client_res_free(struct client_res *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

/* Append what fd has to *buf (NUL-terminated). Returns 1 on more, 0 on
 * EOF or EIO (a terminal whose other side is closed), -1 on another error. */
static int drain_fd(int fd, char **buf, size_t *len)
{
    char tmp[4096];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : errno == EIO ? 0 : -1;
    if (r == 0)
        return 0;
    char *nb = realloc(*buf, *len + (size_t)r + 1);
    assert_non_null(nb);
    memcpy(nb + *len, tmp, (size_t)r);
    *len += (size_t)r;
    nb[*len] = '\0';
    *buf = nb;
    return 1;
}

/* In the client's child: the environment changes ud lists (client_run).
 * Returns 0, or -1 when one cannot be made. */
static int set_env(void *ud)
{
    const char *const *env = ud;
    unsetenv("OPENAI_API_KEY");
    unsetenv("LLMLOAD_HTTP_CLIENT");
    for (size_t i = 0; env && env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        char name[128];
        if (!eq) {
            unsetenv(env[i]);
            continue;
        }
        if ((size_t)(eq - env[i]) >= sizeof name)
            return -1;
        copy_cut(name, sizeof name, env[i], (size_t)(eq - env[i]));
        if (setenv(name, eq + 1, 1) != 0)
            return -1;
    }
    return 0;
}

/* Run LLMLOAD_BIN args... and wait for it (SIGKILL past CLIENT_TIMEOUT_S).
 * env lists changes to the environment made in the child only:
 * "NAME=VALUE" sets, "NAME" unsets (OPENAI_API_KEY and LLMLOAD_HTTP_CLIENT
 * are always unset first, so the test's own environment cannot leak in).
 * stdout goes to a file; stderr to a file, or to a pseudo-terminal when
 * tty is set (the client then takes it for an interactive terminal). */
static void client_run(const char *const *args, const char *const *env, int tty,
                       struct client_res *res)
{
    char outp[600], errp[600];
    harness_tmp_path(outp, sizeof outp, "client.out");
    harness_tmp_path(errp, sizeof errp, "client.err");
    int master = -1, slave = -1;
    if (tty) {
        assert_int_equal(openpty(&master, &slave, NULL, NULL, NULL), 0);
        assert_int_equal(fcntl(master, F_SETFD, FD_CLOEXEC), 0);
        assert_int_equal(fcntl(slave, F_SETFD, FD_CLOEXEC), 0);
    }
    pid_t pid = harness_spawn(args, outp, errp, tty ? slave : -1, set_env, (void *)env);
    cur_client = pid;
    uint64_t deadline = ll_now_ns() + (uint64_t)CLIENT_TIMEOUT_S * 1000000000ull;
    char *tty_buf = NULL;
    size_t tty_len = 0;
    if (tty) {
        /* Read the terminal while the client runs (its buffer is small),
         * until the client's side is closed: EIO once it has exited. */
        close(slave);
        for (;;) {
            struct pollfd pfd = {.fd = master, .events = POLLIN};
            int pr = poll(&pfd, 1, 50);
            if (pr > 0 && drain_fd(master, &tty_buf, &tty_len) <= 0)
                break;
            if (ll_now_ns() > deadline)
                break;
        }
        close(master);
    }
    uint64_t now = ll_now_ns();
    res->status = harness_reap(pid, now < deadline ? (int)((deadline - now) / 1000000u) : 0);
    cur_client = 0;
    if (res->status == 126)
        fail_msg("the client child could not set up its environment or files");
    res->out = harness_read_file(outp, NULL);
    res->err = tty ? tty_buf : harness_read_file(errp, NULL);
    if (!res->err)
        res->err = calloc(1, 1);
    assert_true(res->out && res->err);
}

/* The results dir holds exactly n records, every one of kind "ok". */
static void assert_all_ok(const char *dir, size_t n)
{
    struct harness_recs *recs = harness_requests_load(dir);
    assert_int_equal(recs->n, n);
    for (size_t i = 0; i < recs->n; i++)
        assert_string_equal(harness_sval(recs->items[i], "kind"), "ok");
    harness_recs_free(recs);
}

/* Fail unless the run exited 0, or 1 (INVALID: a wake-up on this shared
 * machine was late, which changes nothing checked here). */
static void assert_ran(const struct client_res *r)
{
    if (r->status != 0 && r->status != 1)
        fail_msg("llmload run exited %d\nstdout:\n%s\nstderr:\n%s", r->status, r->out, r->err);
}

/* Fail when needle occurs in the len bytes of text (which may hold NULs). */
static void assert_absent(const char *what, const char *text, size_t len, const char *needle)
{
    if (memmem(text, len, needle, strlen(needle)))
        fail_msg("%s contains the secret \"%s\"", what, needle);
}

/* Fail when needle occurs in any file under dir (recursively). Returns the
 * number of files read. */
static int assert_absent_in_dir(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("opendir %s: %s", dir, strerror(errno));
    int files = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat sb;
        assert_int_equal(lstat(p, &sb), 0);
        if (S_ISDIR(sb.st_mode)) {
            files += assert_absent_in_dir(p, needle);
        } else if (S_ISREG(sb.st_mode)) {
            size_t len = 0;
            char *text = harness_read_file(p, &len);
            assert_non_null(text);
            assert_absent(p, text, len, needle);
            free(text);
            files++;
        }
    }
    closedir(d);
    return files;
}

/* ---- 1. credentials, headers and the model default ----------------------- */

/* With --api-key-env MY_TEST_KEY (OPENAI_API_KEY set too, to another
 * value) and no --model: the probe of /v1/models and every completion
 * request carry exactly one "Authorization: Bearer <MY_TEST_KEY>", each -H
 * arrives as given, each POST asks for the model /v1/models named first,
 * and neither key shows in anything the client wrote. Then with no key at
 * all, no Authorization header; with --api-key-env naming an unset
 * variable, a usage error before any request. */
static void credentials_case(void **state)
{
    const char *client = *state;
    harness_tmp_begin();
    char url[64], out[600];
    recorder_start(url, sizeof url);
    harness_tmp_path(out, sizeof out, "r");
    const char *args[] = {"run", "--url", url, "--out", out, "--http-client", client,
                          "--api-key-env", "MY_TEST_KEY", "-H", "X-Test: abc",
                          "-H", "X-Second:  two words ", "--no-metrics", "--threads", "1",
                          "--rate", "20", "--arrival", "constant", "--requests", "4",
                          "--prompt-tokens", "16", NULL};
    const char *env[] = {"MY_TEST_KEY=" KEY_MINE, "OPENAI_API_KEY=" KEY_DEFAULT, NULL};
    struct client_res r;
    client_run(args, env, 0, &r);
    assert_ran(&r);

    uint32_t n = seen_count();
    int posts = 0, probes = 0, contract = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct seen_req *s = &cur_seen->req[i];
        if (!seen_is_post(s) && !seen_is_models(s) && !seen_is_contract(s))
            fail_msg("unexpected request:\n%s", s->head);
        assert_header_once(s, "Authorization", "Bearer " KEY_MINE);
        assert_header_once(s, "X-Test", "abc");
        /* The value as given, minus the blanks around it (RFC 9110 5.5). */
        assert_header_once(s, "X-Second", "two words");
        if (seen_is_models(s)) {
            probes++;
            continue;
        }
        if (seen_is_contract(s)) { /* the contract's questions carry them too */
            contract++;
            continue;
        }
        posts++;
        json_error_t je;
        json_t *body = json_loads(s->body, 0, &je);
        if (!body)
            fail_msg("POST body is not JSON (%s):\n%s", je.text, s->body);
        assert_string_equal(harness_sval(body, "model"), MODEL_ID);
        json_decref(body);
    }
    assert_int_equal(probes, 1);
    assert_int_equal(contract, 4);
    assert_int_equal(posts, 4);

    assert_all_ok(out, 4);
    json_t *run = harness_json_load(out, "run.json");
    json_t *config = json_object_get(run, "config");
    assert_string_equal(harness_sval(config, "model"), MODEL_ID);
    assert_string_equal(harness_sval(config, "api_key_env"), "MY_TEST_KEY");
    assert_string_equal(harness_sval(config, "http_client_used"), client);
    json_decref(run);

    /* The keys reach nothing the client wrote: every file of the results
     * directory, stdout, stderr. */
    assert_true(assert_absent_in_dir(out, KEY_MINE) >= 3);
    assert_absent_in_dir(out, KEY_DEFAULT);
    assert_absent("stdout", r.out, strlen(r.out), KEY_MINE);
    assert_absent("stderr", r.err, strlen(r.err), KEY_MINE);
    assert_absent("stdout", r.out, strlen(r.out), KEY_DEFAULT);
    assert_absent("stderr", r.err, strlen(r.err), KEY_DEFAULT);
    client_res_free(&r);

    /* No --api-key-env and OPENAI_API_KEY unset (client_run unsets it):
     * no Authorization header at all. */
    recorder_start(url, sizeof url);
    harness_tmp_path(out, sizeof out, "r-nokey");
    const char *bare[] = {"run", "--url", url, "--out", out, "--http-client", client,
                          "--no-metrics", "--threads", "1", "--rate", "20", "--arrival",
                          "constant", "--requests", "2", NULL};
    client_run(bare, NULL, 0, &r);
    assert_ran(&r);
    n = seen_count();
    assert_int_equal(n, 7); /* the probe, the contract's four questions and two POSTs */
    for (uint32_t i = 0; i < n; i++)
        assert_no_header(&cur_seen->req[i], "Authorization");
    client_res_free(&r);

    /* A -H naming one of our default headers replaces it: one
     * Authorization, the user's, though OPENAI_API_KEY is set too (a
     * server reads the first of two); "-H 'Accept:'" removes the Accept
     * header, ours and libcurl's. */
    recorder_start(url, sizeof url);
    harness_tmp_path(out, sizeof out, "r-override");
    const char *over[] = {"run", "--url", url, "--out", out, "--http-client", client,
                          "-H", "authorization: Bearer " KEY_MINE, "-H", "Accept:",
                          "-H", "Content-Type: application/json; charset=utf-8",
                          "--no-metrics", "--threads", "1", "--rate", "20", "--arrival",
                          "constant", "--requests", "2", NULL};
    const char *env_default[] = {"OPENAI_API_KEY=" KEY_DEFAULT, NULL};
    client_run(over, env_default, 0, &r);
    assert_ran(&r);
    n = seen_count();
    assert_int_equal(n, 7); /* the probe, the contract's four questions and two POSTs */
    for (uint32_t i = 0; i < n; i++) {
        assert_header_once(&cur_seen->req[i], "Authorization", "Bearer " KEY_MINE);
        assert_no_header(&cur_seen->req[i], "Accept");
        if (seen_is_post(&cur_seen->req[i]))
            assert_header_once(&cur_seen->req[i], "Content-Type",
                               "application/json; charset=utf-8");
    }
    assert_absent_in_dir(out, KEY_MINE);
    client_res_free(&r);

    /* --api-key-env naming an unset variable: exit 2, naming it, and
     * nothing sent. */
    recorder_start(url, sizeof url);
    harness_tmp_path(out, sizeof out, "r-unset");
    const char *unset[] = {"run", "--url", url, "--out", out, "--http-client", client,
                           "--api-key-env", "MY_TEST_KEY", "--no-metrics", "--rate", "20",
                           "--requests", "1", NULL};
    const char *env_unset[] = {"MY_TEST_KEY", "OPENAI_API_KEY=" KEY_DEFAULT, NULL};
    client_run(unset, env_unset, 0, &r);
    if (r.status != 2 || !strstr(r.err, "MY_TEST_KEY"))
        fail_msg("expected exit 2 naming MY_TEST_KEY, got %d:\n%s", r.status, r.err);
    assert_int_equal(seen_count(), 0);
    client_res_free(&r);
}

/* --http2 reaches libcurl: on http:// it offers the h2c upgrade (RFC 7540
 * 3.2) with its settings; a server that ignores the offer answers in
 * HTTP/1.1, as this one does, and the run goes on. Without the flag
 * nothing is offered. The auto client is libcurl whenever --http2 is
 * given (the native one speaks HTTP/1.1 only); HTTP/2 itself, and over
 * TLS, is libcurl's (docs/http-client.md). */
static void test_http2_offered(void **state)
{
    harness_tmp_begin();
    for (int h2 = 0; h2 <= 1; h2++) {
        char url[64], out[600];
        recorder_start(url, sizeof url);
        harness_tmp_path(out, sizeof out, h2 ? "r-h2" : "r-h1");
        const char *args[] = {"run", "--url", url, "--out", out, "--quiet", "--no-metrics",
                              "--threads", "1", "--rate", "20", "--arrival", "constant",
                              "--requests", "3", "--prompt-tokens", "16",
                              h2 ? "--http2" : "--http-client", h2 ? NULL : "curl", NULL};
        struct client_res r;
        client_run(args, NULL, 0, &r);
        assert_ran(&r);
        client_res_free(&r);
        uint32_t n = seen_count(), posts = 0;
        for (uint32_t i = 0; i < n; i++) {
            const struct seen_req *sr = &cur_seen->req[i];
            if (!seen_is_post(sr))
                continue;
            char v[2][256];
            int settings = head_values(sr->head, "HTTP2-Settings", v, 2);
            if (h2 && posts == 0) { /* offered on the connection's first request */
                assert_header_once(sr, "Upgrade", "h2c");
                if (settings != 1)
                    fail_msg("expected one HTTP2-Settings header in:\n%s", sr->head);
            } else if (!h2) {
                assert_no_header(sr, "Upgrade");
                assert_int_equal(settings, 0);
            }
            posts++;
        }
        assert_int_equal(posts, 3);
        assert_all_ok(out, 3);
        json_t *run = harness_json_load(out, "run.json");
        assert_string_equal(harness_sval(json_object_get(run, "config"), "http_client_used"),
                            "curl");
        json_decref(run);
    }
}

/* ---- 2. kept-alive connections -------------------------------------------- */

/* A closed loop of `users` users against the recording server, each
 * request answered after 20 ms (so the users' requests overlap) and each
 * user starting one every 10 ms at most. Returns the number of distinct
 * connections that carried a POST, after checking that every request was
 * answered ok and that the client opened no connection beyond those and
 * the probe's. */
static uint32_t post_connections(const char *client, unsigned users, unsigned want,
                                 const char *out_name)
{
    char url[64], out[600], users_s[16], want_s[16];
    post_delay_ms = 20;
    recorder_start(url, sizeof url);
    post_delay_ms = 0;
    harness_tmp_path(out, sizeof out, out_name);
    snprintf(users_s, sizeof users_s, "%u", users);
    snprintf(want_s, sizeof want_s, "%u", want);
    const char *args[] = {"run", "--url", url, "--out", out, "--http-client", client,
                          "--quiet", "--no-metrics", "--threads", "1", "--users", users_s,
                          "--pace", "10ms", "--requests", want_s, "--prompt-tokens", "16",
                          NULL};
    struct client_res r;
    client_run(args, NULL, 0, &r);
    assert_ran(&r);
    client_res_free(&r);
    assert_all_ok(out, want);

    uint32_t n = seen_count(), posts = 0;
    char used[SLOTS + 2] = {0}; /* accept indexes run from 1 */
    for (uint32_t i = 0; i < n; i++) {
        const struct seen_req *s = &cur_seen->req[i];
        if (!seen_is_post(s))
            continue;
        posts++;
        assert_true(s->conn >= 1 && s->conn <= SLOTS + 1);
        used[s->conn] = 1;
    }
    assert_int_equal(posts, want);
    uint32_t conns = 0;
    for (size_t i = 0; i < sizeof used; i++)
        conns += used[i] != 0;
    print_message("%s, %u users, %u requests: %u connection(s) carried the POSTs, "
                  "%u accepted in all\n",
                  client, users, want, conns, atomic_load(&cur_seen->accepts));
    assert_true(atomic_load(&cur_seen->accepts) <= conns + 1);
    return conns;
}

/* One user's 20 requests go over one connection; three users' 30 over
 * three: at most one per user, and no fewer, since the three users' 20 ms
 * requests are in flight at once and HTTP/1.1 carries one at a time. */
static void keepalive_case(void **state)
{
    const char *client = *state;
    harness_tmp_begin();
    assert_int_equal(post_connections(client, 1, 20, "r1"), 1);
    assert_int_equal(post_connections(client, 3, 30, "r3"), 3);
}

/* ---- 3. --threads splits the schedule without changing it ------------------ */

/* Check the records of the run in dir against the schedule dumped to
 * dump: one record per dumped line, each with the dump's sched_ns,
 * prompt_tokens and max_tokens, sent, and ok, and as many scheduled in the
 * summary. Counts the records of each worker into per_worker (workers
 * 0..nw-1; any other fails). */
static void check_records_match_dump(const char *dir, const char *dump, uint64_t *per_worker,
                                     int64_t nw)
{
    json_t *sched = harness_jsonl_load(dump);
    struct harness_recs *recs = harness_requests_load(dir);
    size_t n = json_array_size(sched);
    assert_true(n > 0);
    assert_int_equal(recs->n, n);
    char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < recs->n; i++) {
        json_t *r = recs->items[i];
        int64_t id = harness_ival_req(r, "id");
        if (id < 0 || (size_t)id >= n || seen[id])
            fail_msg("record id %lld is out of range or repeated", (long long)id);
        seen[id] = 1;
        json_t *d = json_array_get(sched, (size_t)id);
        assert_int_equal(harness_ival_req(d, "index"), id);
        assert_int_equal(harness_ival_req(r, "sched_ns"), harness_ival_req(d, "sched_ns"));
        assert_int_equal(harness_ival_req(r, "prompt_tokens"),
                         harness_ival_req(d, "prompt_tokens"));
        assert_int_equal(harness_ival_req(r, "max_tokens"), harness_ival_req(d, "max_tokens"));
        assert_false(harness_is_null(r, "sent_ns"));
        assert_string_equal(harness_sval(r, "kind"), "ok");
        int64_t w = harness_ival_req(r, "worker");
        assert_true(w >= 0 && w < nw);
        per_worker[w]++;
    }
    free(seen);
    harness_recs_free(recs);
    json_decref(sched);
    json_t *sum = harness_summary_load(dir);
    assert_int_equal(harness_ival_req(json_object_get(sum, "requests"), "scheduled"), n);
    json_decref(sum);
}

/* Poisson arrivals at 200/s for 1 s with a fixed seed, run with --threads
 * 2 and with --threads 1: both dump the same schedule, byte for byte; each
 * run sends every dumped request exactly once, at the dumped time with the
 * dumped lengths; and with two threads both workers send some. */
static void test_threads_split_schedule(void **state)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    char url[200], d1[600], d2[600], o1[600], o2[600];
    harness_sim_v1_start(url, sizeof url, sargs);
    harness_tmp_path(d1, sizeof d1, "sched-t1.jsonl");
    harness_tmp_path(d2, sizeof d2, "sched-t2.jsonl");
    harness_tmp_path(o1, sizeof o1, "r-t1");
    harness_tmp_path(o2, sizeof o2, "r-t2");
    const char *a2[] = {"run", "--url", url, "--out", o2, "--quiet", "--no-metrics",
                        "--threads", "2", "--rate", "200", "--arrival", "poisson",
                        "--duration", "1s", "--seed", "4242", "--prompt-tokens",
                        "uniform:10,100", "--output-tokens", "uniform:2,8",
                        "--dump-schedule", d2, NULL};
    const char *a1[] = {"run", "--url", url, "--out", o1, "--quiet", "--no-metrics",
                        "--threads", "1", "--rate", "200", "--arrival", "poisson",
                        "--duration", "1s", "--seed", "4242", "--prompt-tokens",
                        "uniform:10,100", "--output-tokens", "uniform:2,8",
                        "--dump-schedule", d1, NULL};
    struct client_res r;
    client_run(a2, NULL, 0, &r);
    assert_ran(&r);
    client_res_free(&r);
    client_run(a1, NULL, 0, &r);
    assert_ran(&r);
    client_res_free(&r);
    harness_sim_teardown(NULL);

    size_t l1 = 0, l2 = 0;
    char *b1 = harness_read_file(d1, &l1), *b2 = harness_read_file(d2, &l2);
    assert_true(b1 && b2);
    assert_true(l1 > 5000); /* about 200 lines */
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(b1);
    free(b2);

    uint64_t w2[2] = {0, 0}, w1[1] = {0};
    check_records_match_dump(o2, d2, w2, 2);
    check_records_match_dump(o1, d1, w1, 1);
    print_message("--threads 2: worker 0 sent %llu, worker 1 sent %llu\n",
                  (unsigned long long)w2[0], (unsigned long long)w2[1]);
    assert_true(w2[0] > 0 && w2[1] > 0);
    json_t *run = harness_json_load(o2, "run.json");
    assert_int_equal(harness_ival_req(json_object_get(run, "config"), "threads"), 2);
    json_decref(run);
}

/* ---- 4. --insecure ----------------------------------------------------------- */

/* Run against the TLS server at url into <tmp>/out_name with args added,
 * waiting first_token for the first token; returns the records (caller
 * frees). The connect budget is wide: s_server answers one connection at a
 * time, and a loaded machine (the suite under ASan beside other jobs) can
 * take a second to get to it, which is not what these cases judge. */
static struct harness_recs *tls_run(const char *url, const char *out_name, const char *n,
                                    const char *first_token, const char *const *extra)
{
    char out[600];
    harness_tmp_path(out, sizeof out, out_name);
    /* clang-format off */
    const char *head[] = {"run", "--url", url, "--out", out, "--quiet", "--no-metrics",
                          "--model", "m", "--threads", "1", "--rate", "20", "--arrival",
                          "constant", "--requests", n, "--timeout-connect", "10s",
                          "--timeout-total", "20s", "--timeout-first-token", NULL};
    /* clang-format on */
    const char *v[MAX_ARGS + 1];
    size_t k = 0;
    for (size_t i = 0; head[i]; i++)
        v[k++] = head[i];
    v[k++] = first_token;
    for (size_t i = 0; extra && extra[i]; i++) {
        assert_true(k < MAX_ARGS);
        v[k++] = extra[i];
    }
    v[k] = NULL;
    struct client_res r;
    client_run(v, NULL, 0, &r);
    /* Every case here fails every request (a refused certificate, or a
     * server that never sends a token): exit 6, no request succeeded. */
    if (r.status != 6)
        fail_msg("llmload run exited %d, expected 6\nstdout:\n%s\nstderr:\n%s", r.status, r.out,
                 r.err);
    client_res_free(&r);
    return harness_requests_load(out);
}

/* The name in the test's certificate: not the host the client asks for. */
#define WRONG_HOST "llmload-wrong-host.invalid"

/* A server whose certificate is self-signed and names another host
 * (openssl s_server, the certificate made at test time; skipped without
 * the openssl CLI). Without --cacert or --insecure every request fails
 * verification: transport_error naming the certificate. With --insecure
 * the handshake passes, so --insecure turns off both checks, the chain's
 * and the host name's (test_hostile's --cacert case has a certificate for
 * 127.0.0.1, where the name check passes anyway). s_server -www never
 * answers a POST, so the request is sent and then waits out
 * --timeout-first-token, which only a completed handshake can reach. */
static void test_insecure_self_signed(void **state)
{
    harness_tmp_begin();
    char cert[600], url[64];
    const char *why;
    if (harness_tls_server_start(WRONG_HOST, "DNS:" WRONG_HOST, url, sizeof url, cert,
                                 sizeof cert, &cur_aux, &why) != 0) {
        print_message("%s: TLS case skipped\n", why);
        skip();
    }

    /* A refused certificate ends the request at the handshake, whatever the
     * budget: a wide one keeps a slow machine from turning it into a
     * timeout. */
    struct harness_recs *recs = tls_run(url, "r-verify", "2", "15s", NULL);
    assert_int_equal(recs->n, 2);
    for (size_t i = 0; i < recs->n; i++) {
        json_t *rec = recs->items[i];
        const char *d = harness_sval(rec, "detail");
        if (strcmp(harness_sval(rec, "kind"), "transport_error") != 0 ||
            (!strstr(d, "certificate") && !strstr(d, "SSL")))
            fail_msg("without --insecure: expected transport_error naming the certificate, "
                     "got %s: %s", harness_sval(rec, "kind"), d);
    }
    print_message("verified: %s\n", harness_sval(recs->items[0], "detail"));
    harness_recs_free(recs);

    const char *ins[] = {"--insecure", NULL};
    /* Here the wait for a first token is the point: long enough for a
     * handshake on a loaded machine, short enough to keep the test quick. */
    recs = tls_run(url, "r-insecure", "1", "2s", ins);
    assert_int_equal(recs->n, 1);
    json_t *rec = recs->items[0];
    print_message("--insecure: %s %s\n", harness_sval(rec, "kind"), harness_sval(rec, "detail"));
    if (strcmp(harness_sval(rec, "kind"), "timeout_first_token") != 0)
        fail_msg("with --insecure the handshake should pass and the request wait for its "
                 "first token; got %s: %s", harness_sval(rec, "kind"),
                 harness_sval(rec, "detail"));
    harness_recs_free(recs);
}

/* An https:// URL at the sim, which speaks plain HTTP and answers a TLS
 * client hello with nothing (it waits for a request line's end that never
 * comes, as llama.cpp's server does): every request used to wait out
 * --timeout-connect (10 s) and read as a slow server. Now the run stops
 * before its load, at once, with the one thing to change. --model skips
 * the /models question, so the check is the only thing that can say so. */
static void test_https_at_plain_server(void **state)
{
    (void)state;
    harness_tmp_begin();
    char out[600];
    const char *sargs[] = {"--profile", "instant", NULL};
    harness_cur_sim_start(sargs);
    char https[210];
    snprintf(https, sizeof https, "https://%s/v1", harness_cur_sim.url + strlen("http://"));
    harness_tmp_path(out, sizeof out, "r-plain");
    const char *args[] = {"run", "--url",  https, "--model", "m", "--requests",
                          "2",   "--rate", "10",  "--out",   out, NULL};
    uint64_t t0 = ll_now_ns();
    char *err = NULL;
    char *stdout_text = harness_run_expect(args, 30, LL_EXIT_RUNTIME, &err);
    double took_s = (double)(ll_now_ns() - t0) / 1e9;
    char want[300];
    snprintf(want, sizeof want, "the server at 127.0.0.1:%d answered in plain HTTP: use http://",
             harness_cur_sim.port);
    if (!strstr(err, want))
        fail_msg("expected \"%s\" on stderr, got:\n%s", want, err);
    /* One handshake that gets no answer (2 s) and one plain GET: well
     * under the 10 s connect timeout each request used to wait. */
    if (took_s > 6.0)
        fail_msg("took %.1f s to say so", took_s);
    print_message("%.2f s: %s", took_s, err);
    free(stdout_text);
    free(err);
}

/* ---- 5. progress lines --------------------------------------------------- */

/* One progress line, parsed:
 * "[  5.0s] 4.0/s offered, 4.2/s sent, in flight 0, done 21, errors 0, TTFT
 * p50 1.2ms p99 1.9ms, 12 tok/s" (src/driver/progress.c progress_print). */
struct progress {
    double elapsed_s, offered_per_s, sent_per_s, tok_per_s;
    unsigned long long inflight, done, errors;
};

/* Parse the number after the first occurrence of key in line (key NULL:
 * at line). Returns 0 and *end past it, -1 when absent or not a number. */
static int num_after(const char *line, const char *key, double *v, const char **end)
{
    const char *p = key ? strstr(line, key) : line;
    if (!p)
        return -1;
    p += key ? strlen(key) : 0;
    char *e = NULL;
    errno = 0;
    *v = strtod(p, &e);
    if (e == p || errno)
        return -1;
    if (end)
        *end = e;
    return 0;
}

/* Parse one progress line (without its line end). Returns 0, or -1 when
 * it is not one. */
static int progress_parse(const char *line, struct progress *pr)
{
    const char *e;
    double v;
    if (line[0] != '[' || num_after(line + 1, NULL, &pr->elapsed_s, &e) != 0 ||
        strncmp(e, "s] ", 3) != 0)
        return -1;
    if (num_after(e, "] ", &pr->offered_per_s, &e) != 0 || strncmp(e, "/s offered, ", 12) != 0)
        return -1;
    if (num_after(e, ", ", &pr->sent_per_s, &e) != 0 || strncmp(e, "/s sent, ", 9) != 0)
        return -1;
    if (num_after(e, "in flight ", &v, &e) != 0)
        return -1;
    pr->inflight = (unsigned long long)v;
    if (num_after(e, ", done ", &v, &e) != 0)
        return -1;
    pr->done = (unsigned long long)v;
    if (num_after(e, ", errors ", &v, &e) != 0)
        return -1;
    pr->errors = (unsigned long long)v;
    if (!strstr(e, ", TTFT p50 ") || num_after(e, " p99 ", &v, &e) != 0)
        return -1;
    const char *tok = strstr(e, ", ");
    if (!tok || num_after(tok, ", ", &pr->tok_per_s, &e) != 0 || strcmp(e, " tok/s") != 0)
        return -1;
    return 0;
}

/* Split text into progress lines at every separator byte in seps (empty
 * pieces and the terminal's erase sequence dropped); at most max into
 * lines. Fails the test on a piece that starts with '[' but does not
 * parse. Returns the count. */
static size_t progress_lines(const char *text, const char *seps, struct progress *lines,
                             size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, seps);
        char piece[512];
        copy_cut(piece, sizeof piece, p, len);
        const char *s = piece;
        if (strncmp(s, "\033[K", 3) == 0)
            s += 3;
        if (*s == '[') {
            struct progress pr;
            if (progress_parse(s, &pr) != 0)
                fail_msg("not a progress line: \"%s\"", s);
            assert_true(n < max);
            lines[n++] = pr;
        }
        p += len;
        if (*p)
            p++;
    }
    return n;
}

/* With constant arrivals at rate/s from t=0, the requests sent or done by
 * a line are those due by its elapsed time, which is printed rounded to
 * 0.1 s: between those due 0.05 s before and 0.05 s after it. */
static void assert_arrivals_by(const struct progress *p, double rate)
{
    double lo = floor(rate * (p->elapsed_s - 0.05)) + 1;
    double hi = floor(rate * (p->elapsed_s + 0.05) + 1e-9) + 1;
    ASSERT_IN_RANGE((double)(p->done + p->inflight), lo, hi);
}

static void sim_start_instant(char *url, size_t len)
{
    const char *sargs[] = {"--profile", "instant", NULL};
    harness_cur_sim_start(sargs);
    snprintf(url, len, "%s/v1", harness_cur_sim.url);
}

/* One thread at rate/s, constant arrivals, for duration, 4 output tokens,
 * into <tmp>/<name> (out gets the path), against url; stderr on a
 * pseudo-terminal when tty is set (client_run). The run must end 0 or 1. */
static void progress_run(const char *url, const char *rate, const char *duration, int quiet,
                         int tty, const char *name, char *out, size_t out_len,
                         struct client_res *r)
{
    harness_tmp_path(out, out_len, name);
    const char *head[] = {"run", "--url", url, "--out", out, "--no-metrics", NULL};
    const char *load[] = {"--threads", "1", "--rate", rate, "--arrival", "constant",
                          "--duration", duration, "--output-tokens", "4", NULL};
    const char *q[] = {"--quiet", NULL};
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, head);
    harness_argv_add(&a, quiet ? q : NULL);
    harness_argv_add(&a, load);
    client_run(a.v, NULL, tty, r);
    assert_ran(r);
}

/* Not on a terminal, without --quiet: one plain line every 5 s (the
 * interval cmd_run.c sets for a pipe or file), no carriage returns or
 * escape sequences, and no closing line. A 5.4 s run at 4/s, constant
 * arrivals, against the instant sim: exactly one line, at 5.0 s, saying
 * about 4/s sent over those 5 s and about 20 done, no error. (A shorter run
 * shows no line at all: see the report of the commit that added this.) */
static void test_progress_plain_lines(void **state)
{
    harness_tmp_begin();
    char url[200], out[600];
    sim_start_instant(url, sizeof url);
    struct client_res r;
    progress_run(url, "4", "5.4s", 0, 0, "r", out, sizeof out, &r);
    if (strchr(r.err, '\r') || strchr(r.err, '\033'))
        fail_msg("terminal control bytes on a plain stderr:\n%s", r.err);
    struct progress pl[8];
    size_t n = progress_lines(r.err, "\n", pl, 8);
    if (n != 1)
        fail_msg("%zu progress lines, expected 1 (every 5 s of a 5.4 s run):\n%s", n, r.err);
    print_message("plain: [%.1fs] %.1f/s offered, %.1f/s sent, in flight %llu, done %llu\n",
                  pl[0].elapsed_s, pl[0].offered_per_s, pl[0].sent_per_s, pl[0].inflight,
                  pl[0].done);
    ASSERT_NEAR(pl[0].elapsed_s, 5.0, 0.3);
    ASSERT_NEAR(pl[0].offered_per_s, 4.0, 1e-9);
    /* 20 or 21 arrivals (t = 0, 0.25, ..., 5.0) in the first 5 s. */
    ASSERT_IN_RANGE(pl[0].sent_per_s, 3.6, 4.4);
    assert_arrivals_by(&pl[0], 4);
    assert_int_equal(pl[0].errors, 0);
    client_res_free(&r);
    struct harness_recs *recs = harness_requests_load(out);
    assert_int_equal(recs->n, 22); /* t = 0 .. 5.25 */
    harness_recs_free(recs);
}

/* A ramp's progress line offers the summary's rate, the ramp's mean:
 * 2/s to 6/s over 5.4 s offers 4.0/s (the parent said 2.0/s, the start
 * rate, and 0.0/s all through a --rate 0 ramp). */
static void test_progress_ramp_offered(void **state)
{
    harness_tmp_begin();
    char url[200], out[600];
    sim_start_instant(url, sizeof url);
    harness_tmp_path(out, sizeof out, "r");
    const char *args[] = {"run",
                          "--url",
                          url,
                          "--out",
                          out,
                          "--no-metrics",
                          "--threads",
                          "1",
                          "--rate",
                          "2",
                          "--ramp-to",
                          "6",
                          "--arrival",
                          "constant",
                          "--duration",
                          "5.4s",
                          "--output-tokens",
                          "4",
                          NULL};
    struct client_res r;
    client_run(args, NULL, 0, &r);
    assert_ran(&r);
    struct progress pl[8];
    size_t n = progress_lines(r.err, "\n", pl, 8);
    if (n != 1)
        fail_msg("%zu progress lines, expected 1 (every 5 s of a 5.4 s run):\n%s", n, r.err);
    ASSERT_NEAR(pl[0].offered_per_s, 4.0, 1e-9);
    client_res_free(&r);
}

/* On a terminal (a pseudo-terminal here): the line is rewritten in place
 * ("\r" and erase-to-end) every second, then a closing line. A 2.5 s run
 * at 8/s, constant arrivals: two periodic lines at 1 s and 2 s, then the
 * closing one (at the end of the last request, 2.4 s); done never
 * decreases and the closing line's done is every request of the run. With --quiet, nothing on the terminal at all. */
static void test_progress_terminal_and_quiet(void **state)
{
    harness_tmp_begin();
    int m, sl;
    if (openpty(&m, &sl, NULL, NULL, NULL) != 0) {
        print_message("no pseudo-terminal (%s): terminal case skipped\n", strerror(errno));
        skip();
    }
    close(m);
    close(sl);
    char url[200], out[600];
    sim_start_instant(url, sizeof url);
    struct client_res r;
    progress_run(url, "8", "2.5s", 0, 1, "r", out, sizeof out, &r);
    assert_non_null(strstr(r.err, "\r\033[K["));
    struct progress pl[16];
    size_t n = progress_lines(r.err, "\r\n", pl, 16);
    if (n != 3)
        fail_msg("%zu progress lines, expected 3 (1 s, 2 s, the close):\n%s", n, r.err);
    ASSERT_NEAR(pl[0].elapsed_s, 1.0, 0.3);
    ASSERT_NEAR(pl[1].elapsed_s, 2.0, 0.3);
    /* The run ends when its last request (sent at 2.375 s) is done. */
    ASSERT_IN_RANGE(pl[2].elapsed_s, 2.3, 4.0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pl[i].errors, 0);
        ASSERT_NEAR(pl[i].offered_per_s, 8.0, 1e-9);
        if (i > 0)
            assert_true(pl[i].done >= pl[i - 1].done);
    }
    /* 8 or 9 arrivals by 1 s, 16 or 17 by 2 s, 8/s sent in each second. */
    assert_arrivals_by(&pl[0], 8);
    assert_arrivals_by(&pl[1], 8);
    ASSERT_IN_RANGE(pl[1].sent_per_s, 6.5, 9.5);
    assert_int_equal(pl[2].done, 20);
    assert_int_equal(pl[2].inflight, 0);
    client_res_free(&r);
    struct harness_recs *recs = harness_requests_load(out);
    assert_int_equal(recs->n, 20);
    harness_recs_free(recs);

    progress_run(url, "8", "1.5s", 1, 1, "r-quiet", out, sizeof out, &r);
    if (strchr(r.err, '[') || strchr(r.err, '\033'))
        fail_msg("--quiet, yet on the terminal:\n%s", r.err);
    client_res_free(&r);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        HARNESS_CLIENT_TEST("credentials", credentials_case, "native", teardown),
        HARNESS_CLIENT_TEST("credentials", credentials_case, "curl", teardown),
        cmocka_unit_test_teardown(test_http2_offered, teardown),
        HARNESS_CLIENT_TEST("keepalive", keepalive_case, "native", teardown),
        HARNESS_CLIENT_TEST("keepalive", keepalive_case, "curl", teardown),
        cmocka_unit_test_teardown(test_threads_split_schedule, teardown),
        cmocka_unit_test_teardown(test_insecure_self_signed, teardown),
        cmocka_unit_test_teardown(test_https_at_plain_server, teardown),
        cmocka_unit_test_teardown(test_progress_plain_lines, teardown),
        cmocka_unit_test_teardown(test_progress_ramp_offered, teardown),
        cmocka_unit_test_teardown(test_progress_terminal_and_quiet, teardown),
    };
    return harness_run_group(tests);
}
