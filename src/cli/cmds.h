/* cmds.h: the entry point of each `llmload <command>`. Each takes the
 * arguments after the command name (argv[0] is the command name) and
 * returns an LL_EXIT_* status. */
#ifndef LL_CMDS_H
#define LL_CMDS_H

#include <stdio.h>

int sim_main(int argc, char **argv);
int run_main(int argc, char **argv);
int sweep_main(int argc, char **argv);
int replay_main(int argc, char **argv);
int report_main(int argc, char **argv);
int demo_main(int argc, char **argv);
int calibrate_main(int argc, char **argv);

/* Rebuild summary.json, steps.csv and report.html of the sweep results in
 * dir from run.json, steps.jsonl and requests.jsonl (cmd_report.c), and
 * print the step table and the findings to out (NULL = print nothing).
 * Returns LL_EXIT_OK; LL_EXIT_FAIL when an --expect-capacity / --expect-slo
 * check recorded in run.json fails (a one-line reason on stderr);
 * LL_EXIT_USAGE for missing or malformed files; LL_EXIT_RUNTIME when a
 * file cannot be written. */
int report_build_dir(const char *dir, FILE *out);

#endif
