/* jsonfile.c: the helpers every loader of a user's input file shares.
 * See jsonfile.h. */
#include "workload/jsonfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "decode/jscan.h"
#include "util/json.h"
#include "util/util.h"

int jsonfile_read_all(const char *path, size_t max_bytes, char **out,
                    size_t *out_len, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int fd, rc = LL_E_IO;

    *out = NULL;
    *out_len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return LL_E_IO;
    }
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > max_bytes + 2)
                ncap = max_bytes + 2;
            if (ncap <= len + 1) {
                snprintf(err, errlen, "%s: file is larger than %zu bytes", path,
                         max_bytes);
                rc = LL_E_RANGE;
                goto fail;
            }
            buf = ll_realloc(buf, ncap);
            cap = ncap;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max_bytes) {
            snprintf(err, errlen, "%s: file is larger than %zu bytes", path,
                     max_bytes);
            rc = LL_E_RANGE;
            goto fail;
        }
    }
    close(fd);
    if (!buf)
        buf = ll_malloc(1);
    size_t bom = jsonfile_bom_len(buf, len);
    if (bom) {
        memmove(buf, buf + bom, len - bom);
        len -= bom;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return 0;

fail:
    close(fd);
    free(buf);
    return rc;
}

size_t jsonfile_bom_len(const char *text, size_t len)
{
    return len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

int jsonfile_load(const char *path, size_t max_bytes, jsonfile_parse_fn *parse, void *out,
                  char *err, size_t errlen)
{
    char *text;
    size_t len;
    int rc = jsonfile_read_all(path, max_bytes, &text, &len, err, errlen);
    if (rc)
        return rc;
    rc = parse(out, path, text, len, err, errlen);
    free(text);
    return rc;
}

size_t jsonfile_skip_blank(const char *text, size_t len)
{
    size_t k = 0;
    while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n'))
        k++;
    return k;
}

int jsonfile_each_line(const char *text, size_t len, jsonfile_line_fn *fn, void *ud)
{
    const char *s = text, *end = text + len;
    unsigned long line = 0;
    int rc;
    while (s < end) {
        line++;
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        const char *a = s;
        while (a < eol && (*a == ' ' || *a == '\t' || *a == '\r'))
            a++;
        if (a < eol && (rc = fn(ud, s, (size_t)(eol - s), line)) != 0)
            return rc;
        s = eol < end ? eol + 1 : end;
    }
    return 0;
}

int jsonfile_valid_name(const char *s, size_t n, size_t max)
{
    if (n == 0 || n >= max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

/* Append the digits s[0..n) to d[0..at), leading zeros of the whole
 * number left out, at most cap kept; a digit past cap is counted in
 * *dropped, and *dropped_nonzero set when it is not '0'. Returns the new
 * at. */
static size_t take_digits(const char *s, size_t n, char *d, size_t at, size_t cap, long *dropped,
                          int *dropped_nonzero)
{
    for (size_t i = 0; i < n; i++) {
        if (at == 0 && s[i] == '0')
            continue;
        if (at < cap) {
            d[at++] = s[i];
        } else {
            (*dropped)++;
            *dropped_nonzero |= s[i] != '0';
        }
    }
    return at;
}

int jsonfile_whole_number(const struct jscan_value *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!v || v->type != JSCAN_NUMBER || v->len == 0)
        return LL_E_INVAL;
    const char *p = v->ptr, *end = v->ptr + v->len;
    int neg = *p == '-';
    p += neg;
    const char *ip = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    size_t in = (size_t)(p - ip);
    const char *fp = p;
    size_t fn = 0;
    if (p < end && *p == '.') {
        fp = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        fn = (size_t)(p - fp);
    }
    /* The exponent, capped: past 1e6 either way the answer is already
     * known (out of range, or a fraction). */
    long exp10 = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        if (++p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            exp10 = exp10 < 1000000 ? exp10 * 10 + (*p - '0') : exp10;
        exp10 = eneg ? -exp10 : exp10;
    }
    /* The value is D * 10^e, D the significant digits. 40 digits is more
     * than any int64 has: a nonzero digit past them makes the number a
     * fraction or too large, refused either way. */
    char d[40];
    long dropped = 0;
    int dropped_nonzero = 0;
    size_t dn = take_digits(ip, in, d, 0, sizeof d, &dropped, &dropped_nonzero);
    dn = take_digits(fp, fn, d, dn, sizeof d, &dropped, &dropped_nonzero);
    long e = exp10 - (long)fn + dropped;
    if (dropped_nonzero)
        return e >= 0 ? LL_E_RANGE : LL_E_INVAL;
    while (dn > 0 && d[dn - 1] == '0') {
        dn--;
        e++;
    }
    if (dn > 0 && e < 0)
        return LL_E_INVAL; /* 5.5, 1e-3: a fraction */
    if (dn > 0 && (long)dn + e > 19)
        return LL_E_RANGE;
    uint64_t mag = 0;
    for (size_t i = 0; i < dn; i++)
        mag = mag * 10 + (uint64_t)(d[i] - '0');
    for (long k = 0; dn > 0 && k < e; k++) {
        if (mag > UINT64_MAX / 10)
            return LL_E_RANGE;
        mag *= 10;
    }
    if (mag > (uint64_t)INT64_MAX + (uint64_t)neg)
        return LL_E_RANGE;
    int64_t x = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    if (x < lo || x > hi)
        return LL_E_RANGE;
    *out = x;
    return 0;
}

const char *jsonfile_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: break;
    }
    return "null";
}

char *jsonfile_quote(const char *s, size_t len, char *out, size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    size_t at = 0, i;
    size_t room = outlen > 8 ? outlen - 8 : 0; /* keep space for "..." + NUL */
    if (room > 40)
        room = 40;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t need = (c < 0x20 || c >= 0x7f || c == '\\') ? 4 : 1;
        if (at + need > room)
            break;
        if (need == 4) {
            out[at++] = '\\';
            out[at++] = 'x';
            out[at++] = hex[c >> 4];
            out[at++] = hex[c & 15];
        } else {
            out[at++] = (char)c;
        }
    }
    if (i < len && outlen >= 4) {
        out[at++] = '.';
        out[at++] = '.';
        out[at++] = '.';
    }
    if (outlen)
        out[at < outlen ? at : outlen - 1] = '\0';
    return out;
}

void jsonfile_line_col(const char *text, size_t off, unsigned long *line,
                     unsigned long *col)
{
    unsigned long l = 1;
    size_t start = 0;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            l++;
            start = i + 1;
        }
    }
    *line = l;
    *col = (unsigned long)(off - start) + 1;
}

void jsonfile_verrf(char *err, size_t errlen, const char *name, unsigned long line,
                    unsigned long col, const char *field, const char *fmt, va_list ap)
{
    char msg[400];
    if (!err || errlen == 0)
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(err, errlen, "%s:%lu:%lu: %s%s%s", name, line, col, field ? field : "",
             field ? ": " : "", msg);
}

void jsonfile_json_error(const char *name, unsigned long first_line,
                       const char *text, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *j = ll_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (j) {
        json_decref(j);
        snprintf(err, errlen, "%s:%lu: invalid JSON (nested more than %d deep, "
                              "or invalid UTF-8)", name, first_line,
                 JSCAN_DEFAULT_DEPTH);
        return;
    }
    /* Text that does not even start as a JSON value is most likely another
     * format (a YAML workload read "invalid token near 'classes'"). */
    size_t at = jsonfile_skip_blank(text, len);
    int not_json = at < len && !strchr("{[\"-0123456789tfn", text[at]);
    snprintf(err, errlen, "%s:%lu:%d: invalid JSON: %s%s", name,
             first_line + (unsigned long)(jerr.line > 1 ? jerr.line - 1 : 0),
             jerr.column > 0 ? jerr.column : 1, jerr.text,
             not_json ? " (JSON expected: YAML and other formats are not read)" : "");
}

int jsonfile_json_members(const char *name, unsigned long line,
                        const char *line_start,
                        const struct jscan_value *obj,
                        const char *const *names, size_t n,
                        struct jscan_value *vals, char *err, size_t errlen)
{
    struct jscan_iter it;
    struct jscan_value key, val;

    for (size_t i = 0; i < n; i++)
        vals[i].type = JSCAN_INVALID;
    if (jscan_iter_init(&it, obj) != 0)
        return LL_E_INVAL;
    while (jscan_iter_next_member(&it, &key, &val)) {
        size_t i;
        for (i = 0; i < n; i++) {
            if (jscan_string_equals(&key, names[i], strlen(names[i])))
                break;
        }
        char q[64];
        jsonfile_quote(key.ptr + 1, key.len - 2, q, sizeof(q));
        unsigned long col = (unsigned long)(key.ptr - line_start) + 1;
        if (i == n) {
            char allowed[512];
            size_t at = 0;
            allowed[0] = '\0';
            for (size_t k = 0; k < n && at < sizeof(allowed); k++) {
                int w = snprintf(allowed + at, sizeof(allowed) - at, "%s%s",
                                 k ? ", " : "", names[k]);
                if (w < 0)
                    break;
                at += (size_t)w;
            }
            snprintf(err, errlen, "%s:%lu:%lu: %s: unknown field (allowed: %s)",
                     name, line, col, q, allowed);
            return LL_E_INVAL;
        }
        if (vals[i].type != JSCAN_INVALID) {
            snprintf(err, errlen, "%s:%lu:%lu: %s: repeated field", name, line,
                     col, q);
            return LL_E_INVAL;
        }
        vals[i] = val;
    }
    return 0;
}
