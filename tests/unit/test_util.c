/* Unit tests for util.c: strict parsing of numbers and durations. */
#include "test.h"
#include "util.h"

static void test_parse_duration(void **state)
{
    (void)state;
    uint64_t ns = 0;
    assert_int_equal(ll_parse_duration_ns("250ms", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 250 * LL_NS_PER_MS);
    assert_int_equal(ll_parse_duration_ns("1.5", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 1500 * LL_NS_PER_MS);
    assert_int_equal(ll_parse_duration_ns("2m", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 120 * LL_NS_PER_SEC);
    assert_int_equal(ll_parse_duration_ns("7us", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 7000);
    assert_int_equal(ll_parse_duration_ns("fast", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("1x", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("-1s", LL_NS_PER_SEC, &ns), LL_E_RANGE);
}

static void test_parse_count(void **state)
{
    (void)state;
    double v = 0;
    assert_int_equal(ll_parse_count("1.5k", &v), 0);
    assert_true(v == 1500.0);
    assert_int_equal(ll_parse_count("20", &v), 0);
    assert_true(v == 20.0);
    assert_int_equal(ll_parse_count("2M", &v), 0);
    assert_true(v == 2e6);
    assert_int_equal(ll_parse_count("fast", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_count("3kk", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_count("nan", &v), LL_E_RANGE);
}

static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(ll_parse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(ll_parse_u64("18446744073709551616", &v), LL_E_RANGE);
    assert_int_equal(ll_parse_u64("-1", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_u64("12 ", &v), LL_E_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_count),
        cmocka_unit_test(test_parse_u64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
