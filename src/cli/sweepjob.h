/* sweepjob.h: one sweep, from its flags to its results directory.
 *
 * `llmload sweep` parses its command line into a job and runs it;
 * `llmload demo` builds the job from the flags it chose (its own sim's URL,
 * auto rates, its SLO) and runs the same thing, so that no command calls
 * another command's main function. */
#ifndef LL_SWEEPJOB_H
#define LL_SWEEPJOB_H

#include <stddef.h>

struct sweep_job;

/* Parse `sweep` and its flags (argv[0] is the command's name, as getopt
 * wants) into a new job (*out; free it with sweep_job_free). Returns 0,
 * RUNOPTS_HELP for --help (nothing allocated), or LL_E_INVAL with a
 * one-line reason in err. */
int sweep_job_parse(int argc, char **argv, struct sweep_job **out, char *err, size_t errlen);

/* Run the sweep: open the target, the results directory, every step, the
 * recovery step, and the report (report_build_dir), printing as `llmload
 * sweep` does. Returns the command's exit status (docs/run.md). */
int sweep_job_run(struct sweep_job *j);

/* Free a job; NULL does nothing. */
void sweep_job_free(struct sweep_job *j);

#endif
