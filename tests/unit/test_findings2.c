/* Unit tests of the sweep's conclusions where they once said more than
 * the steps showed: the first limit of a sweep with no step judged
 * (firstlimit.c). Each test built its steps by hand: the server figures a
 * scrape would have joined to a step, and the verdict fields the step's
 * records would have set. */
#include "test.h"

#include "measure/record.h"
#include "sweep/sweep.h"
#include "util/util.h"

/* Load step i at rate req/s, judged, with 20 requests scheduled, none ok
 * (so no latency failed), and the server's figures as a scrape of an
 * idle batch would give them when scraped. */
static void limit_step_init(struct sweep_step *s, uint32_t i, double rate, int scraped)
{
    sweep_step_init(s);
    s->f.index = i;
    s->f.offered_rps = rate;
    s->stats.scheduled = 20;
    s->steady = 1;
    if (scraped) {
        s->f.server.present = 1;
        s->f.server.running_max = 3;
        s->f.server.waiting_max = s->f.server.waiting_mean = 0;
    }
}

/* The first limit of steps[0..n) and its line into text (512 bytes). */
static void limit_of(const struct sweep_step *steps, size_t n, struct sweep_first_limit *fl,
                     char *text)
{
    struct sweep_settings set;
    sweep_settings_init(&set);
    sweep_first_limit(steps, n, &set, fl);
    sweep_first_limit_text(fl, text, 512);
}

/* Every load step INVALID, the server scraped through each: the line
 * said "unknown (no server metrics)", blaming the scrapes, because the
 * INVALID steps were left out before the metrics were looked for. No
 * step was judged, so there is no finding, and the line says that.
 * Likewise when the steps are interrupted or empty. */
static void test_first_limit_none_judged(void **state)
{
    struct sweep_step steps[3];
    struct sweep_first_limit fl;
    char text[512];
    for (int why = 0; why < 3; why++) {
        for (uint32_t i = 0; i < 3; i++) {
            limit_step_init(&steps[i], i, 2.0 * (i + 1), 1);
            if (why == 0) {
                steps[i].invalid = 1;
                snprintf(steps[i].invalid_reason, sizeof steps[i].invalid_reason,
                         "the client sent late");
            } else if (why == 1) {
                steps[i].f.interrupted = 1;
            } else {
                steps[i].stats.scheduled = 0;
            }
        }
        /* The recovery step is never part of the finding, judged or not. */
        steps[2].invalid = steps[2].f.interrupted = 0;
        steps[2].stats.scheduled = 20;
        steps[2].f.recovery = 1;
        limit_of(steps, 3, &fl, text);
        assert_true(fl.none_judged);
        assert_false(fl.reached);
        assert_string_equal(text, "first limit: not judged (no step could be judged)\n");
        for (uint32_t i = 0; i < 3; i++)
            sweep_step_free(&steps[i]);
    }
}

/* Metrics really missing from judged steps: the line still says so, and
 * gives the client's view. */
static void test_first_limit_no_metrics_kept(void **state)
{
    struct sweep_step steps[2];
    struct sweep_first_limit fl;
    char text[512];
    for (uint32_t i = 0; i < 2; i++)
        limit_step_init(&steps[i], i, 2.0 * (i + 1), 0);
    limit_of(steps, 2, &fl, text);
    assert_false(fl.none_judged);
    assert_false(fl.server_metrics);
    assert_string_equal(text, "first limit: unknown (no server metrics); the client alone: TTFT "
                              "and TPOT held\n");
    for (uint32_t i = 0; i < 2; i++)
        sweep_step_free(&steps[i]);
}

/* Some steps valid: the finding rests on them alone, as docs/sweep.md
 * says. An INVALID step whose scrape shows the KV cache full with a
 * queue is not named (its load was not the one offered), and a judged
 * step with the server idle gives "none reached" with its figures. */
static void test_first_limit_some_judged(void **state)
{
    struct sweep_step steps[2];
    struct sweep_first_limit fl;
    char text[512];
    limit_step_init(&steps[0], 0, 2, 1);
    limit_step_init(&steps[1], 1, 4, 1);
    steps[1].invalid = 1;
    steps[1].f.server.kv_max = 1;
    steps[1].f.server.waiting_max = steps[1].f.server.waiting_mean = 30;
    limit_of(steps, 2, &fl, text);
    assert_false(fl.none_judged);
    assert_true(fl.server_metrics);
    assert_false(fl.reached);
    assert_string_equal(text, "first limit: none reached (running at most 3; queue at most 0; no "
                              "429); TTFT and TPOT held\n");
    /* Valid, the same step is the first limit. */
    steps[1].invalid = 0;
    limit_of(steps, 2, &fl, text);
    assert_true(fl.reached);
    assert_int_equal(fl.kind, SWEEP_LIMIT_KV_CACHE);
    for (uint32_t i = 0; i < 2; i++)
        sweep_step_free(&steps[i]);
}

UNIT_TESTS(test_first_limit_none_judged, test_first_limit_no_metrics_kept,
           test_first_limit_some_judged)
