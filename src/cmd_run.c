/* cmd_run.c: `llmload run` (placeholder until the driver lands). */
#include "cmds.h"
#include "util.h"

int run_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ll_errorf("run: not built yet");
    return LL_EXIT_RUNTIME;
}
