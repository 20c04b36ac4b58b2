/* tdist.h: Student's t quantile that every interval of llmload's
 * statistics uses (a sweep's repeats, compare's between-run and
 * small-sample intervals). */
#ifndef LLMLOAD_MEASURE_TDIST_H
#define LLMLOAD_MEASURE_TDIST_H

/* Student's t at 97.5% (the two-sided 95% point) with df degrees of
 * freedom: a table of the whole df to 30, between its rows log t linear
 * in 1 / df (Welch-Satterthwaite's df are fractional; at most 3% above
 * the exact value between 1 and 2, 0.5% between 2 and 3, 0.1% from 3.5),
 * above 30 the Cornish-Fisher expansion around the normal's 1.959964
 * (within 2e-4); INFINITY below 1. */
double t975(double df);

#endif
