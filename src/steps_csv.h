/* steps.csv: one row per sweep step, for spreadsheets and scripts.
 *
 * The columns are fixed and documented in docs/formats.md ("steps.csv");
 * the first line is the header. Times are in milliseconds (floating point),
 * rates in per second, fractions in 0..1; an undefined figure is an empty
 * field. */
#ifndef LL_STEPS_CSV_H
#define LL_STEPS_CSV_H

#include <stddef.h>

#include "sweep.h"

/* The header names, in column order; steps_csv_ncolumns of them. */
extern const char *const steps_csv_columns[];
extern const size_t steps_csv_ncolumns;

/* Write the n steps to path atomically (path.tmp, fsync, rename). Returns
 * 0, or LL_E_IO / LL_E_RANGE with the reason, naming the file, in err. */
int steps_csv_write(const char *path, const struct sweep_step *steps, size_t n, char *err,
                    size_t errlen);

#endif
