/* runmerge.c: the shards of one sharded run into one results directory
 * (see runmerge.h). Two passes over the shards' requests.jsonl: the first
 * reads only each line's id and where it lies (24 bytes a record, so a
 * million records need 24 MB, not the files), the second reads the lines
 * again in id order, counts each through stats_account and writes it
 * unchanged into the merged requests.jsonl. */
#include "report/runmerge.h"

#include "report/mergeparts.h"
#include "report/report_run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/expect.h"
#include "measure/hist.h"
#include "measure/histlog.h"
#include "measure/record.h"
#include "measure/results.h"
#include "measure/slo.h"
#include "measure/stats.h"
#include "measure/summary.h"
#include "measure/verdict.h"
#include "sweep/sweep.h"
#include "sweep/sweep_json.h"
#include "util/json.h"
#include "util/util.h"

double rm_jnum(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

uint64_t rm_ju(const json_t *o, const char *a, const char *b)
{
    double v = rm_jnum(o, a, b);
    return isfinite(v) && v > 0 ? (uint64_t)v : 0;
}

const char *rm_jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *load_json(const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4200];
    json_error_t je;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = ll_json_load_file(path, 0, &je);
    if (!j)
        snprintf(err, errlen, "%s", je.text);
    return j;
}

void rm_merge_free(struct merge *m)
{
    for (size_t i = 0; i < m->n_parts; i++) {
        json_decref(m->parts[i].run);
        json_decref(m->parts[i].sum);
        if (m->parts[i].fd >= 0)
            close(m->parts[i].fd);
    }
    free(m->parts);
    free(m->refs);
    stats_free(&m->st);
    stats_free(&m->cold);
    for (size_t k = 0; k < m->n_cls; k++)
        stats_free(&m->cls[k].st);
    free(m->cls);
    for (size_t k = 0; k < m->n_eps; k++)
        stats_free(&m->eps[k]);
    free(m->eps);
    free(m->ep_url);
    free(m->ep_weight);
}

/* The classes from config.classes, each one's SLO from the first summary
 * that lists it, and its scheduled count summed over the parts. */
static void classes_init(struct merge *m, const json_t *cfg)
{
    const json_t *names = json_object_get(cfg, "classes");
    m->n_cls = json_array_size(names);
    m->cls = ll_calloc(m->n_cls + 1, sizeof *m->cls);
    for (size_t k = 0; k < m->n_cls; k++) {
        struct merge_class *c = &m->cls[k];
        c->name = json_string_value(json_array_get(names, k));
        stats_init(&c->st);
        for (size_t i = 0; i < m->n_parts; i++) {
            const json_t *arr = json_object_get(m->parts[i].sum, "classes");
            for (size_t j = 0; j < json_array_size(arr); j++) {
                const json_t *o = json_array_get(arr, j);
                const char *nm = rm_jstr(o, "name");
                if (!c->name || !nm || strcmp(nm, c->name) != 0)
                    continue;
                c->st.scheduled += rm_ju(o, "scheduled", NULL);
                const char *spec = rm_jstr(o, "slo");
                char err[200];
                if (spec && !c->slo_text[0] && slo_parse(spec, &c->slo, err, sizeof err) == 0)
                    slo_format(&c->slo, c->slo_text, sizeof c->slo_text);
            }
        }
    }
}

/* The endpoints from the first shard's target.endpoints (every shard ran
 * the same --url list: the config hash says so), each one's scheduled
 * count summed over the parts' summaries. */
static void endpoints_init(struct merge *m)
{
    const json_t *arr = json_object_get(json_object_get(m->parts[0].run, "target"), "endpoints");
    m->n_eps = json_array_size(arr);
    m->eps = ll_calloc(m->n_eps + 1, sizeof *m->eps);
    m->ep_url = ll_calloc(m->n_eps + 1, sizeof *m->ep_url);
    m->ep_weight = ll_calloc(m->n_eps + 1, sizeof *m->ep_weight);
    for (size_t k = 0; k < m->n_eps; k++) {
        const json_t *o = json_array_get(arr, k);
        stats_init(&m->eps[k]);
        m->ep_url[k] = rm_jstr(o, "url") ? rm_jstr(o, "url") : "";
        m->ep_weight[k] = (uint32_t)rm_ju(o, "weight", NULL);
        for (size_t i = 0; i < m->n_parts; i++)
            m->eps[k].scheduled +=
                rm_ju(json_array_get(json_object_get(m->parts[i].sum, "endpoints"), k), "scheduled",
                      NULL);
    }
}

/* The class named cls, or NULL. */
static struct merge_class *class_find(struct merge *m, const char *cls)
{
    for (size_t k = 0; cls && k < m->n_cls; k++)
        if (m->cls[k].name && strcmp(m->cls[k].name, cls) == 0)
            return &m->cls[k];
    return NULL;
}

/* ---- reading the parts ------------------------------------------------- */

/* Read dir's run.json and summary.json into p; for a merge, check it is a
 * shard of a run. 0, or -1 after a one-line error. */
int rm_part_load(struct part *p, const char *dir, int rebuild)
{
    char err[300];
    memset(p, 0, sizeof *p);
    p->dir = dir;
    p->fd = -1;
    if (!dir[0]) { /* "DIR/run.json" would be /run.json */
        ll_errorf("%s: a results directory is an empty path", rebuild ? "report" : "merge");
        return -1;
    }
    p->run = load_json(dir, "run.json", err, sizeof err);
    if (!p->run) {
        ll_errorf("merge: %s: not a results directory (run.json: %s)", dir, err);
        return -1;
    }
    if (results_run_schema_check(p->run, err, sizeof err) != 0) {
        ll_errorf("%s: %s: %s", rebuild ? "report" : "merge", dir, err);
        return -1;
    }
    json_t *cfg = json_object_get(p->run, "config");
    const char *cmd = rm_jstr(p->run, "command");
    int sweep = json_object_get(cfg, "sweep") != NULL;
    if (sweep && (rebuild || !cmd || strcmp(cmd, "sweep") != 0)) {
        ll_errorf("merge: %s: not the results of llmload sweep (command %s)", dir,
                  cmd ? cmd : "missing");
        return -1;
    }
    if (!sweep && (!cmd || (strcmp(cmd, "run") != 0 && strcmp(cmd, "replay") != 0))) {
        ll_errorf("merge: %s: not the results of llmload run or replay (command %s)", dir,
                  cmd ? cmd : "missing");
        return -1;
    }
    if (!rebuild) {
        json_t *k = json_object_get(cfg, "shard"), *n = json_object_get(cfg, "shards");
        if (!json_is_integer(k) || !json_is_integer(n) || !rm_jstr(p->run, "config_hash")) {
            ll_errorf("merge: %s: not a shard (its run.json has no config.shard, config.shards "
                      "and config_hash: run with --shard)",
                      dir);
            return -1;
        }
        p->shard = (uint32_t)json_integer_value(k);
    }
    json_t *o = json_object_get(p->run, "outcome");
    p->interrupted = !o || json_is_true(json_object_get(o, "interrupted"));
    p->sum = load_json(dir, "summary.json", err, sizeof err);
    if (!p->sum)
        p->interrupted = 1;
    return 0;
}

/* config_hash leaves url out (shards may reach one server through a load
 * balancer or by per-machine names), so the shards' urls (and several
 * --url's lists) may differ: m->url_note says so, naming the first shard
 * whose differ from the first's, and goes to stderr. */
static void rm_urls_note(struct merge *m)
{
    const json_t *ca = json_object_get(m->parts[0].run, "config");
    const char *ua = rm_jstr(ca, "url");
    for (size_t i = 1; i < m->n_parts; i++) {
        const json_t *cb = json_object_get(m->parts[i].run, "config");
        const char *ub = rm_jstr(cb, "url");
        const json_t *la = json_object_get(ca, "urls"), *lb = json_object_get(cb, "urls");
        if (ua && ub && strcmp(ua, ub) == 0 && ((!la && !lb) || json_equal(la, lb)))
            continue;
        snprintf(m->url_note, sizeof m->url_note,
                 "the shards reached the target by other URLs: %s (shard %u, %s) and %s (shard "
                 "%u, %s); config_hash leaves url out",
                 ua ? ua : "none", m->parts[0].shard, m->parts[0].dir, ub ? ub : "none",
                 m->parts[i].shard, m->parts[i].dir);
        ll_errorf("merge: note: %s", m->url_note);
        return;
    }
}

/* The refusals: one configuration, one count, each shard once. */
int rm_parts_check(struct merge *m)
{
    struct part *a = &m->parts[0];
    m->shards =
        (uint32_t)json_integer_value(json_object_get(json_object_get(a->run, "config"), "shards"));
    for (size_t i = 1; i < m->n_parts; i++) {
        struct part *b = &m->parts[i];
        const char *ha = rm_jstr(a->run, "config_hash"), *hb = rm_jstr(b->run, "config_hash");
        if (strcmp(ha, hb) != 0) {
            ll_errorf("merge: %s and %s are not shards of one run: their configurations differ "
                      "(config_hash %s and %s: other flags, another --seed, or input files of "
                      "other content)",
                      a->dir, b->dir, ha, hb);
            return -1;
        }
        uint32_t nb = (uint32_t)json_integer_value(
            json_object_get(json_object_get(b->run, "config"), "shards"));
        if (nb != m->shards) {
            ll_errorf("merge: %s and %s disagree on the shard count (%u and %u)", a->dir, b->dir,
                      m->shards, nb);
            return -1;
        }
    }
    for (size_t i = 0; i < m->n_parts; i++) {
        if (m->shards == 0 || m->parts[i].shard >= m->shards) {
            ll_errorf("merge: %s: shard %u of %u is out of range (its run.json's config.shard "
                      "and config.shards)",
                      m->parts[i].dir, m->parts[i].shard, m->shards);
            return -1;
        }
    }
    for (size_t i = 0; i < m->n_parts; i++) {
        for (size_t j = i + 1; j < m->n_parts; j++) {
            if (m->parts[i].shard == m->parts[j].shard) {
                ll_errorf("merge: %s and %s are both shard %u of %u (two copies of one shard)",
                          m->parts[i].dir, m->parts[j].dir, m->parts[i].shard, m->shards);
                return -1;
            }
        }
    }
    rm_urls_note(m);
    return 0;
}

/* The id of a line: it begins {"id":N, as record.c writes it; any other
 * line goes through the full parser for its error. */
static int line_id(const char *line, size_t len, uint64_t *id, char *err, size_t errlen)
{
    static const char pre[] = "{\"id\":";
    if (len > sizeof pre && memcmp(line, pre, sizeof pre - 1) == 0) {
        const char *p = line + sizeof pre - 1;
        uint64_t v = 0;
        int digits = 0;
        while (p < line + len && *p >= '0' && *p <= '9' && digits < 19) {
            v = v * 10 + (uint64_t)(*p++ - '0');
            digits++;
        }
        if (digits && p < line + len && *p == ',') {
            *id = v;
            return 0;
        }
    }
    struct record r;
    if (record_parse_jsonl(line, len, &r, NULL, 0, err, errlen) != 0)
        return -1;
    *id = r.id;
    return 0;
}

/* The id and step of a sweep's line (the full parser: the step is not at
 * a fixed place). */
static int line_step_id(const char *line, size_t len, uint64_t *id, uint32_t *step, char *err,
                        size_t errlen)
{
    struct record r;
    if (record_parse_jsonl(line, len, &r, NULL, 0, err, errlen) != 0)
        return -1;
    if (r.step < 0) {
        snprintf(err, errlen, "a sweep's record without \"step\"");
        return -1;
    }
    *id = r.id;
    *step = (uint32_t)r.step;
    return 0;
}

/* Pass 1: every line's id and place, over every part. */
int rm_refs_read(struct merge *m)
{
    size_t cap = 0;
    char *line = NULL;
    size_t line_cap = 0;
    for (size_t i = 0; i < m->n_parts; i++) {
        struct part *p = &m->parts[i];
        char path[4200];
        snprintf(path, sizeof path, "%s/requests.jsonl", p->dir);
        FILE *f = fopen(path, "r");
        if (!f) {
            /* A shard that died before its first record: all missing. A
             * rebuild has no other copy of the records: its summary.json
             * would be rewritten with none of them. */
            if (errno == ENOENT && !m->rebuild)
                continue;
            ll_errorf("%s: %s: %s", m->rebuild ? "report" : "merge", path, strerror(errno));
            goto fail;
        }
        struct stat sb;
        if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
            ll_errorf("%s: %s: not a regular file", m->rebuild ? "report" : "merge", path);
            fclose(f);
            goto fail;
        }
        p->fd = dup(fileno(f));
        if (p->fd < 0) {
            ll_errorf("merge: %s: %s", path, strerror(errno));
            fclose(f);
            goto fail;
        }
        uint64_t off = 0, lineno = 0;
        ssize_t got;
        while ((got = getline(&line, &line_cap, f)) > 0) {
            size_t len = (size_t)got;
            uint64_t at = off;
            off += len;
            lineno++;
            if (line[len - 1] == '\n')
                len--;
            else if (!m->rebuild)
                break; /* the last line, cut off mid-write by a shard that
                        * died: its record is missing, not a reason to
                        * refuse the merge ("not JSON" on the second pass) */
            if (len == 0)
                continue;
            char err[300];
            uint64_t id;
            uint32_t step = 0;
            if ((m->sweep ? line_step_id(line, len, &id, &step, err, sizeof err)
                          : line_id(line, len, &id, err, sizeof err)) != 0) {
                ll_errorf("%s: %s:%" PRIu64 ": %s", m->rebuild ? "report" : "merge", path, lineno,
                          err);
                fclose(f);
                goto fail;
            }
            if (m->n_refs == cap) {
                cap = cap ? cap * 2 : 4096;
                m->refs = ll_realloc(m->refs, cap * sizeof *m->refs);
            }
            m->refs[m->n_refs++] = (struct ref){.id = id,
                                                .off = at,
                                                .len = (uint32_t)len,
                                                .part = (uint32_t)i,
                                                .step = step,
                                                .line = (uint32_t)LL_MIN(lineno, UINT32_MAX)};
            p->lines++;
        }
        fclose(f);
    }
    free(line);
    if (m->rebuild && m->n_refs == 0) {
        ll_errorf("report: %s/requests.jsonl: no records to rebuild the summary from (its "
                  "summary.json is left as it is)",
                  m->parts[0].dir);
        return -1;
    }
    if (m->n_refs > 1) /* qsort's base may not be NULL, even for none */
        qsort(m->refs, m->n_refs, sizeof *m->refs, rm_ref_cmp);
    /* One request twice would count twice: in one part, a file appended
     * to another; in two, shards that overlap. */
    for (size_t i = 1; i < m->n_refs; i++) {
        const struct ref *a = &m->refs[i - 1], *b = &m->refs[i];
        if (a->step != b->step || a->id != b->id)
            continue;
        if (a->part == b->part) {
            char path[4200], err[4400];
            snprintf(path, sizeof path, "%s/requests.jsonl", m->parts[a->part].dir);
            record_repeat_text(err, sizeof err, path, b->line, a->id,
                               m->sweep ? (int64_t)a->step : -1, a->line);
            ll_errorf("%s: %s", m->rebuild ? "report" : "merge", err);
        } else if (m->sweep)
            ll_errorf("merge: step %" PRIu32 " id %" PRIu64 " is in both %s and %s", a->step, a->id,
                      m->parts[a->part].dir, m->parts[b->part].dir);
        else
            ll_errorf("merge: id %" PRIu64 " is in both %s and %s", a->id, m->parts[a->part].dir,
                      m->parts[b->part].dir);
        return -1;
    }
    return 0;
fail:
    free(line);
    return -1;
}

int rm_ref_cmp(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->part != y->part)
        return x->part < y->part ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* ---- what is missing --------------------------------------------------- */

/* M for a replay, the trace lines the whole schedule offers: a replay
 * gives the line at sorted position p to shard p mod N, and its records
 * carry the line's "index" as id, which need not be its position (an
 * indexed trace), so M comes from the counts, never from the ids. Uncut,
 * M is run.json's trace_requests (capped by --requests). Cut by
 * --duration or the spend guard at some position P, a shard that finished
 * holds its positions below P; the one holding position P - 1 gives P
 * exactly ((have - 1) N + k + 1), the others no more. *estimated is set
 * when a shard absent or cut short could have held it (then M is short by
 * at most N - 1). */
static uint64_t replay_expected(const json_t *cfg, uint32_t n, const uint64_t *have,
                                const int *present, const int *interrupted, int *estimated)
{
    uint64_t M = rm_ju(cfg, "trace_requests", NULL);
    uint64_t req = rm_ju(cfg, "requests", NULL);
    if (req && req < M)
        M = req;
    if (!rm_ju(cfg, "duration_ns", NULL) && !rm_ju(cfg, "max_tokens_total", NULL))
        return M;
    uint64_t P = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (!present[k] || interrupted[k]) {
            *estimated = 1;
            continue;
        }
        if (have[k] > 0)
            P = LL_MAX(P, (have[k] - 1) * n + k + 1);
    }
    return LL_MIN(P, M);
}

/* M, the scheduled ids of the whole schedule, and how many no shard has.
 * Open loop gives request i to shard i mod N: for a run bounded by
 * --requests alone M is that count, else the largest id any shard sent
 * plus one (a schedule cut by --duration or the spend guard ends there).
 * Replay gives trace line p (sorted position) to shard p mod N, M as
 * replay_expected says. Closed-loop users and sessions do not number
 * requests by the rule: a missing shard's share is estimated as the mean
 * of the complete ones'. Each shard's shortfall is its share of M less
 * the records it holds. */
static void missing_count(struct merge *m, const json_t *cfg)
{
    const char *lm = rm_jstr(cfg, "load_model");
    int by_rule = !(lm && (strcmp(lm, "closed") == 0 || strcmp(lm, "sessions") == 0)) &&
                  !json_object_get(cfg, "sessions");
    uint32_t n = m->shards;
    uint64_t *have = ll_calloc(n, sizeof *have);
    int *present = ll_calloc(n, sizeof *present), *interrupted = ll_calloc(n, sizeof *present);
    for (size_t i = 0; i < m->n_parts; i++) {
        present[m->parts[i].shard] = 1;
        interrupted[m->parts[i].shard] = m->parts[i].interrupted;
        have[m->parts[i].shard] = m->parts[i].lines;
    }
    size_t at = 0;
    m->missing_shards[0] = '\0';
    for (uint32_t k = 0; k < n; k++) {
        if (!present[k] && at < sizeof m->missing_shards)
            at += (size_t)snprintf(m->missing_shards + at, sizeof m->missing_shards - at, "%s%u",
                                   at ? ", " : "", k);
    }
    m->missing_ids = 0;
    if (by_rule) {
        uint64_t M = m->n_refs ? m->refs[m->n_refs - 1].id + 1 : 0;
        uint64_t req = rm_ju(cfg, "requests", NULL);
        if (lm && strcmp(lm, "replay") == 0 && rm_ju(cfg, "trace_requests", NULL))
            M = replay_expected(cfg, n, have, present, interrupted, &m->estimated);
        else if (req && !rm_ju(cfg, "duration_ns", NULL) && !rm_ju(cfg, "max_tokens_total", NULL))
            M = req > M ? req : M;
        m->expected_ids = M;
        for (uint32_t k = 0; k < n; k++) {
            uint64_t want = M / n + (k < M % n);
            m->missing_ids += want > have[k] ? want - have[k] : 0;
        }
    } else {
        uint64_t sum = 0, cnt = 0;
        for (size_t i = 0; i < m->n_parts; i++) {
            if (!m->parts[i].interrupted) {
                sum += m->parts[i].lines;
                cnt++;
            }
        }
        uint64_t share = cnt ? (sum + cnt / 2) / cnt : 0;
        /* A shard that finished has all of its share, however many that
         * was (sessions differ in turns, users in pace): only the absent
         * and the cut short are estimated. */
        for (uint32_t k = 0; k < n; k++)
            if (!present[k] || interrupted[k])
                m->missing_ids += share > have[k] ? share - have[k] : 0;
        m->expected_ids = m->n_refs + m->missing_ids;
        m->estimated = 1;
    }
    free(have);
    free(present);
    free(interrupted);
}

/* The words of the incomplete line (m->incomplete, "" when complete). */
void rm_incomplete_text(struct merge *m)
{
    char shards[700] = "";
    size_t at = 0;
    if (m->missing_shards[0])
        at += (size_t)snprintf(shards, sizeof shards, "%s %s missing",
                               strchr(m->missing_shards, ',') ? "shards" : "shard",
                               m->missing_shards);
    for (size_t i = 0; i < m->n_parts && at < sizeof shards; i++) {
        if (m->parts[i].interrupted)
            at += (size_t)snprintf(shards + at, sizeof shards - at, "%sshard %u (%s) cut short",
                                   at ? "; " : "", m->parts[i].shard, m->parts[i].dir);
    }
    m->incomplete[0] = '\0';
    if (m->missing_ids || m->missing_shards[0])
        snprintf(m->incomplete, sizeof m->incomplete,
                 "incomplete: %" PRIu64 " of %s%" PRIu64 " requests (%" PRIu64 " missing%s%s)",
                 m->expected_ids - m->missing_ids, m->estimated ? "about " : "", m->expected_ids,
                 m->missing_ids, shards[0] ? ": " : "", shards);
}

/* ---- pass 2: the records in id order ---------------------------------- */

struct infl_ev {
    uint64_t t_ns;
    int delta;
};

static int ev_cmp(const void *a, const void *b)
{
    const struct infl_ev *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return x->delta - y->delta; /* a leave before an enter at one instant */
}

/* Read each line again in id order, count it as the driver counts it and
 * write it to out (NULL: count only). In flight: each sent request from
 * when the generator took it up (sched + late) to its end, the most at
 * once from the window's start. 0 or -1 after an error. */
static int records_pass(struct merge *m, const json_t *cfg, const struct slo *slo, FILE *out)
{
    uint64_t warmup_ns = rm_ju(cfg, "warmup_ns", NULL), dur = rm_ju(cfg, "duration_ns", NULL);
    uint64_t wend = dur ? dur : UINT64_MAX, cold_n = rm_ju(cfg, "cold_start", NULL);
    /* As the driver: a shard whose count ended offering before --duration
     * measured to its last response, past --duration (its window says so). */
    for (size_t i = 0; i < m->n_parts && dur; i++)
        if (warmup_ns + rm_ju(m->parts[i].sum, "window_ns", NULL) > dur)
            wend = UINT64_MAX;
    const char *lmodel = rm_jstr(cfg, "load_model");
    int by_session = lmodel && strcmp(lmodel, "sessions") == 0;
    char *buf = NULL;
    size_t buf_cap = 0;
    struct infl_ev *ev = ll_calloc(2 * m->n_refs + 1, sizeof *ev);
    size_t n_ev = 0;
    int any_slo = slo_is_set(slo);
    for (size_t k = 0; k < m->n_cls; k++)
        any_slo |= slo_is_set(&m->cls[k].slo);
    for (size_t i = 0; i < m->n_refs; i++) {
        const struct ref *rf = &m->refs[i];
        if (rf->len + 1 > buf_cap) {
            buf_cap = rf->len + 1;
            buf = ll_realloc(buf, buf_cap);
        }
        const struct part *p = &m->parts[rf->part];
        if (pread(p->fd, buf, rf->len, (off_t)rf->off) != (ssize_t)rf->len) {
            ll_errorf("merge: %s/requests.jsonl: read failed: %s", p->dir, strerror(errno));
            goto fail;
        }
        struct record r;
        char cls[REC_CLASS_NAME_MAX], err[300];
        if (record_parse_jsonl(buf, rf->len, &r, cls, sizeof cls, err, sizeof err) != 0) {
            ll_errorf("merge: %s/requests.jsonl: id %" PRIu64 ": %s", p->dir, rf->id, err);
            goto fail;
        }
        /* As the driver: a session's turns are cold by session only in
         * the sessions mode (a replay's trace session ids do not count). */
        r.cold = record_in_cold_start(r.id, by_session ? r.session : -1, cold_n);
        /* As the driver: a request meets its class's SLO (its own, else
         * the run's), in the whole run's figures too. */
        struct merge_class *c = class_find(m, r.cls);
        int met = slo_judge_any(c ? &c->slo : slo, any_slo, &r);
        stats_account_met(&m->st, &r, warmup_ns, wend, met);
        if (r.endpoint >= 0 && (size_t)r.endpoint < m->n_eps)
            stats_account_met(&m->eps[r.endpoint], &r, warmup_ns, wend, met);
        if (c)
            stats_account(&c->st, &r, warmup_ns, wend, &c->slo);
        if (r.cold) {
            m->st.win_scheduled_cold += r.sched_ns >= warmup_ns;
            stats_add_record(&m->cold, &r);
            /* Every record was scheduled; stats_add_record counts what
             * ended, not that (a merged "0 scheduled, 6 ok" before). */
            m->cold.scheduled++;
            m->cold.sent += r.sent_ns != LL_NO_TIME;
            m->cold.slo_met += (uint64_t)(met == 1);
        } else if (r.warmup) {
            m->warmup_records++;
        }
        if (r.end_ns != LL_NO_TIME && r.end_ns > m->last_end_ns)
            m->last_end_ns = r.end_ns;
        if (r.sched_ns != LL_NO_TIME && r.sched_ns > m->last_sched_ns)
            m->last_sched_ns = r.sched_ns;
        summary_session_starts_add(&m->session_starts, &r, warmup_ns);
        if (r.sent_ns != LL_NO_TIME && r.end_ns != LL_NO_TIME) {
            uint64_t in = r.late_ns != LL_NO_TIME ? r.sched_ns + r.late_ns : r.sent_ns;
            ev[n_ev++] = (struct infl_ev){in, +1};
            ev[n_ev++] = (struct infl_ev){r.end_ns, -1};
        }
        if (out) {
            buf[rf->len] = '\n';
            if (fwrite(buf, 1, rf->len + 1, out) != rf->len + 1) {
                ll_errorf("merge: cannot write requests.jsonl: %s", strerror(errno));
                goto fail;
            }
        }
    }
    qsort(ev, n_ev, sizeof *ev, ev_cmp);
    long cur = 0, max = 0;
    for (size_t i = 0; i < n_ev; i++) {
        cur += ev[i].delta;
        if (ev[i].t_ns >= warmup_ns && cur > max)
            max = cur;
    }
    m->inflight_max = (double)max;
    free(ev);
    free(buf);
    return 0;
fail:
    free(ev);
    free(buf);
    return -1;
}

int rm_exit_combine(int a, int b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a < b ? a : b;
}

/* The server's /metrics series: the scraping shard's file, copied
 * (config.metrics_shard; with --gpu-metrics every shard writes one, the
 * others holding GPU lines alone), else the first there is. */
int rm_copy_metrics(const struct merge *m, const char *out_dir)
{
    json_t *ms_k = json_object_get(json_object_get(m->parts[0].run, "config"), "metrics_shard");
    uint32_t metrics_shard = json_is_integer(ms_k) ? (uint32_t)json_integer_value(ms_k) : 0;
    size_t first = 0;
    for (size_t i = 0; i < m->n_parts; i++)
        if (m->parts[i].shard == metrics_shard)
            first = i;
    for (size_t j = 0; j < m->n_parts; j++) {
        size_t i = j == 0 ? first : j == first ? 0 : j;
        char src[4400], dst[4400];
        snprintf(src, sizeof src, "%s/server_metrics.jsonl", m->parts[i].dir);
        FILE *in = fopen(src, "rb");
        if (!in)
            continue;
        snprintf(dst, sizeof dst, "%s/server_metrics.jsonl", out_dir);
        FILE *o = fopen(dst, "wb");
        int rc = o ? 0 : -1;
        char buf[65536];
        size_t got;
        while (o && (got = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, got, o) != got)
                rc = -1;
        if (o && fclose(o) != 0)
            rc = -1;
        fclose(in);
        if (rc != 0)
            ll_errorf("merge: cannot write %s: %s", dst, strerror(errno));
        return rc;
    }
    return 0;
}

/* run.json of the merged directory: the first shard's, its shard keys
 * gone, a "merged" object listing the shards, and the outcome. */
json_t *rm_merged_run_json(struct merge *m, int allow_partial, json_t *outcome, int code)
{
    json_t *run = json_deep_copy(m->parts[0].run);
    json_t *cfg = json_object_get(run, "config");
    json_object_del(cfg, "shard");
    json_object_del(cfg, "shard_launcher");
    json_object_del(cfg, "metrics_shard");
    json_object_del(run, "start");
    json_t *mg = json_object(), *list = json_array();
    for (size_t i = 0; i < m->n_parts; i++) {
        const struct part *p = &m->parts[i];
        json_t *o = json_object();
        json_object_set_new(o, "dir", json_string(p->dir));
        json_object_set_new(o, "shard", json_integer(p->shard));
        json_object_set_new(
            o, "shard_launcher",
            json_incref(json_object_get(json_object_get(p->run, "config"), "shard_launcher")));
        json_object_set_new(
            o, "host", json_incref(json_object_get(json_object_get(p->run, "host"), "hostname")));
        json_t *url = json_object_get(json_object_get(p->run, "config"), "url");
        json_object_set_new(o, "url", url ? json_incref(url) : json_null());
        json_object_set_new(o, "records", json_integer((json_int_t)p->lines));
        json_object_set_new(o, "interrupted", json_boolean(p->interrupted));
        json_t *st = json_object_get(p->run, "start");
        json_object_set_new(o, "start", st ? json_deep_copy(st) : json_null());
        json_array_append_new(list, o);
    }
    json_object_set_new(mg, "shards", json_integer(m->shards));
    json_object_set_new(mg, "dirs", list);
    json_t *miss = json_array();
    for (const char *s = m->missing_shards; *s;) {
        char *end;
        unsigned long k = strtoul(s, &end, 10);
        json_array_append_new(miss, json_integer((json_int_t)k));
        s = *end ? end + 2 : end;
    }
    json_object_set_new(mg, "missing_shards", miss);
    json_object_set_new(mg, "expected_ids", json_integer((json_int_t)m->expected_ids));
    json_object_set_new(mg, "missing_ids", json_integer((json_int_t)m->missing_ids));
    json_object_set_new(mg, "estimated", json_boolean(m->estimated));
    json_object_set_new(mg, "allow_partial", json_boolean(allow_partial));
    json_t *notes = json_array();
    if (m->url_note[0])
        json_array_append_new(notes, json_string(m->url_note));
    json_object_set_new(mg, "notes", notes);
    json_object_set_new(run, "merged", mg);
    json_object_set_new(outcome, "exit_status", json_integer(code));
    json_object_set_new(run, "outcome", outcome);
    return run;
}

/* ---- the two entry points ---------------------------------------------- */

/* What both share once the parts are read: pass 1; in a merge (missing
 * set) what is missing; pass 2 and the summary, printed to out.
 * write_records: write the merged requests.jsonl (merge), else count
 * only (rebuild). Returns the exit status; *outcome as summary_write
 * (NULL after an error). */
static int merge_common(struct merge *m, const char *out_dir, int write_records, double rate_scale,
                        int missing, FILE *out, json_t **outcome)
{
    *outcome = NULL;
    stats_init(&m->st);
    stats_init(&m->cold);
    if (rm_refs_read(m) != 0)
        return LL_EXIT_USAGE;
    const json_t *cfg = json_object_get(m->parts[0].run, "config");
    classes_init(m, cfg);
    endpoints_init(m);
    if (missing) {
        missing_count(m, cfg);
        rm_incomplete_text(m);
        if (m->incomplete[0])
            ll_errorf("merge: %s", m->incomplete);
    }
    struct slo slo = {0};
    char slo_text[128] = "", err[300];
    const char *spec = rm_jstr(cfg, "slo");
    if (spec && slo_parse(spec, &slo, err, sizeof err) == 0)
        slo_format(&slo, slo_text, sizeof slo_text);
    FILE *rec = NULL;
    char path[4400];
    if (write_records) {
        snprintf(path, sizeof path, "%s/requests.jsonl", out_dir);
        rec = fopen(path, "w");
        if (!rec) {
            ll_errorf("merge: cannot write %s: %s", path, strerror(errno));
            return LL_EXIT_RUNTIME;
        }
    }
    int rc = records_pass(m, cfg, &slo, rec);
    if (rec && fclose(rec) != 0 && rc == 0) {
        ll_errorf("merge: cannot write %s: %s", path, strerror(errno));
        return LL_EXIT_RUNTIME;
    }
    if (rc != 0)
        return LL_EXIT_USAGE;
    return rm_summary_write(m, cfg, slo_text[0] ? slo_text : NULL, rate_scale, out_dir, out,
                            outcome);
}

int rm_part_is_sweep(const struct part *p)
{
    return json_object_get(json_object_get(p->run, "config"), "sweep") != NULL;
}

/* Allocate m->parts and load the n shards dirs[] in order, m->n_parts
 * counting those tried, and set m->sweep. 0, or -1 after a one-line error. */
static int rm_parts_load(struct merge *m, const char *const *dirs, size_t n)
{
    m->parts = ll_calloc(n, sizeof *m->parts);
    for (size_t i = 0; i < n; i++) {
        m->n_parts = i + 1;
        if (rm_part_load(&m->parts[i], dirs[i], 0) != 0)
            return -1;
        int sw = rm_part_is_sweep(&m->parts[i]);
        if (i == 0)
            m->sweep = sw;
        if (sw != m->sweep) {
            ll_errorf("merge: %s and %s are not shards of one run: one is a sweep's", dirs[0],
                      dirs[i]);
            return -1;
        }
    }
    return 0;
}

/* The refusals, then out_dir prepared as a results directory. 0, or -1
 * after a one-line error. */
static int rm_parts_open_out(struct merge *m, const char *out_dir, int force, char *dir,
                             size_t dir_cap)
{
    char err[1200];

    if (rm_parts_check(m) != 0)
        return -1;
    /* --out DIR --force with DIR one of the shards truncated its
     * requests.jsonl before reading it: the shard's records were lost and
     * the merge failed ("read failed: Success"). */
    struct stat os, ps;
    if (out_dir && stat(out_dir, &os) == 0) {
        for (size_t i = 0; i < m->n_parts; i++) {
            if (stat(m->parts[i].dir, &ps) == 0 && ps.st_dev == os.st_dev &&
                ps.st_ino == os.st_ino) {
                ll_errorf("merge: --out: %s is the shard %s: the merge would write over the "
                          "records it reads; choose a new directory",
                          out_dir, m->parts[i].dir);
                return -1;
            }
        }
    }
    if (results_dir_prepare(out_dir, force, dir, dir_cap, err, sizeof err) != 0) {
        ll_errorf("merge: --out: %s", err);
        return -1;
    }
    m->n_present = m->n_parts;
    return 0;
}

int rm_parts_open(struct merge *m, const char *const *dirs, size_t n, const char *out_dir,
                  int force, char *dir, size_t dir_cap)
{
    if (rm_parts_load(m, dirs, n) != 0)
        return -1;
    return rm_parts_open_out(m, out_dir, force, dir, dir_cap);
}

int rm_run_finish(struct merge *m, const char *dir, int allow_partial, json_t *outcome, int code,
                  int hist_only, FILE *out)
{
    char err[1200];

    if (!outcome)
        return code;
    if (m->incomplete[0] && !allow_partial)
        code = rm_exit_combine(code, LL_EXIT_INCOMPLETE);
    if (rm_copy_metrics(m, dir) != 0 || rm_hist_write(m, dir) < 0)
        code = rm_exit_combine(code, LL_EXIT_RUNTIME);
    json_t *run = rm_merged_run_json(m, allow_partial, outcome, code);
    if (hist_only)
        json_object_set_new(json_object_get(run, "merged"), "hist_only", json_true());
    if (results_write_json_atomic(dir, "run.json", run, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = rm_exit_combine(code, LL_EXIT_RUNTIME);
    }
    json_decref(run);
    if (out)
        fprintf(out, "results: %s\n", dir);
    /* Its page, as a run's, named after the results line: `llmload
     * report DIR` draws it again. */
    if (report_run_write(dir, out, err, sizeof err) != 0) {
        ll_errorf("merge: %s", err);
        code = rm_exit_combine(code, LL_EXIT_RUNTIME);
    }
    return code;
}

int runmerge_dirs(const char *const *dirs, size_t n, const char *out_dir, int force,
                  int allow_partial, runmerge_build_fn build, runmerge_server_fn server, FILE *out)
{
    struct merge m = {0};
    m.server = server;
    json_t *outcome = NULL;
    int code = LL_EXIT_USAGE;
    char dir[4200];
    if (rm_parts_open(&m, dirs, n, out_dir, force, dir, sizeof dir) != 0)
        goto out;
    if (m.sweep) {
        code = rm_sweep_merge(&m, dir, allow_partial, build, out);
        goto out;
    }
    code = merge_common(&m, dir, 1, m.shards, 1, out, &outcome);
    code = rm_run_finish(&m, dir, allow_partial, outcome, code, 0, out);
out:
    rm_merge_free(&m);
    return code;
}

int runmerge_is_merged(const json_t *run)
{
    return json_is_object(json_object_get(run, "merged"));
}

int runmerge_dir_is_merged_run(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/run.json", dir);
    json_t *run = json_load_file(path, 0, NULL);
    int merged =
        run && runmerge_is_merged(run) && !json_object_get(json_object_get(run, "config"), "sweep");
    json_decref(run);
    return merged;
}

int runmerge_rebuild(const char *dir, runmerge_server_fn server, FILE *out)
{
    struct merge m = {0};
    json_t *outcome = NULL;
    int code = LL_EXIT_USAGE;
    m.parts = ll_calloc(1, sizeof *m.parts);
    m.n_parts = 1;
    m.rebuild = 1;
    m.server = server;
    if (rm_part_load(&m.parts[0], dir, 1) != 0)
        goto out;
    /* Its ITL, in-flight and generator figures and its mode came from the
     * shards' summaries, in no record: without it the rebuild would write
     * zeros and nulls over them. */
    if (!m.parts[0].sum) {
        ll_errorf("report: %s: a merged run's results without summary.json: its ITL, in-flight "
                  "and generator figures came from the shards' summaries (run llmload merge "
                  "again on the shards' directories)",
                  dir);
        goto out;
    }
    json_t *mg = json_object_get(m.parts[0].run, "merged");
    if (json_is_true(json_object_get(mg, "hist_only"))) {
        ll_errorf("report: %s: merged with --hist-only: no records to rebuild from (its "
                  "summary.json is the merge's result)",
                  dir);
        goto out;
    }
    m.shards = (uint32_t)rm_ju(mg, "shards", NULL);
    m.expected_ids = rm_ju(mg, "expected_ids", NULL);
    m.missing_ids = rm_ju(mg, "missing_ids", NULL);
    m.estimated = json_is_true(json_object_get(mg, "estimated"));
    m.n_present = json_array_size(json_object_get(mg, "dirs"));
    /* The merged summary's own "interrupted" says whether a shard was. */
    m.parts[0].interrupted = json_is_true(json_object_get(m.parts[0].sum, "interrupted"));
    const char *inc = rm_jstr(m.parts[0].sum, "incomplete");
    snprintf(m.incomplete, sizeof m.incomplete, "%s", inc ? inc : "");
    code = merge_common(&m, dir, 0, 1, 0, out, &outcome);
    if (!outcome)
        goto out;
    if (m.incomplete[0] && !json_is_true(json_object_get(mg, "allow_partial")))
        code = rm_exit_combine(code, LL_EXIT_INCOMPLETE);
out:
    json_decref(outcome);
    rm_merge_free(&m);
    return code;
}
