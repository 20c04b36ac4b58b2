/* runexit.c: a run's exit status, and the one line on stderr that says
 * each reason for it (runsetup.h). docs/run.md's table is the contract. */
#include <stdint.h>
#include <stdio.h>

#include "cli/runsetup.h"
#include "measure/expect.h"
#include "measure/summary.h"
#include "util/util.h"

int run_exit_combine(int a, int b)
{
    if (a == LL_EXIT_INTR || b == LL_EXIT_INTR)
        return LL_EXIT_INTR;
    if (!a || !b)
        return a ? a : b;
    return LL_MIN(a, b);
}

/* Exit 0 means the run measured what it meant to, so a CI gate may trust
 * it: a window nothing came due in (the spend guard first, every request
 * in the warm-up, a rate too low for the duration) measured nothing, and
 * exits as a window whose requests all failed does (6), with its cause. */
int run_exit_status(const struct run_setup *rs, const struct summary_info *info, int summary_failed)
{
    const struct driver_result *res = &rs->res;
    int code = info->invalid ? LL_EXIT_FAIL : LL_EXIT_OK;
    if (res->records_lost)
        ll_errorf("%llu records could not be written to %s/requests.jsonl (see above); "
                  "the results are incomplete",
                  (unsigned long long)res->records_lost, rs->dir);
    if (res->records_lost || summary_failed)
        code = run_exit_combine(code, LL_EXIT_RUNTIME);
    /* One rule (summary_measured) for this, summary.json and the page. A
     * shard's empty window is llmload merge's to judge: said, not failed. */
    char why[400];
    switch (rs->stopped_in ? SUMMARY_MEASURED
                           : summary_measured(why, sizeof why, &res->stats, info)) {
    case SUMMARY_NONE_OK:
        ll_errorf("%s (errors by kind above)", why);
        code = run_exit_combine(code, LL_EXIT_NO_OK);
        break;
    case SUMMARY_EMPTY:
        ll_errorf("%s", why);
        code = run_exit_combine(code, LL_EXIT_NO_OK);
        break;
    case SUMMARY_SHARD_EMPTY: ll_errorf("%s", why); break;
    case SUMMARY_MEASURED: break;
    }
    /* INVALID (1) wins over a failed --expect (7): the lowest wins. */
    if (info->expect_failed)
        code = run_exit_combine(code, LL_EXIT_EXPECT);
    if (rs->stopped_in)
        code = LL_EXIT_INTR;
    return code;
}

void run_setup_judge(const struct expect_set *ex, json_t *sj, struct summary_info *info)
{
    fflush(stdout); /* the failed lines after the summary they judge */
    info->expect_failed = expect_judge_summary(ex, sj, stderr) > 0;
}
