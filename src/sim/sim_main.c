/* sim_main.c: `llmload sim` (placeholder until the sim lands). */
#include "cmds.h"
#include "util.h"

int sim_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ll_errorf("sim: not built yet");
    return LL_EXIT_RUNTIME;
}
