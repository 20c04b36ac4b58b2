/* strbuf.h: a growable byte string, for building documents (SVG, HTML)
 * in memory before writing them out in one go.
 *
 * The buffer is always NUL-terminated after strbuf_init, so b->data can be
 * used as a C string at any time. Growth doubles the capacity; allocation
 * failure aborts with the size (util.h's allocator), so appending never
 * fails and returns nothing. */
#ifndef LL_STRBUF_H
#define LL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    char *data;                 /* len bytes, then a NUL; owned */
    size_t len;                 /* bytes, without the NUL */
    size_t cap;                 /* bytes allocated */
};

/* Make b an empty string (allocates a small buffer; aborts on out of
 * memory). Undo with strbuf_free. */
void strbuf_init(struct strbuf *b);

/* Free b's memory and zero it. Safe on a zeroed struct and twice. */
void strbuf_free(struct strbuf *b);

/* Forget the contents (len = 0) but keep the allocation. */
void strbuf_clear(struct strbuf *b);

/* Append n bytes of s (which may contain NULs; n = 0 does nothing). */
void strbuf_add(struct strbuf *b, const char *s, size_t n);

/* Append the C string s; NULL appends nothing. */
void strbuf_puts(struct strbuf *b, const char *s);

/* Append printf-formatted text. */
void strbuf_printf(struct strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *b, const char *fmt, va_list ap);

/* Append s escaped for XML and HTML text and attribute values: & < > " '
 * become entities; control bytes other than tab, LF and CR (not allowed in
 * XML) are dropped; a byte that does not start a valid UTF-8 sequence,
 * and U+FFFE and U+FFFF (valid UTF-8 that XML 1.0 forbids), become U+FFFD
 * (surrogates never reach it: they are not valid UTF-8). The result is always well-formed. NULL appends nothing. */
void strbuf_put_xml(struct strbuf *b, const char *s);

/* Append v in the shortest decimal form that reads back (strtod) as exactly
 * v: integers up to 1e15 without a point or exponent ("20", "-3"), others
 * with %g at the least precision that round-trips ("0.412", "1.5e-07").
 * -0 prints as "0"; NaN as "NaN"; infinities as "Inf" / "-Inf". */
void strbuf_put_num(struct strbuf *b, double v);

/* Append v rounded to at most decimals digits after the point (0..9), with
 * trailing zeros and a trailing point removed: 12.50 -> "12.5", 3.00 ->
 * "3". -0 prints as "0". For pixel coordinates. */
void strbuf_put_fixed(struct strbuf *b, double v, int decimals);

#endif
