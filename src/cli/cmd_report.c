/* cmd_report.c: `llmload report DIR`: rebuild a sweep's summary.json,
 * steps.csv and report.html from its raw files. The routine that does it
 * is the report layer's report_build_dir (report/report_build.c), which
 * `llmload sweep` calls at its end too, so a rebuilt report is the live
 * one. A single run's directory gets its report.html again from the same
 * files the run drew it from (report/report_run.c), its summary.json
 * kept. */
#include <getopt.h>
#include <stdio.h>

#include "cli/badarg.h"
#include "cli/cmds.h"
#include "cli/mergeserver.h"
#include "cli/runsetup.h"
#include "report/report_build.h"
#include "report/report_run.h"
#include "report/runmerge.h"
#include "util/util.h"

static void report_usage(FILE *f)
{
    fprintf(f, "usage: llmload report DIR\n"
               "\n"
               "Rebuild summary.json, steps.csv, report.html (and classes.csv when the sweep\n"
               "broke out traffic classes) of a sweep's results directory from its raw\n"
               "files: run.json (settings), steps.jsonl (what the driver knew about each\n"
               "step), requests.jsonl (one line per request) and, when the sweep scraped\n"
               "the server, server_metrics.jsonl.\n"
               "Prints the step table and the findings. Nothing is sent anywhere.\n"
               "On a directory llmload merge wrote: recompute its summary.json from its\n"
               "requests.jsonl and print it as merge did, the server's view joined again\n"
               "from its server_metrics.jsonl (exit 4 when it is incomplete), then its\n"
               "report.html; it needs the summary.json merge wrote (ITL, in-flight and\n"
               "generator figures came from the shards' summaries).\n"
               "On a single run's directory (llmload run, llmload replay): rebuild its\n"
               "report.html from run.json, summary.json, hist.jsonl and\n"
               "server_metrics.jsonl, byte for byte the page the run wrote. Its summary.json\n"
               "is kept as the run wrote it: some of its facts (the lateness diagnosis, the\n"
               "measured in-flight area) are the driver's, in no record. Its --expect, which\n"
               "run.json records, is judged again on that summary.json: a failed threshold\n"
               "is one line on stderr, as the run printed it, and exit 7.\n"
               "\n"
               "Exit status: 0 ok, 1 INVALID (no step could be judged: in each, the client (the\n"
               "host or the generator) could not keep the schedule, or no request was in its\n"
               "window), 2 bad arguments or unreadable files, 3 cannot write, 7 an --expect,\n"
               "--expect-capacity or --expect-slo check recorded in run.json fails.\n");
}

/* A run's report.html from its files; prints the path and what became of
 * summary.json (merged: recomputed just before). Returns the exit status:
 * 2 no or unreadable summary.json, 3 cannot write. */
static int report_run_page(const char *dir, int merged)
{
    char err[4400];
    int rc = report_run_write(dir, NULL, err, sizeof err);
    if (rc == LL_E_NOTFOUND) {
        ll_errorf("%s: a run's results without summary.json (the run ended before its "
                  "summary): nothing to draw its report.html from",
                  dir);
        return LL_EXIT_USAGE;
    }
    if (rc == LL_E_INVAL) {
        ll_errorf("%s", err);
        return LL_EXIT_USAGE;
    }
    if (rc != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_RUNTIME;
    }
    printf("report: %s/report.html (summary.json %s)\n", dir,
           merged ? "recomputed from the merged records" : "kept as the run wrote it");
    return LL_EXIT_OK;
}

/* A run's or replay's --expect, recorded in run.json, judged again on its
 * summary.json: the failed lines on stderr, as the run printed them.
 * Returns the exit status: 0, 7 one failed, or 2 (a file unreadable). */
static int report_run_judge(const char *dir)
{
    char err[4400];
    size_t failed;
    fflush(stdout);
    if (report_run_expect(dir, stderr, &failed, err, sizeof err) != 0) {
        ll_errorf("%s", err);
        return LL_EXIT_USAGE;
    }
    return failed ? LL_EXIT_EXPECT : LL_EXIT_OK;
}

int report_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            report_usage(stdout);
            return LL_EXIT_OK;
        }
        badarg_getopt_fail("report", argv, optind, c, optopt, opts);
    }
    if (optind != argc - 1)
        ll_usage_fail("report: expected one results directory (see llmload report --help)");
    if (argv[optind][0] == '\0')
        ll_usage_fail("report: the results directory is an empty path");
    /* A merged run's summary with the server's view joined again, as
     * llmload merge printed it, then its page. */
    if (runmerge_dir_is_merged_run(argv[optind])) {
        int code = runmerge_rebuild(argv[optind], merge_server_join, stdout);
        if (code == LL_EXIT_USAGE)
            return code;
        return run_exit_combine(code, report_run_page(argv[optind], 1));
    }
    if (report_run_dir_is_run(argv[optind])) {
        int code = report_run_page(argv[optind], 0);
        return code == LL_EXIT_OK ? report_run_judge(argv[optind]) : code;
    }
    return report_build_dir(argv[optind], stdout);
}
