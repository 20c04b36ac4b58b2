/* Unit tests for cli/shard.c: --shard K/N, --shard auto from each
 * launcher's variables (through a getenv-like callback: no setenv),
 * --start-at's parser, --out's placeholders and the configuration hash. */
#include "test.h"

#include <string.h>

#include "cli/shard.h"
#include "util/util.h"

/* An environment as "NAME=VALUE" strings, NULL-terminated. */
static const char *env_get(void *ud, const char *name)
{
    const char *const *env = ud;
    size_t n = strlen(name);
    for (; *env; env++) {
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    }
    return NULL;
}

static void test_parse_flag(void **state)
{
    char err[256];
    uint32_t k = 9, n = 9;
    assert_int_equal(shard_parse("0/1", &k, &n, err, sizeof err), 0);
    assert_int_equal(k, 0);
    assert_int_equal(n, 1);
    assert_int_equal(shard_parse("3/4", &k, &n, err, sizeof err), 0);
    assert_int_equal(k, 3);
    assert_int_equal(n, 4);
    static const char *const bad[] = {"4/4",  "1/0", "0/",   "/4",       "x/4", "-1/4",
                                      "1/4/", "1",   "1 /4", "0/100001", "",    "auto2"};
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        assert_int_equal(shard_parse(bad[i], &k, &n, err, sizeof err), LL_E_INVAL);
        assert_non_null(strstr(err, "--shard: "));
        assert_null(strchr(err, '\n'));
    }
}

/* One launcher's variables, and what --shard auto makes of them. */
struct env_case {
    const char *env[5];
    const char *shards; /* --shards, or NULL */
    uint32_t k, n;
    enum shard_launcher l;
};

static void test_env_each_launcher(void **state)
{
    static const struct env_case cases[] = {
        {{"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4"}, NULL, 2, 4, SHARD_OPENMPI},
        {{"PMI_RANK=0", "PMI_SIZE=3"}, NULL, 0, 3, SHARD_MPICH},
        {{"SLURM_PROCID=5", "SLURM_NTASKS=8"}, NULL, 5, 8, SHARD_SLURM},
        {{"JOB_COMPLETION_INDEX=1"}, "2", 1, 2, SHARD_KUBERNETES},
        /* --shards agreeing with a launcher's own count */
        {{"SLURM_PROCID=1", "SLURM_NTASKS=2"}, "2", 1, 2, SHARD_SLURM},
        /* two launchers that agree (mpirun under srun): the first named */
        {{"SLURM_PROCID=3", "SLURM_NTASKS=4", "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4"},
         NULL,
         3,
         4,
         SHARD_OPENMPI},
        /* an empty variable is an unset one */
        {{"PMI_RANK=", "SLURM_PROCID=0", "SLURM_NTASKS=1"}, NULL, 0, 1, SHARD_SLURM},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        const struct env_case *c = &cases[i];
        char err[512] = "";
        uint32_t k = 99, n = 99;
        enum shard_launcher l = SHARD_NONE;
        int rc = shard_from_env(env_get, (void *)c->env, c->shards, &k, &n, &l, err, sizeof err);
        if (rc != 0)
            fail_msg("case %zu: %s", i, err);
        assert_int_equal(k, c->k);
        assert_int_equal(n, c->n);
        assert_int_equal(l, c->l);
    }
    assert_string_equal(shard_launcher_name(SHARD_OPENMPI), "openmpi");
    assert_string_equal(shard_launcher_name(SHARD_MPICH), "mpich");
    assert_string_equal(shard_launcher_name(SHARD_SLURM), "slurm");
    assert_string_equal(shard_launcher_name(SHARD_KUBERNETES), "kubernetes");
    assert_string_equal(shard_launcher_name(SHARD_FLAG), "flag");
    assert_null(shard_launcher_name(SHARD_NONE));
}

/* What --shard auto refuses, and a word its one line must hold. */
struct env_bad {
    const char *env[5];
    const char *shards;
    const char *needle;
};

static void test_env_errors(void **state)
{
    static const struct env_bad cases[] = {
        {{NULL}, NULL, "no launcher's variables are set"},
        {{"HOME=/root"}, "4", "no launcher's variables are set"},
        {{"OMPI_COMM_WORLD_RANK=1"}, NULL, "$OMPI_COMM_WORLD_SIZE is not"},
        {{"PMI_SIZE=4"}, NULL, "$PMI_RANK is not"},
        {{"SLURM_PROCID=x", "SLURM_NTASKS=2"}, NULL, "$SLURM_PROCID: expected a whole number"},
        {{"SLURM_PROCID=1", "SLURM_NTASKS=0"}, NULL, "$SLURM_NTASKS: expected a whole number"},
        {{"PMI_RANK=4", "PMI_SIZE=4"}, NULL, "$PMI_RANK=4 is not below the shard count 4"},
        {{"JOB_COMPLETION_INDEX=0"}, NULL, "add --shards N"},
        {{"JOB_COMPLETION_INDEX=3"}, "3", "$JOB_COMPLETION_INDEX=3 is not below"},
        {{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4"}, "2", "--shards 2 disagrees"},
        {{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "SLURM_PROCID=0", "SLURM_NTASKS=1"},
         NULL,
         "launchers disagree: openmpi says shard 1/4"},
        {{"PMI_RANK=1", "PMI_SIZE=2", "JOB_COMPLETION_INDEX=0"}, "2", "launchers disagree"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2"}, "0", "--shards: expected a whole number"},
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(cases); i++) {
        const struct env_bad *c = &cases[i];
        char err[512] = "";
        uint32_t k, n;
        enum shard_launcher l;
        assert_int_equal(
            shard_from_env(env_get, (void *)c->env, c->shards, &k, &n, &l, err, sizeof err),
            LL_E_INVAL);
        if (!strstr(err, c->needle))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, c->needle);
        assert_null(strchr(err, '\n'));
    }
}

static void test_start_at(void **state)
{
    char err[256];
    int64_t ns = 0;
    /* 2026-12-02T11:00:00Z is 1796209200 s after the epoch. */
    assert_int_equal(shard_parse_start_at("2026-12-02T11:00:00Z", &ns, err, sizeof err), 0);
    assert_true(ns == 1796209200LL * 1000000000LL);
    assert_int_equal(shard_parse_start_at("2026-12-02T11:00:00.5Z", &ns, err, sizeof err), 0);
    assert_true(ns == 1796209200LL * 1000000000LL + 500000000LL);
    assert_int_equal(shard_parse_start_at("2026-12-02t11:00:00.000000001z", &ns, err, sizeof err),
                     0);
    assert_true(ns == 1796209200LL * 1000000000LL + 1);
    assert_int_equal(shard_parse_start_at("1970-01-01 00:00:01Z", &ns, err, sizeof err), 0);
    assert_true(ns == 1000000000LL);
    assert_int_equal(shard_parse_start_at("2028-02-29T00:00:00Z", &ns, err, sizeof err), 0);
    assert_true(ns == 1835395200LL * 1000000000LL);
    assert_int_equal(shard_parse_start_at("1796209200", &ns, err, sizeof err), 0);
    assert_true(ns == 1796209200LL * 1000000000LL);
    assert_int_equal(shard_parse_start_at("1796209200.25", &ns, err, sizeof err), 0);
    assert_true(ns == 1796209200LL * 1000000000LL + 250000000LL);
    /* The last year whose nanoseconds fit. */
    assert_int_equal(shard_parse_start_at("2262-01-01T00:00:00Z", &ns, err, sizeof err), 0);
    assert_true(ns == 9214646400LL * 1000000000LL);
    static const char *const bad[] = {
        "",
        "soon",
        "2026-12-02T11:00:00",       /* no zone: not UTC by its own word */
        "2026-12-02T11:00:00+01:00", /* an offset: UTC only */
        "2026-13-02T11:00:00Z",
        "2026-02-29T11:00:00Z", /* not a leap year */
        "2026-12-32T11:00:00Z",
        "2026-12-02T24:00:00Z",
        "2026-12-02T11:60:00Z",
        "2026-12-02T11:00:60Z",
        "2026-12-02T11:00:00.Z",
        "2026-12-02T11:00:00.1234567891Z", /* 10 digits of fraction */
        "1969-12-31T23:59:59Z",
        "2026-12-02T11:00:00Zx",
        "1796209200.",
        "1796209200.5s",
        "-1796209200",
        "1796209200.1234567891",
        "99999999999999",
        "99999999999",          /* past 2262: its nanoseconds overflow 64 bits */
        "2300-01-01T00:00:00Z", /* likewise */
    };
    for (size_t i = 0; i < LL_ARRAY_LEN(bad); i++) {
        if (shard_parse_start_at(bad[i], &ns, err, sizeof err) != LL_E_INVAL)
            fail_msg("\"%s\" was taken", bad[i]);
        assert_non_null(strstr(err, "--start-at: expected an RFC 3339 UTC time"));
    }
}

static void test_expand_out(void **state)
{
    char out[64], err[256];
    assert_int_equal(
        shard_expand_out("res/{host}/shard-{shard}", 12, "node7", out, sizeof out, err, sizeof err),
        0);
    assert_string_equal(out, "res/node7/shard-12");
    assert_int_equal(shard_expand_out("a{b}{shard}{", 0, "h", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "a{b}0{");
    char small[8];
    assert_int_equal(
        shard_expand_out("{host}{host}", 0, "abcd", small, sizeof small, err, sizeof err),
        LL_E_INVAL);
    assert_non_null(strstr(err, "--out: longer than 7 bytes"));
}

/* The hash leaves out what differs between the shards of one schedule
 * and keeps what makes the schedule. A sweep's started_at is the wall
 * clock's second at which its process began: two shards started at once
 * straddle a second's edge now and then (more often on a loaded box), and
 * merge refused them as "other flags or another --seed". http_client_used
 * is the client the environment picked (LLMLOAD_HTTP_CLIENT, a proxy
 * variable): a machine with http_proxy set runs the same schedule on
 * libcurl, and merge refused its shard likewise. */
static void test_config_hash(void **state)
{
    json_t *a =
        json_pack("{s:i,s:f,s:s,s:i,s:i,s:s,s:i,s:s,s:i}", "seed", 1, "rate_per_s", 20.0,
                  "prompt_tokens", "256", "shard", 0, "shards", 4, "shard_launcher", "flag",
                  "threads", 2, "start_at", "2026-12-02T11:00:00.000000000Z", "metrics_shard", 0);
    json_t *b = json_deep_copy(a);
    json_object_set_new(b, "shard", json_integer(3));
    json_object_set_new(b, "shard_launcher", json_string("openmpi"));
    json_object_set_new(b, "threads", json_integer(8));
    json_object_set_new(b, "start_at", json_string("2026-12-02T11:05:00.000000000Z"));
    json_object_set_new(a, "started_at", json_string("2026-12-02T10:59:58Z"));
    json_object_set_new(b, "started_at", json_string("2026-12-02T10:59:59Z"));
    json_object_set_new(a, "http_client_used", json_string("native"));
    json_object_set_new(b, "http_client_used", json_string("curl"));
    char ha[17], hb[17], hc[17];
    shard_config_hash(a, ha);
    shard_config_hash(b, hb);
    assert_int_equal(strlen(ha), 16);
    assert_string_equal(ha, hb);
    json_object_set_new(b, "seed", json_integer(2));
    shard_config_hash(b, hc);
    assert_string_not_equal(ha, hc);
    /* the config itself is left as it was */
    assert_int_equal(json_integer_value(json_object_get(a, "shards")), 4);
    json_decref(a);
    json_decref(b);
}

/* clang-format off */
TEST_MAIN(cmocka_unit_test(test_parse_flag),
          cmocka_unit_test(test_env_each_launcher),
          cmocka_unit_test(test_env_errors),
          cmocka_unit_test(test_start_at),
          cmocka_unit_test(test_expand_out),
          cmocka_unit_test(test_config_hash))
/* clang-format on */
