/* util.c: error names, the clock, checked allocation, strict parsing. */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *ll_strerror(int err)
{
    switch (err) {
    case LL_OK: return "ok";
    case LL_E_NOMEM: return "out of memory";
    case LL_E_INVAL: return "invalid value";
    case LL_E_PROTO: return "protocol error";
    case LL_E_IO: return "I/O error";
    case LL_E_FULL: return "full";
    case LL_E_AGAIN: return "try again";
    case LL_E_RANGE: return "out of range";
    case LL_E_EOF: return "unexpected end of input";
    case LL_E_NOTFOUND: return "not found";
    }
    return "unknown error";
}

uint64_t ll_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * LL_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void oom(size_t size)
{
    fprintf(stderr, "llmload: out of memory allocating %zu bytes\n", size);
    abort();
}

void *ll_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        oom(size);
    return p;
}

void *ll_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *ll_realloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        oom(size);
    return q;
}

char *ll_strdup(const char *s)
{
    return ll_strndup(s, strlen(s));
}

char *ll_strndup(const char *s, size_t n)
{
    char *p = ll_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int ll_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return LL_E_INVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return LL_E_INVAL;
    if (errno == ERANGE || !isfinite(v))
        return LL_E_RANGE;
    *out = v;
    return 0;
}

static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t ll_u64_digits(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
        10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
        100000000000ULL, 1000000000000ULL, 10000000000000ULL,
        100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
        100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
    };
#if defined(__GNUC__)
    /* From the bit length: 1233/4096 is just above log10(2), so t is the
     * digit count less one, or one more than that; one compare decides. */
    unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
    return (size_t)t + 1 - ((v | 1) < pow10[t]);
#else
    size_t n = 1;
    while (n < 20 && v >= pow10[n])
        n++;
    return n;
#endif
}

size_t ll_fmt_u64(char *dst, uint64_t v)
{
    size_t n = ll_u64_digits(v);
    char *p = dst + n;

    /* Right to left, two digits per division by 100. */
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        p -= 2;
        p[0] = digit_pairs[i];
        p[1] = digit_pairs[i + 1];
    }
    if (v >= 10) {
        p[-2] = digit_pairs[v * 2];
        p[-1] = digit_pairs[v * 2 + 1];
    } else {
        p[-1] = (char)('0' + v);
    }
    return n;
}

int ll_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return LL_E_INVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0')
        return LL_E_INVAL;
    if (errno == ERANGE)
        return LL_E_RANGE;
    *out = v;
    return 0;
}

int ll_parse_count(const char *s, double *out)
{
    if (!s || !*s)
        return LL_E_INVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s)
        return LL_E_INVAL;
    if (*end == 'k' || *end == 'K') {
        v *= 1e3;
        end++;
    } else if (*end == 'M') {
        v *= 1e6;
        end++;
    } else if (*end == 'G') {
        v *= 1e9;
        end++;
    }
    if (*end != '\0')
        return LL_E_INVAL;
    if (errno == ERANGE || !isfinite(v))
        return LL_E_RANGE;
    *out = v;
    return 0;
}

int ll_parse_duration_ns(const char *s, uint64_t default_unit_ns,
                         uint64_t *out_ns)
{
    if (!s || !*s)
        return LL_E_INVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s)
        return LL_E_INVAL;
    if (errno == ERANGE || !isfinite(v))
        return LL_E_RANGE;
    double unit;
    if (*end == '\0')
        unit = (double)default_unit_ns;
    else if (strcmp(end, "ns") == 0)
        unit = 1;
    else if (strcmp(end, "us") == 0)
        unit = 1e3;
    else if (strcmp(end, "ms") == 0)
        unit = 1e6;
    else if (strcmp(end, "s") == 0)
        unit = 1e9;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        unit = 60e9;
    else if (strcmp(end, "h") == 0)
        unit = 3600e9;
    else
        return LL_E_INVAL;
    if (v < 0)
        return LL_E_RANGE;
    double ns = v * unit;
    if (ns >= 1.8e19)
        return LL_E_RANGE;
    *out_ns = (uint64_t)llround(ns);
    return 0;
}

char *ll_fmt_duration(uint64_t ns, char *buf, size_t len)
{
    if (ns < 10 * LL_NS_PER_US)
        snprintf(buf, len, "%.2fus", (double)ns / 1e3);
    else if (ns < LL_NS_PER_MS)
        snprintf(buf, len, "%.0fus", (double)ns / 1e3);
    else if (ns < LL_NS_PER_SEC)
        snprintf(buf, len, "%.2fms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.2fs", (double)ns / 1e9);
    return buf;
}

int ll_http_list_has(const char *s, size_t n, const char *tok, int last)
{
    size_t tn = strlen(tok);
    size_t i = 0;
    int found = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
            i++;
        size_t start = i;
        while (i < n && s[i] != ',')
            i++;
        size_t end = i;
        while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
            end--;
        if (end == start)
            continue;
        int is = end - start == tn && strncasecmp(s + start, tok, tn) == 0;
        if (is && !last)
            return 1;
        found = is;
    }
    return found;
}

void ll_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("llmload: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void ll_usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("llmload: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(LL_EXIT_USAGE);
}
