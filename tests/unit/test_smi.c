/* Unit tests for smi.c: nvidia-smi's CSV lines and their sample periods. */
#include "test.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "metrics/smi.h"
#include "util/util.h"

static int parse(const char *s, struct smi_line *l, char *err, size_t errlen)
{
    return smi_line_parse(s, strlen(s), l, err, errlen);
}

static void test_parse_line(void **state)
{
    (void)state;
    struct smi_line l;
    char err[200];
    assert_int_equal(
        parse("2026/12/02 14:29:02.123, 1, 312.45, 87, 40536, 81559, 1980\n", &l, err, sizeof err),
        0);
    assert_string_equal(l.timestamp, "2026/12/02 14:29:02.123");
    assert_int_equal(l.index, 1);
    ASSERT_NEAR(l.value[SMI_POWER_W], 312.45, 1e-9);
    ASSERT_NEAR(l.value[SMI_UTIL_PCT], 87, 0);
    ASSERT_NEAR(l.value[SMI_MEM_USED_MIB], 40536, 0);
    ASSERT_NEAR(l.value[SMI_MEM_TOTAL_MIB], 81559, 0);
    ASSERT_NEAR(l.value[SMI_SM_CLOCK_MHZ], 1980, 0);
    for (int f = 0; f < SMI_VALUE_COUNT; f++)
        assert_int_equal(l.present[f], 1);

    /* Missing values are missing, not zero and not an error; CRLF and
     * blanks are fine. */
    assert_int_equal(
        parse("t,0,[N/A],[Not Supported], 5 ,6,[Unknown Error]\r\n", &l, err, sizeof err), 0);
    assert_int_equal(l.present[SMI_POWER_W], 0);
    assert_int_equal(l.present[SMI_UTIL_PCT], 0);
    assert_int_equal(l.present[SMI_MEM_USED_MIB], 1);
    assert_int_equal(l.present[SMI_SM_CLOCK_MHZ], 0);
    ASSERT_NEAR(l.value[SMI_MEM_USED_MIB], 5, 0);
}

static const struct bad_input bad_lines[] = {
    {"", "expected 7 comma-separated fields"},
    {"t,0,1,2,3,4", "expected 7 comma-separated fields"},
    {"t,0,1,2,3,4,5,6", "expected 7 comma-separated fields"},
    {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", "expected 7"},
    {"t,x,1,2,3,4,5", "index: expected a GPU number"},
    {"t,-1,1,2,3,4,5", "index: expected a GPU number"},
    {"t,1024,1,2,3,4,5", "index: expected a GPU number"},
    {"t,0,-5,2,3,4,5", "power.draw: expected a non-negative number"},
    {"t,0,1,2,3,4,nan", "clocks.sm: expected"},
    {"t,0,1,2,3,4,inf", "clocks.sm: expected"},
    {"t,0,1 W,2,3,4,5", "power.draw: expected"},
    {"t,0,1,2,,4,5", "empty memory.used"},
    {" ,0,1,2,3,4,5", "empty timestamp"},
    {"t,0,[N/A,2,3,4,5", "power.draw: expected"},
};

/* parse into ctx, a struct smi_line with a stale index: a refused line
 * must leave it cleared. */
static int parse_cleared(void *ctx, const char *in, char *err, size_t errlen)
{
    struct smi_line *l = ctx;
    l->index = 7;
    int rc = parse(in, l, err, errlen);
    if (rc != 0)
        assert_int_equal(l->index, 0);
    return rc;
}

static void test_parse_refusals(void **state)
{
    (void)state;
    struct smi_line line;
    test_refusals(parse_cleared, &line, LL_E_PROTO, bad_lines, LL_ARRAY_LEN(bad_lines));
    /* Over SMI_MAX_LINE bytes; a NUL inside. */
    char big[SMI_MAX_LINE + 40], err[200];
    struct smi_line l;
    memset(big, '1', sizeof big);
    assert_int_equal(smi_line_parse(big, sizeof big, &l, err, sizeof err), LL_E_PROTO);
    assert_int_equal(smi_line_parse("t,0,1\0,2,3,4,5", 15, &l, err, sizeof err), LL_E_PROTO);
}

static void add(struct smi_group *g, const char *s, uint64_t t, int want_full)
{
    struct smi_line l;
    char err[200];
    assert_int_equal(parse(s, &l, err, sizeof err), 0);
    assert_int_equal(smi_group_repeats(g, &l), 0);
    assert_int_equal(smi_group_add(g, &l, t), want_full);
}

static void test_periods(void **state)
{
    (void)state;
    struct smi_group g;
    struct scrape_point p;
    memset(&g, 0, sizeof g);
    assert_int_equal(smi_group_take(&g, &p), 0);

    /* The first period ends when a GPU repeats (its size is not known). */
    add(&g, "t,0,100,50,1000,8000,1500", 10, 0);
    add(&g, "t,1,50,30,3000,8000,1700", 12, 0);
    struct smi_line l;
    char err[200];
    assert_int_equal(parse("t,0,100,50,1000,8000,1500", &l, err, sizeof err), 0);
    assert_int_equal(smi_group_repeats(&g, &l), 1);
    assert_int_equal(smi_group_take(&g, &p), 2);
    assert_int_equal(p.ok, 1);
    assert_int_equal(p.engine, ENGINE_DCGM);
    assert_int_equal(p.gpus, 2);
    assert_int_equal(p.start_abs_ns, 10);
    assert_int_equal(p.end_abs_ns, 12);
    ASSERT_NEAR(p.value[ENGINE_M_GPU_POWER], 150, 1e-12); /* summed */
    ASSERT_NEAR(p.value[ENGINE_M_GPU_UTIL], 40, 1e-12);   /* mean */
    ASSERT_NEAR(p.value[ENGINE_M_GPU_MEM_USED], 4000, 0); /* summed */
    ASSERT_NEAR(p.value[ENGINE_M_GPU_SM_CLOCK], 1600, 0); /* mean */
    assert_int_equal(p.present[ENGINE_M_GPU_ENERGY], 0);  /* nvidia-smi has no counter */

    /* The next periods are complete at 2 GPUs. */
    add(&g, "t,0,100,50,1000,8000,1500", 20, 0);
    add(&g, "t,1,[N/A],30,3000,8000,1700", 21, 1);
    assert_int_equal(smi_group_take(&g, &p), 2);
    assert_int_equal(p.ok, 1);
    assert_int_equal(p.present[ENGINE_M_GPU_POWER], 0); /* one GPU lacks it: no sum */
    assert_int_equal(p.present[ENGINE_M_GPU_UTIL], 1);

    /* A malformed line makes its period a counted gap. */
    add(&g, "t,0,100,50,1000,8000,1500", 30, 0);
    smi_group_bad(&g, 31);
    assert_int_equal(smi_group_take(&g, &p), 2);
    assert_int_equal(p.ok, 0);

    /* So does a period cut short (the last, when the sampler is stopped). */
    add(&g, "t,0,100,50,1000,8000,1500", 40, 0);
    assert_int_equal(smi_group_take(&g, &p), 1);
    assert_int_equal(p.ok, 0);
    assert_int_equal(g.want, 2);
}

UNIT_TESTS(test_parse_line, test_parse_refusals, test_periods)
