/* histlog.c: hist.jsonl's windows, written and read back (histlog.h;
 * the format is in docs/formats.md, "hist.jsonl"). */
#include "measure/histlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "util/json.h"
#include "util/util.h"

static const char *const metric_names[HISTLOG_METRICS] = {"ttft", "itl", "tpot", "e2e"};

const char *histlog_metric_name(enum histlog_metric m)
{
    return (unsigned)m < HISTLOG_METRICS ? metric_names[m] : "?";
}

void histlog_window_init(struct histlog_window *w)
{
    memset(w, 0, sizeof *w);
    w->step = -1;
    for (int m = 0; m < HISTLOG_METRICS; m++)
        w->h[m] = hist_new();
}

void histlog_window_free(struct histlog_window *w)
{
    for (int m = 0; m < HISTLOG_METRICS; m++)
        hist_free(w->h[m]);
    memset(w, 0, sizeof *w);
}

void histlog_window_clear(struct histlog_window *w)
{
    w->ok = w->failed = 0;
    for (int m = 0; m < HISTLOG_METRICS; m++)
        hist_reset(w->h[m]);
}

int histlog_window_empty(const struct histlog_window *w)
{
    return w->ok == 0 && w->failed == 0 && hist_count(w->h[HISTLOG_ITL]) == 0;
}

static void add_time(struct hist *h, uint64_t ns)
{
    if (ns != LL_NO_TIME)
        hist_record(h, ns);
}

void histlog_window_add_record(struct histlog_window *w, const struct record *r)
{
    if (r->kind != REC_OK) {
        w->failed++;
        return;
    }
    w->ok++;
    add_time(w->h[HISTLOG_TTFT], record_ttft_ns(r));
    add_time(w->h[HISTLOG_TPOT], record_tpot_ns(r));
    add_time(w->h[HISTLOG_E2E], record_e2e_ns(r));
}

void histlog_window_merge(struct histlog_window *dst, const struct histlog_window *src)
{
    dst->ok += src->ok;
    dst->failed += src->failed;
    for (int m = 0; m < HISTLOG_METRICS; m++)
        hist_merge(dst->h[m], src->h[m]);
}

char *histlog_line(const struct histlog_window *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "t_ns", json_integer((json_int_t)w->t_ns));
    if (w->step >= 0)
        json_object_set_new(o, "step", json_integer(w->step));
    if (!w->combined) {
        json_object_set_new(o, "shard", json_integer(w->shard));
        json_object_set_new(o, "worker", json_integer(w->worker));
    }
    json_object_set_new(o, "ok", json_integer((json_int_t)w->ok));
    json_object_set_new(o, "failed", json_integer((json_int_t)w->failed));
    for (int m = 0; m < HISTLOG_METRICS; m++) {
        if (hist_count(w->h[m]) == 0)
            continue;
        char *s = hist_to_string(w->h[m]);
        json_object_set_new(o, metric_names[m], json_string(s));
        free(s);
    }
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text) {
        fprintf(stderr, "llmload: out of memory writing a hist.jsonl line\n");
        abort();
    }
    size_t n = strlen(text);
    char *line = ll_malloc(n + 2);
    memcpy(line, text, n);
    line[n] = '\n';
    line[n + 1] = '\0';
    free(text);
    return line;
}

int histlog_write_fd(int fd, const struct histlog_window *w)
{
    char *line = histlog_line(w);
    size_t len = strlen(line), off = 0;
    int rc = 0;
    while (off < len) {
        ssize_t n = write(fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            rc = LL_E_IO;
            break;
        }
        off += (size_t)n;
    }
    free(line);
    return rc;
}

/* The non-negative integer field key of o into *out; absent: *out = dflt
 * when dflt >= 0, else an error. 0 or LL_E_INVAL (reason in err). */
static int get_count(json_t *o, const char *key, long long dflt, uint64_t max, uint64_t *out,
                     char *err, size_t errlen)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (dflt < 0) {
            snprintf(err, errlen, "\"%s\": missing", key);
            return LL_E_INVAL;
        }
        *out = (uint64_t)dflt;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max) {
        snprintf(err, errlen, "\"%s\": expected a whole number from 0 to %llu", key,
                 (unsigned long long)max);
        return LL_E_INVAL;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* The fields of o into w (emptied first). 0 or LL_E_INVAL. */
static int parse_object(json_t *o, struct histlog_window *w, char *err, size_t errlen)
{
    uint64_t t, step, shard, worker;
    histlog_window_clear(w);
    if (get_count(o, "t_ns", -1, INT64_MAX, &t, err, errlen) ||
        get_count(o, "step", INT32_MAX, INT32_MAX, &step, err, errlen) ||
        get_count(o, "shard", 0, UINT32_MAX, &shard, err, errlen) ||
        get_count(o, "worker", 0, UINT32_MAX, &worker, err, errlen) ||
        get_count(o, "ok", -1, INT64_MAX, &w->ok, err, errlen) ||
        get_count(o, "failed", -1, INT64_MAX, &w->failed, err, errlen))
        return LL_E_INVAL;
    w->t_ns = t;
    w->step = step == INT32_MAX ? -1 : (int32_t)step;
    w->shard = (uint32_t)shard;
    w->worker = (uint32_t)worker;
    w->combined = !json_object_get(o, "shard") && !json_object_get(o, "worker");
    for (int m = 0; m < HISTLOG_METRICS; m++) {
        json_t *v = json_object_get(o, metric_names[m]);
        if (!v)
            continue;
        char why[200];
        if (!json_is_string(v)) {
            snprintf(err, errlen, "\"%s\": expected a histogram string (llh1 ...)",
                     metric_names[m]);
            return LL_E_INVAL;
        }
        if (hist_from_string(w->h[m], json_string_value(v), why, sizeof why) != 0) {
            snprintf(err, errlen, "\"%s\": %s", metric_names[m], why);
            return LL_E_INVAL;
        }
        /* TTFT, TPOT and E2E come one per ok record at most. */
        if (m != HISTLOG_ITL && hist_count(w->h[m]) > w->ok) {
            snprintf(err, errlen, "\"%s\": %llu values, more than \"ok\" (%llu)", metric_names[m],
                     (unsigned long long)hist_count(w->h[m]), (unsigned long long)w->ok);
            return LL_E_INVAL;
        }
    }
    return 0;
}

int histlog_parse_line(const char *line, size_t len, struct histlog_window *w, char *err,
                       size_t errlen)
{
    char tmp[1];
    if (errlen == 0) {
        err = tmp;
        errlen = sizeof tmp;
    }
    err[0] = '\0';
    if (len > HISTLOG_MAX_LINE) {
        histlog_window_clear(w);
        snprintf(err, errlen, "line longer than %u bytes", HISTLOG_MAX_LINE);
        return LL_E_INVAL;
    }
    json_error_t je;
    json_t *o = ll_json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!o || !json_is_object(o)) {
        histlog_window_clear(w);
        snprintf(err, errlen, "%s", o ? "expected a JSON object" : je.text);
        json_decref(o);
        return LL_E_INVAL;
    }
    int rc = parse_object(o, w, err, errlen);
    json_decref(o);
    if (rc != 0)
        histlog_window_clear(w);
    return rc;
}

/* Whether the len bytes at s are only blanks. */
static int blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* One line of a log: parsed into one, merged into total when its step is
 * step. 0 or LL_E_INVAL with "name:lineno: reason". */
static int merge_line(const char *name, uint64_t lineno, const char *s, size_t len,
                      struct histlog_window *one, int32_t step, struct histlog_window *total,
                      uint64_t *windows, char *err, size_t errlen)
{
    char why[400];
    if (blank(s, len))
        return 0;
    if (histlog_parse_line(s, len, one, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%llu: %s", name, (unsigned long long)lineno, why);
        return LL_E_INVAL;
    }
    if (step != HISTLOG_ALL_STEPS && one->step != step)
        return 0;
    histlog_window_merge(total, one);
    if (windows)
        (*windows)++;
    return 0;
}

int histlog_merge_text(const char *name, const char *buf, size_t len, int32_t step,
                       struct histlog_window *total, uint64_t *windows, char *err, size_t errlen)
{
    struct histlog_window one;
    histlog_window_init(&one);
    if (windows)
        *windows = 0;
    int rc = 0;
    uint64_t lineno = 0;
    for (size_t at = 0; at < len && rc == 0;) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) : len;
        rc =
            merge_line(name, ++lineno, buf + at, end - at, &one, step, total, windows, err, errlen);
        at = end + 1;
    }
    histlog_window_free(&one);
    return rc;
}

int histlog_merge_file(const char *path, int32_t step, struct histlog_window *total,
                       uint64_t *windows, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return LL_E_IO;
    }
    struct histlog_window one;
    histlog_window_init(&one);
    if (windows)
        *windows = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0)
        rc = merge_line(path, ++lineno, line, (size_t)n, &one, step, total, windows, err, errlen);
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = LL_E_IO;
    }
    free(line);
    histlog_window_free(&one);
    fclose(f);
    return rc;
}
