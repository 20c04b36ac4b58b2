/* Unit tests for badarg.c: the words for an argument getopt_long refused,
 * over a table of the shape demo, compare, merge and report hand it, each
 * refusal with its whole message; an operand that is a URL. */
#include "test.h"

#include <getopt.h>
#include <string.h>

#include "cli/badarg.h"
#include "util/util.h"

static const struct option opts[] = {
    {"out", required_argument, NULL, 'o'}, {"output-format", required_argument, NULL, 'F'},
    {"force", no_argument, NULL, 'f'},     {"format", required_argument, NULL, 'M'},
    {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
};

/* getopt_long over "cmd" and args (NULL-terminated) until its first
 * refusal, worded into err; 0 when it refused nothing. */
static int refusal(const char *const *args, char *err, size_t errlen)
{
    char *argv[8];
    int argc = 0;
    argv[argc++] = "cmd";
    while (*args)
        argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        if (c == ':' || c == '?') {
            badarg_getopt(err, errlen, "cmd", argv, optind, c, optopt, opts);
            return 1;
        }
    }
    return 0;
}

static void test_getopt_refusals(void **state)
{
    static const struct {
        const char *args[3];
        const char *want;
    } cases[] = {
        {{"--bogus"}, "unknown option \"--bogus\" (see llmload cmd --help)"},
        {{"--bogus=1"}, "unknown option \"--bogus=1\" (see llmload cmd --help)"},
        {{"-x"}, "unknown option \"-x\" (see llmload cmd --help)"},
        {{"--fo"},
         "ambiguous option \"--fo\": could be --force, --format (see llmload cmd --help)"},
        {{"--o=1"},
         "ambiguous option \"--o\": could be --out, --output-format (see llmload cmd "
         "--help)"},
        {{"--force=1"}, "--force takes no value (see llmload cmd --help)"},
        {{"--forc=yes"}, "--force takes no value (see llmload cmd --help)"}, /* a prefix */
        {{"--out"}, "--out needs a value (see llmload cmd --help)"}, /* exact beats --output-* */
        {{"--form"}, "--format needs a value (see llmload cmd --help)"},
        {{"-o"}, "-o needs a value (see llmload cmd --help)"},
        {{"-fo"}, "unknown option \"-f\" (see llmload cmd --help)"}, /* no short -f */
    };
    char err[256];
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        err[0] = '\0';
        assert_int_equal(refusal(cases[i].args, err, sizeof err), 1);
        assert_string_equal(err, cases[i].want);
    }
    const char *two[] = {"--out", "x", "--f", NULL}; /* after a good one */
    assert_int_equal(refusal(two, err, sizeof err), 1);
    assert_string_equal(err, "ambiguous option \"--f\": could be --force, --format (see llmload "
                             "cmd --help)");
    const char *fine[] = {"--out", "x", "--forc", NULL};
    assert_int_equal(refusal(fine, err, sizeof err), 0);
}

/* A list longer than err ends in ", ..." and still points at --help. */
static void test_ambiguous_cut(void **state)
{
    const char *args[] = {"--o", NULL};
    char err[64];
    assert_int_equal(refusal(args, err, sizeof err), 1);
    assert_string_equal(err, "ambiguous option \"--o\": could be ... (see llmload cmd --help)");
    char room[80];
    assert_int_equal(refusal(args, room, sizeof room), 1);
    assert_string_equal(room,
                        "ambiguous option \"--o\": could be --out, ... (see llmload cmd --help)");
}

static void test_operand(void **state)
{
    char err[256];
    badarg_operand(err, sizeof err, "run", "http://127.0.0.1:8000/v1", 1);
    assert_string_equal(err, "unexpected argument \"http://127.0.0.1:8000/v1\": did you mean "
                             "--url http://127.0.0.1:8000/v1? (see llmload run --help)");
    badarg_operand(err, sizeof err, "run", "https://h/v1", 1);
    assert_non_null(strstr(err, "did you mean --url https://h/v1?"));
    badarg_operand(err, sizeof err, "demo", "http://h/v1", 0); /* no --url to offer */
    assert_string_equal(err, "unexpected argument \"http://h/v1\" (see llmload demo --help)");
    badarg_operand(err, sizeof err, "run", "httpx", 1);
    assert_string_equal(err, "unexpected argument \"httpx\" (see llmload run --help)");
}

UNIT_TESTS(test_getopt_refusals, test_ambiguous_cut, test_operand)
