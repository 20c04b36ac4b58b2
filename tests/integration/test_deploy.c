/* test_deploy.c: the launcher examples in deploy/ (docs/distributed.md,
 * "deploy/") say what llmload accepts.
 *
 * Each example's llmload arguments are taken from the file itself: the
 * LLMLOAD_ARGS array of the Slurm batch script and of the mpirun script
 * (evaluated by bash with the variables the script sets before it), the
 * container's args of the Kubernetes Job (with Kubernetes' $(VAR)
 * substitutions, the ConfigMap's mount point read as deploy/kubernetes/).
 * Each is run with --dry-run --dump-schedule under its launcher's
 * environment as shard 1 of 4: it must exit 0 and dump only the indices i
 * with i mod 4 == 1, thousands of them (the 10-minute schedule's part).
 * The Job's --shards must equal its completions and parallelism, and each
 * script must hand the array to its launcher. Nothing is sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "test.h"
#include "util/util.h"

#define MAX_ARGS 64

static pid_t cur_client;

static int teardown(void **state)
{
    harness_cleanup((pid_t *const[]){&cur_client, NULL});
    return 0;
}

/* The repository's deploy/NAME into buf. */
static void deploy_path(char *buf, size_t len, const char *name)
{
    const char *data = getenv("LLMLOAD_DATA");
    assert_non_null(data);
    snprintf(buf, len, "%s/../../deploy/%s", data, name);
}

/* Arguments owned as one block of NUL-separated strings. */
struct args {
    char *text;
    const char *v[MAX_ARGS + 1];
    size_t n;
};

static void args_push(struct args *a, const char *s)
{
    assert_true(a->n < MAX_ARGS);
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

/* LLMLOAD_ARGS of the bash script at path, evaluated by bash with vars
 * (shell assignments) set before it; one argument per line. */
static void script_args(const char *path, const char *vars, struct args *a)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "bash -c 'set -eu; %s; eval \"$(sed -n \"/^LLMLOAD_ARGS=(/,/^)/p\" \"%s\")\"; "
             "printf \"%%s\\n\" \"${LLMLOAD_ARGS[@]}\"'",
             vars, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = fread(a->text = calloc(1, cap), 1, cap - 1, p);
    assert_int_equal(pclose(p), 0);
    a->text[len] = '\0';
    for (char *s = a->text, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        *nl = '\0';
        args_push(a, s);
    }
    assert_true(a->n > 10);
    assert_string_equal(a->v[0], "run");
}

/* The file at path holds needle (its launcher line, say). */
static void file_has(const char *path, const char *needle)
{
    char *text = harness_read_file(path, NULL);
    assert_non_null(text);
    if (!strstr(text, needle))
        fail_msg("%s: no \"%s\"", path, needle);
    free(text);
}

/* Run llmload a... --dry-run --dump-schedule under env as shard 1 of 4:
 * exit 0, every dumped index 1 mod 4, more than 1,000 of them. */
static void dry_run_shard(const char *name, struct args *a, char **env)
{
    char dump[600], outp[600], errp[600], leaf[64];
    snprintf(leaf, sizeof leaf, "%s.jsonl", name);
    harness_tmp_path(dump, sizeof dump, leaf);
    snprintf(leaf, sizeof leaf, "%s.out", name);
    harness_tmp_path(outp, sizeof outp, leaf);
    snprintf(leaf, sizeof leaf, "%s.err", name);
    harness_tmp_path(errp, sizeof errp, leaf);
    args_push(a, "--dry-run");
    args_push(a, "--dump-schedule");
    args_push(a, dump);
    cur_client = harness_spawn(a->v, outp, errp, -1, harness_launcher_env, env);
    int st = harness_reap(cur_client, 60000);
    cur_client = 0;
    if (st != 0) {
        char *e = harness_read_file(errp, NULL);
        fail_msg("%s: llmload exit %d: %s", name, st, e ? e : "");
    }
    char *text = harness_read_file(dump, NULL);
    assert_non_null(text);
    size_t n = 0;
    for (char *s = text, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        long long ix;
        if (sscanf(s, "{\"index\":%lld,", &ix) != 1 || ix % 4 != 1)
            fail_msg("%s: dump line %zu is not shard 1 of 4's: %.80s", name, n, s);
        n++;
    }
    free(text);
    if (n < 1000)
        fail_msg("%s: %zu requests in shard 1 of 4, want the 10-minute schedule's part", name, n);
}

/* The llmload arguments of the launcher script at path, its variables set
 * to a URL where nothing listens, <tmp>/results and a start start_in_s
 * seconds ahead, run as dry_run_shard does under env. */
static void script_shard(const char *name, const char *path, int start_in_s, char **env)
{
    char vars[800], results[600];
    harness_tmp_path(results, sizeof results, "results");
    snprintf(vars, sizeof vars,
             "LLMLOAD_URL=http://127.0.0.1:9/v1; RESULTS=%s; "
             "START_AT=$(($(date +%%s) + %d))",
             results, start_in_s);
    struct args a = {0};
    script_args(path, vars, &a);
    dry_run_shard(name, &a, env);
    free(a.text);
}

static void test_slurm_sbatch(void **state)
{
    harness_tmp_begin();
    char path[600];
    deploy_path(path, sizeof path, "slurm/llmload.sbatch");
    file_has(path, "srun --ntasks-per-node=1 llmload \"${LLMLOAD_ARGS[@]}\"");
    file_has(path, "#SBATCH --ntasks-per-node=1");
    char *env[] = {"SLURM_PROCID=1", "SLURM_NTASKS=4", NULL};
    script_shard("slurm", path, 60, env);
}

static void test_mpirun_script(void **state)
{
    harness_tmp_begin();
    char path[600], vars[800];
    deploy_path(path, sizeof path, "mpirun/run.sh");
    file_has(path, "mpirun --hostfile \"$HOSTFILE\" -np \"$NP\" --map-by node llmload "
                   "\"${LLMLOAD_ARGS[@]}\"");
    deploy_path(vars, sizeof vars, "mpirun/hostfile");
    file_has(vars, "slots=1");
    char *env[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", NULL};
    script_shard("mpirun", path, 30, env);
}

/* "KEY: N" in the YAML text, N; fails when absent. */
static long yaml_int(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p)
        fail_msg("llmload-job.yaml: no \"%s\"", key);
    return strtol(p + strlen(key), NULL, 10);
}

static void test_kubernetes_job(void **state)
{
    harness_tmp_begin();
    char path[600], kdir[600], results[600], start[64];
    deploy_path(path, sizeof path, "kubernetes/llmload-job.yaml");
    deploy_path(kdir, sizeof kdir, "kubernetes/");
    harness_tmp_path(results, sizeof results, "results");
    time_t t = time(NULL) + 120;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char *text = harness_read_file(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "completionMode: Indexed"));
    long completions = yaml_int(text, "completions: "),
         parallelism = yaml_int(text, "parallelism: ");
    assert_int_equal(completions, parallelism);

    /* The container's args: each `- "..."` line after `args:`, with
     * Kubernetes' $(VAR) filled in and the ConfigMap read from the repo. */
    struct args a = {0};
    a.text = calloc(1, 1 << 16);
    size_t at = 0;
    const char *p = strstr(text, "args:\n");
    assert_non_null(p);
    p += strlen("args:\n");
    long shards = -1;
    for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        const char *q = p;
        while (*q == ' ')
            q++;
        if (strncmp(q, "- \"", 3) != 0)
            break;
        q += 3;
        const char *end = memchr(q, '"', (size_t)(nl - q));
        assert_non_null(end);
        char raw[512], out[1024];
        snprintf(raw, sizeof raw, "%.*s", (int)(end - q), q);
        size_t o = 0;
        for (const char *r = raw; *r && o < sizeof out - 600;) {
            static const char *const from[] = {"$(LLMLOAD_URL)", "$(START_AT)", "$(RUN_ID)",
                                               "/etc/llmload/", "/results"};
            const char *to[] = {"http://127.0.0.1:9/v1", start, "run1", kdir, results};
            size_t k;
            for (k = 0; k < LL_ARRAY_LEN(from); k++)
                if (strncmp(r, from[k], strlen(from[k])) == 0)
                    break;
            if (k < LL_ARRAY_LEN(from)) {
                o += (size_t)snprintf(out + o, sizeof out - o, "%s", to[k]);
                r += strlen(from[k]);
            } else {
                out[o++] = *r++;
            }
        }
        out[o] = '\0';
        if (a.n && strcmp(a.v[a.n - 1], "--shards") == 0)
            shards = strtol(out, NULL, 10);
        assert_true(strstr(out, "$(") == NULL);
        memcpy(a.text + at, out, o + 1);
        args_push(&a, a.text + at);
        at += o + 1;
    }
    free(text);
    assert_string_equal(a.v[0], "run");
    if (shards != completions)
        fail_msg("llmload-job.yaml: --shards %ld, completions %ld: they must agree", shards,
                 completions);
    /* shard 1 of the Job's 4 completions */
    assert_int_equal(completions, 4);
    char *env[] = {"JOB_COMPLETION_INDEX=1", NULL};
    dry_run_shard("kubernetes", &a, env);
    free(a.text);
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_slurm_sbatch, teardown),
             cmocka_unit_test_teardown(test_mpirun_script, teardown),
             cmocka_unit_test_teardown(test_kubernetes_job, teardown))
