/* main.c: wiring only. Dispatch `llmload <command>` to its module. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "util/util.h"

struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", run_main, "one load point: open-loop rate, closed-loop users, or a capped rate"},
    {"sweep", sweep_main, "a ladder of offered loads through saturation, then recovery"},
    {"replay", replay_main, "a recorded trace at its own (scaled) timestamps"},
    {"sim", sim_main, "the built-in simulated inference server"},
    {"report", report_main, "rebuild summary, CSV and HTML report from a sweep's results"},
    {"demo", demo_main, "start the sim, sweep it, write the report"},
    {"calibrate", calibrate_main,
     "fit a server's tokens per word so prompt lengths hit their target"},
    {"merge", merge_main, "the shards of one run (--shard) into one results directory"},
    {"compare", compare_main, "runs side by side: differences, noise intervals, verdicts, gates"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "llmload %s: a load tester for LLM inference endpoints\n"
            "\n"
            "usage: llmload <command> [options]\n"
            "       llmload <command> --help\n"
            "       llmload --version\n"
            "\n"
            "commands:\n",
            LL_VERSION);
    for (size_t i = 0; i < LL_ARRAY_LEN(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "help", "this text");
    fprintf(f, "\nEvery latency is measured from the time a request was scheduled.\n"
               "See docs/ for metric definitions and output formats.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return LL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "-h") == 0) {
        if (argc > 2) {
            for (size_t i = 0; i < LL_ARRAY_LEN(commands); i++) {
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char *help_argv[] = {argv[2], "--help", NULL};
                    return commands[i].main(2, help_argv);
                }
            }
            /* not the general text with exit 0, as if it were one */
            ll_errorf("help: unknown command \"%s\" (try: llmload help)", argv[2]);
            return LL_EXIT_USAGE;
        }
        usage(stdout);
        return LL_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("llmload %s\n", LL_VERSION);
        return LL_EXIT_OK;
    }
    for (size_t i = 0; i < LL_ARRAY_LEN(commands); i++) {
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].main(argc - 1, argv + 1);
    }
    ll_errorf("unknown command \"%s\" (try: llmload help)", cmd);
    return LL_EXIT_USAGE;
}
