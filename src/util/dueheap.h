/* dueheap.h: a binary min-heap of things due at a time: the closed-loop
 * users' next sends (driver) and the sessions' next turns (workload).
 * Ties pop in no particular order. Embedded; not thread-safe (each worker
 * owns its own). */
#ifndef LL_DUEHEAP_H
#define LL_DUEHEAP_H

#include <stddef.h>
#include <stdint.h>

struct due {
    uint64_t at_ns;             /* when it is due (the caller's clock) */
    uint64_t id;                /* what is due, the caller's number */
};

struct due_heap {
    struct due *v;              /* v[0] is the earliest */
    size_t n, cap;
};

/* An empty heap with room for cap entries (0: none yet); it grows by
 * doubling when a push finds it full. Aborts when out of memory. */
void due_heap_init(struct due_heap *h, size_t cap);

/* Free its memory; it is an empty heap with no room afterwards. */
void due_heap_reset(struct due_heap *h);

void due_heap_push(struct due_heap *h, uint64_t at_ns, uint64_t id);

/* The earliest entry, or NULL when the heap is empty. Borrowed until the
 * next push or pop. */
static inline const struct due *due_heap_peek(const struct due_heap *h)
{
    return h->n ? &h->v[0] : NULL;
}

/* Remove and return the earliest entry; the heap must not be empty. */
struct due due_heap_pop(struct due_heap *h);

#endif
