/* jsonfile.h: what every loader of a user's input file shares (the
 * --workload file, traces, datasets, empirical files): reading a file whole
 * with a bound, quoting a bad value for a one-line error, the line and column
 * of an offset, jansson's syntax error as "NAME:LINE:COL: ...", and a JSON
 * object's members sorted by an allowed list. */
#ifndef LL_JSONFILE_H
#define LL_JSONFILE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct jscan_value;

/* Largest input file any loader reads whole (2 GiB). */
#define JSONFILE_MAX_BYTES ((size_t)2 << 30)

/* Read the file at path whole into a new buffer (caller frees with free();
 * one NUL byte is appended, not counted in *out_len). A UTF-8 byte-order
 * mark at the very start (EF BB BF, which Windows editors write) is left
 * out (jsonfile_bom_len), so that every loader reads such a file as its
 * editor shows it, line 1's columns counted after the mark; a mark
 * anywhere else is kept, and each parser refuses it as the stray bytes it
 * is. Files over max_bytes are refused. Returns 0, LL_E_IO or LL_E_RANGE
 * with "PATH: reason" in err. */
int jsonfile_read_all(const char *path, size_t max_bytes, char **out,
                    size_t *out_len, char *err, size_t errlen);

/* 3 when text[0..len) starts with a UTF-8 byte-order mark (EF BB BF),
 * else 0: the bytes a reader skips before the text proper. */
size_t jsonfile_bom_len(const char *text, size_t len);

/* Parses text[0..len), the contents of the file name, into the object at
 * out (the loader's own out-parameter); returns 0 or an LL_E* code with
 * the reason in err. */
typedef int jsonfile_parse_fn(void *out, const char *name, const char *text, size_t len,
                              char *err, size_t errlen);

/* Read the file at path whole (at most max_bytes) and parse it with
 * parse(out, path, ...). Returns what parse returns, or the read's error
 * (jsonfile_read_all). */
int jsonfile_load(const char *path, size_t max_bytes, jsonfile_parse_fn *parse, void *out,
                  char *err, size_t errlen);

/* Define the loader int LOAD(const char *path, TYPE **out, char *err,
 * size_t errlen) over a parser with the house signature
 * int PARSE(const char *name, const char *text, size_t len, TYPE **out,
 * char *err, size_t errlen): it sets *out to NULL, then reads the file whole
 * (at most JSONFILE_MAX_BYTES) and parses it. Every loader whose parser
 * takes nothing more is this one adapter, so it is written once; the
 * loader's own header declares and documents LOAD. */
#define JSONFILE_DEFINE_LOAD(LOAD, PARSE, TYPE)                                                    \
    static int LOAD##_parse_text(void *out, const char *name, const char *text, size_t len,        \
                                 char *err, size_t errlen)                                         \
    {                                                                                              \
        return PARSE(name, text, len, (TYPE **)out, err, errlen);                                  \
    }                                                                                              \
    int LOAD(const char *path, TYPE **out, char *err, size_t errlen)                               \
    {                                                                                              \
        *out = NULL;                                                                               \
        return jsonfile_load(path, JSONFILE_MAX_BYTES, LOAD##_parse_text, out, err, errlen);       \
    }

/* The offset of the first byte of text[0..len) that is not a space, tab,
 * CR or LF (len when there is none). */
size_t jsonfile_skip_blank(const char *text, size_t len);

/* The lines of a JSON Lines text: fn(ud, s, n, line) for each line of
 * text[0..len) that holds more than spaces, tabs and CRs, with s its start
 * and n its bytes up to its '\n' (excluded, a CR kept), line counting from
 * 1 over every line, blank ones too. Returns the first non-zero value fn
 * returns (and reads no further), else 0. */
typedef int jsonfile_line_fn(void *ud, const char *s, size_t n, unsigned long line);
int jsonfile_each_line(const char *text, size_t len, jsonfile_line_fn *fn, void *ud);

/* Whether s[0..n) is a name of 1 to max - 1 bytes of [A-Za-z0-9_.-] (a
 * class name, which fits a buffer of max bytes with its NUL). */
int jsonfile_valid_name(const char *s, size_t n, size_t max);

/* Write s[0..len) into out (outlen >= 8 bytes) for an error message: at
 * most about 40 bytes, control and non-ASCII bytes as \xHH, "..." when cut.
 * Returns out. */
char *jsonfile_quote(const char *s, size_t len, char *out, size_t outlen);

/* The value of the JSON number v (as jscan validated it) as a whole
 * number in [lo, hi], into *out. A number whose value is exactly an
 * integer is one, however it is written: 5, 5.0, 5e0, 0.5e1 and 1e3 are
 * all whole; 5.5 and 1e-3 are not. Decided from the number's text, digit
 * by digit, never through a double, so 9007199254740993.0 is exact.
 * Returns 0; LL_E_INVAL when v is not a number or has a fraction;
 * LL_E_RANGE when it is whole but outside [lo, hi]. *out is set only on
 * success. Every loader reads an integer field of a user's file with this
 * one function, and says "expected a whole number ..." when it fails. */
int jsonfile_whole_number(const struct jscan_value *v, int64_t lo, int64_t hi, int64_t *out);

/* What j is, for an error message: "an object", "an array", "a string",
 * "a number", "a boolean" or "null". */
const char *jsonfile_type_name(const json_t *j);

/* The 1-based line and byte column of offset off in text. */
void jsonfile_line_col(const char *text, size_t off, unsigned long *line,
                     unsigned long *col);

/* The one shape of a loader's error, "NAME:LINE:COL: FIELD: MESSAGE"
 * ("FIELD: " left out when field is NULL), the message from fmt and ap,
 * into err (errlen bytes). Writes nothing when err is NULL or errlen 0. */
void jsonfile_verrf(char *err, size_t errlen, const char *name, unsigned long line,
                    unsigned long col, const char *field, const char *fmt, va_list ap)
    __attribute__((format(printf, 7, 0)));

/* For text that is not valid JSON (a whole document, or one line of a
 * JSON Lines file that starts at line first_line): write
 * "NAME:LINE:COL: invalid JSON: <reason>" into err, the position and
 * reason from jansson's parse of text (made one printable line). */
void jsonfile_json_error(const char *name, unsigned long first_line,
                       const char *text, size_t len, char *err, size_t errlen);

/* Sort the members of JSON object obj (from a validated document) into
 * vals: vals[i] gets the member named names[i], or a value of type
 * JSCAN_INVALID when absent. An unknown or repeated key is an error,
 * written as "NAME:LINE:COL: KEY: unknown field (allowed: a, b, c)" or
 * "...: repeated field", the column counted from line_start. Returns 0 or
 * LL_E_INVAL. n <= 32. */
int jsonfile_json_members(const char *name, unsigned long line,
                        const char *line_start,
                        const struct jscan_value *obj,
                        const char *const *names, size_t n,
                        struct jscan_value *vals, char *err, size_t errlen);

#endif
