/* shard.c: the flags of a sharded run, as pure functions (shard.h), and
 * run.json's config_hash, which reads the files the config names. */
#include "cli/shard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"
#include "workload/empirical.h"
#include "workload/jsonfile.h"
#include "workload/wlfile.h"

const char *shard_launcher_name(enum shard_launcher l)
{
    switch (l) {
    case SHARD_FLAG: return "flag";
    case SHARD_OPENMPI: return "openmpi";
    case SHARD_MPICH: return "mpich";
    case SHARD_SLURM: return "slurm";
    case SHARD_KUBERNETES: return "kubernetes";
    case SHARD_NONE: break;
    }
    return NULL;
}

/* A whole number from 0 to max, all of s (digits only). */
static int parse_upto(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 12)
        return -1;
    uint64_t v;
    if (ll_parse_u64(s, &v) != 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

int shard_parse(const char *v, uint32_t *k, uint32_t *n, char *err, size_t errlen)
{
    const char *slash = strchr(v, '/');
    char ks[16];
    uint64_t kv, nv;
    if (!slash || (size_t)(slash - v) >= sizeof ks)
        return ll_errf(err, errlen, "--shard: expected K/N (e.g. 0/4) or auto, got \"%s\"", v);
    memcpy(ks, v, (size_t)(slash - v));
    ks[slash - v] = '\0';
    if (parse_upto(ks, SHARD_MAX, &kv) != 0 || parse_upto(slash + 1, SHARD_MAX, &nv) != 0 ||
        nv == 0)
        return ll_errf(err, errlen,
                       "--shard: expected K/N with whole numbers, N from 1 to %d (e.g. 0/4), "
                       "got \"%s\"",
                       SHARD_MAX, v);
    if (kv >= nv)
        return ll_errf(err, errlen,
                       "--shard: the index K counts from 0 and must be below N, got \"%s\"", v);
    *k = (uint32_t)kv;
    *n = (uint32_t)nv;
    return 0;
}

/* One launcher's pair of variables. */
struct env_pair {
    enum shard_launcher l;
    const char *rank, *size; /* size NULL: the count comes from --shards */
};

static const struct env_pair env_pairs[] = {
    {SHARD_OPENMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {SHARD_MPICH, "PMI_RANK", "PMI_SIZE"},
    {SHARD_SLURM, "SLURM_PROCID", "SLURM_NTASKS"},
    {SHARD_KUBERNETES, "JOB_COMPLETION_INDEX", NULL},
};

int shard_from_env(shard_getenv_fn *get, void *ud, const char *shards_flag, uint32_t *k,
                   uint32_t *n, enum shard_launcher *launcher, char *err, size_t errlen)
{
    uint64_t flag_n = 0;
    if (shards_flag && (parse_upto(shards_flag, SHARD_MAX, &flag_n) != 0 || flag_n == 0))
        return ll_errf(err, errlen, "--shards: expected a whole number from 1 to %d, got \"%s\"",
                       SHARD_MAX, shards_flag);
    int found = 0;
    const struct env_pair *first = NULL;
    uint64_t fk = 0, fn = 0;
    for (size_t i = 0; i < LL_ARRAY_LEN(env_pairs); i++) {
        const struct env_pair *p = &env_pairs[i];
        const char *rv = get(ud, p->rank);
        const char *sv = p->size ? get(ud, p->size) : NULL;
        if (rv && !*rv)
            rv = NULL;
        if (sv && !*sv)
            sv = NULL;
        if (!rv && !sv)
            continue;
        if (!rv)
            return ll_errf(err, errlen, "--shard auto: $%s is set but $%s is not", p->size,
                           p->rank);
        uint64_t rk, rn = flag_n;
        if (parse_upto(rv, SHARD_MAX, &rk) != 0)
            return ll_errf(err, errlen, "--shard auto: $%s: expected a whole number, got \"%s\"",
                           p->rank, rv);
        if (p->size) {
            if (!sv)
                return ll_errf(err, errlen, "--shard auto: $%s is set but $%s is not", p->rank,
                               p->size);
            if (parse_upto(sv, SHARD_MAX, &rn) != 0 || rn == 0)
                return ll_errf(
                    err, errlen,
                    "--shard auto: $%s: expected a whole number from 1 to %d, got \"%s\"", p->size,
                    SHARD_MAX, sv);
            if (flag_n && rn != flag_n)
                return ll_errf(err, errlen, "--shards %llu disagrees with $%s=%llu",
                               (unsigned long long)flag_n, p->size, (unsigned long long)rn);
        } else if (!flag_n) {
            return ll_errf(err, errlen,
                           "--shard auto: $%s (a Kubernetes Indexed Job) gives no shard count: "
                           "add --shards N (the Job's completions)",
                           p->rank);
        }
        if (rk >= rn)
            return ll_errf(err, errlen, "--shard auto: $%s=%llu is not below the shard count %llu",
                           p->rank, (unsigned long long)rk, (unsigned long long)rn);
        if (!found) {
            first = p;
            fk = rk;
            fn = rn;
        } else if (rk != fk || rn != fn) {
            return ll_errf(err, errlen,
                           "--shard auto: launchers disagree: %s says shard %llu/%llu ($%s), %s "
                           "says %llu/%llu ($%s); pass --shard K/N",
                           shard_launcher_name(first->l), (unsigned long long)fk,
                           (unsigned long long)fn, first->rank, shard_launcher_name(p->l),
                           (unsigned long long)rk, (unsigned long long)rn, p->rank);
        }
        found++;
    }
    if (!found)
        return ll_errf(err, errlen,
                       "--shard auto: no launcher's variables are set (OMPI_COMM_WORLD_RANK/SIZE, "
                       "PMI_RANK/SIZE, SLURM_PROCID/NTASKS, or JOB_COMPLETION_INDEX with "
                       "--shards N); pass --shard K/N");
    *k = (uint32_t)fk;
    *n = (uint32_t)fn;
    *launcher = first->l;
    return 0;
}

/* n digits at s into *v; -1 when one is not a digit. */
static int digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* ".ddd" at *p (optional): up to 9 digits into ns; moves *p past it. */
static int fraction(const char **p, int64_t *ns)
{
    *ns = 0;
    if (**p != '.')
        return 0;
    (*p)++;
    int64_t scale = 100000000;
    int nd = 0;
    while (**p >= '0' && **p <= '9') {
        if (++nd > 9)
            return -1;
        *ns += (**p - '0') * scale;
        scale /= 10;
        (*p)++;
    }
    return nd ? 0 : -1;
}

static int leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The last second whose nanoseconds fit an int64_t: 2262-04-11. */
#define SHARD_START_MAX_S (INT64_MAX / (int64_t)LL_NS_PER_SEC - 1)

int shard_parse_start_at(const char *v, int64_t *unix_ns, char *err, size_t errlen)
{
    const char *p = v;
    int64_t frac;
    if (*p >= '0' && *p <= '9' && strlen(v) >= 4 && v[4] != '-') {
        /* unix seconds */
        int64_t s = 0;
        while (*p >= '0' && *p <= '9') {
            s = s * 10 + (*p - '0');
            if (s > SHARD_START_MAX_S)
                goto bad;
            p++;
        }
        if (fraction(&p, &frac) != 0 || *p != '\0')
            goto bad;
        *unix_ns = s * (int64_t)LL_NS_PER_SEC + frac;
        return 0;
    }
    int y, mo, d, h, mi, s;
    if (strlen(v) < 20 || digits(p, 4, &y) || p[4] != '-' || digits(p + 5, 2, &mo) || p[7] != '-' ||
        digits(p + 8, 2, &d) || (p[10] != 'T' && p[10] != 't' && p[10] != ' ') ||
        digits(p + 11, 2, &h) || p[13] != ':' || digits(p + 14, 2, &mi) || p[16] != ':' ||
        digits(p + 17, 2, &s))
        goto bad;
    p += 19;
    if (fraction(&p, &frac) != 0 || (*p != 'Z' && *p != 'z') || p[1] != '\0')
        goto bad;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)) ||
        h > 23 || mi > 59 || s > 59)
        goto bad;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = s};
    time_t t = timegm(&tm);
    if ((int64_t)t > SHARD_START_MAX_S)
        goto bad;
    *unix_ns = (int64_t)t * (int64_t)LL_NS_PER_SEC + frac;
    return 0;
bad:
    return ll_errf(err, errlen,
                   "--start-at: expected an RFC 3339 UTC time (e.g. 2026-12-02T11:00:00.5Z) or "
                   "unix seconds (e.g. 1796202000.5), got \"%s\"",
                   v);
}

int shard_expand_out(const char *tmpl, uint32_t shard, const char *host, char *out, size_t outlen,
                     char *err, size_t errlen)
{
    size_t o = 0;
    for (const char *p = tmpl; *p;) {
        char num[16];
        const char *sub = NULL;
        size_t skip = 1;
        if (strncmp(p, "{shard}", 7) == 0) {
            snprintf(num, sizeof num, "%u", shard);
            sub = num;
            skip = 7;
        } else if (strncmp(p, "{host}", 6) == 0) {
            sub = host;
            skip = 6;
        }
        size_t len = sub ? strlen(sub) : 1;
        if (o + len >= outlen)
            return ll_errf(err, errlen,
                           "--out: longer than %zu bytes once {shard} and {host} are "
                           "filled in",
                           outlen - 1);
        memcpy(out + o, sub ? sub : p, len);
        o += len;
        p += skip;
    }
    out[o] = '\0';
    return 0;
}

const char *const shard_hash_excluded[] = {
    "shard",      "shards",  "shard_launcher",   "metrics_shard", "start_at",
    "started_at", "threads", "http_client_used", "url",           NULL,
};

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* FNV-1a, 64 bits, of len bytes of p, continued from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    for (const unsigned char *s = p; len--; s++) {
        h ^= *s;
        h *= FNV_PRIME;
    }
    return h;
}

/* The FILE of "empirical:FILE[#input|#output]" (spaces after the colon
 * skipped, as the workload file's reader does) as a new string (caller
 * frees), and in *suffix the column suffix or "". */
static char *empirical_path(const char *spec, const char **suffix)
{
    const char *f = spec + strlen("empirical:");
    while (*f == ' ')
        f++;
    size_t n;
    empirical_spec_col(f, &n);
    *suffix = f + n;
    return ll_strndup(f, n);
}

static uint64_t wl_refs_fnv(uint64_t h, const json_t *j, const char *wl_path);

/* h continued with the file at path: its bytes, or its path when it
 * cannot be read (hashed as before content counted, so an unreadable file
 * still tells two configurations apart by name). A workload file
 * (workload set) adds the bytes of each empirical:FILE it names, found
 * from its directory as its reader finds them. */
static uint64_t file_fnv(uint64_t h, const char *path, int workload)
{
    /* At most 256 MiB: a larger input is hashed by its path. */
    size_t len;
    char *b, why[8];
    if (jsonfile_read_all(path, (size_t)256 << 20, &b, &len, why, sizeof why) != 0)
        return fnv1a(fnv1a(h, "path:", 5), path, strlen(path) + 1);
    h = fnv1a(fnv1a(h, "bytes:", 6), b, len);
    h = fnv1a(h, "", 1);
    if (workload) {
        json_t *j = json_loadb(b, len, 0, NULL);
        if (j)
            h = wl_refs_fnv(h, j, path);
        json_decref(j);
    }
    free(b);
    return h;
}

/* h continued with every "empirical:FILE" string in the workload file
 * at wl_path, parsed as j, in document order: the file's bytes (found as
 * its reader finds them, wl_file_ref_path) and its column suffix. */
static uint64_t wl_refs_fnv(uint64_t h, const json_t *j, const char *wl_path)
{
    const char *k;
    size_t i;
    const json_t *v;
    if (json_is_object(j)) {
        json_object_foreach((json_t *)j, k, v)
        {
            h = wl_refs_fnv(h, v, wl_path);
        }
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v)
        {
            h = wl_refs_fnv(h, v, wl_path);
        }
    } else if (json_is_string(j) && strncmp(json_string_value(j), "empirical:", 10) == 0) {
        const char *suffix;
        char *f = empirical_path(json_string_value(j), &suffix);
        char *path = wl_file_ref_path(wl_path, f);
        h = file_fnv(h, path, 0);
        h = fnv1a(h, suffix, strlen(suffix) + 1);
        free(path);
        free(f);
    }
    return h;
}

/* Replace the string at o[key] by "file:" and the hex of its file's
 * hash: an empirical spec (spec set) keeps its "empirical:" and column
 * suffix. Nothing when o[key] is not a string (absent, null). */
static void hash_path_key(json_t *o, const char *key, int spec, int workload)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v || (spec && strncmp(v, "empirical:", 10) != 0))
        return;
    const char *suffix = "";
    char *path = spec ? empirical_path(v, &suffix) : ll_strdup(v);
    char text[64];
    snprintf(text, sizeof text, "%sfile:%016llx%s", spec ? "empirical:" : "",
             (unsigned long long)file_fnv(FNV_OFFSET, path, workload), suffix);
    free(path);
    json_object_set_new(o, key, json_string(text));
}

void shard_config_hash(const json_t *config, char out[17])
{
    json_t *c = json_deep_copy(config);
    for (size_t i = 0; c && shard_hash_excluded[i]; i++)
        json_object_del(c, shard_hash_excluded[i]);
    if (c) {
        /* What the files say, not where they are. */
        hash_path_key(c, "prompt_tokens", 1, 0);
        hash_path_key(c, "output_tokens", 1, 0);
        hash_path_key(c, "lengths", 1, 0);
        hash_path_key(c, "workload_file", 0, 1);
        hash_path_key(c, "trace", 0, 0);
        hash_path_key(json_object_get(c, "dataset"), "file", 0, 0);
        hash_path_key(json_object_get(c, "calibration"), "file", 0, 0);
        /* Several --url: how many, not their names (url_weights stays). */
        json_t *urls = json_object_get(c, "urls");
        if (json_is_array(urls))
            json_object_set_new(c, "urls", json_integer((json_int_t)json_array_size(urls)));
    }
    char *text = c ? json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    uint64_t h = fnv1a(FNV_OFFSET, text ? text : "", text ? strlen(text) : 0);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
    free(text);
    json_decref(c);
}
