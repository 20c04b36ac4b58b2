/* Unit tests for workload/endpoints.c: the spreading of requests over
 * several --url (round-robin by key, and the smooth weighted round-robin
 * of --url-weights), and --url-weights' parser. */
#include "test.h"

#include <string.h>

#include "util/util.h"
#include "workload/endpoints.h"

static const char *const urls[ENDPOINTS_MAX] = {"http://a/v1", "http://b/v1", "http://c/v1"};

/* Without weights: key k goes to endpoint k mod n. */
static void test_round_robin(void **state)
{
    struct endpoints e;
    assert_int_equal(endpoints_plan(&e, urls, NULL, 3), 0);
    assert_int_equal(e.n, 3);
    assert_int_equal(e.period, 3);
    assert_false(e.weighted);
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(endpoints_pick(&e, k), k % 3);
    assert_int_equal(endpoints_pick(&e, UINT64_MAX), UINT64_MAX % 3);
    /* One endpoint: always 0. */
    assert_int_equal(endpoints_plan(&e, urls, NULL, 1), 0);
    assert_int_equal(endpoints_pick(&e, 12345), 0);
}

/* 3,1 interleaves as nginx's smooth weighted round-robin does: 0,0,1,0,
 * and any 4 consecutive keys hold exactly three 0s and one 1. */
static void test_weighted_3_1(void **state)
{
    struct endpoints e;
    const uint32_t w[] = {3, 1};
    assert_int_equal(endpoints_plan(&e, urls, w, 2), 0);
    assert_int_equal(e.period, 4);
    const uint32_t want[] = {0, 0, 1, 0};
    for (uint64_t k = 0; k < 40; k++)
        assert_int_equal(endpoints_pick(&e, k), want[k % 4]);
    uint32_t n1 = 0;
    for (uint64_t k = 0; k < 40; k++)
        n1 += endpoints_pick(&e, k);
    assert_int_equal(n1, 10);
}

/* Over every period each endpoint gets exactly its weight, and no
 * endpoint waits longer than it must: the gap between two picks of an
 * endpoint of weight w is at most ceil(sum / w) + 1 (the smoothness the
 * plain "w in a row" spreading lacks). */
static void test_weighted_exact_and_smooth(void **state)
{
    static const uint32_t cases[][4] = {
        {1, 1, 1, 1}, {5, 2, 1, 1}, {100, 1, 1, 1}, {7, 7, 3, 1}, {2, 3, 5, 7}};
    for (size_t c = 0; c < LL_ARRAY_LEN(cases); c++) {
        struct endpoints e;
        assert_int_equal(endpoints_plan(&e, urls, cases[c], 3), 0);
        uint32_t sum = cases[c][0] + cases[c][1] + cases[c][2];
        assert_int_equal(e.period, sum);
        for (uint64_t start = 0; start < 3 * sum; start += sum / 2 + 1) {
            uint32_t got[3] = {0};
            for (uint64_t k = start; k < start + sum; k++)
                got[endpoints_pick(&e, k)]++;
            for (int i = 0; i < 3; i++)
                assert_int_equal(got[i], cases[c][i]);
        }
        for (int i = 0; i < 3; i++) {
            uint64_t last = UINT64_MAX, max_gap = 0;
            for (uint64_t k = 0; k < 3 * sum; k++) {
                if (endpoints_pick(&e, k) != (uint32_t)i)
                    continue;
                if (last != UINT64_MAX && k - last > max_gap)
                    max_gap = k - last;
                last = k;
            }
            assert_true(max_gap <= (sum + cases[c][i] - 1) / cases[c][i] + 1);
        }
    }
}

/* A session's turns go where its session index says; a request outside
 * sessions where its schedule index says. */
static void test_for_spec(void **state)
{
    struct endpoints e;
    assert_int_equal(endpoints_plan(&e, urls, NULL, 2), 0);
    struct req_spec s;
    memset(&s, 0, sizeof s);
    s.session = -1;
    s.index = 7;
    assert_int_equal(endpoints_for_spec(&e, &s), 1);
    s.session = 4;
    for (uint64_t turn_id = 4000; turn_id < 4005; turn_id++) {
        s.index = turn_id + 1;
        assert_int_equal(endpoints_for_spec(&e, &s), 0);
    }
}

static void test_plan_refuses(void **state)
{
    struct endpoints e;
    const uint32_t zero[] = {1, 0}, big[] = {1, ENDPOINTS_WEIGHT_MAX + 1};
    assert_int_equal(endpoints_plan(&e, urls, zero, 2), LL_E_INVAL);
    assert_int_equal(endpoints_plan(&e, urls, big, 2), LL_E_INVAL);
    assert_int_equal(endpoints_plan(&e, urls, NULL, 0), LL_E_INVAL);
    assert_int_equal(endpoints_plan(&e, urls, NULL, ENDPOINTS_MAX + 1), LL_E_INVAL);
}

static void test_parse_weights(void **state)
{
    uint32_t w[4];
    size_t n;
    char err[256];
    assert_int_equal(endpoints_parse_weights("3,1", w, 4, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(w[0], 3);
    assert_int_equal(w[1], 1);
    assert_int_equal(endpoints_parse_weights("100", w, 4, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(w[0], 100);
    static const char *const bad[] = {
        "",     "0",  "3,0", "-1", "1,-2", "101", "1.5",
        "1,",   ",1", "a",   "1 ", " 1",   "+1",  "99999999999999999999",
        "1,,2", "1;2"};
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        err[0] = '\0';
        assert_int_equal(endpoints_parse_weights(bad[i], w, 4, &n, err, sizeof err), LL_E_INVAL);
        assert_non_null(strstr(err, "--url-weights: weight "));
        assert_null(strchr(err, '\n'));
    }
    assert_int_equal(endpoints_parse_weights("3,0", w, 4, &n, err, sizeof err), LL_E_INVAL);
    assert_non_null(strstr(err, "weight 2 must be a whole number 1 to 100, got \"0\""));
    /* A newline in the value never reaches the reason (the fuzzer's find). */
    assert_int_equal(endpoints_parse_weights("33\n", w, 4, &n, err, sizeof err), LL_E_INVAL);
    assert_non_null(strstr(err, "got \"33?\""));
    assert_int_equal(endpoints_parse_weights("1,1,1,1,1", w, 4, &n, err, sizeof err), LL_E_INVAL);
    assert_non_null(strstr(err, "at most 4 weights"));
}

UNIT_TESTS(test_round_robin, test_weighted_3_1, test_weighted_exact_and_smooth, test_for_spec,
           test_plan_refuses, test_parse_weights)
