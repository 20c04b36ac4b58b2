/* util.h: the few things every module shares: error codes, the one clock,
 * checked allocation, and strict number/duration parsing for options and
 * files. */
#ifndef LL_UTIL_H
#define LL_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Error codes. Functions return 0 or one of these (always negative). */
#define LL_OK         0
#define LL_E_NOMEM   (-1)  /* allocation failed (only where we do not abort) */
#define LL_E_INVAL   (-2)  /* bad argument or bad input value */
#define LL_E_PROTO   (-3)  /* peer broke the protocol (bad SSE, bad HTTP) */
#define LL_E_IO      (-4)  /* a syscall failed; errno tells more */
#define LL_E_FULL    (-5)  /* a bounded queue or buffer is full */
#define LL_E_AGAIN   (-6)  /* nothing to do yet; try later */
#define LL_E_RANGE   (-7)  /* a value outside its documented range */
#define LL_E_EOF     (-8)  /* input ended early */
#define LL_E_NOTFOUND (-9) /* a name or key that does not exist */
#define LL_E_INTR (-10)    /* abandoned on request (a stop signal came) */

/* Exit statuses of the llmload binary. */
#define LL_EXIT_OK       0
#define LL_EXIT_FAIL     1  /* ran, but a check failed (SLO, INVALID run) */
#define LL_EXIT_USAGE    2  /* bad flags or bad input files */
#define LL_EXIT_RUNTIME  3  /* could not run (cannot bind, cannot write) */
#define LL_EXIT_INCOMPLETE 4 /* merge: shards or scheduled ids missing */
#define LL_EXIT_NO_OK 6      /* ran, but no request succeeded */
#define LL_EXIT_EXPECT 7     /* ran, but an --expect threshold failed */
#define LL_EXIT_INTR 130     /* a stop signal (SIGINT, SIGTERM) ended it */

/* A static, human-readable name for an LL_E* code. */
const char *ll_strerror(int err);

/* Nanoseconds on CLOCK_MONOTONIC. The only clock llmload uses for
 * measurement; convert to other units only when printing. */
uint64_t ll_now_ns(void);

#define LL_NS_PER_US  1000ULL
#define LL_NS_PER_MS  1000000ULL
#define LL_NS_PER_SEC 1000000000ULL

/* Checked allocation: on failure these print the requested size to stderr
 * and abort(). They never return NULL (ll_malloc(0) returns a valid,
 * freeable pointer). */
void *ll_malloc(size_t size);
void *ll_calloc(size_t n, size_t size);
void *ll_realloc(void *p, size_t size);
char *ll_strdup(const char *s);

/* Grow the byte buffer p of *cap bytes to hold at least need bytes: when
 * need > *cap, the capacity doubles from *cap (from min_cap when *cap is
 * 0) until it does, the contents are kept, and *cap is updated. Returns
 * the buffer (p when it did not grow). Aborts when out of memory. */
void *ll_grow(void *p, size_t *cap, size_t need, size_t min_cap);
char *ll_strndup(const char *s, size_t n);

/* Strict parsers for option values and file fields. Each parses the whole
 * string (no trailing junk, no empty string) and returns 0, or LL_E_INVAL
 * (not a number of the expected shape) or LL_E_RANGE (out of range). */

/* A non-negative or signed double; finite only. */
int ll_parse_double(const char *s, double *out);
/* Write a printf-style reason into err (errlen bytes; nothing when 0)
 * and return LL_E_INVAL: how a parser or check that returns its error,
 * rather than exiting, fails (runopts_errf is this one). */
int ll_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The walk of a flag's comma-separated list (--fail-on, --expect): p at
 * an item of len bytes of the list spec. Returns the first byte of the
 * next item, or the list's end (its NUL) after the last; NULL after a
 * comma that ends the list (white space after it alone), with "FLAG: a
 * trailing comma in \"SPEC\"" in err. */
const char *ll_list_next(const char *p, size_t len, const char *flag, const char *spec, char *err,
                         size_t errlen);
/* Copy the item of a comma-separated list that starts at p (its bytes up
 * to the next comma or the list's end) into out as a string, without the
 * blanks (white space) around it: 'ttft=1s, tpot=50ms' is two items, as
 * a user writes a list. Returns the item's length in the list, blanks
 * included (where the next comma is); 0 for an item empty or of blanks
 * alone. When it returns 0, or outlen or more (too long for out), out is
 * left as it was, for the caller to refuse. */
size_t ll_list_item(const char *p, char *out, size_t outlen);
/* s without its leading blanks (white space), its trailing ones cut in
 * place: the two sides of an item's NAME=VALUE or METRIC<VALUE. */
char *ll_trim(char *s);
/* printf-style append to buf (len bytes) at *at, which moves past what
 * was written; what does not fit is cut, buf stays NUL-terminated, and
 * once full later calls write nothing (the findings in words). */
void ll_putf(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* v in decimal, exactly as printf's %llu writes it (no NUL): the digit
 * count, and ll_fmt_u64 writes them to dst (room for ll_u64_digits(v), at
 * most LL_U64_DIGITS_MAX) and returns the count. For hot paths where
 * snprintf costs thousands of instructions. */
#define LL_U64_DIGITS_MAX 20
size_t ll_u64_digits(uint64_t v);
size_t ll_fmt_u64(char *dst, uint64_t v);

/* The length (1 to 4) of the well-formed UTF-8 sequence at p, of which avail
 * bytes may be read, or 0 when the bytes there are not one: overlong forms,
 * encoded surrogates, code points over U+10FFFF and sequences cut short by
 * avail are all rejected. avail >= 1. */
size_t ll_utf8_len(const unsigned char *p, size_t avail);

/* Copy at most n bytes of s (fewer at a NUL) into out (outlen >= 1), each
 * control or non-ASCII byte as '?', cut to fit: text from outside (a
 * jansson message quoting the input, a value as given) kept to one
 * printable line for an error message. out may be s (cleaned in place).
 * Returns the bytes written. */
size_t ll_printable(const char *s, size_t n, char *out, size_t outlen);

/* s (NULL as "") into buf (len >= 1) for one field on a terminal line:
 * printable ASCII and well-formed UTF-8 as they are, every control byte
 * (C0 with newline and tab, DEL, a C1 control's UTF-8) and every byte of
 * malformed UTF-8 as '?', cut to fit at a character's end. For a string
 * from a server, a file or the command line on its way to the terminal:
 * an escape sequence in a model id must not reach the terminal that shows
 * it. Returns buf. */
const char *ll_shown(const char *s, char *buf, size_t len);

/* How byte c stands inside a JSON string: 0 when as it is, else the
 * length of its escape, written to esc: 2 for \" \\ \n \r \t, 6 for
 * \u00XX (the other control bytes, and DEL). The JSON strings llmload
 * writes itself (request bodies, requests.jsonl) escape through here;
 * jansson escapes the rest. */
static inline size_t ll_json_escape(unsigned char c, char esc[6])
{
    static const char hex[] = "0123456789abcdef";
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F)
        return 0;
    esc[0] = '\\';
    switch (c) {
    case '"': esc[1] = '"'; return 2;
    case '\\': esc[1] = '\\'; return 2;
    case '\n': esc[1] = 'n'; return 2;
    case '\r': esc[1] = 'r'; return 2;
    case '\t': esc[1] = 't'; return 2;
    default: break;
    }
    esc[1] = 'u';
    esc[2] = '0';
    esc[3] = '0';
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 15];
    return 6;
}

/* s[0, n) as the inside of a JSON string, through put(ud, bytes, len):
 * each run of bytes that stand as they are, and each escape
 * (ll_json_escape), in order. */
void ll_json_escape_runs(const char *s, size_t n, void (*put)(void *ud, const char *p, size_t len),
                         void *ud);

/* An unsigned 64-bit integer in decimal; "1k" / "2M" / "3G" suffixes are
 * accepted only by ll_parse_count. */
int ll_parse_u64(const char *s, uint64_t *out);
/* The decimal digits at *p (at least one; no sign, no suffix) into *out,
 * *p advanced past them; what follows is the caller's. Returns 0, or
 * LL_E_INVAL when *p is not at a digit, LL_E_RANGE past UINT64_MAX (*p
 * and *out untouched on either). For fields inside a line (a size
 * "640x480", a histogram log's counts). */
int ll_scan_u64(const char **p, uint64_t *out);
/* A count with an optional k/M/G suffix (powers of 1000): "20", "1.5k". */
int ll_parse_count(const char *s, double *out);
/* A duration: a number with a unit ns, us, ms, s, m, h ("250ms", "1.5s",
 * "2m"). A bare number is taken in default_unit_ns (e.g. LL_NS_PER_SEC).
 * Negative durations are LL_E_RANGE. */
int ll_parse_duration_ns(const char *s, uint64_t default_unit_ns,
                         uint64_t *out_ns);

/* Does the comma-separated list s[0, n) (an HTTP header value such as
 * Connection's or Transfer-Encoding's) hold tok, compared without case,
 * with blanks around items ignored? last: only the list's last item
 * counts (Transfer-Encoding's final coding). s need not be NUL-terminated. */
int ll_http_list_has(const char *s, size_t n, const char *tok, int last);

/* An HTTP-date in s[0..n) (RFC 9110 5.6.7: the IMF-fixdate
 * "Sun, 06 Nov 1994 08:49:37 GMT", or the obsolete RFC 850
 * "Sunday, 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994"
 * forms), blanks around it allowed: 0 and the time in seconds since the
 * epoch (UTC), or LL_E_INVAL. A two-digit year is taken in now_s's
 * century, or the one before where that would put the date more than 50
 * years after now_s (the RFC's rule; now_s: seconds since the epoch, the
 * caller's clock). The weekday is not checked against the date. */
int ll_parse_http_date(const char *s, size_t n, int64_t now_s, int64_t *epoch_s);

/* Format a duration for people: "812us", "1.25ms", "3.40s". Writes into
 * buf (at least 16 bytes) and returns buf. */
char *ll_fmt_duration(uint64_t ns, char *buf, size_t len);

/* How much of an API base URL is the server's root, where its engine
 * endpoints (/metrics, /tokenize, /props) live: base_url's length without
 * trailing slashes and then a trailing "/v1". */
size_t ll_url_root_len(const char *base_url);

/* Whether a is a header line to send as it is, "Name: value": a name of
 * one or more visible ASCII characters before the first colon, and no
 * line break anywhere (an empty name would make every request a 400
 * that reads as the server's fault; a line break smuggles in a second
 * header). */
int ll_header_line_ok(const char *a);

/* The length of base_url without its trailing '/'s: what a path such as
 * "/models" is appended to ("http://h:8000/v1/" read "/v1//models", which
 * servers answer 404). */
size_t ll_url_base_len(const char *base_url);

/* base_url with any trailing '/' dropped, then path ("/models"): a new
 * string, caller frees. */
char *ll_url_join(const char *base_url, const char *path);

/* Start fn(arg) on a new thread *th with every signal blocked in it, so that
 * SIGINT and SIGTERM reach only the thread that waits for them (the
 * driver's sigtimedwait). The caller's mask is as it was on return.
 * Returns 0, or LL_E_IO with "pthread_create: <reason>" in err. */
int ll_thread_start_nosig(pthread_t *th, void *(*fn)(void *), void *arg, char *err, size_t errlen);

/* Write n bytes of s to f for a terminal: well-formed UTF-8 and newlines
 * and tabs as they are, every other control byte (C0, DEL, a C1 control's
 * UTF-8) and every byte of malformed UTF-8 as '?'. For text from outside
 * longer than a line (ll_shown is for one field). */
void ll_terminal_put(FILE *f, const char *s, size_t n);

/* Print "llmload: <fmt>\n" to stderr, the message through
 * ll_terminal_put: what it quotes from outside cannot move the cursor,
 * retitle the window or change its colours. */
void ll_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A test hook: when the environment's LLMLOAD_TEST_HOLD_IN is phase, say
 * "llmload: test hold: <phase>" on stderr and wait (at most 10 s) until a
 * SIGINT or SIGTERM is pending, then return with it still pending: a test
 * can then signal the process in a phase too short to hit by timing.
 * The caller has those signals blocked. Does nothing otherwise. */
void ll_test_hold(const char *phase);
/* Print "llmload: <fmt>\n" to stderr and exit(LL_EXIT_USAGE). For a
 * command's main function only (demo, report): a parser returns its
 * reason instead, so that it can be tested (cli/runopts.h). */
void ll_usage_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#define LL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define LL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LL_MAX(a, b) ((a) > (b) ? (a) : (b))
/* -1, 0 or 1 as a is below, equal to or above b: a qsort comparator's
 * answer, without the overflow of a - b. Each argument is evaluated twice. */
#define LL_CMP(a, b) (((a) > (b)) - ((a) < (b)))
/* A macro's value as a string literal: LL_STR(10) is "10". */
#define LL_STR_(x) #x
#define LL_STR(x) LL_STR_(x)

#endif
