/* cmd_merge.c: `llmload merge DIR... --out DIR`: the shards of one sharded
 * run (--shard) into one results directory that every other command reads
 * as if one process had run. The work is the report layer's
 * runmerge_dirs (report/runmerge.c); this file parses and calls it. */
#include <getopt.h>
#include <stdio.h>

#include "cli/badarg.h"
#include "cli/cmds.h"
#include "cli/mergeserver.h"
#include "report/report_build.h"
#include "report/runmerge.h"
#include "util/util.h"

static void merge_usage(FILE *f)
{
    fprintf(f, "usage: llmload merge DIR... --out DIR [--allow-partial] [--force] [--hist-only]\n"
               "\n"
               "Merge the results directories of the shards of one run (llmload run, replay\n"
               "or sweep with --shard, docs/distributed.md) into one: requests.jsonl with one\n"
               "line per scheduled request, ordered by id (a sweep's by step, then id);\n"
               "summary.json recomputed from the merged records (exact percentiles, never\n"
               "averages of the shards'), the verdict and --expect judged again, the\n"
               "server's view joined to the merged window; server_metrics.jsonl from the\n"
               "shard that scraped; hist.jsonl with every shard's histograms of each second\n"
               "added up (on the shards' common --start-at time axis); run.json listing the\n"
               "shards; report.html. Prints the summary as a run does. A sweep's shards:\n"
               "steps.jsonl with each step's facts merged, then every step, the capacity,\n"
               "the knee and the recovery recomputed from the merged records into\n"
               "summary.json, steps.csv and report.html, as llmload report does. llmload\n"
               "report and llmload compare read the merged directory.\n"
               "\n"
               "Refuses shards of different configurations or seeds (config_hash:\n"
               "input files count by content, not path; the URL is left out, with a\n"
               "note when the shards' differ), two copies of one shard, shard counts\n"
               "that disagree, and a directory that is not a shard. A missing shard, or\n"
               "one that died mid-run, is not dropped silently: merge says which shards\n"
               "and how many scheduled ids are missing, and summary.json says\n"
               "\"incomplete: N of M requests\".\n"
               "\n"
               "  --out DIR                   the merged results directory (new, or empty)\n"
               "  --allow-partial             exit 0, not 4, when shards or ids are missing\n"
               "  --force                     write into --out even when it is not empty\n"
               "  --hist-only                 merge the shards' hist.jsonl, not their records:\n"
               "                              summary.json's TTFT, ITL, TPOT and E2E percentiles\n"
               "                              from the histograms (each within 1/256 of the\n"
               "                              record-exact one) and ok/failed counts from the\n"
               "                              windows; a sweep's, per step\n"
               "  -h, --help                  this text\n"
               "\n"
               "Exit status: 0 ok, 1 INVALID (the merged run's self-check; a sweep's: no\n"
               "step could be judged), 2 bad arguments, shards that do not belong together\n"
               "or unreadable files, 3 cannot write, 4 incomplete (shards or ids missing,\n"
               "without --allow-partial), 6 no request succeeded, 7 an --expect threshold\n"
               "failed on the merged run.\n");
}

int merge_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'}, {"allow-partial", no_argument, NULL, 'p'},
        {"force", no_argument, NULL, 'f'},     {"hist-only", no_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int allow_partial = 0, force = 0, hist_only = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'h': merge_usage(stdout); return LL_EXIT_OK;
        case 'o': out = optarg; break;
        case 'p': allow_partial = 1; break;
        case 'f': force = 1; break;
        case 'H': hist_only = 1; break;
        default: badarg_getopt_fail("merge", argv, optind, c, optopt, opts);
        }
    }
    if (!out && optind >= argc) /* nothing given: both, as the usage line has them */
        ll_usage_fail("merge: expected the shards' results directories and --out DIR: "
                      "llmload merge DIR... --out DIR (see llmload merge --help)");
    if (!out)
        ll_usage_fail("merge: --out: expected the merged results directory (see llmload merge "
                      "--help)");
    if (optind >= argc)
        ll_usage_fail("merge: expected the shards' results directories (see llmload merge "
                      "--help)");
    if (hist_only)
        return runmerge_hist_only((const char *const *)argv + optind, (size_t)(argc - optind), out,
                                  force, allow_partial, stdout);
    return runmerge_dirs((const char *const *)argv + optind, (size_t)(argc - optind), out, force,
                         allow_partial, report_build_dir, merge_server_join, stdout);
}
