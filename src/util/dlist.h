/* dlist.h: intrusive doubly-linked lists whose links are named fields of
 * the node, so that one node can sit in several lists (a connection in the
 * server's list of all and in its list of slow readers). head (and tail)
 * are lvalues of the node's pointer type; every argument may be evaluated
 * more than once. */
#ifndef LL_DLIST_H
#define LL_DLIST_H

#include <stddef.h>

/* Put n first in the list at head, through its links prev and next. */
#define DLIST_PUSH(head, n, prev, next)                                                            \
    do {                                                                                           \
        (n)->prev = NULL;                                                                          \
        (n)->next = (head);                                                                        \
        if (head)                                                                                  \
            (head)->prev = (n);                                                                    \
        (head) = (n);                                                                              \
    } while (0)

/* Take n (which is in it) out of the list at head; its links keep their
 * old values. */
#define DLIST_UNLINK(head, n, prev, next)                                                          \
    do {                                                                                           \
        if ((n)->prev)                                                                             \
            (n)->prev->next = (n)->next;                                                           \
        else                                                                                       \
            (head) = (n)->next;                                                                    \
        if ((n)->next)                                                                             \
            (n)->next->prev = (n)->prev;                                                           \
    } while (0)

/* DLIST_UNLINK for a list that also keeps its last node at tail. */
#define DLIST_UNLINK_TAIL(head, tail, n, prev, next)                                               \
    do {                                                                                           \
        if (!(n)->next)                                                                            \
            (tail) = (n)->prev;                                                                    \
        DLIST_UNLINK(head, n, prev, next);                                                         \
    } while (0)

/* DLIST_UNLINK_TAIL for a list of indices into arr (nil for none): node i
 * is arr[i], its links the index fields prev and next. */
#define DLIST_IDX_UNLINK(arr, head, tail, i, prev, next, nil)                                      \
    do {                                                                                           \
        if ((arr)[i].prev != (nil))                                                                \
            (arr)[(arr)[i].prev].next = (arr)[i].next;                                             \
        else                                                                                       \
            (head) = (arr)[i].next;                                                                \
        if ((arr)[i].next != (nil))                                                                \
            (arr)[(arr)[i].next].prev = (arr)[i].prev;                                             \
        else                                                                                       \
            (tail) = (arr)[i].prev;                                                                \
    } while (0)

#endif
