/* classfind.h: the per-class findings of a sweep, for findings.c. */
#ifndef LL_CLASSFIND_H
#define LL_CLASSFIND_H

#include <stddef.h>

#include "sweep/sweep.h"

/* The per-class findings (out->classes), over the judged points in offered
 * order (ord, n_points of them); the sweep's own capacity is already in
 * out. */
void sweep_class_findings(const struct sweep_step *steps, size_t n,
                          const struct sweep_point *points, const size_t *ord, size_t n_points,
                          struct sweep_findings *out);

#endif
