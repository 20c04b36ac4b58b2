/* Unit tests for util/dueheap.c: entries pop earliest first, each with its
 * own id, through growth past the first allocation and with ties. */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "util/dueheap.h"
#include "util/rng.h"

/* Push n entries at times drawn from [0, span) (span small: many ties),
 * interleaving pops; every pop is the earliest of what was pushed and not
 * yet popped, found by a linear scan of a mirror. */
static void check_against_mirror(size_t cap, size_t n, uint64_t span)
{
    struct due_heap h;
    due_heap_init(&h, cap);
    uint64_t *at = calloc(n, sizeof *at);
    int *live = calloc(n, sizeof *live);
    assert_non_null(at);
    assert_non_null(live);
    struct rng r;
    rng_seed(&r, 42, 7);
    size_t pushed = 0, popped = 0;
    while (popped < n) {
        int push = pushed < n && (h.n == 0 || rng_uniform(&r) < 0.6);
        if (push) {
            at[pushed] = (uint64_t)(rng_uniform(&r) * (double)span);
            live[pushed] = 1;
            due_heap_push(&h, at[pushed], pushed);
            pushed++;
            continue;
        }
        uint64_t min = UINT64_MAX;
        for (size_t i = 0; i < pushed; i++)
            if (live[i] && at[i] < min)
                min = at[i];
        assert_non_null(due_heap_peek(&h));
        assert_int_equal(due_heap_peek(&h)->at_ns, min);
        struct due d = due_heap_pop(&h);
        assert_int_equal(d.at_ns, min);
        assert_true(d.id < pushed);
        assert_true(live[d.id]);              /* not popped twice */
        assert_int_equal(at[d.id], d.at_ns); /* its own time */
        live[d.id] = 0;
        popped++;
    }
    assert_null(due_heap_peek(&h));
    assert_int_equal(h.n, 0);
    due_heap_reset(&h);
    due_heap_reset(&h); /* twice is safe */
    free(at);
    free(live);
}

static void test_many_ties_growing(void **state)
{
    check_against_mirror(0, 5000, 17); /* starts with no room, ties everywhere */
}

static void test_distinct_fixed_room(void **state)
{
    check_against_mirror(3000, 3000, UINT64_C(1) << 40); /* never grows */
}

static void test_one(void **state)
{
    struct due_heap h;
    due_heap_init(&h, 1);
    assert_null(due_heap_peek(&h));
    due_heap_push(&h, 5, 9);
    due_heap_push(&h, 3, 8); /* grows from 1 */
    struct due d = due_heap_pop(&h);
    assert_int_equal(d.at_ns, 3);
    assert_int_equal(d.id, 8);
    d = due_heap_pop(&h);
    assert_int_equal(d.at_ns, 5);
    assert_int_equal(d.id, 9);
    assert_null(due_heap_peek(&h));
    due_heap_reset(&h);
}

UNIT_TESTS(test_many_ties_growing, test_distinct_fixed_room, test_one)
