/* steps.csv: one row per sweep step, for spreadsheets and scripts.
 *
 * The columns are fixed and documented in docs/formats.md ("steps.csv");
 * the first line is the header. Times are in milliseconds, rates in per
 * second, fractions in 0..1; an undefined figure is an empty field. Counts
 * are integers; every other number is the shortest decimal that reads back
 * as exactly the double, never in exponent form ("1234567", "0.000123"). */
#ifndef LL_STEPS_CSV_H
#define LL_STEPS_CSV_H

#include <stddef.h>

#include "sweep/sweep.h"

/* The header names, in column order; steps_csv_ncolumns of them. A sweep
 * with GPU telemetry (--gpu-metrics) has eleven more after them, from
 * energy_source to output_tokens_per_j (docs/formats.md). */
extern const char *const steps_csv_columns[];
extern const size_t steps_csv_ncolumns;

/* Write the n steps to path atomically (path.tmp, fsync, rename). Returns
 * 0, or LL_E_IO / LL_E_RANGE with the reason, naming the file, in err. */
int steps_csv_write(const char *path, const struct sweep_step *steps, size_t n, char *err,
                    size_t errlen);

/* classes.csv: one row per step and traffic class (long format), for a
 * sweep whose workload file has two classes or more. Columns in
 * steps_csv_class_columns (docs/formats.md, "classes.csv"). */
extern const char *const steps_csv_class_columns[];
extern const size_t steps_csv_class_ncolumns;

/* 1 when some step of the n has a per-class breakdown (then `llmload
 * sweep` and `llmload report` write classes.csv). */
int steps_csv_have_classes(const struct sweep_step *steps, size_t n);

/* Write classes.csv of the n steps to path atomically, as steps_csv_write
 * does: the header, then for each step in order one row per class in the
 * step's class order. Same returns as steps_csv_write. */
int steps_csv_write_classes(const char *path, const struct sweep_step *steps, size_t n,
                            char *err, size_t errlen);

#endif
