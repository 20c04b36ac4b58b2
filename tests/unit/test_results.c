/* test_results.c: the results directory, atomic JSON writes, host facts,
 * header redaction. Everything happens under a fresh mkdtemp directory. */
#include "test.h"

#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "measure/results.h"
#include "util/util.h"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* rm -rf dir (our own temporary tree only). */
static void rm_tree(const char *dir)
{
    assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries in dir other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

static void test_prepare_named(void **state)
{
    char base[] = "/tmp/llmload-test-results-XXXXXX";
    assert_non_null(mkdtemp(base));
    char want[256], path[256], err[512];

    /* Missing parents are created. */
    snprintf(want, sizeof(want), "%s/a/b/run1", base);
    assert_int_equal(results_dir_prepare(want, 0, path, sizeof(path), err, sizeof(err)), 0);
    assert_string_equal(path, want);
    assert_true(is_dir(want));

    /* An existing empty directory is fine, with or without force. */
    assert_int_equal(results_dir_prepare(want, 0, path, sizeof(path), err, sizeof(err)), 0);

    /* Non-empty: refused without force, naming it and --force. */
    char file[300];
    snprintf(file, sizeof(file), "%s/requests.jsonl", want);
    touch(file);
    err[0] = '\0';
    assert_int_equal(results_dir_prepare(want, 0, path, sizeof(path), err, sizeof(err)),
                     LL_E_INVAL);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "--force"));
    assert_int_equal(results_dir_prepare(want, 1, path, sizeof(path), err, sizeof(err)), 0);
    assert_string_equal(path, want);
    assert_int_equal(count_entries(want), 1); /* force does not empty it */

    /* A file where the directory should be. */
    assert_int_equal(results_dir_prepare(file, 1, path, sizeof(path), err, sizeof(err)),
                     LL_E_INVAL);
    assert_non_null(strstr(err, "not a directory"));
    /* A file in the way of a parent. */
    char below[320];
    snprintf(below, sizeof(below), "%s/sub", file);
    assert_int_not_equal(results_dir_prepare(below, 0, path, sizeof(path), err,
                                             sizeof(err)),
                         0);

    /* path_out too small for the path. */
    char tiny[8];
    assert_int_equal(results_dir_prepare(want, 1, tiny, sizeof(tiny), err, sizeof(err)),
                     LL_E_RANGE);
    assert_int_equal(results_dir_prepare("", 0, path, sizeof(path), err, sizeof(err)),
                     LL_E_INVAL);
    rm_tree(base);
}

/* results/<YYYYmmdd-HHMMSS>[-N], relative to the working directory. */
static void check_default_name(const char *path)
{
    assert_memory_equal(path, "results/", 8);
    const char *stamp = path + 8;
    for (int i = 0; i < 15; i++) {
        if (i == 8)
            assert_int_equal(stamp[i], '-');
        else
            assert_true(stamp[i] >= '0' && stamp[i] <= '9');
    }
    assert_true(stamp[15] == '\0' || stamp[15] == '-');
}

static void test_prepare_default(void **state)
{
    char base[] = "/tmp/llmload-test-results-XXXXXX";
    assert_non_null(mkdtemp(base));
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(base), 0);

    char p1[256], p2[256], err[512];
    assert_int_equal(results_dir_prepare(NULL, 0, p1, sizeof(p1), err, sizeof(err)), 0);
    check_default_name(p1);
    assert_true(is_dir(p1));
    /* A second run in the same second gets its own directory. */
    assert_int_equal(results_dir_prepare(NULL, 0, p2, sizeof(p2), err, sizeof(err)), 0);
    check_default_name(p2);
    assert_true(is_dir(p2));
    assert_string_not_equal(p1, p2);
    assert_int_equal(count_entries("results"), 2);

    assert_int_equal(chdir(cwd), 0);
    rm_tree(base);
}

/* results_write_json_atomic(base, "run.json", obj) succeeds and leaves
 * path (base/run.json) alone in base, no .tmp beside it, reading back
 * equal to obj. */
static void write_reads_back(const char *base, const char *path, json_t *obj)
{
    char err[512] = "";
    assert_int_equal(results_write_json_atomic(base, "run.json", obj, err, sizeof(err)), 0);
    assert_int_equal(count_entries(base), 1);
    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr);
    assert_non_null(back);
    assert_true(json_equal(obj, back));
    json_decref(back);
}

static void test_write_atomic(void **state)
{
    char base[] = "/tmp/llmload-test-results-XXXXXX";
    assert_non_null(mkdtemp(base));
    char err[512] = "", path[256];
    snprintf(path, sizeof(path), "%s/run.json", base);

    json_t *obj = json_pack("{s:s, s:i, s:[i,i], s:{s:f}}", "name", "caf\xc3\xa9", "n",
                            42, "list", 1, 2, "nested", "x", 1.5);
    assert_non_null(obj);
    write_reads_back(base, path, obj);

    /* Pretty-printed, in insertion order, with a final newline. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[512];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_memory_equal(text, "{\n  \"name\": ", 12);
    assert_true(strstr(text, "\"name\"") < strstr(text, "\"nested\""));
    assert_int_equal(text[n - 1], '\n');

    /* Overwrite replaces the whole file. */
    json_t *small = json_pack("{s:b}", "ok", 1);
    write_reads_back(base, path, small);

    /* A stale .tmp from a crashed run is replaced, not appended to. */
    char stale[300];
    snprintf(stale, sizeof(stale), "%s.tmp", path);
    f = fopen(stale, "w");
    assert_non_null(f);
    fputs("garbage garbage garbage garbage garbage garbage garbage garbage", f);
    fclose(f);
    write_reads_back(base, path, obj);

    /* A directory that does not exist: an error naming the file. */
    char missing[300];
    snprintf(missing, sizeof(missing), "%s/nope", base);
    err[0] = '\0';
    assert_int_equal(results_write_json_atomic(missing, "x.json", obj, err, sizeof(err)),
                     LL_E_IO);
    assert_non_null(strstr(err, "nope/x.json.tmp"));
    assert_int_equal(count_entries(base), 1);

    json_decref(small);
    json_decref(obj);
    rm_tree(base);
}

static void test_host_info(void **state)
{
    json_t *obj = json_object();
    results_add_host_info(obj);
    json_t *host = json_object_get(obj, "host");
    assert_true(json_is_object(host));
    assert_true(json_is_string(json_object_get(host, "hostname")));
    const char *kernel = json_string_value(json_object_get(host, "kernel"));
    assert_non_null(kernel);
    assert_memory_equal(kernel, "Linux ", 6);
    assert_non_null(json_object_get(host, "cpu_model")); /* string or null */
    json_t *cores = json_object_get(host, "cores");
    assert_true(json_is_integer(cores));
    assert_true(json_integer_value(cores) >= 1);
    assert_int_equal(json_integer_value(cores), sysconf(_SC_NPROCESSORS_ONLN));
    json_t *mem = json_object_get(host, "memory_bytes");
    assert_true(json_is_integer(mem));
    assert_true(json_integer_value(mem) > 16 * 1024 * 1024);
    json_decref(obj);
}

static void test_redact_headers(void **state)
{
    const char *const headers[] = {
        "Authorization: Bearer sk-very-secret",
        "  X-Api-Key :abc123",
        "tokenwithoutcolon",
        "Empty:",
        "Host: a:b:c",
    };
    json_t *arr = results_redact_headers(headers, LL_ARRAY_LEN(headers));
    assert_true(json_is_array(arr));
    assert_int_equal(json_array_size(arr), 5);
    assert_string_equal(json_string_value(json_array_get(arr, 0)),
                        "Authorization: <redacted>");
    assert_string_equal(json_string_value(json_array_get(arr, 1)), "X-Api-Key: <redacted>");
    assert_string_equal(json_string_value(json_array_get(arr, 2)), "<redacted>");
    assert_string_equal(json_string_value(json_array_get(arr, 3)), "Empty: <redacted>");
    assert_string_equal(json_string_value(json_array_get(arr, 4)), "Host: <redacted>");
    char *text = json_dumps(arr, 0);
    assert_null(strstr(text, "secret"));
    assert_null(strstr(text, "abc123"));
    assert_null(strstr(text, "tokenwithout"));
    free(text);
    json_decref(arr);

    arr = results_redact_headers(NULL, 0);
    assert_int_equal(json_array_size(arr), 0);
    json_decref(arr);
}

/* run.json's schema: this one or none (older) is read; a newer one, or
 * one that is not llmload's, is refused with the reason. */
static void test_run_schema_check(void **state)
{
    static const struct {
        const char *json;
        int rc;
        const char *why;
    } cases[] = {
        {"{\"command\": \"run\"}", 0, ""},
        {"{\"schema\": \"llmload.run/1\"}", 0, ""},
        {"{\"schema\": \"llmload.run/2\", \"version\": \"abc\"}", LL_E_INVAL,
         "schema llmload.run/2 is newer than this llmload reads (llmload.run/1): read it with "
         "the llmload that wrote it (abc)"},
        {"{\"schema\": \"llmload.run/x\"}", LL_E_INVAL, "is not one llmload writes"},
        {"{\"schema\": \"llmload.run/0\"}", LL_E_INVAL, "is not one llmload writes"},
        {"{\"schema\": \"other/1\"}", LL_E_INVAL, "\"schema\" is not llmload's"},
        {"{\"schema\": 1}", LL_E_INVAL, "\"schema\" is not llmload's"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *run = json_loads(cases[i].json, 0, NULL);
        assert_non_null(run);
        char err[300] = "";
        assert_int_equal(results_run_schema_check(run, err, sizeof err), cases[i].rc);
        assert_non_null(strstr(err, cases[i].why));
        json_decref(run);
    }
}

UNIT_TESTS(test_prepare_named, test_prepare_default, test_write_atomic, test_host_info,
           test_redact_headers, test_run_schema_check)
