/* Unit tests for runopts.c's process setup: runopts_raise_nofile sizes the
 * descriptor table at once (see the comment there for why). */
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>

#include "cli/runopts.h"

/* FDSize from /proc/self/status: descriptor slots the table has now. */
static long fd_table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long size = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "FDSize: %ld", &size) == 1)
            break;
    fclose(f);
    return size;
}

static void test_fd_table_grown_up_front(void **state)
{
    (void)state;
    struct rlimit rl;
    long before = fd_table_size();

    if (before < 0)
        skip();  /* no /proc */
    runopts_raise_nofile();
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(rl.rlim_cur == rl.rlim_max || rl.rlim_max == RLIM_INFINITY);
    long want = rl.rlim_cur < RUNOPTS_FD_TABLE ? (long)rl.rlim_cur : RUNOPTS_FD_TABLE;
    if (want <= before)
        skip();  /* the limit here is no bigger than the table already was */
    long after = fd_table_size();
    assert_true(after >= want);
    /* Nothing is left open up there. */
    assert_int_equal(fcntl(want - 1, F_GETFD), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_table_grown_up_front),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
