/* Unit tests for util.c: strict parsing of numbers and durations. */
#include "test.h"
#include "util/json.h"
#include "util/spawn.h"
#include "util/util.h"
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_parse_duration(void **state)
{
    uint64_t ns = 0;
    assert_int_equal(ll_parse_duration_ns("250ms", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 250 * LL_NS_PER_MS);
    assert_int_equal(ll_parse_duration_ns("1.5", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 1500 * LL_NS_PER_MS);
    assert_int_equal(ll_parse_duration_ns("2m", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 120 * LL_NS_PER_SEC);
    assert_int_equal(ll_parse_duration_ns("7us", LL_NS_PER_SEC, &ns), 0);
    assert_int_equal(ns, 7000);
    assert_int_equal(ll_parse_duration_ns("fast", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("1x", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("", LL_NS_PER_SEC, &ns), LL_E_INVAL);
    assert_int_equal(ll_parse_duration_ns("-1s", LL_NS_PER_SEC, &ns), LL_E_RANGE);
}

static void test_parse_count(void **state)
{
    double v = 0;
    assert_int_equal(ll_parse_count("1.5k", &v), 0);
    assert_true(v == 1500.0);
    assert_int_equal(ll_parse_count("20", &v), 0);
    assert_true(v == 20.0);
    assert_int_equal(ll_parse_count("2M", &v), 0);
    assert_true(v == 2e6);
    assert_int_equal(ll_parse_count("fast", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_count("3kk", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_count("nan", &v), LL_E_RANGE);
    /* strtod's hex forms are not numbers here ("--port 0x10" was 16) */
    assert_int_equal(ll_parse_count("0x10", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_double("-0X1p3", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_double(" +0x1", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_double("0.5", &v), 0);
    assert_true(v == 0.5);
    uint64_t ns;
    assert_int_equal(ll_parse_duration_ns("0x10s", LL_NS_PER_SEC, &ns), LL_E_INVAL);
}

static void test_parse_u64(void **state)
{
    uint64_t v = 0;
    assert_int_equal(ll_parse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(ll_parse_u64("18446744073709551616", &v), LL_E_RANGE);
    assert_int_equal(ll_parse_u64("-1", &v), LL_E_INVAL);
    assert_int_equal(ll_parse_u64("12 ", &v), LL_E_INVAL);

    /* ll_scan_u64: the digits at *p, *p past them on success only. */
    static const struct {
        const char *in;
        int rc;
        uint64_t v;
        size_t used; /* bytes *p advanced */
    } cases[] = {
        {"0", 0, 0, 1},
        {"640x480", 0, 640, 3},
        {"007,", 0, 7, 3},
        {"18446744073709551615", 0, UINT64_MAX, 20},
        {"18446744073709551616", LL_E_RANGE, 0, 0},
        {"99999999999999999999x", LL_E_RANGE, 0, 0},
        {"", LL_E_INVAL, 0, 0},
        {"x1", LL_E_INVAL, 0, 0},
        {"-1", LL_E_INVAL, 0, 0},
        {"+1", LL_E_INVAL, 0, 0},
        {" 1", LL_E_INVAL, 0, 0},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        const char *p = cases[i].in;
        uint64_t got = 12345;
        assert_int_equal(ll_scan_u64(&p, &got), cases[i].rc);
        assert_ptr_equal(p, cases[i].in + cases[i].used);
        assert_true(got == (cases[i].rc ? 12345 : cases[i].v));
    }
}

/* HTTP header lists: any item, or only the last (Transfer-Encoding). */
static void test_http_list_has(void **state)
{
    assert_int_equal(ll_http_list_has("close", 5, "close", 0), 1);
    assert_int_equal(ll_http_list_has("keep-alive, Close", 17, "close", 0), 1);
    assert_int_equal(ll_http_list_has(" ,, close\t,", 12, "close", 0), 1);
    assert_int_equal(ll_http_list_has("closed", 6, "close", 0), 0);
    assert_int_equal(ll_http_list_has("clos", 4, "close", 0), 0);
    assert_int_equal(ll_http_list_has("", 0, "close", 0), 0);
    /* Only the first n bytes count: "close" lies beyond them. */
    assert_int_equal(ll_http_list_has("keep-alive, close", 10, "close", 0), 0);
    assert_int_equal(ll_http_list_has("gzip, chunked", 13, "chunked", 1), 1);
    assert_int_equal(ll_http_list_has("chunked, gzip", 13, "chunked", 1), 0);
    assert_int_equal(ll_http_list_has("chunked, gzip", 13, "chunked", 0), 1);
    assert_int_equal(ll_http_list_has("gzip, CHUNKED ,", 15, "chunked", 1), 1);
}

/* A list item up to its comma or the end, copied only when it is not
 * empty and fits (its length and the terminating NUL); out otherwise
 * keeps what it held. */
static void test_list_item(void **state)
{
    char out[4] = "x";
    assert_int_equal(ll_list_item("ab,cd", out, sizeof out), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(ll_list_item("abc", out, sizeof out), 3);
    assert_string_equal(out, "abc");
    snprintf(out, sizeof out, "x");
    assert_int_equal(ll_list_item("abcd,e", out, sizeof out), 4); /* no room for the NUL */
    assert_string_equal(out, "x");
    assert_int_equal(ll_list_item(",e", out, sizeof out), 0);
    assert_int_equal(ll_list_item("", out, sizeof out), 0);
    assert_string_equal(out, "x");
    /* Blanks around an item are not its own; its length in the list is. */
    char wide[8] = "x";
    assert_int_equal(ll_list_item(" ab ,c", wide, sizeof wide), 4);
    assert_string_equal(wide, "ab");
    snprintf(wide, sizeof wide, "x");
    assert_int_equal(ll_list_item(" \t ,c", wide, sizeof wide), 0);
    assert_string_equal(wide, "x");
}

/* ll_putf appends and moves at; what does not fit is cut, the buffer stays
 * a string, and once full nothing more is written. */
static void test_putf(void **state)
{
    (void)state;
    char buf[8];
    size_t at = 0;
    ll_putf(buf, sizeof buf, &at, "%s=%d", "ab", 1);
    assert_string_equal(buf, "ab=1");
    assert_int_equal(at, 4);
    ll_putf(buf, sizeof buf, &at, ", %s", "cdef");
    assert_string_equal(buf, "ab=1, c");
    assert_int_equal(at, 7);
    ll_putf(buf, sizeof buf, &at, "x");
    assert_string_equal(buf, "ab=1, c");
    assert_int_equal(at, 7);
}

/* ll_fmt_u64 writes what printf's %llu does, at every digit count and
 * around every power of ten. */
static void test_fmt_u64(void **state)
{
    uint64_t vals[200];
    size_t n = 0;
    uint64_t p = 1;

    vals[n++] = 0;
    vals[n++] = UINT64_MAX;
    vals[n++] = UINT64_MAX - 1;
    for (int d = 0; d < 20; d++) {
        vals[n++] = p - 1;
        vals[n++] = p;
        vals[n++] = p + 1;
        vals[n++] = p * 7 + 3;
        if (d < 19)
            p *= 10;
    }
    for (uint64_t x = 0x9E3779B97F4A7C15ULL; n < sizeof(vals) / sizeof(vals[0]);
         x = x * 6364136223846793005ULL + 1442695040888963407ULL)
        vals[n++] = x >> (x & 63);
    for (size_t i = 0; i < n; i++) {
        char want[32], got[LL_U64_DIGITS_MAX + 1];
        int w = snprintf(want, sizeof want, "%llu", (unsigned long long)vals[i]);
        size_t g = ll_fmt_u64(got, vals[i]);
        got[g] = '\0';
        assert_int_equal(g, (size_t)w);
        assert_int_equal(ll_u64_digits(vals[i]), (size_t)w);
        assert_string_equal(got, want);
    }
}

#define NOW_2026 1796053049 /* Mon, 30 Nov 2026 15:37:29 GMT */

static int64_t http_date_at(const char *s, int64_t now)
{
    int64_t t = -1;
    return ll_parse_http_date(s, strlen(s), now, &t) == 0 ? t : -1;
}

static int64_t http_date(const char *s)
{
    return http_date_at(s, NOW_2026);
}

/* The three forms RFC 9110 makes recipients accept, against epoch values
 * from `date -u -d ... +%s`; and what must be refused. */
static void test_http_date(void **state)
{
    assert_int_equal(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    assert_int_equal(http_date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    assert_int_equal(http_date("Sun Nov  6 08:49:37 1994"), 784111777);
    assert_int_equal(http_date("  Thu, 01 Jan 1970 00:00:00 GMT\r\n"), 0);
    assert_int_equal(http_date("Mon, 30 Nov 2026 15:37:29 GMT"), 1796053049);
    assert_int_equal(http_date("Thu, 29 Feb 2024 23:59:59 GMT"), 1709251199);
    assert_int_equal(http_date("Wednesday, 01-Mar-00 00:00:00 GMT"), 951868800);
    assert_int_equal(http_date("Fri Dec 31 23:59:60 2027"), 1830297600);
    assert_int_equal(http_date("Tue Mar 11 10:00:00 2025"), 1741687200);

    /* RFC 850's two-digit year: now's century unless that is over 50
     * years ahead (RFC 9110 5.6.7). */
    assert_int_equal(http_date("Tuesday, 01-Jan-75 00:00:00 GMT"), 3313526400); /* 2075 */
    assert_int_equal(http_date("Saturday, 01-Jan-77 00:00:00 GMT"), 220924800); /* 1977 */
    assert_int_equal(http_date_at("Saturday, 01-Jan-95 00:00:00 GMT", 3799958400), /* in 2090 */
                     3944678400);                                              /* 2095 */
    assert_int_equal(http_date_at("Sunday, 06-Nov-94 08:49:37 GMT", 0), 784111777); /* in 1970 */

    const char *bad[] = {"", "120", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC",
                         "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                         "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
                         "Sun, 29 Feb 2023 08:49:37 GMT", "Sun, 29 Feb 1900 08:49:37 GMT",
                         "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
                         "Sun, 06 Nov 1994 08:49:37 GMT x", "Sun, 00 Nov 1994 08:49:37 GMT",
                         "Sunday, 06 Nov 1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
                         "Sun, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t;
        if (ll_parse_http_date(bad[i], strlen(bad[i]), NOW_2026, &t) != LL_E_INVAL)
            fail_msg("accepted \"%s\"", bad[i]);
    }
    /* n bounds the input: the date is whole only in the first 29 bytes. */
    int64_t t;
    assert_int_equal(ll_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMTXYZ", 29, NOW_2026, &t), 0);
    assert_int_equal(t, 784111777);
    assert_int_equal(ll_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", 28, NOW_2026, &t),
                     LL_E_INVAL);
}

/* ll_grow: no change when it fits; else doubling from the capacity (or
 * the minimum, from none) to the first that fits, contents kept. */
static void test_grow(void **state)
{
    size_t cap = 0;
    char *b = ll_grow(NULL, &cap, 1, 64);
    assert_int_equal(cap, 64);
    memcpy(b, "abc", 4);
    char *same = ll_grow(b, &cap, 64, 64);
    assert_ptr_equal(same, b);
    assert_int_equal(cap, 64);
    b = ll_grow(b, &cap, 65, 64);
    assert_int_equal(cap, 128);
    b = ll_grow(b, &cap, 1000, 64);
    assert_int_equal(cap, 1024);
    assert_string_equal(b, "abc");
    free(b);
    cap = 0;
    b = ll_grow(NULL, &cap, 5000, 64); /* from none, far past the minimum */
    assert_int_equal(cap, 8192);
    free(b);
}

/* ll_spawn_first_line and ll_reap on /bin/sh: the first line, a child
 * that never prints one (in time), and how each ended. */
static void test_spawn(void **state)
{
    char line[64], err[128];
    char *hello[] = {"sh", "-c", "echo hello; exec sleep 10", NULL};
    pid_t pid =
        ll_spawn_first_line("/bin/sh", hello, NULL, 5000, line, sizeof line, err, sizeof err);
    assert_true(pid > 0);
    assert_string_equal(line, "hello");
    assert_int_equal(ll_reap(pid, SIGTERM, 5000), 128 + SIGTERM);

    char *quiet[] = {"sh", "-c", "exit 3", NULL};
    assert_int_equal(
        ll_spawn_first_line("/bin/sh", quiet, NULL, 5000, line, sizeof line, err, sizeof err), -1);
    assert_string_equal(err, "no first line (got \"\")");

    char *slow[] = {"sh", "-c", "printf partial; exec sleep 10", NULL};
    uint64_t t0 = ll_now_ns();
    assert_int_equal(
        ll_spawn_first_line("/bin/sh", slow, NULL, 200, line, sizeof line, err, sizeof err), -1);
    assert_true(ll_now_ns() - t0 < 5 * LL_NS_PER_SEC); /* gave up, killed it */
    assert_string_equal(err, "no first line (got \"partial\")");

    char *three[] = {"sh", "-c", "echo x; exit 3", NULL};
    pid = ll_spawn_first_line("/bin/sh", three, NULL, 5000, line, sizeof line, err, sizeof err);
    assert_true(pid > 0);
    assert_int_equal(ll_reap(pid, 0, 5000), 3);
}

/* ll_shell_run: the command's exit status or its signal, the timeout
 * (the group killed, a grandchild too), and a pending stop signal. */
static void test_shell_run(void **state)
{
    assert_int_equal(ll_shell_run("exit 0", NULL, NULL, 5000), 0);
    assert_int_equal(ll_shell_run("exit 7", NULL, NULL, 5000), 7);
    assert_int_equal(ll_shell_run("kill -TERM $$", NULL, NULL, 5000), 128 + SIGTERM);
    uint64_t t0 = ll_now_ns();
    assert_int_equal(ll_shell_run("sleep 30 & wait", NULL, NULL, 200), LL_E_AGAIN);
    assert_true(ll_now_ns() - t0 < 10 * LL_NS_PER_SEC);
    /* A stop signal pending here (blocked) ends the wait and stays pending. */
    sigset_t stop, old, pend;
    sigemptyset(&stop);
    sigaddset(&stop, SIGUSR1);
    sigprocmask(SIG_BLOCK, &stop, &old);
    raise(SIGUSR1);
    assert_int_equal(ll_shell_run("sleep 30", &old, &stop, 20000), LL_E_INTR);
    assert_int_equal(sigpending(&pend), 0);
    assert_int_equal(sigismember(&pend, SIGUSR1), 1);
    int sig = 0;
    assert_int_equal(sigwait(&stop, &sig), 0);
    assert_int_equal(sig, SIGUSR1);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ll_path_find: a name with a slash as it is, else the first PATH entry
 * holding an executable file; none, or an empty PATH, is LL_E_NOTFOUND. */
static void test_path_find(void **state)
{
    char buf[256], *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    assert_int_equal(ll_path_find("./x/y", buf, sizeof buf), 0);
    assert_string_equal(buf, "./x/y");
    setenv("PATH", "/nonexistent-dir:/bin:/usr/bin", 1);
    assert_int_equal(ll_path_find("sh", buf, sizeof buf), 0);
    assert_string_equal(buf, "/bin/sh");
    assert_int_equal(ll_path_find("no-such-program-here", buf, sizeof buf), LL_E_NOTFOUND);
    assert_int_equal(ll_path_find("sh", buf, 4), LL_E_RANGE);
    setenv("PATH", "/etc", 1); /* /etc/passwd is there but not executable */
    assert_int_equal(ll_path_find("passwd", buf, sizeof buf), LL_E_NOTFOUND);
    setenv("PATH", "", 1);
    assert_int_equal(ll_path_find("sh", buf, sizeof buf), LL_E_NOTFOUND);
    if (old) {
        setenv("PATH", old, 1);
        free(old);
    }
}

/* ll_spawn_reader: stdout on the pipe, stderr not on ours, a group of its
 * own (ended with its grandchild by one kill), SIGTERM not blocked even
 * when blocked here, and a path that does not exist refused. */
static void test_spawn_reader(void **state)
{
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; sleep 30 & wait", NULL};
    char err[200], buf[64];
    int fd;
    pid_t pid = ll_spawn_reader("/bin/sh", argv, &fd, err, sizeof err);
    assert_true(pid > 0);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "out\n", 4);
    assert_int_equal(getpgid(pid), pid);
    kill(-pid, SIGTERM);
    assert_int_equal(ll_reap(pid, 0, 5000), 128 + SIGTERM);
    assert_int_equal(read(fd, buf, sizeof buf), 0); /* the sleep is gone too */
    close(fd);
    sigprocmask(SIG_SETMASK, &old, NULL);
    assert_int_equal(ll_spawn_reader("/nonexistent/x", argv, &fd, err, sizeof err), -1);
    assert_int_equal(fd, -1);
    assert_non_null(strstr(err, "spawn /nonexistent/x"));
}

/* The server root of an API base: trailing slashes, then one "/v1" off. */
static void test_url_root_len(void **state)
{
    static const struct {
        const char *base, *root;
    } cases[] = {
        {"http://h:1/v1", "http://h:1"},
        {"http://h:1/v1//", "http://h:1"},
        {"http://h:1/", "http://h:1"},
        {"http://h:1/api/v1", "http://h:1/api"},
        {"http://h:1/xv1", "http://h:1/xv1"},
        {"http://h:1/v1/v2", "http://h:1/v1/v2"},
        {"/v1", ""},
        {"", ""},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++)
        assert_int_equal(ll_url_root_len(cases[i].base), strlen(cases[i].root));
}

struct runs {
    char buf[64];
    size_t len, puts;
};

static void runs_put(void *ud, const char *p, size_t n)
{
    struct runs *r = ud;
    assert_true(n > 0 && r->len + n < sizeof r->buf);
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    r->puts++;
}

/* Every ASCII byte, escaped or not inside quotes, reads back as itself
 * (jansson), and only the bytes JSON needs escaped are (and DEL). */
static void test_json_escape(void **state)
{
    for (unsigned c = 0; c < 0x80; c++) {
        char doc[9] = "\"", esc[6];
        size_t e = ll_json_escape((unsigned char)c, esc);
        int plain = c >= 0x20 && c != '"' && c != '\\' && c != 0x7F;
        assert_int_equal(e == 0, plain);
        assert_true(e == 0 || e == 2 || e == 6);
        if (e)
            memcpy(doc + 1, esc, e);
        else
            doc[1] = (char)c;
        doc[1 + (e ? e : 1)] = '"';
        json_t *j = json_loadb(doc, 2 + (e ? e : 1), JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        assert_non_null(j);
        assert_int_equal(json_string_length(j), 1);
        assert_int_equal((unsigned char)json_string_value(j)[0], c);
        json_decref(j);
    }
    char esc[6];
    assert_int_equal(ll_json_escape('\n', esc), 2);
    assert_memory_equal(esc, "\\n", 2);
    assert_int_equal(ll_json_escape(0x1f, esc), 6);
    assert_memory_equal(esc, "\\u001f", 6);
    assert_int_equal(ll_json_escape(0xe9, esc), 0); /* UTF-8 bytes pass */

    /* In runs: the plain bytes between escapes in one put each. */
    struct runs r = {.puts = 0};
    ll_json_escape_runs("ab\"c\x01\xc3\xa9\n", 8, runs_put, &r);
    r.buf[r.len] = '\0';
    assert_string_equal(r.buf, "ab\\\"c\\u0001\xc3\xa9\\n");
    assert_int_equal(r.puts, 6); /* ab, \", c, \u0001, \xc3\xa9, \n */
    r.len = r.puts = 0;
    ll_json_escape_runs("", 0, runs_put, &r);
    assert_int_equal(r.puts, 0);
}

/* A header line to send as it is: a visible name before the colon, no
 * line break anywhere. */
static void test_header_line_ok(void **state)
{
    static const struct {
        const char *line;
        int ok;
    } cases[] = {
        {"X-Key: v", 1}, {"X-Key:", 1},       {"a:b:c", 1},  {": v", 0},      {"X Key: v", 0},
        {"no colon", 0}, {"X: a\r\nY: b", 0}, {"X: a\n", 0}, {"X\x7f: v", 0}, {"", 0},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++)
        if (ll_header_line_ok(cases[i].line) != cases[i].ok)
            fail_msg("\"%s\": expected %d", cases[i].line, cases[i].ok);
}

/* Outside text as one printable line: control and non-ASCII bytes as '?',
 * at most n bytes, stopped at a NUL, cut to fit, in place allowed. */
static void test_printable(void **state)
{
    char out[8];
    assert_int_equal(ll_printable("a\nb\tc\x7f\xc3\xa9", SIZE_MAX, out, sizeof out), 7);
    assert_string_equal(out, "a?b?c??");
    assert_int_equal(ll_printable("abc", 2, out, sizeof out), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(ll_printable("ab\0cd", 5, out, sizeof out), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(ll_printable("abc", 3, out, 1), 0);
    assert_string_equal(out, "");
    char in[] = "x\r\ny";
    ll_printable(in, sizeof in, in, sizeof in);
    assert_string_equal(in, "x??y");

    /* jansson quotes the input up to the bad byte; ours is one line. */
    static const char bad[] = "{\"a\\\n\n\"b\":1}";
    json_error_t je;
    assert_null(json_loadb(bad, sizeof bad - 1, 0, &je));
    assert_non_null(strchr(je.text, '\n')); /* the premise */
    assert_null(ll_json_loadb(bad, sizeof bad - 1, 0, &je));
    assert_null(strchr(je.text, '\n'));
    assert_non_null(strstr(je.text, "invalid escape near '\"a\\?'"));
    json_t *j = ll_json_loadb("{\"a\":1}", 7, 0, &je);
    assert_non_null(j);
    json_decref(j);
}

/* A path after a base: the base's trailing slashes off, nothing else. */
static void test_url_join(void **state)
{
    static const struct {
        const char *base, *path, *url;
    } cases[] = {
        {"http://h:1/v1", "/models", "http://h:1/v1/models"},
        {"http://h:1/v1//", "/models", "http://h:1/v1/models"},
        {"http://h:1/", "/tokenize", "http://h:1/tokenize"},
        {"", "/models", "/models"},
        {"http://h:1/v1", "", "http://h:1/v1"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        char *u = ll_url_join(cases[i].base, cases[i].path);
        assert_string_equal(u, cases[i].url);
        free(u);
        /* the base the probe and the transport append their paths to */
        assert_int_equal(ll_url_base_len(cases[i].base),
                         strlen(cases[i].url) - strlen(cases[i].path));
    }
}

UNIT_TESTS(test_spawn, test_path_find, test_spawn_reader, test_url_root_len, test_url_join,
           test_printable, test_header_line_ok, test_json_escape, test_shell_run, test_grow,
           test_parse_duration, test_parse_count, test_parse_u64, test_http_list_has,
           test_list_item, test_putf, test_fmt_u64, test_http_date)
