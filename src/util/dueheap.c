/* dueheap.c: a binary min-heap keyed by due time. See dueheap.h. */
#include "util/dueheap.h"

#include <stdlib.h>

#include "util/util.h"

void due_heap_init(struct due_heap *h, size_t cap)
{
    h->n = 0;
    h->cap = cap;
    h->v = cap ? ll_calloc(cap, sizeof *h->v) : NULL;
}

void due_heap_reset(struct due_heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

void due_heap_push(struct due_heap *h, uint64_t at_ns, uint64_t id)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->v = ll_realloc(h->v, h->cap * sizeof *h->v);
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->v[parent].at_ns <= at_ns)
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i].at_ns = at_ns;
    h->v[i].id = id;
}

struct due due_heap_pop(struct due_heap *h)
{
    struct due top = h->v[0];
    struct due last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1].at_ns < h->v[c].at_ns)
            c++;
        if (last.at_ns <= h->v[c].at_ns)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}
