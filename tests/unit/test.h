/* test.h: shared test helpers on top of cmocka.
 *
 * cmocka's assert_int_equal and friends already print both sides; these add
 * the few comparisons cmocka lacks, with the same habit: on failure, print
 * the expression, both values and the tolerance. */
#ifndef LL_TEST_H
#define LL_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After the above: cmocka.h uses jmp_buf, va_list and size_t undeclared. */
#include <cmocka.h>

/* |a - b| <= tol, doubles. */
#define ASSERT_NEAR(a, b, tol)                                                \
    do {                                                                      \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);        \
        if (!(fabs(a_ - b_) <= t_))                                           \
            fail_msg("%s = %.9g, %s = %.9g, differ by %.3g > tolerance %.3g", \
                     #a, a_, #b, b_, fabs(a_ - b_), t_);                      \
    } while (0)

/* |a - b| <= rel * |b|, doubles. */
#define ASSERT_REL(a, b, rel)                                                 \
    do {                                                                      \
        double a_ = (double)(a), b_ = (double)(b), r_ = (double)(rel);        \
        if (!(fabs(a_ - b_) <= r_ * fabs(b_)))                                \
            fail_msg("%s = %.9g, %s = %.9g, relative error %.3g > %.3g",      \
                     #a, a_, #b, b_, fabs(a_ - b_) / fabs(b_), r_);           \
    } while (0)

/* lo <= v <= hi, doubles. */
#define ASSERT_IN_RANGE(v, lo, hi)                                            \
    do {                                                                      \
        double v_ = (double)(v), l_ = (double)(lo), h_ = (double)(hi);        \
        if (!(v_ >= l_ && v_ <= h_))                                          \
            fail_msg("%s = %.9g, expected in [%.9g, %.9g]", #v, v_, l_, h_);  \
    } while (0)

/* main() of a test binary: run the cmocka tests given (cmocka_unit_test(fn),
 * or the setup/teardown forms) in order, with no group setup or teardown.
 * Exits non-zero when any fails. */
#define TEST_MAIN(...)                                        \
    int main(void)                                            \
    {                                                         \
        const struct CMUnitTest tests[] = {__VA_ARGS__};      \
        return cmocka_run_group_tests(tests, NULL, NULL);     \
    }

/* The plain case of TEST_MAIN: UNIT_TESTS(test_a, test_b) runs the named
 * functions in order, each under its own name, as TEST_MAIN(cmocka_unit_test
 * (test_a), ...) would. The names come from the stringized argument list. */
static inline int test_run_named(void (*const fns[])(void **), size_t n, const char *names)
{
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    char *copy = strdup(names), *save = NULL;
    char *name = strtok_r(copy, ", ", &save);
    size_t i;
    int rc;

    if (!tests || !copy) {
        fprintf(stderr, "test_run_named: out of memory\n");
        return 1;
    }
    for (i = 0; i < n && name; i++, name = strtok_r(NULL, ", ", &save))
        tests[i] = (struct CMUnitTest){.name = name, .test_func = fns[i]};
    if (i != n || name) {
        fprintf(stderr, "test_run_named: %zu functions but other names in \"%s\"\n", n, names);
        return 1;
    }
    rc = _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
    free(tests);
    free(copy);
    return rc;
}

#define UNIT_TESTS(...)                                                                            \
    int main(void)                                                                                 \
    {                                                                                              \
        static void (*const fns[])(void **) = {__VA_ARGS__};                                       \
        return test_run_named(fns, sizeof fns / sizeof fns[0], #__VA_ARGS__);                      \
    }

/* Read the file at path whole, NUL-terminated; its length in *len. Fails
 * the test when it cannot be read. Caller frees. */
static inline char *test_read_path(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s (run from the repository root)", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long sz = ftell(f);
    assert_true(sz >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    char *buf = malloc((size_t)sz + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    buf[sz] = '\0';
    *len = (size_t)sz;
    return buf;
}

/* Read tests/data/<dir>/<name> (from the repository root, or from
 * $LLMLOAD_DATA/<dir>/) as test_read_path does. Caller frees. */
static inline char *test_read_data(const char *dir, const char *name, size_t *len)
{
    char path[512];
    const char *root = getenv("LLMLOAD_DATA");
    int n = snprintf(path, sizeof path, "%s/%s/%s", root ? root : "tests/data", dir, name);
    assert_true(n > 0 && (size_t)n < sizeof path);
    return test_read_path(path, len);
}

#endif
