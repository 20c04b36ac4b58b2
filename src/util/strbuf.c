/* strbuf.c: a growable string with XML escaping and compact numbers. */
#include "util/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define STRBUF_INITIAL_CAP 256

void strbuf_init(struct strbuf *b)
{
    b->cap = STRBUF_INITIAL_CAP;
    b->data = ll_malloc(b->cap);
    b->data[0] = '\0';
    b->len = 0;
}

void strbuf_free(struct strbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void strbuf_clear(struct strbuf *b)
{
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

/* Make room for extra more bytes plus the NUL. */
static void strbuf_reserve(struct strbuf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need < b->len) {
        ll_errorf("strbuf: size overflow");
        abort();
    }
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : STRBUF_INITIAL_CAP;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    b->data = ll_realloc(b->data, cap);
    b->cap = cap;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
    if (n == 0)
        return;
    strbuf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void strbuf_puts(struct strbuf *b, const char *s)
{
    if (s != NULL)
        strbuf_add(b, s, strlen(s));
}

void strbuf_vprintf(struct strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;                 /* an encoding error: nothing sensible to add */
    if ((size_t)n < sizeof(small)) {
        strbuf_add(b, small, (size_t)n);
        return;
    }
    strbuf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

void strbuf_put_xml(struct strbuf *b, const char *s)
{
    if (s == NULL)
        return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        /* Copy the longest run that needs no escaping in one go. */
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '&' && *p != '<' &&
               *p != '>' && *p != '"' && *p != '\'' && *p != 0x7F)
            p++;
        strbuf_add(b, (const char *)run, (size_t)(p - run));
        if (*p == '\0')
            break;
        switch (*p) {
        case '&': strbuf_puts(b, "&amp;"); p++; continue;
        case '<': strbuf_puts(b, "&lt;"); p++; continue;
        case '>': strbuf_puts(b, "&gt;"); p++; continue;
        case '"': strbuf_puts(b, "&quot;"); p++; continue;
        case '\'': strbuf_puts(b, "&#39;"); p++; continue;
        case '\t': case '\n': case '\r':
            strbuf_add(b, (const char *)p, 1); p++; continue;
        default:
            break;
        }
        if (*p < 0x20 || *p == 0x7F) {
            p++;                            /* not allowed in XML: drop */
            continue;
        }
        size_t n = ll_utf8_len(p, strnlen((const char *)p, 4));
        if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE) {
            /* U+FFFE and U+FFFF: well-formed UTF-8 that XML 1.0 forbids
             * (xmllint refuses the page) */
            strbuf_puts(b, "\xEF\xBF\xBD");
            p += 3;
        } else if (n == 0) {
            strbuf_puts(b, "\xEF\xBF\xBD"); /* U+FFFD for a bad byte */
            p++;
        } else {
            strbuf_add(b, (const char *)p, n);
            p += n;
        }
    }
}

void strbuf_put_num(struct strbuf *b, double v)
{
    char buf[40];
    if (isnan(v)) {
        strbuf_puts(b, "NaN");
        return;
    }
    if (isinf(v)) {
        strbuf_puts(b, v > 0 ? "Inf" : "-Inf");
        return;
    }
    if (v == 0) {
        strbuf_puts(b, "0");                /* also -0 */
        return;
    }
    if (fabs(v) < 1e15 && v == floor(v)) {
        snprintf(buf, sizeof(buf), "%.0f", v);
        strbuf_puts(b, buf);
        return;
    }
    /* The least %g precision that reads back as v; 17 always does. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    strbuf_puts(b, buf);
}

void strbuf_put_fixed(struct strbuf *b, double v, int decimals)
{
    char buf[64];
    if (!isfinite(v)) {
        strbuf_put_num(b, v);
        return;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        strbuf_put_num(b, v);               /* huge: no fixed form fits */
        return;
    }
    if (decimals > 0) {
        while (n > 0 && buf[n - 1] == '0')
            buf[--n] = '\0';
        if (n > 0 && buf[n - 1] == '.')
            buf[--n] = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        strbuf_puts(b, "0");
    else
        strbuf_puts(b, buf);
}
