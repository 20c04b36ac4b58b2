/* empirical.h: distributions made of observed values, `empirical:FILE`.
 *
 * A file holds either single values (one column) or (input, output) pairs
 * (two columns), in one of two formats, told apart by the first
 * non-blank byte ('{' means JSON Lines):
 *
 *   CSV     one number per line, or two numbers "input,output" per line;
 *           an optional header line of names ("input,output", "value");
 *           blank lines and lines starting with '#' are skipped.
 *   JSONL   one object per line: {"value": X} or {"input": N, "output": M}.
 *
 * Values are non-negative. With unit DIST_UNIT_DURATION_NS a value is a
 * duration ("250ms"; a bare number is seconds) held in ns; otherwise a plain
 * number. Every row is kept, so draws reproduce the file exactly:
 *
 *   - a single value is one observation drawn uniformly (a bootstrap draw:
 *     only observed values come out, never one between them);
 *   - a pair is one observed row, so the correlation of input and output is
 *     the file's;
 *   - empirical_quantile interpolates linearly between order statistics
 *     (for reports and tests, not for sampling).
 *
 * Memory is bounded: at most EMPIRICAL_MAX_ROWS rows (about 32 bytes each). */
#ifndef LL_EMPIRICAL_H
#define LL_EMPIRICAL_H

#include <stddef.h>
#include <stdint.h>

#include "workload/dist.h"
#include "util/rng.h"

#define EMPIRICAL_MAX_ROWS 10000000u

/* Columns: a single-value file has only column 0. */
#define EMPIRICAL_COL_VALUE  0
#define EMPIRICAL_COL_INPUT  0
#define EMPIRICAL_COL_OUTPUT 1

struct empirical;

/* empirical_spec_col's answer for a '#' that names no column. */
#define EMPIRICAL_COL_BAD (-2)

/* The column the FILE of "empirical:FILE[#input|#output]" names by its
 * suffix: of file (the text after "empirical:"), "#input" gives
 * EMPIRICAL_COL_INPUT and "#output" EMPIRICAL_COL_OUTPUT, with *name_len
 * the length of the file's name before the suffix; no suffix gives -1
 * and *name_len strlen(file). Any other '#' after the last '/' is a
 * misspelt selector: EMPIRICAL_COL_BAD, with *name_len up to the '#'
 * (so a file whose name holds a '#' is named through a directory: the
 * flags and a --workload file's classes both read it by this one rule). */
int empirical_spec_col(const char *file, size_t *name_len);

/* Load the file at path. Returns 0 and a new *out (caller frees with
 * empirical_free), or LL_E_IO / LL_E_INVAL / LL_E_RANGE with one line in err
 * naming the file, line, column and field and what was expected, e.g.
 *   lens.csv:12:5: output: expected a number >= 0, got "-3"
 * *out is NULL on error. */
int empirical_load(const char *path, enum dist_unit unit,
                   struct empirical **out, char *err, size_t errlen);

/* The same for text[0..len) (need not be NUL-terminated); name is used in
 * messages. Does no I/O. */
int empirical_parse(const char *name, const char *text, size_t len,
                    enum dist_unit unit, struct empirical **out, char *err,
                    size_t errlen);

/* Free e. NULL does nothing. */
void empirical_free(struct empirical *e);

/* Rows (>= 1) and columns (1 or 2). */
size_t empirical_rows(const struct empirical *e);
int empirical_columns(const struct empirical *e);

/* The value in row [0, rows) and column [0, columns), in file order. */
double empirical_value(const struct empirical *e, size_t row, int col);

/* One observed value of column col, drawn uniformly over the rows (one
 * uniform from r). */
double empirical_sample(const struct empirical *e, int col, struct rng *r);

/* One observed row of a two-column file (one uniform from r): *input and
 * *output from the same row. On a one-column file both get the value. */
void empirical_sample_pair(const struct empirical *e, struct rng *r,
                           double *input, double *output);

/* The p-quantile (p in [0, 1], clamped) of column col, interpolating
 * linearly between order statistics: with the sorted values x[0..n),
 * h = p (n - 1), the result is x[floor h] + (h - floor h) (x[floor h + 1] -
 * x[floor h]) (Hyndman and Fan's type 7). */
double empirical_quantile(const struct empirical *e, int col, double p);

/* Check column col of e as token lengths, by dist_check_length's rule:
 * LL_E_INVAL with a one-line reason in err (naming no flag or file: "3
 * of its 3 output lengths round to 0 tokens ...") when its p99 rounds to
 * 0 tokens, which requests would send as 1 each, or when a value is above
 * DIST_TOKENS_MAX ("2 of its 9 lengths are above 100000000 tokens ..."),
 * which would be cut to it; else 0. */
int empirical_check_length(const struct empirical *e, int col, char *err, size_t errlen);

/* The mean of column col. */
double empirical_mean(const struct empirical *e, int col);

#endif
