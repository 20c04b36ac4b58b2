/* util.c: error names, the clock, checked allocation, strict parsing. */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
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
    case LL_E_INTR: return "interrupted";
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

void *ll_grow(void *p, size_t *cap, size_t need, size_t min_cap)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : min_cap;
    while (n < need)
        n *= 2;
    *cap = n;
    return ll_realloc(p, n);
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

static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

int ll_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return LL_E_INVAL;
}

const char *ll_list_next(const char *p, size_t len, const char *flag, const char *spec, char *err,
                         size_t errlen)
{
    p += len;
    if (*p != ',')
        return p;
    if (!p[1 + strspn(p + 1, " \t\n\v\f\r")]) {
        snprintf(err, errlen, "%s: a trailing comma in \"%s\"", flag, spec);
        return NULL;
    }
    return p + 1;
}

size_t ll_list_item(const char *p, char *out, size_t outlen)
{
    size_t len = strcspn(p, ","), a = 0, b = len;
    while (a < b && isspace((unsigned char)p[a]))
        a++;
    while (b > a && isspace((unsigned char)p[b - 1]))
        b--;
    if (a == b)
        return 0; /* empty, or blanks alone */
    if (len < outlen) {
        memcpy(out, p + a, b - a);
        out[b - a] = '\0';
    }
    return len;
}

void ll_putf(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (k > 0)
        *at = LL_MIN(len - 1, *at + (size_t)k);
}

char *ll_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

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

size_t ll_printable(const char *s, size_t n, char *out, size_t outlen)
{
    size_t i = 0;
    for (; i < n && s[i] && i + 1 < outlen; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    out[i] = '\0';
    return i;
}

/* How the text at s[0, n) (n >= 1) stands on a terminal: the length of
 * the character there when it may be shown as it is (printable ASCII, or
 * well-formed UTF-8 other than a C1 control: U+009B is CSI), else 0 for
 * one byte to show as '?'. */
static size_t terminal_char_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7f;
    size_t k = ll_utf8_len(s, n);
    return k > 1 && !(s[0] == 0xC2 && s[1] < 0xA0) ? k : 0;
}

const char *ll_shown(const char *s, char *buf, size_t len)
{
    size_t n = s ? strlen(s) : 0, at = 0;
    for (size_t i = 0; i < n;) {
        size_t k = terminal_char_len((const unsigned char *)s + i, n - i);
        if (at + (k ? k : 1) >= len)
            break;
        if (k)
            memcpy(buf + at, s + i, k);
        else
            buf[at] = '?';
        at += k ? k : 1;
        i += k ? k : 1;
    }
    buf[at] = '\0';
    return buf;
}

size_t ll_utf8_len(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90; /* no overlong forms */
        else if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
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

int ll_scan_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return LL_E_INVAL;
    while (*s >= '0' && *s <= '9') {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return LL_E_RANGE;
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

/* The number s starts with into *v and what follows it into *end: 0, or
 * LL_E_RANGE when it is not finite (*v and *end set all the same), or
 * LL_E_INVAL when s does not start with a decimal number. strtod's hex
 * forms are refused: "--port 0x10" meaning 16 is a surprise, not a
 * convenience. */
static int lead_number(const char *s, double *v, char **end)
{
    if (!s || !*s)
        return LL_E_INVAL;
    const char *d = s + strspn(s, " \t\n\v\f\r");
    d += *d == '+' || *d == '-';
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
        return LL_E_INVAL;
    errno = 0;
    *v = strtod(s, end);
    if (*end == s)
        return LL_E_INVAL;
    return errno == ERANGE || !isfinite(*v) ? LL_E_RANGE : 0;
}

/* ll_parse_double, and with suffixes ll_parse_count: a finite number that
 * fills s, and when suffixes is 1 a "k"/"K", "M" or "G" after it. */
static int parse_number(const char *s, int suffixes, double *out)
{
    char *end;
    double v;
    int rc = lead_number(s, &v, &end);
    if (rc == LL_E_INVAL)
        return rc;
    if (suffixes) {
        double scale = *end == 'k' || *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : 0;
        if (scale > 0) {
            v *= scale;
            end++;
        }
    }
    if (*end != '\0')
        return LL_E_INVAL;
    if (rc != 0 || !isfinite(v)) /* a suffix can carry a large v past DBL_MAX */
        return LL_E_RANGE;
    *out = v;
    return 0;
}

int ll_parse_double(const char *s, double *out)
{
    return parse_number(s, 0, out);
}

int ll_parse_count(const char *s, double *out)
{
    return parse_number(s, 1, out);
}

int ll_parse_duration_ns(const char *s, uint64_t default_unit_ns,
                         uint64_t *out_ns)
{
    char *end;
    double v;
    int rc = lead_number(s, &v, &end);
    if (rc != 0)
        return rc;
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

size_t ll_url_base_len(const char *base_url)
{
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    return n;
}

size_t ll_url_root_len(const char *base_url)
{
    size_t n = ll_url_base_len(base_url);
    if (n >= 3 && memcmp(base_url + n - 3, "/v1", 3) == 0)
        n -= 3;
    return n;
}

void ll_json_escape_runs(const char *s, size_t n, void (*put)(void *ud, const char *p, size_t len),
                         void *ud)
{
    size_t run = 0; /* start of the bytes not yet put */
    for (size_t i = 0; i < n; i++) {
        char esc[6];
        size_t e = ll_json_escape((unsigned char)s[i], esc);
        if (e == 0)
            continue;
        if (i > run)
            put(ud, s + run, i - run);
        put(ud, esc, e);
        run = i + 1;
    }
    if (n > run)
        put(ud, s + run, n - run);
}

int ll_header_line_ok(const char *a)
{
    const char *colon = strchr(a, ':');
    size_t n = colon ? (size_t)(colon - a) : 0;
    int name_ok = n > 0;
    for (size_t i = 0; i < n && name_ok; i++)
        name_ok = a[i] > ' ' && a[i] < 127;
    return name_ok && !strpbrk(a, "\r\n");
}

char *ll_url_join(const char *base_url, const char *path)
{
    size_t a = ll_url_base_len(base_url), b = strlen(path);
    char *p = ll_malloc(a + b + 1);
    memcpy(p, base_url, a);
    memcpy(p + a, path, b + 1);
    return p;
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

/* ---- HTTP-date ---------------------------------------------------------- */

struct datecur {
    const char *s;
    size_t i, n;
};

static int dc_lit(struct datecur *c, const char *lit)
{
    size_t k = strlen(lit);
    if (c->n - c->i < k || memcmp(c->s + c->i, lit, k) != 0)
        return 0;
    c->i += k;
    return 1;
}

/* Exactly `digits` decimal digits (a leading space stands for a zero when
 * pad_space: asctime's day). */
static int dc_num(struct datecur *c, int digits, int pad_space, int *out)
{
    if (c->n - c->i < (size_t)digits)
        return 0;
    int v = 0;
    for (int k = 0; k < digits; k++) {
        char ch = c->s[c->i + (size_t)k];
        if (ch == ' ' && pad_space && k == 0)
            continue;
        if (ch < '0' || ch > '9')
            return 0;
        v = v * 10 + (ch - '0');
    }
    c->i += (size_t)digits;
    *out = v;
    return 1;
}

/* A name from list (case-sensitive, as the grammar says), its index. */
static int dc_name(struct datecur *c, const char *const *list, int count, int *out)
{
    for (int k = 0; k < count; k++) {
        if (dc_lit(c, list[k])) {
            *out = k;
            return 1;
        }
    }
    return 0;
}

static int dc_time(struct datecur *c, int *h, int *m, int *sec)
{
    return dc_num(c, 2, 0, h) && dc_lit(c, ":") && dc_num(c, 2, 0, m) && dc_lit(c, ":") &&
           dc_num(c, 2, 0, sec);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; m 1..12). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int ll_parse_http_date(const char *s, size_t n, int64_t now_s, int64_t *epoch_s)
{
    static const char *const wkday[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    static const char *const weekday[] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                          "Friday", "Saturday", "Sunday"};
    static const char *const month[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    struct datecur c = {s, 0, n};
    while (c.i < n && (s[c.i] == ' ' || s[c.i] == '\t'))
        c.i++;
    int y, mon, d, h, m, sec, wd, two_digit = 0;
    size_t start = c.i;
    if (dc_name(&c, weekday, 7, &wd) && dc_lit(&c, ", ")) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        if (!(dc_num(&c, 2, 0, &d) && dc_lit(&c, "-") && dc_name(&c, month, 12, &mon) &&
              dc_lit(&c, "-") && dc_num(&c, 2, 0, &y) && dc_lit(&c, " ") &&
              dc_time(&c, &h, &m, &sec) && dc_lit(&c, " GMT")))
            return LL_E_INVAL;
        two_digit = 1;
    } else {
        c.i = start;
        if (!dc_name(&c, wkday, 7, &wd))
            return LL_E_INVAL;
        if (dc_lit(&c, ", ")) {
            /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
            if (!(dc_num(&c, 2, 0, &d) && dc_lit(&c, " ") && dc_name(&c, month, 12, &mon) &&
                  dc_lit(&c, " ") && dc_num(&c, 4, 0, &y) && dc_lit(&c, " ") &&
                  dc_time(&c, &h, &m, &sec) && dc_lit(&c, " GMT")))
                return LL_E_INVAL;
        } else {
            /* asctime: Sun Nov  6 08:49:37 1994 */
            if (!(dc_lit(&c, " ") && dc_name(&c, month, 12, &mon) && dc_lit(&c, " ") &&
                  dc_num(&c, 2, 1, &d) && dc_lit(&c, " ") && dc_time(&c, &h, &m, &sec) &&
                  dc_lit(&c, " ") && dc_num(&c, 4, 0, &y)))
                return LL_E_INVAL;
        }
    }
    if (two_digit) {
        /* now's century, or the one before if that is over 50 years ahead */
        int64_t days = now_s >= 0 ? now_s / 86400 : (now_s - 86399) / 86400;
        int64_t now_y = 1970 + days / 366; /* a lower bound, then up to the year */
        while (days_from_civil(now_y + 1, 1, 1) <= days)
            now_y++;
        int64_t cand = now_y - now_y % 100 + y;
        int64_t at = days_from_civil(cand, mon + 1, d <= 28 ? d : 28) * 86400;
        if (at > now_s + (int64_t)50 * 31556952) /* 50 mean Gregorian years */
            cand -= 100;
        if (cand < 0 || cand > 9999)
            return LL_E_INVAL;
        y = (int)cand;
    }
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (c.i != n || d < 1 || d > mdays[mon] || (mon == 1 && d == 29 && !leap) || h > 23 ||
        m > 59 || sec > 60)
        return LL_E_INVAL;
    *epoch_s = days_from_civil(y, mon + 1, d) * 86400 + (int64_t)h * 3600 + m * 60 + sec;
    return 0;
}

/* "llmload: " and the message, one line on stderr. A message may quote
 * what a server or a file said (a model id, an error body, a URL), so it
 * is written as ll_terminal_put writes it: no escape sequence from outside
 * reaches the terminal. */
static void ll_verrorf(const char *fmt, va_list ap)
{
    char small[1024], *msg = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small) {
        msg = malloc((size_t)n + 1);
        if (msg)
            vsnprintf(msg, (size_t)n + 1, fmt, again);
        else
            msg = small; /* cut short rather than lost */
    }
    va_end(again);
    fputs("llmload: ", stderr);
    if (n > 0)
        ll_terminal_put(stderr, msg, strlen(msg));
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
}

void ll_terminal_put(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = terminal_char_len((const unsigned char *)s + i, n - i);
        if (k)
            fwrite(s + i, 1, k, f);
        else
            fputc(s[i] == '\n' || s[i] == '\t' ? s[i] : '?', f);
        i += k ? k : 1;
    }
}

int ll_thread_start_nosig(pthread_t *th, void *(*fn)(void *), void *arg, char *err, size_t errlen)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(th, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        snprintf(err, errlen, "pthread_create: %s", strerror(e));
        return LL_E_IO;
    }
    return 0;
}

void ll_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ll_verrorf(fmt, ap);
    va_end(ap);
}

void ll_usage_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ll_verrorf(fmt, ap);
    va_end(ap);
    exit(LL_EXIT_USAGE);
}

void ll_test_hold(const char *phase)
{
    const char *v = getenv("LLMLOAD_TEST_HOLD_IN");
    if (v == NULL || strcmp(v, phase) != 0)
        return;
    ll_errorf("test hold: %s", phase);
    struct timespec tick = {0, 1000000};
    for (int i = 0; i < 10000; i++) {
        sigset_t pend;
        if (sigpending(&pend) == 0 &&
            (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1))
            return;
        nanosleep(&tick, NULL);
    }
}
