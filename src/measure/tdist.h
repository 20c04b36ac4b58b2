/* tdist.h: Student's t quantile that every interval of llmload's
 * statistics uses (a sweep's repeats, compare's between-run and
 * small-sample intervals). */
#ifndef LLMLOAD_MEASURE_TDIST_H
#define LLMLOAD_MEASURE_TDIST_H

/* Student's t at 97.5% (the two-sided 95% point) with df degrees of
 * freedom: df rounded down (past a rounding error: 3.999... is 4) from a
 * table to 30, above it Hill's (1970) expansion around the normal's
 * 1.959964 (within 2e-4 of the exact value); INFINITY below 1. */
double t975(double df);

#endif
