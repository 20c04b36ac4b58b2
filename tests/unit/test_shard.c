/* Unit tests for cli/shard.c: --shard K/N, --shard auto from each
 * launcher's variables (through a getenv-like callback: no setenv),
 * --start-at's parser, --out's placeholders and the configuration hash. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Write text to dir/name, the path into path (len bytes). */
static void put_file(const char *dir, const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The hash of a config whose key (or parent.key) is value. */
static void hash_with(const char *parent, const char *key, const char *value, char out[17])
{
    json_t *c = json_pack("{s:i,s:s}", "seed", 7, "url", "http://127.0.0.1:1/v1");
    json_t *o = c;
    if (parent) {
        o = json_object();
        json_object_set_new(c, parent, o);
    }
    json_object_set_new(o, key, json_string(value));
    shard_config_hash(c, out);
    /* run.json keeps the path: only the hash reads the file */
    assert_string_equal(json_string_value(json_object_get(o, key)), value);
    json_decref(c);
}

/* Shards on two machines read one workload from two paths (/home/a/wl.json
 * and /srv/b/wl.json): merge refused them, as the hash covered the path.
 * Two files of one path but other content merged into nonsense. The hash
 * now covers each file's bytes and not its path, for every key that names
 * a file; a file that cannot be read counts by its path. */
static void test_config_hash_files(void **state)
{
    char d1[] = "/tmp/llmload-shard-XXXXXX", d2[] = "/tmp/llmload-shard-XXXXXX";
    assert_non_null(mkdtemp(d1));
    assert_non_null(mkdtemp(d2));
    char a[256], b[256], c[256], eb[256], wa[256], wb[256];
    put_file(d1, "len.csv", "input,output\n100,20\n300,40\n", a, sizeof a);
    put_file(d2, "len.csv", "input,output\n100,20\n300,40\n", b, sizeof b);
    put_file(d2, "other.csv", "input,output\n100,20\n300,41\n", c, sizeof c);
    struct {
        const char *parent, *key, *pre, *post;
    } keys[] = {
        {NULL, "workload_file", "", ""},
        {NULL, "lengths", "empirical:", ""},
        {NULL, "prompt_tokens", "empirical:", "#input"},
        {NULL, "output_tokens", "empirical:", ""},
        {NULL, "trace", "", ""},
        {"dataset", "file", "", ""},
        {"calibration", "file", "", ""},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char va[300], vb[300], vc[300], ha[17], hb[17], hc[17];
        snprintf(va, sizeof va, "%s%s%s", keys[i].pre, a, keys[i].post);
        snprintf(vb, sizeof vb, "%s%s%s", keys[i].pre, b, keys[i].post);
        snprintf(vc, sizeof vc, "%s%s%s", keys[i].pre, c, keys[i].post);
        hash_with(keys[i].parent, keys[i].key, va, ha);
        hash_with(keys[i].parent, keys[i].key, vb, hb);
        hash_with(keys[i].parent, keys[i].key, vc, hc);
        print_message("%s: %s %s %s\n", keys[i].key, ha, hb, hc);
        assert_string_equal(ha, hb);     /* one content at two paths */
        assert_string_not_equal(ha, hc); /* one byte other */
    }
    /* The column suffix still counts. */
    char v1[300], v2[300], h1[17], h2[17];
    snprintf(v1, sizeof v1, "empirical:%s#input", a);
    snprintf(v2, sizeof v2, "empirical:%s#output", a);
    hash_with(NULL, "prompt_tokens", v1, h1);
    hash_with(NULL, "prompt_tokens", v2, h2);
    assert_string_not_equal(h1, h2);
    /* A file that cannot be read counts by its path. */
    char m1[300], m2[300];
    snprintf(m1, sizeof m1, "%s/missing.csv", d1);
    snprintf(m2, sizeof m2, "%s/missing.csv", d2);
    hash_with(NULL, "trace", m1, h1);
    hash_with(NULL, "trace", m2, h2);
    assert_string_not_equal(h1, h2);
    /* A workload file counts the empirical files it names too, found from
     * its own directory: the same relative name in each, one byte other in
     * the third. */
    const char *wl = "{\"classes\": [{\"name\": \"x\", \"weight\": 1, "
                     "\"lengths\": \"empirical:len.csv\"}]}\n";
    put_file(d1, "wl.json", wl, wa, sizeof wa);
    char d3[300];
    snprintf(d3, sizeof d3, "%s/sub", d2);
    assert_int_equal(mkdir(d3, 0755), 0);
    put_file(d3, "wl.json", wl, wb, sizeof wb);
    put_file(d3, "len.csv", "input,output\n100,20\n300,40\n", eb, sizeof eb);
    char hw1[17], hw2[17], hw3[17];
    hash_with(NULL, "workload_file", wa, hw1);
    hash_with(NULL, "workload_file", wb, hw2);
    assert_string_equal(hw1, hw2);
    put_file(d3, "len.csv", "input,output\n100,20\n300,41\n", eb, sizeof eb);
    hash_with(NULL, "workload_file", wb, hw3);
    assert_string_not_equal(hw1, hw3);
    /* url is left out; several --url count by how many. */
    json_t *x = json_pack("{s:i,s:s,s:[s,s]}", "seed", 7, "url", "http://a:1", "urls", "http://a:1",
                          "http://b:1");
    json_t *y = json_pack("{s:i,s:s,s:[s,s]}", "seed", 7, "url", "http://lb:8", "urls",
                          "http://lb:8", "http://c:9");
    json_t *z = json_pack("{s:i,s:s,s:[s]}", "seed", 7, "url", "http://a:1", "urls", "http://a:1");
    shard_config_hash(x, h1);
    shard_config_hash(y, h2);
    assert_string_equal(h1, h2);
    shard_config_hash(z, h2);
    assert_string_not_equal(h1, h2);
    json_decref(x);
    json_decref(y);
    json_decref(z);
    const char *files[] = {a, b, c, wa, wb, eb};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        assert_int_equal(unlink(files[i]), 0);
    assert_int_equal(rmdir(d3), 0);
    assert_int_equal(rmdir(d1), 0);
    assert_int_equal(rmdir(d2), 0);
}

/* clang-format off */
TEST_MAIN(cmocka_unit_test(test_parse_flag),
          cmocka_unit_test(test_env_each_launcher),
          cmocka_unit_test(test_env_errors),
          cmocka_unit_test(test_start_at),
          cmocka_unit_test(test_expand_out),
          cmocka_unit_test(test_config_hash),
          cmocka_unit_test(test_config_hash_files))
/* clang-format on */
