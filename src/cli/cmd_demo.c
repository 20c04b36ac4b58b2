/* cmd_demo.c: `llmload demo`, the first thing a new user runs. Starts
 * `llmload sim --profile default --port 0` as a child process, sweeps it
 * with --rates auto and a sensible SLO, prints the table and the findings,
 * writes the report, and stops the sim (by its pid), also on Ctrl-C. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/badarg.h"
#include "cli/cmds.h"
#include "cli/sweepjob.h"
#include "decode/openai.h"
#include "measure/results.h"
#include "measure/slo.h"
#include "sim/profile.h"
#include "util/spawn.h"
#include "util/util.h"

#define DEMO_SLO "ttft=500ms,tpot=50ms"
/* Steps of at least 3s, lengthened to the hold rule (5 x the E2E p99
 * seen) up to 10s: the sim's 128-token outputs take 0.6 s unloaded and
 * 1.8 s near its capacity. The recovery step keeps the fixed lengths. */
#define DEMO_STEP_MIN "3s"
#define DEMO_STEP "auto:" DEMO_STEP_MIN
#define DEMO_MAX_STEP_S 10
#define DEMO_MAX_STEP LL_STR(DEMO_MAX_STEP_S) "s"
#define DEMO_OVERLOAD "3s"
#define DEMO_RECOVERY "9s"
#define DEMO_WARMUP "2s"
#define DEMO_PROBE "2s"
#define DEMO_STARTUP_MS 10000

static void demo_usage(FILE *f)
{
    fprintf(f,
            "usage: llmload demo [options]\n"
            "\n"
            "Start the built-in simulated server (llmload sim --profile default) on a free\n"
            "port of 127.0.0.1, sweep it with --rates auto, print the step table and the\n"
            "findings, write the report, and stop the server. Takes about 2 minutes.\n"
            "Arrivals are constant (open loop) so the short steps give a clean curve; run\n"
            "llmload sweep yourself for Poisson arrivals and longer steps. The findings\n"
            "name the steps held less than 5 x their E2E p99 (short).\n"
            "The default profile's theoretical capacity is 33.8 req/s for its workload\n"
            "(prompt 256, output 128 tokens, ignore_eos): see llmload sim --explain.\n"
            "The sweep is told the profile's batch bound (--engine-limits seqs=64), which\n"
            "no /metrics exports, so its findings can name the first limit reached.\n"
            "\n"
            "  --out DIR            results directory (default results/<timestamp>)\n"
            "  --force              write into an existing non-empty --out\n"
            "  --slo SPEC           SLO of the sweep (default " DEMO_SLO ")\n"
            "  --step-duration D|auto[:MIN]\n"
            "                       measured hold of each step (default " DEMO_STEP ": at least\n"
            "                       " DEMO_STEP_MIN
            ", lengthened to 5 x the E2E p99 seen, at most " DEMO_MAX_STEP ";\n"
            "                       the recovery step: " DEMO_OVERLOAD
            " overload, then " DEMO_RECOVERY ")\n"
            "  --warmup D           warm-up before each hold (default " DEMO_WARMUP ")\n"
            "  --probe-duration D   each capacity-probe round (default " DEMO_PROBE ")\n"
            "  --api NAME           the API to sweep the sim through: openai-chat (default),\n"
            "                       openai-completions, anthropic-messages or openai-responses\n"
            "  --quiet              no progress lines on stderr\n"
            "\n"
            "Exit status: as llmload sweep; 3 when the sim cannot be started.\n");
}

/* Start the sim; read its first stdout line ("http://127.0.0.1:PORT").
 * The child gets the signal mask it would have had (old). Returns the pid,
 * or -1 with the reason printed. */
static pid_t start_sim(const sigset_t *old, char *url, size_t url_len)
{
    char *argv[] = {"llmload", "sim", "--profile", "default", "--port", "0", NULL};
    char line[256], err[320];
    pid_t pid = ll_spawn_first_line("/proc/self/exe", argv, old, DEMO_STARTUP_MS, line, sizeof line,
                                    err, sizeof err);
    if (pid < 0 && strncmp(err, "no first line", 13) != 0) { /* pipe or fork */
        ll_errorf("demo: %s", err);
        return -1;
    }
    if (pid < 0 || strncmp(line, "http://", 7) != 0) {
        ll_errorf("demo: the sim did not print its address (got \"%s\")", line);
        if (pid > 0)
            ll_reap(pid, SIGKILL, 5000);
        return -1;
    }
    snprintf(url, url_len, "%s/v1", line);
    return pid;
}

/* SIGTERM the sim, give it 5 s, then SIGKILL; always reaps it. */
static void stop_sim(pid_t pid)
{
    if (pid > 0)
        ll_reap(pid, SIGTERM, 5000);
}

/* What `llmload demo` was asked for: the sweep's values (strings, passed
 * on as given) and its flags. */
struct demo_opts {
    const char *out, *slo, *step, *warmup, *probe, *api;
    int force, quiet;
};

/* Parse argv into *d (defaults first). Returns 1 when --help was printed
 * (the caller exits 0), else 0; a bad flag exits 2 through ll_usage_fail. */
static int demo_parse_args(int argc, char **argv, struct demo_opts *d)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},    {"force", no_argument, NULL, 'f'},
        {"slo", required_argument, NULL, 's'},    {"step-duration", required_argument, NULL, 'd'},
        {"warmup", required_argument, NULL, 'w'}, {"probe-duration", required_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'q'},        {"api", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int c;
    *d =
        (struct demo_opts){NULL, DEMO_SLO, DEMO_STEP, DEMO_WARMUP, DEMO_PROBE, "openai-chat", 0, 0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': d->out = optarg; break;
        case 'f': d->force = 1; break;
        case 's': d->slo = optarg; break;
        case 'd': d->step = optarg; break;
        case 'w': d->warmup = optarg; break;
        case 'p': d->probe = optarg; break;
        case 'q': d->quiet = 1; break;
        case 'a': d->api = optarg; break;
        case 'h':
            demo_usage(stdout);
            return 1;
        default: badarg_getopt_fail("demo", argv, optind, c, optopt, opts);
        }
    }
    if (optind < argc) {
        char why[512];
        badarg_operand(why, sizeof why, "demo", argv[optind], 0);
        ll_usage_fail("%s", why);
    }
    return 0;
}

/* Check the values passed on to the sweep before the sim starts, so a bad
 * one never leaves it running; exits 2 through ll_usage_fail on one. */
static void demo_check_values(const struct demo_opts *d)
{
    struct slo check_slo;
    char why[200];
    uint64_t ns;
    if (slo_parse(d->slo, &check_slo, why, sizeof why) != 0)
        ll_usage_fail("--slo: %s", why);
    const char *step = d->step;
    if (strcmp(step, "auto") == 0)
        step = DEMO_STEP_MIN;
    else if (strncmp(step, "auto:", 5) == 0)
        step += 5;
    if (ll_parse_duration_ns(step, LL_NS_PER_SEC, &ns) != 0 || ns < 100 * LL_NS_PER_MS ||
        (step != d->step && ns > DEMO_MAX_STEP_S * LL_NS_PER_SEC))
        ll_usage_fail("--step-duration: expected a duration of at least 100ms, or auto[:MIN] "
                      "with MIN at most " DEMO_MAX_STEP ", got \"%s\"",
                      d->step);
    if (ll_parse_duration_ns(d->warmup, LL_NS_PER_SEC, &ns) != 0)
        ll_usage_fail("--warmup: expected a duration (e.g. 1s), got \"%s\"", d->warmup);
    if (oai_api_from_name(d->api) < 0) {
        char names[256];
        oai_api_list(names, sizeof names);
        ll_usage_fail("--api: expected %s, got \"%s\"", names, d->api);
    }
    if (oai_api_from_name(d->api) == OAI_API_EMBEDDINGS)
        ll_usage_fail("--api: the demo judges TTFT and TPOT, which openai-embeddings does not "
                      "have; sweep it with llmload sim and llmload sweep --api "
                      "openai-embeddings --slo e2e=...");
    if (ll_parse_duration_ns(d->probe, LL_NS_PER_SEC, &ns) != 0 || ns < 500 * LL_NS_PER_MS)
        ll_usage_fail("--probe-duration: expected a duration of at least 500ms, got \"%s\"",
                      d->probe);
    /* The sweep would refuse a --out it cannot write into only after the
     * sim had started; prepare it here (created when missing, then empty,
     * as the sweep accepts it). */
    char dir[4096], derr[600];
    if (d->out && results_dir_prepare(d->out, d->force, dir, sizeof dir, derr, sizeof derr) != 0)
        ll_usage_fail("--out: %s", derr);
}

/* Sweep the sim at url with d's values: build the sweep's argv and run
 * it. Returns the sweep's exit status (LL_EXIT_*). */
static int demo_sweep(const struct demo_opts *d, const char *url)
{
    const char *sargs[40];
    int n = 0;
    /* The sim's batch bound, which no /metrics exports, for the first
     * limit (its KV cache's size the sim does export). */
    struct sim_profile prof;
    char limits[48];
    if (sim_profile_get("default", &prof) != 0)
        return LL_EXIT_RUNTIME;
    snprintf(limits, sizeof limits, "seqs=%u", prof.engine.max_num_seqs);
    sargs[n++] = "sweep";
    sargs[n++] = "--url";
    sargs[n++] = url;
    sargs[n++] = "--rates";
    sargs[n++] = "auto";
    sargs[n++] = "--slo";
    sargs[n++] = d->slo;
    sargs[n++] = "--step-duration";
    sargs[n++] = strcmp(d->step, "auto") == 0 ? DEMO_STEP : d->step;
    if (strncmp(d->step, "auto", 4) == 0) {
        sargs[n++] = "--max-step-duration";
        sargs[n++] = DEMO_MAX_STEP;
        sargs[n++] = "--overload-duration";
        sargs[n++] = DEMO_OVERLOAD;
        sargs[n++] = "--recovery-duration";
        sargs[n++] = DEMO_RECOVERY;
    }
    sargs[n++] = "--warmup";
    sargs[n++] = d->warmup;
    sargs[n++] = "--probe-duration";
    sargs[n++] = d->probe;
    sargs[n++] = "--prompt-tokens";
    sargs[n++] = "256";
    sargs[n++] = "--output-tokens";
    sargs[n++] = "128";
    sargs[n++] = "--ignore-eos";
    sargs[n++] = "--arrival";
    sargs[n++] = "constant";
    sargs[n++] = "--engine-limits";
    sargs[n++] = limits;
    sargs[n++] = "--api";
    sargs[n++] = d->api;
    if (d->out) {
        sargs[n++] = "--out";
        sargs[n++] = d->out;
    }
    if (d->force)
        sargs[n++] = "--force";
    if (d->quiet)
        sargs[n++] = "--quiet";
    sargs[n] = NULL;
    struct sweep_job *job;
    char err[1200];
    int rc = sweep_job_parse(n, (char **)sargs, &job, err, sizeof err);
    if (rc == 0) {
        rc = sweep_job_run(job);
        sweep_job_free(job);
    } else {
        /* The values were checked above; nothing else can be refused. */
        ll_errorf("%s", err);
        rc = LL_EXIT_USAGE;
    }
    return rc;
}

/* `llmload demo`: parse and check, start the sim, sweep it, stop it. */
int demo_main(int argc, char **argv)
{
    struct demo_opts d;
    if (demo_parse_args(argc, argv, &d))
        return LL_EXIT_OK;
    demo_check_values(&d);

    /* Ctrl-C must not kill us before the sim is stopped: keep SIGINT and
     * SIGTERM blocked (the sweep's driver takes them during a step). */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);

    char url[300];
    pid_t sim = start_sim(&old, url, sizeof url);
    if (sim < 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return LL_EXIT_RUNTIME;
    }
    if (!d.quiet)
        ll_errorf("demo: started llmload sim (pid %d) at %s", (int)sim, url);
    int rc = demo_sweep(&d, url);
    stop_sim(sim);
    if (!d.quiet)
        ll_errorf("demo: stopped the sim; open report.html in the results directory above");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
