/* results.c: the results directory and safe JSON writes into it. */
#include "measure/results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

static void results_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void results_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* mkdir that accepts an existing directory. Returns 0 or -errno. */
static int results_mkdir_one(const char *path)
{
    if (mkdir(path, 0755) == 0)
        return 0;
    int e = errno;
    if (e == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        return -ENOTDIR;
    }
    return -e;
}

/* mkdir -p path. Returns 0 or LL_E_IO / LL_E_INVAL with err set. */
static int results_mkdir_parents(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof(buf)) {
        results_errf(err, errlen, "results directory \"%s\": bad path length",
                     path);
        return LL_E_RANGE;
    }
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        if (buf[i - 1] == '/')
            continue; /* "a//b": the empty component is no directory */
        char saved = buf[i];
        buf[i] = '\0';
        int rc = results_mkdir_one(buf);
        buf[i] = saved;
        if (rc != 0) {
            results_errf(err, errlen, "cannot create directory \"%.*s\": %s",
                         (int)i, buf, strerror(-rc));
            return rc == -ENOTDIR ? LL_E_INVAL : LL_E_IO;
        }
    }
    return 0;
}

/* 1 if dir holds no entry but . and .., 0 if it holds one, or LL_E_IO. */
static int results_dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return LL_E_IO;
    int empty = 1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    return empty;
}

/* The default directory: results/<stamp>, or results/<stamp>-N when taken.
 * mkdir itself is the test for "taken", so two runs started in the same
 * second get different directories. */
static int results_dir_default(char *path_out, size_t path_len, char *err,
                               size_t errlen)
{
    int rc = results_mkdir_parents(RESULTS_DEFAULT_PARENT, err, errlen);
    if (rc != 0)
        return rc;

    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    if (localtime_r(&now, &tm) == NULL ||
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm) == 0) {
        results_errf(err, errlen, "cannot format the local time");
        return LL_E_IO;
    }
    for (int n = 1; n <= 1000; n++) {
        int w;
        if (n == 1)
            w = snprintf(path_out, path_len, "%s/%s", RESULTS_DEFAULT_PARENT,
                         stamp);
        else
            w = snprintf(path_out, path_len, "%s/%s-%d",
                         RESULTS_DEFAULT_PARENT, stamp, n);
        if (w < 0 || (size_t)w >= path_len) {
            results_errf(err, errlen, "results directory path too long");
            return LL_E_RANGE;
        }
        if (mkdir(path_out, 0755) == 0)
            return 0;
        if (errno != EEXIST) {
            results_errf(err, errlen, "cannot create directory \"%s\": %s",
                         path_out, strerror(errno));
            return LL_E_IO;
        }
    }
    results_errf(err, errlen, "no free name for results/%s-N", stamp);
    return LL_E_IO;
}

int results_dir_prepare(const char *dir_or_null, int force, char *path_out,
                        size_t path_len, char *err, size_t errlen)
{
    if (path_out == NULL || path_len == 0)
        return LL_E_INVAL;
    path_out[0] = '\0';
    if (dir_or_null == NULL)
        return results_dir_default(path_out, path_len, err, errlen);

    size_t len = strlen(dir_or_null);
    if (len == 0) {
        results_errf(err, errlen, "results directory: empty path");
        return LL_E_INVAL;
    }
    if (len >= path_len) {
        results_errf(err, errlen, "results directory \"%s\": path too long",
                     dir_or_null);
        return LL_E_RANGE;
    }

    struct stat st;
    if (stat(dir_or_null, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            results_errf(err, errlen,
                         "results directory \"%s\" exists and is not a directory",
                         dir_or_null);
            return LL_E_INVAL;
        }
        int empty = results_dir_empty(dir_or_null);
        if (empty < 0) {
            results_errf(err, errlen, "cannot read directory \"%s\": %s",
                         dir_or_null, strerror(errno));
            return LL_E_IO;
        }
        if (!empty && !force) {
            results_errf(err, errlen,
                         "results directory \"%s\" exists and is not empty; "
                         "choose another, or pass --force to write into it",
                         dir_or_null);
            return LL_E_INVAL;
        }
    } else {
        int rc = results_mkdir_parents(dir_or_null, err, errlen);
        if (rc != 0)
            return rc;
    }
    memcpy(path_out, dir_or_null, len + 1);
    return 0;
}

int results_write_json_path_atomic(const char *path, json_t *obj, char *err,
                                   size_t errlen)
{
    char tmp[4096];
    int w = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (w < 0 || (size_t)w >= sizeof(tmp)) {
        results_errf(err, errlen, "%s: path too long", path);
        return LL_E_RANGE;
    }

    FILE *f = NULL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        results_errf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return LL_E_IO;
    }
    f = fdopen(fd, "w");
    if (f == NULL) {
        results_errf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        goto fail;
    }
    if (json_dumpf(obj, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
        fputc('\n', f) == EOF || fflush(f) != 0) {
        results_errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (fsync(fileno(f)) != 0) {
        results_errf(err, errlen, "cannot sync %s: %s", tmp, strerror(errno));
        goto fail;
    }
    int rc = fclose(f);
    f = NULL;
    if (rc != 0) {
        results_errf(err, errlen, "cannot close %s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, path) != 0) {
        results_errf(err, errlen, "cannot rename %s to %s: %s", tmp, path,
                     strerror(errno));
        goto fail;
    }
    return 0;

fail:
    if (f != NULL)
        fclose(f);
    unlink(tmp);
    return LL_E_IO;
}

int results_write_json_atomic(const char *dir, const char *name, json_t *obj,
                              char *err, size_t errlen)
{
    char path[4096];
    int w = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (w < 0 || (size_t)w >= sizeof(path)) {
        results_errf(err, errlen, "%s/%s: path too long", dir, name);
        return LL_E_RANGE;
    }
    return results_write_json_path_atomic(path, obj, err, errlen);
}

static void results_oom(void) __attribute__((noreturn));

/* jansson reports out of memory as NULL; like ll_malloc, we abort. */
static void results_oom(void)
{
    ll_errorf("out of memory building JSON");
    abort();
}

/* A json string of s, or json null when s is NULL. */
static json_t *results_json_str_or_null(const char *s)
{
    json_t *j = s != NULL ? json_string(s) : NULL;
    return j != NULL ? j : json_null();
}

/* The first "model name" of /proc/cpuinfo, trimmed, into buf; 0 or -1.
 * Lines longer than buf (the "flags" line) are read in pieces, and only a
 * piece that starts a line is looked at. */
static int results_cpu_model(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (f == NULL)
        return -1;
    char line[512];
    int at_line_start = 1, found = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t n = strlen(line);
        int starts = at_line_start;
        at_line_start = n > 0 && line[n - 1] == '\n';
        if (!starts || strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strlen(v);
        while (vl > 0 && (v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        if (vl >= len)
            vl = len - 1;
        memcpy(buf, v, vl);
        buf[vl] = '\0';
        found = 0;
        break;
    }
    fclose(f);
    return found;
}

void results_add_host_info(json_t *obj)
{
    json_t *host = json_object();
    if (host == NULL)
        return;

    char name[256];
    if (gethostname(name, sizeof(name)) == 0) {
        name[sizeof(name) - 1] = '\0';
        json_object_set_new(host, "hostname", results_json_str_or_null(name));
    } else {
        json_object_set_new(host, "hostname", json_null());
    }

    struct utsname u;
    if (uname(&u) == 0) {
        char kernel[4 * sizeof(u.release) + 4];
        snprintf(kernel, sizeof(kernel), "%s %s %s %s", u.sysname, u.release,
                 u.version, u.machine);
        json_object_set_new(host, "kernel", results_json_str_or_null(kernel));
    } else {
        json_object_set_new(host, "kernel", json_null());
    }

    char cpu[256];
    json_object_set_new(host, "cpu_model",
                        results_json_str_or_null(
                            results_cpu_model(cpu, sizeof(cpu)) == 0 ? cpu : NULL));

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    json_object_set_new(host, "cores",
                        cores > 0 ? json_integer(cores) : json_null());

    long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
    json_object_set_new(host, "memory_bytes",
                        pages > 0 && page_bytes > 0
                            ? json_integer((json_int_t)pages * page_bytes)
                            : json_null());

    json_object_set_new(obj, "host", host);
}

json_t *results_redact_headers(const char *const *headers, size_t n)
{
    json_t *arr = json_array();
    if (arr == NULL)
        results_oom();
    for (size_t i = 0; i < n; i++) {
        const char *h = headers[i];
        const char *colon = h != NULL ? strchr(h, ':') : NULL;
        json_t *s;
        if (colon == NULL) {
            s = json_string("<redacted>");
        } else {
            const char *b = h, *e = colon;
            while (b < e && (*b == ' ' || *b == '\t'))
                b++;
            while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
            char buf[256];
            int w = snprintf(buf, sizeof(buf), "%.*s: <redacted>",
                             (int)LL_MIN((size_t)(e - b), (size_t)200), b);
            s = w > 0 ? json_string(buf) : NULL;
            if (s == NULL) /* the name was not valid UTF-8 */
                s = json_string("<redacted>");
        }
        if (s == NULL || json_array_append_new(arr, s) != 0)
            results_oom();
    }
    return arr;
}

int results_run_schema_check(const json_t *run, char *err, size_t errlen)
{
    json_t *v = json_object_get(run, "schema");
    if (!v)
        return 0;
    const char *schema = json_string_value(v);
    size_t n = strlen(RESULTS_RUN_SCHEMA_PREFIX);
    if (!schema || strncmp(schema, RESULTS_RUN_SCHEMA_PREFIX, n) != 0) {
        results_errf(err, errlen, "run.json: \"schema\" is not llmload's (expected %s)",
                     RESULTS_RUN_SCHEMA);
        return LL_E_INVAL;
    }
    char *end;
    errno = 0;
    unsigned long ver = strtoul(schema + n, &end, 10);
    if (end == schema + n || *end != '\0' || errno != 0 || ver == 0) {
        results_errf(err, errlen,
                     "run.json: schema \"%.64s\" is not one llmload writes "
                     "(expected %s)",
                     schema, RESULTS_RUN_SCHEMA);
        return LL_E_INVAL;
    }
    if (ver > RESULTS_RUN_SCHEMA_VERSION) {
        const char *by = json_string_value(json_object_get(run, "version"));
        results_errf(err, errlen,
                     "run.json: schema %.64s is newer than this llmload reads (%s): "
                     "read it with the llmload that wrote it%s%.64s%s",
                     schema, RESULTS_RUN_SCHEMA, by ? " (" : "", by ? by : "", by ? ")" : "");
        return LL_E_INVAL;
    }
    return 0;
}
