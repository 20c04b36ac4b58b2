/* harness.c: see harness.h. */
#include "harness.h"

#define LL_HARNESS_MIN(a, b) ((a) < (b) ? (a) : (b))

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#include "sim/profile.h"
#include "util/spawn.h"
#include "util/util.h"
#include "workload/dist.h"
#include "workload/workload.h"

static const char *harness_bin(void)
{
    const char *bin = getenv("LLMLOAD_BIN");
    if (!bin || !*bin) {
        fprintf(stderr, "harness: LLMLOAD_BIN is not set\n");
        return NULL;
    }
    return bin;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* argv = bin, prefix..., args... NULL. Caller frees the array only. */
static char **build_argv(const char *bin, const char *const *prefix, const char *const *args)
{
    size_t n = 1;
    for (const char *const *p = prefix; p && *p; p++)
        n++;
    for (const char *const *p = args; p && *p; p++)
        n++;
    char **argv = calloc(n + 1, sizeof(char *));
    if (!argv)
        return NULL;
    size_t i = 0;
    argv[i++] = (char *)bin;
    for (const char *const *p = prefix; p && *p; p++)
        argv[i++] = (char *)*p;
    for (const char *const *p = args; p && *p; p++)
        argv[i++] = (char *)*p;
    argv[i] = NULL;
    return argv;
}

int harness_reap(pid_t pid, int timeout_ms)
{
    return ll_reap(pid, 0, timeout_ms);
}

int harness_sim_start(struct harness_sim *s, const char *const *extra_args)
{
    memset(s, 0, sizeof(*s));
    const char *bin = harness_bin();
    if (!bin)
        return -1;
    static const char *const prefix[] = {"sim", "--port", "0", NULL};
    char **argv = build_argv(bin, prefix, extra_args);
    if (!argv) {
        fprintf(stderr, "harness: out of memory\n");
        return -1;
    }
    char line[256], err[320];
    pid_t pid = ll_spawn_first_line(bin, argv, NULL, 10000, line, sizeof line, err, sizeof err);
    free(argv);
    int ok = pid > 0;
    if (pid < 0 && strncmp(err, "no first line", 13) != 0) { /* pipe or fork */
        fprintf(stderr, "harness: %s\n", err);
        return -1;
    }
    const char *pfx = "http://127.0.0.1:";
    char *end = NULL;
    long port = 0;
    if (ok && strncmp(line, pfx, strlen(pfx)) == 0) {
        errno = 0;
        port = strtol(line + strlen(pfx), &end, 10);
        if (errno || *end != '\0' || port <= 0 || port > 65535)
            ok = 0;
    } else {
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "harness: sim did not print its address (got \"%s\")\n", line);
        if (pid > 0)
            ll_reap(pid, SIGKILL, 5000);
        return -1;
    }
    s->pid = pid;
    s->port = (int)port;
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
    return 0;
}

int harness_sim_stop_status(struct harness_sim *s)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    int st = harness_reap(s->pid, 5000);
    s->pid = 0;
    return st;
}

void harness_sim_stop(struct harness_sim *s)
{
    (void)harness_sim_stop_status(s);
}

/* Append what fd has to *buf; returns 0 on EOF, 1 on more, -1 on error. */
static int drain(int fd, char **buf, size_t *len, size_t *cap)
{
    char tmp[65536];
    ssize_t r = read(fd, tmp, sizeof(tmp));
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (r == 0)
        return 0;
    if (*len + (size_t)r + 1 > *cap) {
        size_t nc = *cap ? *cap : 4096;
        while (nc < *len + (size_t)r + 1)
            nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, tmp, (size_t)r);
    *len += (size_t)r;
    (*buf)[*len] = '\0';
    return 1;
}

int harness_run(const char *const *args, int timeout_s, int *exit_status, char **out,
                char **err)
{
    const char *bin = harness_bin();
    if (!bin)
        return -1;
    char **argv = build_argv(bin, NULL, args);
    int po[2], pe[2];
    if (!argv || pipe2(po, O_CLOEXEC) < 0) {
        free(argv);
        return -1;
    }
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        free(argv);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "harness: fork: %s\n", strerror(errno));
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        free(argv);
        return -1;
    }
    if (pid == 0) {
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        execv(bin, argv);
        _exit(127);
    }
    free(argv);
    close(po[1]);
    close(pe[1]);
    char *bo = NULL, *be = NULL;
    size_t lo = 0, le = 0, co = 0, ce = 0;
    int open_o = 1, open_e = 1, killed = 0;
    uint64_t deadline = mono_ms() + (uint64_t)timeout_s * 1000;
    while (open_o || open_e) {
        uint64_t now = mono_ms();
        if (now >= deadline) {
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        struct pollfd pfd[2] = {{.fd = open_o ? po[0] : -1, .events = POLLIN},
                                {.fd = open_e ? pe[0] : -1, .events = POLLIN}};
        int pr = poll(pfd, 2, (int)LL_HARNESS_MIN(deadline - now, 1000));
        if (pr < 0 && errno != EINTR)
            break;
        if (open_o && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
            open_o = drain(po[0], &bo, &lo, &co) > 0;
        if (open_e && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
            open_e = drain(pe[0], &be, &le, &ce) > 0;
    }
    close(po[0]);
    close(pe[0]);
    uint64_t now = mono_ms();
    int left_ms = now < deadline ? (int)(deadline - now) : 0;
    int st = harness_reap(pid, killed ? 5000 : left_ms + 1000);
    if (exit_status)
        *exit_status = st;
    if (!bo)
        bo = calloc(1, 1);
    if (!be)
        be = calloc(1, 1);
    if (out)
        *out = bo;
    else
        free(bo);
    if (err)
        *err = be;
    else
        free(be);
    return st < 0 ? -1 : 0;
}

char *harness_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t n = strlen(base) + 32;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/llmload-test-XXXXXX", base);
    if (!mkdtemp(path)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) < 0)
        fprintf(stderr, "harness: remove %s: %s\n", path, strerror(errno));
    return 0;
}

void harness_rm_rf(const char *dir)
{
    if (dir && *dir)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int harness_http(int port, const char *raw_request, size_t len, char **response,
                 size_t *response_len, int timeout_ms)
{
    *response = NULL;
    *response_len = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "harness: connect 127.0.0.1:%d: %s\n", port, strerror(errno));
        close(fd);
        return -1;
    }
    if (harness_send_all(fd, raw_request, len, NULL) != 0) {
        fprintf(stderr, "harness: send: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        if (drain(fd, &buf, &n, &cap) <= 0)
            break;
    }
    close(fd);
    if (!buf)
        buf = calloc(1, 1);
    *response = buf;
    *response_len = n;
    return buf ? 0 : -1;
}

char *harness_line_and_next(const char *text, const char *head, const char *next)
{
    char want[200];
    snprintf(want, sizeof want, "\n%s", head);
    const char *at = strstr(text, want);
    if (!at)
        fail_msg("no line starting \"%s\" in: %s", head, text);
    at++;
    const char *end = strchr(at, '\n');
    assert_non_null(end);
    if (strncmp(end + 1, next, strlen(next)) == 0)
        end = strchr(end + 1, '\n');
    assert_non_null(end);
    char *l = strndup(at, (size_t)(end - at));
    assert_non_null(l);
    return l;
}

char *harness_run_lines(const char *const *args, const char *head, const char *next)
{
    char *out = harness_run_expect(args, 60, HARNESS_RC_OK_OR_INVALID, NULL);
    char *l = harness_line_and_next(out, head, next);
    free(out);
    return l;
}

char *harness_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "harness: open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int r;
    while ((r = drain(fd, &buf, &n, &cap)) > 0) {
    }
    close(fd);
    if (r < 0) {
        free(buf);
        return NULL;
    }
    if (!buf)
        buf = calloc(1, 1);
    if (len)
        *len = n;
    return buf;
}

/* ---- cmocka helpers ------------------------------------------------------ */

struct harness_sim harness_cur_sim;

void harness_cur_sim_start(const char *const *extra_args)
{
    if (harness_sim_start(&harness_cur_sim, extra_args) != 0)
        fail_msg("llmload sim did not start");
}

int harness_sim_teardown(void **state)
{
    if (harness_cur_sim.pid > 0)
        harness_sim_stop(&harness_cur_sim);
    harness_cur_sim.pid = 0;
    return 0;
}

int harness_sim_tmp_teardown(void **state)
{
    harness_sim_teardown(state);
    harness_tmp_end();
    return 0;
}

/* Fail the test unless llmload cmd's exit status is want (0 or 1 for
 * HARNESS_RC_OK_OR_INVALID), with its stdout o and stderr e. */
static void expect_status(const char *cmd, int status, int want, const char *o, const char *e)
{
    if (status != want && !(want == HARNESS_RC_OK_OR_INVALID && (status == 0 || status == 1)))
        fail_msg("llmload %s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s", cmd, status,
                 want, o, e);
}

char *harness_run_expect(const char *const *args, int timeout_s, int want_status,
                         char **err_out)
{
    int status = -1;
    char *o = NULL, *e = NULL;
    if (harness_run(args, timeout_s, &status, &o, &e) != 0)
        fail_msg("could not run llmload %s", args[0]);
    char cmd[1024];
    size_t at = 0;
    cmd[0] = '\0';
    for (size_t i = 0; args[i] && at < sizeof cmd; i++)
        at += (size_t)snprintf(cmd + at, sizeof cmd - at, "%s%s", i ? " " : "", args[i]);
    expect_status(cmd, status, want_status, o, e);
    if (err_out)
        *err_out = e;
    else
        free(e);
    return o;
}

void harness_expect_usage(const char *const *args, const char *needle)
{
    int status = -1;
    char *o = NULL, *e = NULL;
    if (harness_run(args, 20, &status, &o, &e) != 0)
        fail_msg("could not run llmload %s", args[0]);
    const char *nl = strchr(e, '\n');
    if (status != 2 || strstr(e, needle) == NULL || nl == NULL || nl[1] != '\0' || o[0] != '\0')
        fail_msg("llmload %s: exit %d, expected 2 with one stderr line naming \"%s\" and "
                 "nothing on stdout\nstdout:\n%s\nstderr:\n%s",
                 args[0], status, needle, o, e);
    free(o);
    free(e);
}

void harness_expect_usages(const struct harness_usage *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        harness_expect_usage(u[i].args, u[i].needle);
}

void harness_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fail_msg("cannot create %s", path);
    size_t len = strlen(text);
    if (fwrite(text, 1, len, f) != len || fclose(f) != 0)
        fail_msg("cannot write %s", path);
}

char *harness_run_against_sim(const char *cmd, const char *const *fixed,
                              const char *const *args, int timeout_s, int *status,
                              char **out, char **err)
{
    char *tmp = harness_tmpdir();
    assert_non_null(tmp);
    char dir[600], url[200];
    snprintf(dir, sizeof dir, "%s/r", tmp);
    snprintf(url, sizeof url, "%s/v1", harness_cur_sim.url);
    const char *argv[64] = {cmd, "--url", url, "--out", dir, "--quiet"};
    size_t n = 6;
    if (strcmp(cmd, "sweep") == 0) {
        /* These sweeps test the analysis, not the self-check (test_guards
         * and the unit tests do): a step that this shared machine's jitter
         * made INVALID would leave the capacity search, and the test's
         * premise with it. With the widest tolerance a step is INVALID
         * only when the client's lateness outgrew the latency itself. A
         * test's own --lateness-tolerance, later in argv, wins. */
        argv[n++] = "--lateness-tolerance";
        argv[n++] = "100%";
    }
    for (size_t i = 0; fixed && fixed[i]; i++) {
        assert_true(n < 63);
        argv[n++] = fixed[i];
    }
    for (size_t i = 0; args[i]; i++) {
        assert_true(n < 63);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    free(tmp);
    if (harness_run(argv, timeout_s, status, out, err) != 0)
        fail_msg("could not run llmload %s", cmd);
    char *res = strdup(dir);
    assert_non_null(res);
    return res;
}

char *harness_run_client(const char *const *fixed, const char *const *args, int expect_rc,
                         char **err_out)
{
    int status = -1;
    char *o = NULL, *e = NULL;
    char *dir = harness_run_against_sim("run", fixed, args, 60, &status, &o, &e);
    expect_status("run", status, expect_rc, o, e);
    free(o);
    if (err_out)
        *err_out = e;
    else
        free(e);
    return dir;
}

char *harness_run_sim_verdict(const char *cmd, const char *const *args, int timeout_s, char **out,
                              char **err)
{
    int status = -1;
    char *dir = harness_run_against_sim(cmd, NULL, args, timeout_s, &status, out, err);
    expect_status(cmd, status, HARNESS_RC_OK_OR_INVALID, *out, *err);
    return dir;
}

int64_t harness_run_config_ival(const char *dir, const char *key)
{
    json_t *run = harness_json_load(dir, "run.json");
    int64_t v = harness_ival_req(json_object_get(run, "config"), key);
    json_decref(run);
    return v;
}

char *harness_sweep_ok(const char *const *args, int timeout_s, char **out, char **err)
{
    int status = -1;
    char *o = NULL, *e = NULL;
    char *dir = harness_run_against_sim("sweep", NULL, args, timeout_s, &status, &o, &e);
    harness_sim_teardown(NULL);
    expect_status("sweep", status, 0, o, e);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return dir;
}

char *harness_run_on_sim(const char *const *sim_args, const char *const *fixed,
                         const char *const *args)
{
    harness_cur_sim_start(sim_args);
    char *dir = harness_run_client(fixed, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_teardown(NULL);
    return dir;
}

char *harness_report_rebuilds(const char *dir, const char *const *files)
{
    char path[700];
    size_t n = 0;
    while (files[n])
        n++;
    char **before = calloc(n, sizeof *before);
    assert_non_null(before);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        before[i] = harness_read_file(path, NULL);
        assert_non_null(before[i]);
        unlink(path);
    }
    const char *rargs[] = {"report", dir, NULL};
    /* report exits as the run did: 1 when a step was INVALID (a loaded box). */
    char *o = harness_run_expect(rargs, 60, HARNESS_RC_OK_OR_INVALID, NULL);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        char *after = harness_read_file(path, NULL);
        assert_non_null(after);
        if (strcmp(before[i], after) != 0) {
            size_t at = 0;
            while (before[i][at] && before[i][at] == after[at])
                at++;
            size_t from = at > 80 ? at - 80 : 0;
            fail_msg("%s differs after llmload report at byte %zu:\nrun:    %.160s\nreport: %.160s",
                     files[i], at, before[i] + from, after + from);
        }
        free(after);
        free(before[i]);
    }
    free(before);
    return o;
}

void harness_sweep_rate(char *buf, size_t len, double rate_per_s)
{
    snprintf(buf, len, "%.3g", rate_per_s);
}

void harness_sweep_rates(char *buf, size_t len, double c, const double *f, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char r[16];
        harness_sweep_rate(r, sizeof r, f[i] * c);
        int w = snprintf(buf + at, len - at, "%s%s", i ? "," : "", r);
        assert_true(w > 0 && (size_t)w < len - at);
        at += (size_t)w;
    }
}

double harness_small_sim_start(const char *const *extra_args)
{
    const char *args[32] = {HARNESS_SMALL_SIM};
    size_t n = 0;
    while (args[n])
        n++;
    for (size_t i = 0; extra_args && extra_args[i]; i++) {
        assert_true(n < 31);
        args[n++] = extra_args[i];
    }
    args[n] = NULL;
    harness_cur_sim_start(args);
    return harness_small_sim_rps();
}

double harness_small_sim_rps(void)
{
    struct sim_profile p;
    assert_int_equal(sim_profile_get("default", &p), 0);
    p.engine.max_num_seqs = HARNESS_SMALL_SIM_SEQS;
    p.engine.step_base_ns = 20 * LL_NS_PER_MS;
    double c = sim_profile_capacity_rps(&p.engine, 64, 16);
    ASSERT_IN_RANGE(c, 10, 14); /* 12.07 by the formula of docs/sim-engine.md */
    return c;
}

void harness_results_free(char *dir)
{
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    harness_rm_rf(dir);
    free(dir);
}

json_t *harness_jsonl_load(const char *path)
{
    size_t len = 0;
    char *text = harness_read_file(path, &len);
    assert_non_null(text);
    json_t *arr = json_array();
    assert_non_null(arr);
    char *line = text;
    size_t lineno = 0;
    while (line < text + len) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (!nl)
            fail_msg("%s: the last line has no newline", path);
        lineno++;
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, &je);
        if (!j)
            fail_msg("%s line %zu: %s", path, lineno, je.text);
        assert_int_equal(json_array_append_new(arr, j), 0);
        line = nl + 1;
    }
    free(text);
    return arr;
}

json_t *harness_jsonl_in(const char *dir, const char *name)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        fail_msg("path %s/%s too long", dir, name);
    return harness_jsonl_load(path);
}

struct harness_recs *harness_recs_load(const char *path)
{
    json_t *arr = harness_jsonl_load(path);
    struct harness_recs *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->n = json_array_size(arr);
    r->items = calloc(r->n ? r->n : 1, sizeof *r->items);
    assert_non_null(r->items);
    for (size_t i = 0; i < r->n; i++)
        r->items[i] = json_incref(json_array_get(arr, i));
    json_decref(arr);
    return r;
}

struct harness_recs *harness_requests_load(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/requests.jsonl", dir);
    return harness_recs_load(path);
}

void harness_recs_free(struct harness_recs *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        json_decref(r->items[i]);
    free(r->items);
    free(r);
}

json_t *harness_json_load(const char *dir, const char *name)
{
    char path[700];
    if (dir)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", name);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    return j;
}

json_t *harness_summary_load(const char *dir)
{
    return harness_json_load(dir, "summary.json");
}

json_t *harness_expect_passed(const char *dir, size_t n)
{
    json_t *s = harness_summary_load(dir);
    json_t *ex = json_object_get(s, "expect");
    assert_int_equal(json_array_size(ex), n);
    size_t i;
    json_t *o;
    json_array_foreach(ex, i, o)
    {
        if (strcmp(harness_sval(o, "result"), "pass") != 0)
            fail_msg("%s: %s", harness_sval(o, "expect"), harness_sval(o, "result"));
    }
    return s;
}

int64_t harness_ival(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

int64_t harness_ival_req(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v)) {
        char *s = json_dumps(o, JSON_COMPACT);
        fail_msg("field \"%s\" is not an integer in %s", k, s ? s : "?");
    }
    return (int64_t)json_integer_value(v);
}

const char *harness_sval(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

int harness_is_null(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        fail_msg("field \"%s\" is missing", k);
    return json_is_null(v);
}

double harness_num(json_t *o, const char *path)
{
    char buf[200];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = o;
    for (char *p = buf, *dot; p; p = dot ? dot + 1 : NULL) {
        dot = strchr(p, '.');
        if (dot)
            *dot = '\0';
        cur = json_object_get(cur, p);
        if (!cur)
            fail_msg("\"%s\" is missing (at \"%s\")", path, p);
    }
    if (!json_is_number(cur))
        fail_msg("\"%s\" is not a number", path);
    return json_number_value(cur);
}

void harness_text_check(const char *what, const char *text, const char *const *has,
                        const char *const *lacks)
{
    if (!text)
        fail_msg("%s: no text to search", what);
    for (size_t i = 0; has && has[i]; i++)
        if (!strstr(text, has[i]))
            fail_msg("%s lacks \"%s\":\n%.4000s", what, has[i], text);
    for (size_t i = 0; lacks && lacks[i]; i++)
        if (strstr(text, lacks[i]))
            fail_msg("%s has \"%s\", which it must not:\n%.4000s", what, lacks[i], text);
}

void harness_start_in(char *buf, size_t len, long ms)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + ms * 1000000LL;
    snprintf(buf, len, "%lld.%09lld", ns / 1000000000LL, ns % 1000000000LL);
}

char *harness_read_in(const char *dir, const char *name)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        fail_msg("path %s/%s too long", dir, name);
    char *text = harness_read_file(path, NULL);
    if (!text)
        fail_msg("cannot read %s", path);
    return text;
}

json_t *harness_row_named(json_t *rows, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (strcmp(harness_sval(r, "row"), name) == 0)
            return r;
    }
    fail_msg("no row %s", name);
    return NULL;
}

double harness_step_window_tokens(json_t *recs, json_t *step)
{
    int64_t idx = harness_ival(step, "step"), lo = harness_ival(step, "warmup_ns"),
            hi = harness_ival(step, "duration_ns");
    double tokens = 0;
    size_t i;
    json_t *x;
    json_array_foreach(recs, i, x)
    {
        json_t *end = json_object_get(x, "end_ns");
        if (harness_ival(x, "step") != idx || strcmp(harness_sval(x, "kind"), "ok") != 0 ||
            !json_is_integer(end))
            continue;
        int64_t t = json_integer_value(end);
        if (t >= lo && t < hi)
            tokens += (double)harness_ival(x, "output_tokens");
    }
    return tokens;
}

char *harness_cur_tmp;

void harness_tmp_begin(void)
{
    harness_cur_tmp = harness_tmpdir();
    assert_non_null(harness_cur_tmp);
}

void harness_tmp_path(char *buf, size_t len, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", harness_cur_tmp, name);
    assert_true(n > 0 && (size_t)n < len);
}

void harness_tmp_results_stub(char *buf, size_t len, const char *name, const char *command)
{
    char path[1024], text[256];
    harness_tmp_path(buf, len, name);
    const char *mk[] = {"mkdir", "-p", buf, NULL};
    assert_int_equal(harness_run_quiet(mk, 10), 0);
    snprintf(path, sizeof path, "%s/run.json", buf);
    snprintf(text, sizeof text, "{\"schema\": \"llmload.run/1\", \"command\": \"%s\"}\n", command);
    harness_write_file(path, text);
}

void harness_log_args(struct harness_argv *a, const char *const *extra_args, const char *name,
                      char *logp, size_t len)
{
    if (!harness_cur_tmp)
        harness_tmp_begin();
    harness_tmp_path(logp, len, name);
    harness_argv_add(a, extra_args);
    harness_argv_add(a, (const char *const[]){"--log", logp, NULL});
}

void harness_logged_sim_start(char *logp, size_t len, const char *const *extra_args)
{
    struct harness_argv a = {.n = 0};
    harness_log_args(&a, extra_args, "sim.log", logp, len);
    harness_cur_sim_start(a.v);
}

void harness_sim_v1_start(char *url, size_t len, const char *const *extra_args)
{
    if (!harness_cur_tmp)
        harness_tmp_begin();
    harness_cur_sim_start(extra_args);
    if ((size_t)snprintf(url, len, "%s/v1", harness_cur_sim.url) >= len)
        fail_msg("the sim's URL does not fit %zu bytes", len);
}

int harness_launcher_env(void *ud)
{
    static const char *const all[] = {
        "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
        "SLURM_NTASKS",         "JOB_COMPLETION_INDEX", NULL};
    for (size_t i = 0; all[i]; i++)
        unsetenv(all[i]);
    for (char *const *e = ud; e && *e; e++) {
        if (putenv(*e) != 0)
            return -1;
    }
    return 0;
}

void harness_instant_sim_start(void)
{
    harness_cur_sim_start((const char *const[]){"--profile", "instant", NULL});
}

void harness_compare_refuses(const char *const *a, const char *const *b, const char *needle)
{
    harness_instant_sim_start();
    const char *fixed[] = {"--rate", "100", "--requests", "5", "--no-metrics", NULL};
    char *da = harness_run_client(fixed, a, HARNESS_RC_OK_OR_INVALID, NULL);
    char *db = harness_run_client(fixed, b, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    const char *cargs[] = {"compare", da, db, "--quiet", NULL};
    char *err = NULL;
    free(harness_run_expect(cargs, 30, 2, &err));
    harness_text_check("compare's stderr", err, (const char *const[]){needle, NULL}, NULL);
    free(err);
    harness_results_free(da);
    harness_results_free(db);
}

struct harness_recs *harness_run_recs(const char *const *fixed, const char *const *args,
                                      size_t want_n, char **dir)
{
    *dir = harness_run_client(fixed, args, HARNESS_RC_OK_OR_INVALID, NULL);
    harness_sim_stop(&harness_cur_sim);
    struct harness_recs *recs = harness_requests_load(*dir);
    if (recs->n != want_n)
        fail_msg("%s: %zu records, expected %zu", *dir, recs->n, want_n);
    return recs;
}

void harness_tmp_file(char *path, size_t len, const char *name, const char *text)
{
    harness_tmp_path(path, len, name);
    harness_write_file(path, text);
}

void harness_tmp_end(void)
{
    if (harness_cur_tmp) {
        harness_rm_rf(harness_cur_tmp);
        free(harness_cur_tmp);
        harness_cur_tmp = NULL;
    }
}

void harness_kill_reap(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
    }
    *pid = 0;
}

pid_t harness_spawn(const char *const *args, const char *out_path, const char *err_path,
                    int err_fd, int (*prep)(void *ud), void *ud)
{
    const char *bin = harness_bin();
    if (bin == NULL)
        fail_msg("LLMLOAD_BIN is not set");
    struct harness_argv a = {.v = {bin}, .n = 1};
    harness_argv_add(&a, args);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (prep != NULL && prep(ud) != 0)
            _exit(126);
        int in = open("/dev/null", O_RDONLY);
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = err_fd >= 0 ? err_fd : open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        close(in);
        close(o);
        close(e);
        execv(bin, (char *const *)a.v);
        _exit(127);
    }
    return pid;
}

void harness_argv_add(struct harness_argv *a, const char *const *args)
{
    for (size_t i = 0; args && args[i]; i++) {
        assert_true(a->n < HARNESS_MAX_ARGS);
        a->v[a->n++] = args[i];
    }
    a->v[a->n] = NULL;
}

void harness_cleanup(pid_t *const *pids)
{
    for (size_t i = 0; pids[i] != NULL; i++)
        harness_kill_reap(pids[i]);
    harness_sim_teardown(NULL);
    harness_tmp_end();
}

int harness_send_all(int fd, const void *buf, size_t len, size_t *sent)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        if (sent != NULL)
            *sent += (size_t)w;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int harness_free_port(void)
{
    int port;
    close(harness_bind_local(-1, &port));
    return port;
}

int harness_bind_local(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    if (backlog >= 0)
        assert_int_equal(listen(fd, backlog), 0);
    socklen_t sl = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

void *harness_shared_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        fail_msg("mmap of %zu shared bytes: %s", size, strerror(errno));
    memset(p, 0, size);
    return p;
}

void harness_sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Whether name matches one of the comma-separated globs in list. */
static int name_in_list(const char *name, const char *list)
{
    char glob[128];

    while (*list) {
        size_t n = strcspn(list, ",");
        if (n > 0 && n < sizeof glob) {
            memcpy(glob, list, n);
            glob[n] = '\0';
            if (fnmatch(glob, name, 0) == 0)
                return 1;
        }
        list += n;
        if (*list == ',')
            list++;
    }
    return 0;
}

int harness_run_tests(const struct CMUnitTest *tests, size_t n)
{
    const char *only = getenv("LLMLOAD_TEST_FILTER");
    const char *skip = getenv("LLMLOAD_TEST_SKIP");
    struct CMUnitTest *keep = calloc(n ? n : 1, sizeof(*keep));
    size_t k = 0;
    int rc;

    if (!keep)
        return 1;
    if (harness_bin() == NULL) {
        fprintf(stderr, "(run the integration tests through make integration)\n");
        free(keep);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (only && *only && !name_in_list(tests[i].name, only))
            continue;
        if (skip && *skip && name_in_list(tests[i].name, skip))
            continue;
        keep[k++] = tests[i];
    }
    if (k == 0) {
        fprintf(stderr, "no test left after LLMLOAD_TEST_FILTER=\"%s\" LLMLOAD_TEST_SKIP=\"%s\"\n",
                only ? only : "", skip ? skip : "");
        free(keep);
        return 1;
    }
    rc = _cmocka_run_group_tests("tests", keep, k, NULL, NULL);
    free(keep);
    return rc;
}

int harness_run_quiet(const char *const *argv, int timeout_s)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(126);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = harness_reap(pid, timeout_s * 1000);
    return st >= 0 && st < 128 ? st : -1;
}

int harness_wait_listening(int port, int timeout_ms)
{
    uint64_t deadline = mono_ms() + (uint64_t)timeout_ms;
    while (mono_ms() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 0;
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        close(fd);
        if (ok)
            return 1;
        harness_sleep_ms(20);
    }
    return 0;
}

void harness_serve_forever(int lfd, unsigned alarm_s, void *(*thread_main)(void *),
                           void *(*make_arg)(int fd, void *ud), void *ud)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(alarm_s);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(1);
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        void *arg = make_arg(fd, ud);
        pthread_t th;
        if (!arg) {
            close(fd);
            continue;
        }
        if (pthread_create(&th, &attr, thread_main, arg) != 0) {
            close(fd);
            free(arg);
        }
    }
}

pid_t harness_serve_fork(int lfd, unsigned alarm_s, void *(*thread_main)(void *),
                         void *(*make_arg)(int fd, void *ud), void *ud)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        harness_serve_forever(lfd, alarm_s, thread_main, make_arg, ud);
        _exit(1); /* not reached: it never returns */
    }
    close(lfd);
    return pid;
}

void *harness_fd_arg(int fd, void *ud)
{
    (void)ud;
    int *p = malloc(sizeof *p);
    if (p)
        *p = fd;
    return p;
}

int harness_fd_take(void *arg)
{
    int fd = *(int *)arg;
    free(arg);
    return fd;
}

/* harness_tls_server_start, serving the files of www_dir (-WWW) when it
 * is not NULL, else s_server's status page to any GET (-www). */
static int tls_server_start(const char *cn, const char *san, const char *www_dir, char *url,
                            size_t url_len, char *cert, size_t cert_len, pid_t *pid,
                            const char **why)
{
    const char *ver[] = {"openssl", "version", NULL};
    if (harness_run_quiet(ver, 10) != 0) {
        *why = "openssl CLI not found";
        return -1;
    }
    char key[600], accept[64], subj[160], ext[200];
    harness_tmp_path(cert, cert_len, "cert.pem");
    harness_tmp_path(key, sizeof key, "key.pem");
    snprintf(subj, sizeof subj, "/CN=%s", cn);
    snprintf(ext, sizeof ext, "subjectAltName=%s", san);
    const char *gen[] = {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
                         cert, "-days", "2", "-subj", subj, "-addext", ext, NULL};
    if (harness_run_quiet(gen, 20) != 0) {
        *why = "openssl could not make a certificate";
        return -1;
    }
    int port = harness_free_port();
    snprintf(accept, sizeof accept, "127.0.0.1:%d", port);
    snprintf(url, url_len, "https://127.0.0.1:%d/v1", port);
    const char *srv[] = {"openssl", "s_server", "-accept",
                         accept,    "-cert",    cert,
                         "-key",    key,        www_dir ? "-WWW" : "-www",
                         "-quiet",  NULL};
    *pid = fork();
    if (*pid < 0) {
        *pid = 0;
        *why = "fork failed";
        return -1;
    }
    if (*pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int dn = open("/dev/null", O_RDWR);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(126);
        if (www_dir && chdir(www_dir) != 0)
            _exit(126);
        execvp(srv[0], (char *const *)srv);
        _exit(127);
    }
    if (!harness_wait_listening(port, 5000)) {
        *why = "openssl s_server did not listen";
        return -1;
    }
    return 0;
}

int harness_tls_server_start(const char *cn, const char *san, char *url, size_t url_len, char *cert,
                             size_t cert_len, pid_t *pid, const char **why)
{
    return tls_server_start(cn, san, NULL, url, url_len, cert, cert_len, pid, why);
}

int harness_tls_files_start(const char *cn, const char *san, const char *dir, char *url,
                            size_t url_len, char *cert, size_t cert_len, pid_t *pid,
                            const char **why)
{
    return tls_server_start(cn, san, dir, url, url_len, cert, cert_len, pid, why);
}

size_t harness_read_request(int fd, char *buf, size_t cap, size_t *body_len, int *body_kept)
{
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        if (n + 1 >= cap)
            return 0;
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        n += (size_t)r;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t head = (size_t)(end + 4 - buf), body = 0;
    for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) {
            char *e = NULL;
            errno = 0;
            unsigned long long v = strtoull(line + 17, &e, 10);
            if (e == line + 17 || errno)
                return 0;
            body = (size_t)v;
        } else if (strncasecmp(line + 2, "transfer-encoding:", 18) == 0) {
            return 0;
        }
    }
    int keep = head + body + 1 <= cap;
    size_t have = n - head; /* body bytes already in buf */
    while (have < body) {
        char tmp[4096];
        char *dst = keep ? buf + head + have : tmp;
        size_t room = keep || body - have < sizeof tmp ? body - have : sizeof tmp;
        ssize_t r = recv(fd, dst, room, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        have += (size_t)r;
    }
    buf[keep ? head + body : head] = '\0';
    *body_len = body;
    *body_kept = keep;
    return head;
}

void harness_workload(struct workload *w, uint64_t seed, const char *prompt, const char *output,
                      int ignore_eos)
{
    char err[200];
    memset(w, 0, sizeof *w);
    w->seed = seed;
    w->ignore_eos = ignore_eos != 0;
    if (dist_parse(prompt, DIST_UNIT_NONE, &w->prompt_tokens, err, sizeof err) != 0)
        fail_msg("--prompt-tokens %s: %s", prompt, err);
    if (dist_parse(output, DIST_UNIT_NONE, &w->output_tokens, err, sizeof err) != 0)
        fail_msg("--output-tokens %s: %s", output, err);
}

void harness_check_prefix_hits(const char *dir)
{
    struct workload w;
    harness_workload(&w, 1, "256", "8", 1);
    w.prefix = (struct wl_prefix){.fraction = 0.5, .groups = 2, .tokens = 128};
    struct harness_recs *r = harness_requests_load(dir);
    assert_true(r->n > 30);
    size_t shared = 0, hits = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct req_spec spec;
        workload_spec(&w, (uint64_t)harness_ival(r->items[i], "id"), &spec);
        assert_string_equal(harness_sval(r->items[i], "kind"), "ok");
        assert_int_equal(harness_ival(r->items[i], "prompt_tokens"), 256);
        assert_int_equal(harness_ival(r->items[i], "prompt_tokens_server"), 256);
        int64_t cached = harness_ival(r->items[i], "cached_tokens");
        if (spec.prefix_id >= 0) {
            shared++;
            assert_true(cached == 0 || cached == 128);
            hits += cached == 128;
        } else {
            assert_int_equal(cached, 0);
        }
    }
    /* Only a group's first requests (before its prefix is computed) miss. */
    assert_true(shared > 10);
    assert_true(hits + 4 >= shared);
    harness_recs_free(r);
}

void harness_check_no_prefix_hits(const char *dir)
{
    struct harness_recs *r = harness_requests_load(dir);
    assert_true(r->n > 20);
    for (size_t i = 0; i < r->n; i++) {
        assert_int_equal(harness_ival(r->items[i], "prompt_tokens_server"), 256);
        assert_int_equal(harness_ival(r->items[i], "cached_tokens"), 0);
    }
    harness_recs_free(r);
}

size_t harness_svg_points(const char *html, const char *chart_id, const char *series, double *xs,
                          double *ys, size_t max)
{
    char pat[160];
    snprintf(pat, sizeof pat, "class=\"chart\" id=\"%s\"", chart_id);
    const char *start = strstr(html, pat);
    if (!start)
        fail_msg("no chart %s in the report", chart_id);
    const char *end = strstr(start, "</svg>");
    assert_non_null(end);
    snprintf(pat, sizeof pat, "data-series=\"%s\" data-x=\"", series);
    size_t n = 0;
    for (const char *p = strstr(start, pat); p && p < end; p = strstr(p + 1, pat)) {
        const char *q = p + strlen(pat);
        char *e;
        double x = strtod(q, &e);
        assert_true(e != q);
        const char *yq = strstr(q, "data-y=\"");
        assert_non_null(yq);
        double y = strtod(yq + 8, &e);
        assert_true(e != yq + 8);
        if (n < max) {
            xs[n] = x;
            ys[n] = y;
        }
        n++;
    }
    return n;
}

double harness_sim_metric_sum(const struct harness_sim *s, const char *name, int *n)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(harness_http(s->port, req, sizeof req - 1, &resp, &len, 5000), 0);
    double sum = 0;
    int count = 0;
    size_t nl = strlen(name);
    for (char *line = resp; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, nl) != 0 || (line[nl] != '{' && line[nl] != ' '))
            continue;
        char *sp = strchr(line, '}');
        sum += strtod(sp ? sp + 1 : line + nl, NULL);
        count++;
    }
    free(resp);
    if (n)
        *n = count;
    return sum;
}

/* ---- dupintb ---------------------------------------------------------- */

void *harness_conn_copy(const void *proto, size_t size, size_t fd_offset, int fd)
{
    char *c = malloc(size);
    if (c) {
        memcpy(c, proto, size);
        memcpy(c + fd_offset, &fd, sizeof fd);
    }
    return c;
}

/* ---- branch dupinta: a client stopped part-way, a TLS server or a skip ---- */

pid_t harness_cur_client;

int harness_client_teardown(void **state)
{
    harness_cleanup((pid_t *const[]){&harness_cur_client, NULL});
    return 0;
}

void harness_run_interrupted(char *dir, size_t len, const char *name, const char *const *args,
                             unsigned ms)
{
    char url[160], outp[600], errp[600], leaf[128];
    harness_sim_v1_start(url, sizeof url, NULL);
    harness_tmp_path(dir, len, name);
    snprintf(leaf, sizeof leaf, "%s.out", name);
    harness_tmp_path(outp, sizeof outp, leaf);
    snprintf(leaf, sizeof leaf, "%s.err", name);
    harness_tmp_path(errp, sizeof errp, leaf);
    struct harness_argv a = {.n = 0};
    harness_argv_add(&a, (const char *const[]){"run", "--url", url, "--out", dir, "--quiet", NULL});
    harness_argv_add(&a, args);
    harness_cur_client = harness_spawn(a.v, outp, errp, -1, NULL, NULL);
    /* The run's t=0 is its first request, not the spawn: a loaded box's
     * set-up (the /v1/models probe, the results directory) took over 3 s
     * under AddressSanitizer, and a signal 1.5 s after the spawn found no
     * session's second turn sent. The sim counts a request's prompt tokens
     * at its first step, within a step of its arrival. */
    for (int waited = 0;
         harness_sim_metric_sum(&harness_cur_sim, "vllm:prompt_tokens_total", NULL) <= 0;
         waited += 5) {
        if (waited >= 30000)
            fail_msg("the sim saw no request within 30 s of the client's start");
        harness_sleep_ms(5);
    }
    harness_sleep_ms(ms);
    assert_int_equal(kill(harness_cur_client, SIGINT), 0);
    int st = harness_reap(harness_cur_client, 30000);
    harness_cur_client = 0;
    assert_int_equal(st, 130);
}

void harness_tls_server_or_skip(const char *cn, const char *san, char *url, size_t url_len,
                                char *cert, size_t cert_len, pid_t *pid)
{
    const char *why;
    if (harness_tls_server_start(cn, san, url, url_len, cert, cert_len, pid, &why) != 0) {
        print_message("%s: TLS case skipped\n", why);
        skip();
    }
}

/* intb */

void harness_two_shards_run(const char *url, const char *prefix, const char *const *args,
                            char sd[2][600])
{
    for (int k = 0; k < 2; k++) {
        char leaf[64], spec[8];
        snprintf(leaf, sizeof leaf, "%s%d", prefix, k);
        snprintf(spec, sizeof spec, "%d/2", k);
        harness_tmp_path(sd[k], 600, leaf);
        const char *head[] = {"run", "--url", url, "--out", sd[k], "--shard", spec, NULL};
        struct harness_argv a = {.n = 0};
        harness_argv_add(&a, head);
        harness_argv_add(&a, args);
        free(harness_run_expect(a.v, 60, HARNESS_RC_OK_OR_INVALID, NULL));
    }
}

/* tidy */

double harness_page_value(const char *page, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(page, key);
    if (!p)
        fail_msg("no %s on the page:\n%s", name, page);
    return strtod(p + strlen(key), NULL);
}

int harness_expose_announced_port(const char *path)
{
    static const char head[] = "llmload: serving /metrics on http://127.0.0.1:";
    for (int i = 0; i < 200; i++) {
        char *text = access(path, F_OK) == 0 ? harness_read_file(path, NULL) : NULL;
        const char *p = text ? strstr(text, head) : NULL;
        int port = p ? (int)strtol(p + sizeof head - 1, NULL, 10) : 0;
        if (port > 0 && strstr(p, "/metrics\n")) {
            free(text);
            return port;
        }
        if (i == 199)
            fail_msg("no \"%s...\" line in 10 s; stderr so far:\n%s", head, text ? text : "");
        free(text);
        harness_sleep_ms(50);
    }
    return -1;
}

char *harness_wait_text(const char *path, const char *needle, int timeout_ms)
{
    for (int waited_ms = 0;; waited_ms += 50) {
        char *text = access(path, F_OK) == 0 ? harness_read_file(path, NULL) : NULL;
        if (text && strstr(text, needle))
            return text;
        if (waited_ms >= timeout_ms)
            fail_msg("no \"%s\" in %s within %d ms; it holds:\n%s", needle, path, timeout_ms,
                     text ? text : "");
        free(text);
        harness_sleep_ms(50);
    }
}
