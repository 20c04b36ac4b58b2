/* Unit tests for runopts.c: the flag parsers, which return a one-line
 * reason instead of exiting (each test checks the code, the message and
 * that a good value still parses), and the process setup:
 * runopts_raise_nofile sizes the descriptor table at once (see the comment
 * there for why). */
#include "test.h"
#include "testutil.h"

#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/runopts.h"
#include "util/util.h"

/* ---- parsing errors ---------------------------------------------------- */

/* rc must be LL_E_INVAL and err exactly want. */
#define ASSERT_USAGE(rc, err, want)                                           \
    do {                                                                      \
        assert_int_equal((rc), LL_E_INVAL);                                   \
        assert_string_equal((err), (want));                                   \
    } while (0)

static void test_value_errors(void **state)
{
    char err[RUNOPTS_ERR_MAX];
    double x = 0;
    uint64_t n = 0;
    struct dist d;

    ASSERT_USAGE(runopts_positive("--rate", "fast", &x, err, sizeof err), err,
                 "--rate: expected a positive number (e.g. 20 or 1.5k), got \"fast\"");
    ASSERT_USAGE(runopts_positive("--rate", "0", &x, err, sizeof err), err,
                 "--rate: expected a positive number (e.g. 20 or 1.5k), got \"0\"");
    assert_int_equal(runopts_positive("--rate", "1.5k", &x, err, sizeof err), 0);
    ASSERT_NEAR(x, 1500, 0);
    /* A rate past the arrival process's cap: the flag once, then why. */
    ASSERT_USAGE(runopts_rate("--rate", "1e12", &x, err, sizeof err), err,
                 "--rate: expected a rate up to 1e9 per second, got \"1e12\"");
    ASSERT_USAGE(runopts_rate("--rate", "0", &x, err, sizeof err), err,
                 "--rate: expected a positive number (e.g. 20 or 1.5k), got \"0\"");
    assert_int_equal(runopts_rate("--rate", "1G", &x, err, sizeof err), 0);
    ASSERT_NEAR(x, 1e9, 0);

    ASSERT_USAGE(runopts_count("--requests", "1.5", 1, &n, err, sizeof err), err,
                 "--requests: expected a whole number >= 1 (e.g. 100 or 10k), got \"1.5\"");
    ASSERT_USAGE(runopts_count("--max-line", "10", 64, &n, err, sizeof err), err,
                 "--max-line: expected a whole number >= 64 (e.g. 100 or 10k), got \"10\"");
    assert_int_equal(runopts_count("--requests", "10k", 1, &n, err, sizeof err), 0);
    assert_int_equal(n, 10000);

    uint32_t u = 7;
    ASSERT_USAGE(runopts_count_upto("--users", "2000000", 1000000, &u, err, sizeof err), err,
                 "--users: at most 1000000, got \"2000000\"");
    ASSERT_USAGE(runopts_count_upto("--users", "0", 1000000, &u, err, sizeof err), err,
                 "--users: expected a whole number from 1 to 1000000 (e.g. 100 or 10k), got \"0\"");
    /* A range too small for the example takes none. */
    ASSERT_USAGE(runopts_count_upto("--threads", "0", 256, &u, err, sizeof err), err,
                 "--threads: expected a whole number from 1 to 256, got \"0\"");
    ASSERT_USAGE(runopts_count_upto("--threads", "1.5", 256, &u, err, sizeof err), err,
                 "--threads: expected a whole number from 1 to 256, got \"1.5\"");
    assert_int_equal(u, 7); /* untouched on a refusal */
    assert_int_equal(runopts_count_upto("--users", "1M", 1000000, &u, err, sizeof err), 0);
    assert_int_equal(u, 1000000);

    ASSERT_USAGE(runopts_duration("--duration", "abc", &n, err, sizeof err), err,
                 "--duration: expected a duration (e.g. 500ms, 30s, 2m), got \"abc\"");
    assert_int_equal(runopts_duration("--duration", "2m", &n, err, sizeof err), 0);
    assert_int_equal(n, 120 * LL_NS_PER_SEC);
    ASSERT_USAGE(runopts_duration_pos("--pace", "0s", &n, err, sizeof err), err,
                 "--pace: must be more than 0");
    ASSERT_USAGE(runopts_duration_pos("--pace", "x", &n, err, sizeof err), err,
                 "--pace: expected a duration (e.g. 500ms, 30s, 2m), got \"x\"");
    assert_int_equal(runopts_duration_pos("--pace", "250ms", &n, err, sizeof err), 0);
    assert_int_equal(n, 250 * LL_NS_PER_MS);

    assert_int_equal(runopts_dist("--think", "uniform:5", DIST_UNIT_DURATION_NS, 1, &d, err,
                                  sizeof err), LL_E_INVAL);
    assert_true(strncmp(err, "--think: ", 9) == 0);

    ASSERT_USAGE(runopts_metrics_flags("10ms", 0, NULL, NULL, 0, &n, err, sizeof err), err,
                 "--metrics-interval: at least 100ms, got \"10ms\"");
    ASSERT_USAGE(runopts_metrics_flags(NULL, 1, "http://x/metrics", NULL, 0, &n, err, sizeof err),
                 err, "--no-metrics and --metrics-url: pick one");
    ASSERT_USAGE(
        runopts_metrics_flags(NULL, 0, "127.0.0.1:8000/metrics", NULL, 0, &n, err, sizeof err), err,
        "--metrics-url: expected an http:// or https:// URL, got "
        "\"127.0.0.1:8000/metrics\"");
    ASSERT_USAGE(runopts_metrics_flags(NULL, 0, "ftp://x/metrics", NULL, 0, &n, err, sizeof err),
                 err,
                 "--metrics-url: expected an http:// or https:// URL, got \"ftp://x/metrics\"");
    assert_int_equal(
        runopts_metrics_flags(NULL, 0, "https://x/metrics", NULL, 0, &n, err, sizeof err), 0);
    ASSERT_USAGE(
        runopts_metrics_flags(NULL, 0, "http://x/metrics", "http://p:9090", 0, &n, err, sizeof err),
        err,
        "--metrics-url and --prometheus: pick one (the server's figures come from one "
        "place: its /metrics, or a Prometheus that scrapes it)");
    assert_int_equal(runopts_metrics_flags("2s", 0, NULL, "http://p:9090", 0, &n, err, sizeof err),
                     0);
    /* An interval with nothing to pace (--no-metrics, and neither
     * --gpu-metrics nor --prometheus) was taken and ignored: refused. */
    ASSERT_USAGE(runopts_metrics_flags("2s", 1, NULL, NULL, 0, &n, err, sizeof err), err,
                 "--metrics-interval: has no effect with --no-metrics (it paces the scrapes, "
                 "and --gpu-metrics' and --prometheus')");
    assert_int_equal(runopts_metrics_flags("2s", 1, NULL, NULL, 1, &n, err, sizeof err), 0);
    assert_int_equal(runopts_metrics_flags("2s", 1, NULL, "http://p:9090", 0, &n, err, sizeof err),
                     0);
    assert_int_equal(n, 2 * LL_NS_PER_SEC);
}

/* --prompt-id-range A,B: every bad form is one line naming the flag. */
static void test_prompt_id_range(void **state)
{
    char err[RUNOPTS_ERR_MAX];
    struct chatbody_id_range r = {7, 8};
    static const char *const not_two[] = {"",
                                          "5",
                                          "5,",
                                          ",5",
                                          "a,b",
                                          "5,x",
                                          "1.5,9",
                                          "5,9,",
                                          "5;9",
                                          " 5,9",
                                          "5,9 ",
                                          "4294967296,4294967297",
                                          "5,99999999999",
                                          "0x10,0x20",
                                          "+5,9"};
    for (size_t i = 0; i < LL_ARRAY_LEN(not_two); i++) {
        char want[200];
        snprintf(want, sizeof want,
                 "--prompt-id-range: expected A,B, two whole numbers from 0 "
                 "to 4294967295 (the IDs are drawn from [A, B]), got \"%s\"",
                 not_two[i]);
        ASSERT_USAGE(runopts_prompt_id_range(not_two[i], &r, err, sizeof err), err, want);
    }
    ASSERT_USAGE(runopts_prompt_id_range("-1,511", &r, err, sizeof err), err,
                 "--prompt-id-range: token IDs are 0 or more, got \"-1,511\"");
    ASSERT_USAGE(runopts_prompt_id_range("3,-511", &r, err, sizeof err), err,
                 "--prompt-id-range: token IDs are 0 or more, got \"3,-511\"");
    ASSERT_USAGE(runopts_prompt_id_range("600,3", &r, err, sizeof err), err,
                 "--prompt-id-range: A must be below B (two IDs at least, to tell requests "
                 "apart), got \"600,3\"");
    ASSERT_USAGE(runopts_prompt_id_range("9,9", &r, err, sizeof err), err,
                 "--prompt-id-range: A must be below B (two IDs at least, to tell requests "
                 "apart), got \"9,9\"");
    /* Refusals leave *out alone. */
    assert_int_equal(r.min, 7);
    assert_int_equal(r.max, 8);
    assert_int_equal(runopts_prompt_id_range("3,511", &r, err, sizeof err), 0);
    assert_int_equal(r.min, 3);
    assert_int_equal(r.max, 511);
    assert_int_equal(runopts_prompt_id_range("0,4294967295", &r, err, sizeof err), 0);
    assert_int_equal(r.min, 0);
    assert_int_equal(r.max, UINT32_MAX);

    /* Into the transport's settings; the default without the flag. */
    struct run_opts o;
    struct run_config cfg;
    memset(&o, 0, sizeof o);
    memset(&cfg, 0, sizeof cfg);
    o.api = "openai-completions";
    o.prompt_ids = 1;
    assert_int_equal(runopts_workload_transport(&o, 1, &cfg, err, sizeof err), 0);
    assert_int_equal(cfg.transport.prompt_id_range.min, CHATBODY_ID_MIN);
    assert_int_equal(cfg.transport.prompt_id_range.max, CHATBODY_ID_MAX);
    runopts_workload_free(&cfg);
    memset(&cfg, 0, sizeof cfg);
    o.prompt_id_range = "256,511";
    assert_int_equal(runopts_workload_transport(&o, 1, &cfg, err, sizeof err), 0);
    assert_int_equal(cfg.transport.prompt_id_range.min, 256);
    assert_int_equal(cfg.transport.prompt_id_range.max, 511);
    runopts_workload_free(&cfg);
}

/* The vocabulary in a /models answer: llama.cpp's meta.n_vocab, of the
 * model asked for or the only one; nothing from servers that say none.
 * The check refuses only a range past a reported vocabulary. */
static void test_vocab_check(void **state)
{
    char err[RUNOPTS_ERR_MAX];
    json_t *llama = json_loads("{\"object\":\"list\",\"data\":[{\"id\":\"stories260K.gguf\","
                               "\"object\":\"model\",\"meta\":{\"vocab_type\":1,"
                               "\"n_vocab\":512,\"n_ctx_train\":2048}}]}",
                               0, NULL);
    json_t *two = json_loads("{\"data\":[{\"id\":\"a\",\"meta\":{\"n_vocab\":32000}},"
                             "{\"id\":\"b\",\"meta\":{\"n_vocab\":1000}}]}",
                             0, NULL);
    json_t *vllm = json_loads("{\"data\":[{\"id\":\"m\",\"max_model_len\":4096}]}", 0, NULL);
    json_t *odd = json_loads("{\"data\":[{\"id\":\"m\",\"meta\":{\"n_vocab\":\"512\"}}]}", 0, NULL);
    assert_non_null(llama);
    assert_non_null(two);
    assert_non_null(vllm);
    assert_non_null(odd);
    assert_int_equal(runopts_models_vocab(llama, "stories260K.gguf"), 512);
    assert_int_equal(runopts_models_vocab(llama, "anything"), 512); /* the only one */
    assert_int_equal(runopts_models_vocab(llama, NULL), 512);
    assert_int_equal(runopts_models_vocab(two, "b"), 1000);
    assert_int_equal(runopts_models_vocab(two, "a"), 32000);
    assert_int_equal(runopts_models_vocab(two, "c"), -1); /* which one? none said */
    assert_int_equal(runopts_models_vocab(vllm, "m"), -1);
    assert_int_equal(runopts_models_vocab(odd, "m"), -1);
    assert_int_equal(runopts_models_vocab(NULL, "m"), -1);

    struct chatbody_id_range dflt = {CHATBODY_ID_MIN, CHATBODY_ID_MAX}, fits = {256, 511},
                             edge = {0, 512};
    assert_int_equal(runopts_vocab_check(llama, "x", &dflt, 0, err, sizeof err), -1);
    assert_string_equal(err, "--prompt-ids: the model's vocabulary has 512 tokens (IDs 0 to 511, "
                             "/models meta.n_vocab) but the prompt IDs are drawn from [1000, "
                             "17383]; pass --prompt-id-range A,B with B below 512 (e.g. "
                             "--prompt-id-range 256,511)");
    assert_int_equal(runopts_vocab_check(llama, "x", &edge, 1, err, sizeof err), -1);
    assert_true(strncmp(err, "--prompt-id-range: the model's vocabulary has 512 tokens", 55) == 0);
    assert_non_null(strstr(err, "drawn from [0, 512]"));
    assert_int_equal(runopts_vocab_check(llama, "x", &fits, 1, err, sizeof err), 0);
    assert_int_equal(runopts_vocab_check(two, "a", &dflt, 0, err, sizeof err), 0);
    assert_int_equal(runopts_vocab_check(two, "b", &dflt, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "(e.g. --prompt-id-range 500,999)"));
    assert_int_equal(runopts_vocab_check(vllm, "m", &dflt, 0, err, sizeof err), 0);
    assert_int_equal(runopts_vocab_check(NULL, "m", &dflt, 0, err, sizeof err), 0);
    json_t *tiny = json_loads("{\"data\":[{\"id\":\"m\",\"meta\":{\"n_vocab\":2}}]}", 0, NULL);
    assert_int_equal(runopts_vocab_check(tiny, "m", &dflt, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "(e.g. --prompt-id-range 0,1)"));
    json_decref(tiny);
    tiny = json_loads("{\"data\":[{\"id\":\"m\",\"meta\":{\"n_vocab\":1}}]}", 0, NULL);
    assert_int_equal(runopts_vocab_check(tiny, "m", &dflt, 0, err, sizeof err), -1);
    assert_string_equal(err, "--prompt-ids: the model's vocabulary has 1 token (/models "
                             "meta.n_vocab): too few for token-ID prompts; drop --prompt-ids");
    json_decref(tiny);
    json_decref(llama);
    json_decref(two);
    json_decref(vllm);
    json_decref(odd);
}

static void test_url_errors(void **state)
{
    char err[RUNOPTS_ERR_MAX];

    ASSERT_USAGE(runopts_check_url("ftp://x", err, sizeof err), err,
                 "--url: expected http://HOST:PORT/... or https://..., got \"ftp://x\"");
    ASSERT_USAGE(runopts_check_url("http://h:0/v1", err, sizeof err), err,
                 "--url: the port must be 1 to 65535, got \"0\"");
    ASSERT_USAGE(runopts_check_url("http:///v1", err, sizeof err), err,
                 "--url: no host in \"http:///v1\"");
    assert_int_equal(runopts_check_url("http://u:p@h/v1", err, sizeof err), LL_E_INVAL);
    assert_non_null(strstr(err, "user info"));
    assert_int_equal(runopts_check_url("https://[::1]:8443/v1", err, sizeof err), 0);
}

/* A command's own flags, for runopts_parse: a value, a switch, and one
 * with its own code that refuses "bad". */
struct own_test {
    const char *own, *value;
    int on;
};

static int take_own_test(void *dst, const char *a, char *err, size_t errlen)
{
    if (strcmp(a, "bad") == 0)
        return runopts_errf(err, errlen, "--own: refused \"%s\"", a);
    ((struct own_test *)dst)->own = a;
    return 0;
}

static const struct runopts_flag own_test_flags[] = {
    {"own", 0, RUNOPTS_KIND_CALL, 0, take_own_test},
    RUNOPTS_VALUE("value", struct own_test, value),
    RUNOPTS_SET("on", struct own_test, on),
};

/* What parse gives back: the options, what the test's own table took, the
 * index of the first operand, and the message of a refusal. */
struct parsed {
    struct run_opts o;
    struct own_test own;
    int first;
    char err[RUNOPTS_ERR_MAX];
};

/* runopts_parse over a NULL-terminated argument list, at most one operand,
 * into a cleared p. */
static int parse(const char *const *args, struct parsed *p)
{
    char *argv[2 * RUNOPTS_MAX_HEADERS + 8];
    int argc = 0;
    argv[argc++] = "run";
    while (*args)
        argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    memset(p, 0, sizeof *p);
    p->first = -1;
    const struct runopts_table t = {own_test_flags, LL_ARRAY_LEN(own_test_flags), &p->own};
    return runopts_parse(argc, argv, "run", &t, 1, &p->o, &p->first, p->err, sizeof p->err);
}

static void test_parse(void **state)
{
    struct parsed p;
    const char *ok[] = {"--url",   "http://h/v1",   "-H",      "X-A: 1", "--own",
                        "v",       "TRACE",         "--val=w", "--on",   "--no-stream",
                        "--model", "mod\xc3\xa8le", NULL};
    assert_int_equal(parse(ok, &p), 0);
    assert_string_equal(p.o.url, "http://h/v1");
    assert_int_equal(p.o.n_headers, 1);
    assert_int_equal(p.o.no_stream, 1);
    assert_string_equal(p.own.own, "v");
    assert_string_equal(p.own.value, "w"); /* "--val", a unique prefix (docs/run.md) */
    assert_int_equal(p.own.on, 1);
    assert_int_equal(p.first, 12); /* getopt_long moved the operand after the flags */
    assert_string_equal(p.o.model, "mod\xc3\xa8le"); /* UTF-8 beyond ASCII is text */

    /* Refused, each with its whole message. */
    static const struct {
        const char *args[3]; /* NULL-terminated by the zeros after them */
        const char *want;
    } bad[] = {
        {{"--bogus"}, "unknown option \"--bogus\" (see llmload run --help)"},
        {{"--ht", "x"},
         "ambiguous option \"--ht\": could be --http2, --http-client (see llmload run --help)"},
        {{"--ht=x"},
         "ambiguous option \"--ht\": could be --http2, --http-client (see llmload run --help)"},
        {{"--on=1"}, "--on takes no value (see llmload run --help)"},
        {{"--qui=1"}, "--quiet takes no value (see llmload run --help)"}, /* a prefix */
        {{"--url"}, "--url needs a value (see llmload run --help)"},
        {{"--val"}, "--value needs a value (see llmload run --help)"},
        {{"-H"}, "-H needs a value (see llmload run --help)"},
        {{"-x"}, "unknown option \"-x\" (see llmload run --help)"},
        {{"A", "B"}, "unexpected argument \"B\" (see llmload run --help)"},
        {{"http://h:8000/v1"},
         "unexpected argument \"http://h:8000/v1\": did you mean --url "
         "http://h:8000/v1? (see llmload run --help)"},
        {{"A", "https://h/v1"},
         "unexpected argument \"https://h/v1\": did you mean --url "
         "https://h/v1? (see llmload run --help)"},
        {{"-H", "nocolon"}, "--header: expected \"Name: value\", got a value without a colon"},
        {{"--own", "bad"}, "--own: refused \"bad\""},
        /* Not UTF-8: the parent took them, and run.json went without the
         * model (its config_hash blind to it) or the tag. */
        {{"--model", "m\xff"},
         "--model: expected UTF-8 text, got byte 0xff at offset 1, which is not"},
        {{"--tag", "gpu=H1\xc3"},
         "--tag: expected UTF-8 text, got byte 0xc3 at offset 6, which is not"},
        {{"--value", "\xed\xa0\x80"},
         "--value: expected UTF-8 text, got byte 0xed at offset 0, which is not"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++)
        ASSERT_USAGE(parse(bad[i].args, &p), p.err, bad[i].want);

    const char *help[] = {"--url", "http://h/v1", "--help", "--bogus", NULL};
    assert_int_equal(parse(help, &p), RUNOPTS_HELP);

    /* A prefix of many: each of them, in the table's order. */
    const char *prom[] = {"--prom", "x", NULL};
    ASSERT_USAGE(
        parse(prom, &p), p.err,
        "ambiguous option \"--prom\": could be --prompt-salt, --prompt-tokens, --prompt-ids, "
        "--prompt-id-range, --prometheus, --prometheus-selector, --prometheus-by, "
        "--prometheus-header (see llmload run --help)");
}

/* -H is repeatable up to RUNOPTS_MAX_HEADERS, then refused. */
static void test_parse_header_bound(void **state)
{
    struct parsed p;
    const char *args[2 * (RUNOPTS_MAX_HEADERS + 1) + 1];
    size_t n = 0;
    for (int i = 0; i < RUNOPTS_MAX_HEADERS; i++) {
        args[n++] = "-H";
        args[n++] = "X: 1";
    }
    args[n] = NULL;
    assert_int_equal(parse(args, &p), 0);
    assert_int_equal(p.o.n_headers, RUNOPTS_MAX_HEADERS);
    args[n++] = "--header";
    args[n++] = "X: 2";
    args[n] = NULL;
    ASSERT_USAGE(parse(args, &p), p.err, "--header: at most 64 headers");
}

/* runopts_walk words a missing value or an unknown flag itself, naming
 * the command it was given; optind is then past the argument at fault. */
static void test_walk_answers(void **state)
{
    char err[RUNOPTS_ERR_MAX] = "";
    struct own_test own = {0};
    const struct runopts_table t = {own_test_flags, LL_ARRAY_LEN(own_test_flags), &own};
    char *missing[] = {"cmd", "--value", NULL};
    char *unknown[] = {"cmd", "-H", "x", NULL};
    char *ok[] = {"cmd", "--on", "rest", NULL};

    assert_int_equal(runopts_walk(2, missing, "cmd", &t, 1, err, sizeof err), LL_E_INVAL);
    assert_string_equal(err, "--value needs a value (see llmload cmd --help)");
    assert_int_equal(optind, 2);
    assert_int_equal(runopts_walk(3, unknown, "cmd", &t, 1, err, sizeof err), LL_E_INVAL);
    assert_string_equal(err, "unknown option \"-H\" (see llmload cmd --help)");
    assert_int_equal(runopts_walk(3, ok, "cmd", &t, 1, err, sizeof err), 0);
    assert_int_equal(optind, 2);
    assert_int_equal(own.on, 1);
}

/* runopts_workload_transport on o with the run's SLO slo: its code, err
 * holding the reason. */
static int workload_transport_slo(const struct run_opts *o, struct slo slo, char *err,
                                  size_t errlen)
{
    struct run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.slo = slo;
    int rc = runopts_workload_transport(o, 1, &cfg, err, errlen);
    runopts_workload_free(&cfg);
    return rc;
}

/* The same with no SLO. */
static int workload_transport(const struct run_opts *o, char *err, size_t errlen)
{
    return workload_transport_slo(o, (struct slo){0}, err, errlen);
}

/* Options with one length flag set to spec, the rest unset: flag is
 * "--lengths", "--prompt-tokens" or "--output-tokens". */
static struct run_opts length_opts(const char *flag, const char *spec)
{
    struct run_opts o;
    memset(&o, 0, sizeof o);
    if (strcmp(flag, "--lengths") == 0)
        o.lengths = spec;
    else if (strcmp(flag, "--prompt-tokens") == 0)
        o.prompt_tokens = spec;
    else if (strcmp(flag, "--output-tokens") == 0)
        o.output_tokens = spec;
    else
        fail_msg("no length flag %s", flag);
    return o;
}

/* workload_transport refuses flag=spec alone with the whole message
 * "FLAG SPEC: WHY". */
static void assert_spec_refused(const char *flag, const char *spec, const char *why)
{
    char err[RUNOPTS_ERR_MAX], want[800];
    struct run_opts o = length_opts(flag, spec);
    snprintf(want, sizeof want, "%s %s: %s", flag, spec, why);
    ASSERT_USAGE(workload_transport(&o, err, sizeof err), err, want);
}

static void test_config_errors(void **state)
{
    char err[RUNOPTS_ERR_MAX];
    struct run_opts o;
    struct run_config cfg;
    uint64_t seed;

    memset(&o, 0, sizeof o);
    assert_int_equal(workload_transport(&o, err, sizeof err), 0);

    /* Options otherwise unset, one bad: the whole message. */
    static const struct {
        struct run_opts o;
        const char *want;
    } bad[] = {
        {{.api = "nope"},
         "--api: expected openai-chat (chat), openai-completions (completions), "
         "anthropic-messages (messages), openai-responses (responses) or openai-embeddings "
         "(embeddings), got \"nope\""},
        {{.batch = "4"}, "--batch: inputs per request go with --api openai-embeddings"},
        {{.api = "openai-embeddings", .batch = "uniform:1,3000"},
         "--batch: at most 2048 inputs a request; give a bounded DIST (N, uniform:A,B or "
         "max=2048), got \"uniform:1,3000\""},
        {{.api = "openai-embeddings", .batch = "lognormal:median=4,sigma=1,max=2048"}, NULL},
        {{.api = "openai-embeddings", .ignore_eos = 1},
         "--ignore-eos: not with --api openai-embeddings: an embedding has no output tokens"},
        /* named for the API before its value is read, not "a length of 0
         * tokens (it would be sent as 1)" */
        {{.api = "embeddings", .output_tokens = "0"},
         "--output-tokens: not with --api openai-embeddings: an embedding has no output tokens"},
        {{.api = "openai-embeddings", .prompt_ids = 1},
         "--prompt-ids: not with --api openai-embeddings: its inputs are sent as text"},
        {{.api = "anthropic-messages", .prompt_ids = 1},
         "--prompt-ids: anthropic-messages takes text prompts only; token-ID prompts go to "
         "/v1/completions (--api openai-completions)"},
        {{.api = "anthropic-messages", .calibrate = "auto"},
         "--calibrate: its probes speak OpenAI chat, not anthropic-messages; fit against an "
         "OpenAI chat endpoint of the same model with llmload calibrate and pass --calibration "
         "FILE"},
        {{.api = "openai-responses", .prompt_ids = 1},
         "--prompt-ids: openai-responses takes text prompts only; token-ID prompts go to "
         "/v1/completions (--api openai-completions)"},
        {{.api = "responses", .calibrate = "auto"},
         "--calibrate: its probes speak OpenAI chat, not openai-responses; fit against an "
         "OpenAI chat endpoint of the same model with llmload calibrate and pass --calibration "
         "FILE"},
        {{.threads = "300"}, "--threads: at most 256, got \"300\""},
        {{.http_client = "native", .http2 = 1},
         "--http-client native: speaks HTTP/1.1 only; drop --http2 or use curl"},
        {{.prefix_fraction = "2"},
         "--prefix-fraction: expected a fraction from 0 to 1 (e.g. 0.3), got \"2\""},
        {{.prompt_ids = 1},
         "--prompt-ids: token-ID prompts go to /v1/completions; add --api openai-completions"},
        {{.t_idle = "xx"}, "--timeout-idle: expected a duration (e.g. 500ms, 30s, 2m), got \"xx\""},
        {{.prompt_id_range = "3,511"},
         "--prompt-id-range: goes with --prompt-ids (token-ID prompts); add it, or drop "
         "--prompt-id-range"},
        {{.api = "openai-completions", .prompt_ids = 1, .prompt_id_range = "511,3"},
         "--prompt-id-range: A must be below B (two IDs at least, to tell requests apart), got "
         "\"511,3\""},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        if (!bad[i].want) /* a case that must pass */
            assert_int_equal(workload_transport(&bad[i].o, err, sizeof err), 0);
        else
            ASSERT_USAGE(workload_transport(&bad[i].o, err, sizeof err), err, bad[i].want);
    }
    /* Embeddings: --batch in the workload, never a stream, whatever was
     * asked; and its SLO is E2E's alone. */
    memset(&o, 0, sizeof o);
    o.api = "embeddings";
    o.batch = "uniform:1,4";
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(runopts_workload_transport(&o, 1, &cfg, err, sizeof err), 0);
    assert_int_equal(cfg.transport.api, OAI_API_EMBEDDINGS);
    assert_int_equal(cfg.transport.stream, 0);
    assert_int_equal(cfg.workload.has_batch, 1);
    assert_int_equal(cfg.workload.batch.kind, DIST_UNIFORM);
    runopts_workload_free(&cfg);
    ASSERT_USAGE(workload_transport_slo(&o, (struct slo){.ttft_ns = 1}, err, sizeof err), err,
                 "--slo: ttft has no meaning for openai-embeddings (no stream: no first token "
                 "before the last, no token pace); judge it by e2e=");
    /* --no-stream on a streamed API: its TTFT is the whole answer's time
     * and it has no TPOT, so a tpot= passed every request; e2e= stands. */
    memset(&o, 0, sizeof o);
    o.no_stream = 1;
    ASSERT_USAGE(workload_transport_slo(&o, (struct slo){.tpot_ns = 20000000}, err, sizeof err),
                 err,
                 "--slo: tpot has no meaning with --no-stream (no stream: no first token before "
                 "the last, no token pace); judge it by e2e=");
    ASSERT_USAGE(workload_transport_slo(&o, (struct slo){.ttft_ns = 1}, err, sizeof err), err,
                 "--slo: ttft has no meaning with --no-stream (no stream: no first token before "
                 "the last, no token pace); judge it by e2e=");
    assert_int_equal(workload_transport_slo(&o, (struct slo){.e2e_ns = 1}, err, sizeof err), 0);
    /* --dataset's prompts carry their own lengths: a length flag beside it
     * is named (the file itself is not read before that refusal). */
    memset(&o, 0, sizeof o);
    o.dataset = "/nonexistent/prompts.jsonl";
    o.prompt_tokens = "100";
    ASSERT_USAGE(workload_transport(&o, err, sizeof err), err,
                 "--dataset: prompt lengths come from the data; drop --prompt-tokens");
    char pairs[512], lengths[600];
    test_data_path("workload", "pairs.csv", pairs, sizeof pairs);
    snprintf(lengths, sizeof lengths, "empirical:%s", pairs);
    memset(&o, 0, sizeof o);
    o.dataset = "/nonexistent/prompts.jsonl";
    o.lengths = lengths;
    ASSERT_USAGE(workload_transport(&o, err, sizeof err), err,
                 "--dataset: prompt lengths come from the data; drop --lengths");
    /* The file's own reason follows the option's name. */
    memset(&o, 0, sizeof o);
    o.lengths = "empirical:/nonexistent/lengths.csv";
    assert_int_equal(workload_transport(&o, err, sizeof err), LL_E_INVAL);
    assert_true(strncmp(err, "--lengths: ", 11) == 0);
    /* An empirical file's lengths that round to 0 are refused as a DIST's
     * are (the parent sent each as 1 token and ran): zero_outputs.csv is
     * 10,0 20,0 30,0. Its input column alone is fine. */
    char zeros[512], spec[600], want[800];
    test_data_path("workload", "zero_outputs.csv", zeros, sizeof zeros);
    snprintf(spec, sizeof spec, "empirical:%s", zeros);
    static const char zero_why[] = "3 of its 3 output lengths round to 0 tokens (each would be "
                                   "sent as 1); expected lengths of at least 1";
    assert_spec_refused("--lengths", spec, zero_why);
    assert_spec_refused("--output-tokens", spec, zero_why);
    o = length_opts("--prompt-tokens", spec);
    assert_int_equal(workload_transport(&o, err, sizeof err), 0);
    /* Lengths above the cap are refused, not cut to 4e9 (the parent ran,
     * and its dump failed its own replay): huge_outputs.csv is 10,20
     * 30,1e12; --lengths takes both columns. */
    char huge[512], hspec[600];
    test_data_path("workload", "huge_outputs.csv", huge, sizeof huge);
    snprintf(hspec, sizeof hspec, "empirical:%s#output", huge);
    static const char huge_why[] = "1 of its 2 output lengths are above 100000000 tokens (the "
                                   "largest 1e+12); expected at most 100000000";
    assert_spec_refused("--prompt-tokens", hspec, huge_why);
    hspec[strlen(hspec) - strlen("#output")] = '\0';
    assert_spec_refused("--lengths", hspec, huge_why);
    /* A misspelt column is named as one, not "cannot open". */
    snprintf(hspec, sizeof hspec, "empirical:%s#bogus", huge);
    o = length_opts("--output-tokens", hspec);
    snprintf(want, sizeof want,
             "--output-tokens: \"%s\": expected #input or #output after the file name", hspec);
    ASSERT_USAGE(workload_transport(&o, err, sizeof err), err, want);
    /* A cancellation point of 0 tokens is refused, not sent as 1. */
    static const char *const zero_points[] = {"0", "uniform:0,0.4"};
    for (size_t i = 0; i < LL_ARRAY_LEN(zero_points); i++) {
        memset(&o, 0, sizeof o);
        o.cancel_after_tokens = zero_points[i];
        assert_int_equal(workload_transport(&o, err, sizeof err), LL_E_INVAL);
        snprintf(want, sizeof want, "--cancel-after-tokens %s: ", zero_points[i]);
        assert_true(strncmp(err, want, strlen(want)) == 0);
        assert_non_null(strstr(err, "0 tokens"));
    }
    memset(&o, 0, sizeof o);
    o.cancel_after_tokens = "1";
    assert_int_equal(workload_transport(&o, err, sizeof err), 0);

    memset(&o, 0, sizeof o);
    o.seed = "-1";
    ASSERT_USAGE(runopts_seed(&o, &seed, err, sizeof err), err,
                 "--seed: expected a whole number from 0 to 2^63-1, got \"-1\"");
    memset(&o, 0, sizeof o);
    o.arrival = "poisson";
    o.burstiness = "2";
    memset(&cfg, 0, sizeof cfg);
    ASSERT_USAGE(runopts_arrival(&o, 1, &cfg.arrival, err, sizeof err), err,
                 "--burstiness: applies to --arrival gamma, not poisson");
    o.slo = "ttft=abc";
    assert_int_equal(runopts_slo(&o, &cfg, err, sizeof err), LL_E_INVAL);
    assert_true(strncmp(err, "--slo: ", 7) == 0);
}

/* FDSize from /proc/self/status: descriptor slots the table has now. */
static long fd_table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long size = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "FDSize: %ld", &size) == 1)
            break;
    fclose(f);
    return size;
}

/* The calibration's short-prompt warning counts what it looked at: the
 * whole run's lengths with --requests, else the schedule's first 1000,
 * which a run bound by time may never reach ("1000 of 1000 prompt lengths
 * drawn" was printed for a 14-request run against llama.cpp). */
static void test_calib_short_words(void **state)
{
    (void)state;
    char err[RUNOPTS_ERR_MAX], msg[600];
    struct run_opts o;
    struct run_config cfg;
    memset(&o, 0, sizeof o);
    o.prompt_tokens = "12";
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(runopts_workload_transport(&o, 1, &cfg, err, sizeof err), 0);
    cfg.workload.calib = (struct workload_calib){.tokens_per_word = 1.3, .intercept_tokens = 10};
    assert_int_equal(runopts_calib_short(&cfg, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "1000 of the first 1000 prompt lengths of the schedule ask for "
                                "fewer than 20 tokens, twice the calibration's intercept of "
                                "10.0"));
    cfg.max_requests = 14;
    assert_int_equal(runopts_calib_short(&cfg, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "14 of 14 prompt lengths drawn ask for fewer than 20 tokens"));
    /* A replay's lengths are its trace's, not drawn (the parent: "3 of 3
     * prompt lengths drawn"): its two lines without a text of their own. */
    struct trace_entry e[3] = {{.prompt_off = TRACE_NONE, .prompt_tokens = 12},
                               {.prompt_off = TRACE_NONE, .prompt_tokens = 40},
                               {.prompt_off = TRACE_NONE, .prompt_tokens = 15}};
    struct trace tr = {.entries = e, .n = 3};
    cfg.trace = &tr;
    cfg.max_requests = 0;
    assert_int_equal(runopts_calib_short(&cfg, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "2 of 3 prompt lengths of the trace ask for fewer than 20 tokens"));
    cfg.trace = NULL;
    cfg.max_requests = 14;
    cfg.workload.calib.intercept_tokens = 5; /* 12 >= 2 x 5: nothing to say */
    assert_int_equal(runopts_calib_short(&cfg, msg, sizeof msg), 0);
    runopts_workload_free(&cfg);
}

static void test_fd_table_grown_up_front(void **state)
{
    struct rlimit rl;
    long before = fd_table_size();

    if (before < 0)
        skip();  /* no /proc */
    runopts_raise_nofile();
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(rl.rlim_cur == rl.rlim_max || rl.rlim_max == RLIM_INFINITY);
    long want = rl.rlim_cur < RUNOPTS_FD_TABLE ? (long)rl.rlim_cur : RUNOPTS_FD_TABLE;
    if (want <= before)
        skip();  /* the limit here is no bigger than the table already was */
    long after = fd_table_size();
    assert_true(after >= want);
    /* Nothing is left open up there. */
    assert_int_equal(fcntl(want - 1, F_GETFD), -1);
}

/* clang-format off */
/* "2" and "2%" are the same fraction; the bounds are (lo, hi]. */
static void test_percent(void **state)
{
    char err[256];
    double x = -1;
    assert_int_equal(runopts_percent("--p", "2", 0, 100, &x, err, sizeof err), 0);
    assert_true(fabs(x - 0.02) < 1e-12);
    assert_int_equal(runopts_percent("--p", "99.5%", 0, 100, &x, err, sizeof err), 0);
    assert_true(fabs(x - 0.995) < 1e-12);
    assert_int_equal(runopts_percent("--p", "0%", -1e-9, 100, &x, err, sizeof err), 0);
    assert_true(x == 0);
    static const char *const bad[] = {"0", "100.1", "%", "", "2%%", "x%", "2 %", "1e400"};
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        assert_int_equal(runopts_percent("--p", bad[i], 0, 100, &x, err, sizeof err),
                         LL_E_INVAL);
        assert_non_null(strstr(err, "--p: expected a percentage above 0 and at most 100"));
    }
    /* A bare fraction was taken as that many percent (0.99 as 0.99%):
     * refused, with the percentage it most likely meant; with its % it
     * is what it says, and a bare 0 is no fraction. */
    static const struct {
        const char *v, *msg;
    } frac[] = {
        {"0.99", "--p: 0.99: a percentage; did you mean 99%?"},
        {"0.02", "--p: 0.02: a percentage; did you mean 2%?"},
        {".5", "--p: .5: a percentage; did you mean 50%?"},
        {"1", "--p: 1: a percentage; did you mean 100%? (one percent is 1%)"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(frac); i++) {
        assert_int_equal(runopts_percent("--p", frac[i].v, 0, 100, &x, err, sizeof err),
                         LL_E_INVAL);
        assert_string_equal(err, frac[i].msg);
    }
    assert_int_equal(runopts_percent("--p", "0.99%", 0, 100, &x, err, sizeof err), 0);
    assert_true(fabs(x - 0.0099) < 1e-12);
    assert_int_equal(runopts_percent("--p", "1.5", 0, 100, &x, err, sizeof err), 0);
    assert_true(fabs(x - 0.015) < 1e-12);
    assert_int_equal(runopts_percent("--p", "0", -1e-9, 100, &x, err, sizeof err), 0);
    assert_true(x == 0);
}

TEST_MAIN(cmocka_unit_test(test_value_errors), cmocka_unit_test(test_percent),
          cmocka_unit_test(test_prompt_id_range),
          cmocka_unit_test(test_vocab_check),
          cmocka_unit_test(test_url_errors),
          cmocka_unit_test(test_parse),
          cmocka_unit_test(test_parse_header_bound),
          cmocka_unit_test(test_walk_answers),
          cmocka_unit_test(test_config_errors), cmocka_unit_test(test_calib_short_words),
          cmocka_unit_test(test_fd_table_grown_up_front))
/* clang-format on */
