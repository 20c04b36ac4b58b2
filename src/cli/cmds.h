/* cmds.h: the entry point of each `llmload <command>`. Each takes the
 * arguments after the command name (argv[0] is the command name) and
 * returns an LL_EXIT_* status. */
#ifndef LL_CMDS_H
#define LL_CMDS_H

int sim_main(int argc, char **argv);
int run_main(int argc, char **argv);
int sweep_main(int argc, char **argv);
int replay_main(int argc, char **argv);
int report_main(int argc, char **argv);
int demo_main(int argc, char **argv);
int calibrate_main(int argc, char **argv);
int compare_main(int argc, char **argv);
int merge_main(int argc, char **argv);

#endif
