/* empirical.c: observed-value distributions from CSV or JSON Lines files.
 * See empirical.h for the formats and the sampling rule. */
#include "workload/empirical.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/jscan.h"
#include "util/util.h"
#include "workload/jsonfile.h"

/* The largest value accepted (as dist.c does for its parameters). */
#define EMPIRICAL_MAX_VALUE 1e15
/* Longest numeric field, bytes. */
#define FIELD_MAX 64

struct empirical {
    size_t rows;
    int cols;            /* 1 or 2 */
    double *vals;        /* rows * cols, row-major, in file order */
    double *sorted;      /* cols runs of rows values, each ascending */
    double sum[2];       /* per column, for the mean */
};

/* The state of one parse. */
struct eparse {
    const char *name;
    enum dist_unit unit;
    char *err;
    size_t errlen;
    double *vals;
    size_t rows, cap_rows;
    int cols;                 /* 0 until the first row or header */
    unsigned long cols_line;  /* the line that fixed cols */
    int jsonl;                /* JSON Lines, else CSV */
};

static void errf(struct eparse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void errf(struct eparse *p, const char *fmt, ...)
{
    if (!p->err || p->errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->errlen, fmt, ap);
    va_end(ap);
}

static const char *col_name(int cols, int col)
{
    if (cols <= 1)
        return "value";
    return col == 0 ? "input" : "output";
}

static const char *expected_value(enum dist_unit unit)
{
    return unit == DIST_UNIT_DURATION_NS
               ? "a duration >= 0 (e.g. 250ms; a bare number is seconds)"
               : "a number in [0, 1e15]";
}

/* Parse the NUL-free text s[0..n) as one value in the unit. */
static int value_from_text(enum dist_unit unit, const char *s, size_t n,
                           double *out)
{
    char buf[FIELD_MAX];
    if (n == 0 || n >= sizeof(buf) || memchr(s, '\0', n))
        return LL_E_INVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (unit == DIST_UNIT_DURATION_NS) {
        uint64_t ns;
        if (ll_parse_duration_ns(buf, LL_NS_PER_SEC, &ns) != 0)
            return LL_E_INVAL;
        *out = (double)ns;
        return 0;
    }
    double v;
    if (ll_parse_double(buf, &v) != 0 || !(v >= 0) || v > EMPIRICAL_MAX_VALUE)
        return LL_E_INVAL;
    *out = v == 0 ? 0 : v; /* no -0 */
    return 0;
}

/* Append one row of p->cols values. */
static int push_row(struct eparse *p, const double *row, unsigned long line)
{
    if (p->rows >= EMPIRICAL_MAX_ROWS) {
        errf(p, "%s:%lu: too many rows: at most %u are read", p->name, line,
             EMPIRICAL_MAX_ROWS);
        return LL_E_RANGE;
    }
    if (p->rows == p->cap_rows) {
        size_t cap = p->cap_rows ? p->cap_rows * 2 : 256;
        p->vals = ll_realloc(p->vals, cap * (size_t)p->cols * sizeof(double));
        p->cap_rows = cap;
    }
    memcpy(p->vals + p->rows * (size_t)p->cols, row,
           (size_t)p->cols * sizeof(double));
    p->rows++;
    return 0;
}

/* Fix the column count on first use, else check it. */
static int check_cols(struct eparse *p, int cols, unsigned long line,
                      unsigned long col)
{
    if (p->cols == 0) {
        p->cols = cols;
        p->cols_line = line;
        return 0;
    }
    if (cols == p->cols)
        return 0;
    errf(p, "%s:%lu:%lu: expected %d column%s as on line %lu (%s), got %d",
         p->name, line, col, p->cols, p->cols == 1 ? "" : "s", p->cols_line,
         p->cols == 1 ? "value" : "input,output", cols);
    return LL_E_INVAL;
}

static int is_blank(int c)
{
    return c == ' ' || c == '\t';
}

static int is_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '"' ||
           c == '_';
}

/* One content line of a CSV file, s[0..n) without its line ending. */
static int csv_line(struct eparse *p, const char *s, size_t n,
                    unsigned long line)
{
    const char *fs[3];
    size_t fl[3];
    int nf = 0;
    size_t i = 0;

    for (;;) {
        size_t start = i;
        while (i < n && s[i] != ',')
            i++;
        size_t a = start, b = i;
        while (a < b && is_blank((unsigned char)s[a]))
            a++;
        while (b > a && is_blank((unsigned char)s[b - 1]))
            b--;
        if (nf == 2) {
            errf(p, "%s:%lu:%zu: expected 1 or 2 columns (value, or "
                    "input,output), got more", p->name, line, start + 1);
            return LL_E_INVAL;
        }
        fs[nf] = s + a;
        fl[nf] = b - a;
        nf++;
        if (i == n)
            break;
        i++; /* the comma */
    }

    /* A header: only before the first row, every field a name. */
    int names = 0;
    for (int k = 0; k < nf; k++)
        names += fl[k] > 0 && is_name_start((unsigned char)fs[k][0]);
    if (names == nf && p->rows == 0 && p->cols == 0) {
        p->cols = nf;
        p->cols_line = line;
        return 0;
    }
    int rc = check_cols(p, nf, line, (unsigned long)(fs[nf - 1] - s) + 1);
    if (rc)
        return rc;

    double row[2];
    for (int k = 0; k < nf; k++) {
        if (value_from_text(p->unit, fs[k], fl[k], &row[k]) != 0) {
            char q[64];
            errf(p, "%s:%lu:%lu: %s: expected %s, got \"%s\"", p->name, line,
                 (unsigned long)(fs[k] - s) + 1, col_name(nf, k),
                 expected_value(p->unit), jsonfile_quote(fs[k], fl[k], q, sizeof(q)));
            return LL_E_INVAL;
        }
    }
    return push_row(p, row, line);
}

/* One JSON value as a value in the unit: a number (seconds for durations)
 * or, for durations, a string with a unit. */
static int value_from_json(enum dist_unit unit, const struct jscan_value *v,
                           double *out)
{
    if (v->type == JSCAN_NUMBER) {
        double d;
        if (jscan_number_double(v, &d) != 0 || !(d >= 0))
            return LL_E_INVAL;
        if (unit == DIST_UNIT_DURATION_NS) {
            d *= 1e9;
            if (d > 9.2e18)
                return LL_E_INVAL;
            d = (double)llround(d);
        } else if (d > EMPIRICAL_MAX_VALUE) {
            return LL_E_INVAL;
        }
        *out = d == 0 ? 0 : d;
        return 0;
    }
    if (v->type == JSCAN_STRING && unit == DIST_UNIT_DURATION_NS) {
        char buf[FIELD_MAX];
        size_t n;
        if (jscan_string_unescape(v, buf, sizeof(buf), &n) != 0)
            return LL_E_INVAL;
        return value_from_text(unit, buf, n, out);
    }
    return LL_E_INVAL;
}

static int jsonl_line(struct eparse *p, const char *s, size_t n,
                      unsigned long line)
{
    static const char *const names[] = {"value", "input", "output"};
    struct jscan_value root, vals[3];

    if (jscan_validate(s, n, JSCAN_DEFAULT_DEPTH, &root) != 0) {
        jsonfile_json_error(p->name, line, s, n, p->err, p->errlen);
        return LL_E_INVAL;
    }
    if (root.type != JSCAN_OBJECT) {
        char q[64];
        errf(p, "%s:%lu:%lu: expected an object like {\"value\":X} or "
                "{\"input\":N,\"output\":M}, got %s", p->name, line,
             (unsigned long)(root.ptr - s) + 1,
             jsonfile_quote(root.ptr, root.len, q, sizeof(q)));
        return LL_E_INVAL;
    }
    int rc = jsonfile_json_members(p->name, line, s, &root, names, 3, vals,
                                 p->err, p->errlen);
    if (rc)
        return rc;
    int has_v = vals[0].type != JSCAN_INVALID;
    int has_i = vals[1].type != JSCAN_INVALID;
    int has_o = vals[2].type != JSCAN_INVALID;
    int cols;
    const struct jscan_value *use[2];
    if (has_v && !has_i && !has_o) {
        cols = 1;
        use[0] = &vals[0];
    } else if (!has_v && has_i && has_o) {
        cols = 2;
        use[0] = &vals[1];
        use[1] = &vals[2];
    } else {
        errf(p, "%s:%lu:%lu: expected either \"value\" or both \"input\" and "
                "\"output\"", p->name, line, (unsigned long)(root.ptr - s) + 1);
        return LL_E_INVAL;
    }
    rc = check_cols(p, cols, line, (unsigned long)(root.ptr - s) + 1);
    if (rc)
        return rc;
    double row[2];
    for (int k = 0; k < cols; k++) {
        if (value_from_json(p->unit, use[k], &row[k]) != 0) {
            char q[64];
            errf(p, "%s:%lu:%lu: %s: expected %s, got %s", p->name, line,
                 (unsigned long)(use[k]->ptr - s) + 1, col_name(cols, k),
                 expected_value(p->unit),
                 jsonfile_quote(use[k]->ptr, use[k]->len, q, sizeof(q)));
            return LL_E_INVAL;
        }
    }
    return push_row(p, row, line);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One line that is not blank, its CR dropped: a JSON Lines row, or a CSV
 * row unless it is a comment ('#' first). */
static int row_line(void *ud, const char *s, size_t n, unsigned long line)
{
    struct eparse *p = ud;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    size_t a = 0;
    while (a < n && (is_blank((unsigned char)s[a]) || s[a] == '\r'))
        a++;
    if (p->jsonl)
        return jsonl_line(p, s, n, line);
    return s[a] == '#' ? 0 : csv_line(p, s, n, line);
}

int empirical_parse(const char *name, const char *text, size_t len,
                    enum dist_unit unit, struct empirical **out, char *err,
                    size_t errlen)
{
    struct eparse p = {.name = name, .unit = unit, .err = err, .errlen = errlen};
    struct empirical *e = NULL;
    int rc = LL_E_INVAL;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';

    /* The format: JSON Lines when the first non-blank byte is '{'. */
    size_t k = jsonfile_skip_blank(text, len);
    p.jsonl = k < len && text[k] == '{';
    if ((rc = jsonfile_each_line(text, len, row_line, &p)) != 0)
        goto fail;
    if (p.rows == 0) {
        errf(&p, "%s: no values: expected one number per line (or "
                 "input,output), or JSON Lines of {\"value\":X} or "
                 "{\"input\":N,\"output\":M}", name);
        rc = LL_E_INVAL;
        goto fail;
    }

    e = ll_calloc(1, sizeof(*e));
    e->rows = p.rows;
    e->cols = p.cols;
    e->vals = p.vals;
    p.vals = NULL;
    e->sorted = ll_malloc(e->rows * (size_t)e->cols * sizeof(double));
    for (int c = 0; c < e->cols; c++) {
        double *col = e->sorted + (size_t)c * e->rows;
        double sum = 0;
        for (size_t i = 0; i < e->rows; i++) {
            col[i] = e->vals[i * (size_t)e->cols + (size_t)c];
            sum += col[i];
        }
        e->sum[c] = sum;
        qsort(col, e->rows, sizeof(double), cmp_double);
    }
    *out = e;
    return 0;

fail:
    free(p.vals);
    return rc;
}

struct empirical_load_ctx {
    enum dist_unit unit;
    struct empirical **out;
};

static int empirical_parse_text(void *ctx, const char *name, const char *text, size_t len,
                                char *err, size_t errlen)
{
    struct empirical_load_ctx *c = ctx;
    return empirical_parse(name, text, len, c->unit, c->out, err, errlen);
}

int empirical_load(const char *path, enum dist_unit unit, struct empirical **out, char *err,
                   size_t errlen)
{
    struct empirical_load_ctx c = {unit, out};
    *out = NULL;
    return jsonfile_load(path, JSONFILE_MAX_BYTES, empirical_parse_text, &c, err, errlen);
}

void empirical_free(struct empirical *e)
{
    if (!e)
        return;
    free(e->vals);
    free(e->sorted);
    free(e);
}

size_t empirical_rows(const struct empirical *e)
{
    return e->rows;
}

int empirical_columns(const struct empirical *e)
{
    return e->cols;
}

static int clamp_col(const struct empirical *e, int col)
{
    return col >= 0 && col < e->cols ? col : 0;
}

double empirical_value(const struct empirical *e, size_t row, int col)
{
    return e->vals[row * (size_t)e->cols + (size_t)clamp_col(e, col)];
}

/* A uniform row index: 52 bits of one uniform are plenty for 10^7 rows. */
static size_t pick_row(const struct empirical *e, struct rng *r)
{
    size_t i = (size_t)(rng_uniform(r) * (double)e->rows);
    return i < e->rows ? i : e->rows - 1;
}

double empirical_sample(const struct empirical *e, int col, struct rng *r)
{
    return empirical_value(e, pick_row(e, r), col);
}

void empirical_sample_pair(const struct empirical *e, struct rng *r,
                           double *input, double *output)
{
    size_t i = pick_row(e, r);
    *input = empirical_value(e, i, 0);
    *output = empirical_value(e, i, e->cols - 1);
}

double empirical_quantile(const struct empirical *e, int col, double p)
{
    const double *x = e->sorted + (size_t)clamp_col(e, col) * e->rows;
    if (!(p > 0))
        return x[0];
    if (p >= 1)
        return x[e->rows - 1];
    double h = p * (double)(e->rows - 1);
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= e->rows)
        return x[e->rows - 1];
    return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

int empirical_check_length(const struct empirical *e, int col, char *err, size_t errlen)
{
    const double *x = e->sorted + (size_t)clamp_col(e, col) * e->rows;
    /* A length beyond the cap would be cut to it, silently, and a dumped
     * schedule would no longer load: refused, with how many. */
    if (x[e->rows - 1] > (double)DIST_TOKENS_MAX + 0.5) {
        size_t nbig = 0;
        while (nbig < e->rows && x[e->rows - 1 - nbig] > (double)DIST_TOKENS_MAX + 0.5)
            nbig++;
        return ll_errf(err, errlen,
                       "%zu of its %zu %s%slengths are above %u tokens (the largest %.3g); "
                       "expected at most %u",
                       nbig, e->rows, e->cols > 1 ? col_name(e->cols, col) : "",
                       e->cols > 1 ? " " : "", DIST_TOKENS_MAX, x[e->rows - 1], DIST_TOKENS_MAX);
    }
    /* As dist_check_length: a length is the value rounded, at least 1. */
    if (empirical_quantile(e, col, 0.99) >= 0.5)
        return 0;
    size_t n0 = 0;
    while (n0 < e->rows && x[n0] < 0.5)
        n0++;
    return ll_errf(err, errlen,
                   "%zu of its %zu %s%slengths round to 0 tokens (each would be sent as 1); "
                   "expected lengths of at least 1",
                   n0, e->rows, e->cols > 1 ? col_name(e->cols, col) : "", e->cols > 1 ? " " : "");
}

double empirical_mean(const struct empirical *e, int col)
{
    return e->sum[clamp_col(e, col)] / (double)e->rows;
}

int empirical_spec_col(const char *file, size_t *name_len)
{
    size_t n = strlen(file);
    *name_len = n;
    if (n > 6 && strcmp(file + n - 6, "#input") == 0) {
        *name_len = n - 6;
        return EMPIRICAL_COL_INPUT;
    }
    if (n > 7 && strcmp(file + n - 7, "#output") == 0) {
        *name_len = n - 7;
        return EMPIRICAL_COL_OUTPUT;
    }
    const char *hash = strrchr(file, '#'), *slash = strrchr(file, '/');
    if (hash && (!slash || hash > slash)) {
        *name_len = (size_t)(hash - file);
        return EMPIRICAL_COL_BAD;
    }
    return -1;
}
