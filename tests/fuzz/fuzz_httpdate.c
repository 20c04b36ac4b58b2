/* fuzz_httpdate.c: libFuzzer target for ll_parse_http_date (a server's
 * Retry-After and Date headers).
 *
 * The input is copied to a buffer of exactly its size, so any read past n
 * is ASan's to catch. An accepted date must be a real one: the time it
 * gives, written back as an IMF-fixdate by the C library, parses to the
 * same time, and so do its RFC 850 and asctime forms where the year fits
 * them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

#define FUZZ_NOW 1796053049 /* the parser's clock: 2026-11-30 */

static void same_time(const char *fmt, const struct tm *tm, int64_t want)
{
    char buf[64];
    size_t n = strftime(buf, sizeof buf, fmt, tm);
    int64_t got;
    if (n == 0 || ll_parse_http_date(buf, n, FUZZ_NOW, &got) != 0 || got != want)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    memcpy(s, data, size);
    int64_t t;
    if (ll_parse_http_date(s, size, FUZZ_NOW, &t) == 0) {
        /* Years 0000-9999 at most (a leap second may carry into 10000). */
        if (t < -62167219200LL || t > 253402300800LL)
            abort();
        time_t tt = (time_t)t;
        struct tm tm;
        if (!gmtime_r(&tt, &tm))
            abort();
        /* An IMF-fixdate is taken as written: the C library writes the
         * same day, month, year and time back (a date that does not exist,
         * like 31 Nov, must have been refused, not rolled over). */
        size_t a = 0, b = size;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r' ||
                         s[b - 1] == '\n'))
            b--;
        if (b - a == 29 && s[a + 3] == ',' && memcmp(s + a + 23, "60", 2) != 0 &&
            tm.tm_year + 1900 >= 1000) { /* (%Y writes 985 for 0985) */
            char back[32];
            if (strftime(back, sizeof back, "%d %b %Y %H:%M:%S GMT", &tm) != 24 ||
                memcmp(back, s + a + 5, 24) != 0)
                abort();
        }
        if (tm.tm_sec < 60) { /* a leap second comes back as :00 of the next minute */
            if (tm.tm_year + 1900 >= 1000)
                same_time("%a, %d %b %Y %H:%M:%S GMT", &tm, t);
            /* RFC 850 years: 1977-2076 read from 2026 (more than 50 years
             * ahead is the century before). */
            if (tm.tm_year + 1900 >= 1977 && tm.tm_year + 1900 <= 2075)
                same_time("%A, %d-%b-%y %H:%M:%S GMT", &tm, t);
            if (tm.tm_year + 1900 >= 1000)
                same_time("%a %b %e %H:%M:%S %Y", &tm, t);
        }
    }
    free(s);
    return 0;
}
