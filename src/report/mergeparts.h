/* mergeparts.h: the parts of a merge and what runmerge.c (the parts and
 * the two passes; it defines everything declared here but rm_summary_write
 * and rm_sweep_merge), mergesummary.c (the merged run's summary,
 * rm_summary_write), sweepmerge.c (a sharded sweep's steps,
 * rm_sweep_merge) and histmerge.c (--hist-only, and the merged
 * hist.jsonl, rm_hist_write) share; private to
 * src/report. */
#ifndef LL_MERGEPARTS_H
#define LL_MERGEPARTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/slo.h"
#include "measure/stats.h"
#include "measure/summary.h"

/* runmerge.h's, which the users of this file include. */
struct runmerge_window;

/* One input directory: a shard (merge) or the merged directory itself
 * (rebuild). */
struct part {
    const char *dir;
    json_t *run;     /* run.json */
    json_t *sum;     /* summary.json; NULL: the shard died before writing it */
    uint32_t shard;  /* config.shard (0 in a rebuild) */
    uint64_t lines;  /* records in its requests.jsonl */
    int interrupted; /* run.json's outcome says so, or it has no outcome */
    int fd;          /* requests.jsonl, -1 when absent */
};

/* Where one record's line lies. */
struct ref {
    uint64_t id;
    uint64_t off; /* bytes into its part's requests.jsonl */
    uint32_t len; /* bytes, without the newline */
    uint32_t part;
    uint32_t step; /* a sweep's: the record's "step" (0 in a run) */
    uint32_t line; /* its line in that file, from 1 */
};

/* One traffic class of the merged run. */
struct merge_class {
    const char *name; /* borrowed from run.json's config.classes */
    struct stats st;
    struct slo slo;    /* the class's own, else the run's; unset: none */
    char slo_text[96]; /* "" = none */
};

/* Everything a merge reads, computes and allocates, freed in one place. */
struct merge {
    struct part *parts;
    size_t n_parts;
    uint32_t shards;  /* N of the shards */
    size_t n_present; /* shards merged (a rebuild: as run.json lists) */
    struct ref *refs;
    size_t n_refs;
    struct stats st, cold;
    /* Traffic classes (config.classes, in its order): each one's figures,
     * counted with its SLO as the shards' summaries give it. */
    size_t n_cls;
    struct merge_class *cls;
    /* Several --url (run.json's target.endpoints, by index): each one's
     * figures, counted as the driver counts them, its scheduled count
     * summed over the parts' summaries. */
    size_t n_eps;
    struct stats *eps;
    const char **ep_url;
    uint32_t *ep_weight;
    uint64_t warmup_records;
    uint64_t expected_ids;    /* M: the scheduled ids of the whole schedule */
    uint64_t missing_ids;     /* of those, in no shard */
    int estimated;            /* 1: M is an estimate (closed loop, sessions) */
    char missing_shards[512]; /* "2, 3" or "" */
    char incomplete[768];     /* "incomplete: N of M requests (...)" or "" */
    char url_note[1200];      /* the shards' urls differ: the note, or "" */
    double inflight_max;
    uint64_t last_end_ns;   /* the latest end_ns of the merged records */
    uint64_t last_sched_ns; /* their latest sched_ns, warm-up and cold start included */
    int sweep;              /* 1: the shards of a sweep (config.sweep) */
    int rebuild;            /* 1: `llmload report` on a merged directory */
    /* A session run's: its sessions' starts in the window, over every shard. */
    struct summary_session_starts session_starts;
    /* The server's join (a merge of a run's shards; NULL: none). */
    json_t *(*server)(const struct runmerge_window *w, FILE *out, json_t **energy);
};

/* o[k] as a string, NULL when absent or not one. */
const char *rm_jstr(const json_t *o, const char *k);

/* o[a] (or o[a][b] when b is not NULL) as a number, NAN when absent or
 * not one. */
double rm_jnum(const json_t *o, const char *a, const char *b);

/* rm_jnum as a count: 0 when absent, not a number or not above 0. */
uint64_t rm_ju(const json_t *o, const char *a, const char *b);

/* Free everything m holds (m itself is the caller's). */
void rm_merge_free(struct merge *m);

/* Read dir's run.json and summary.json into p; for a merge, check it is a
 * shard of a run. 0, or -1 after a one-line error. */
int rm_part_load(struct part *p, const char *dir, int rebuild);

/* The refusals: one configuration, one count, each shard once. */
int rm_parts_check(struct merge *m);

/* 1 when p is a sweep's shard (its run.json has config.sweep). */
int rm_part_is_sweep(const struct part *p);

/* The start of every merge: allocate m->parts and load the n shards
 * dirs[] in order (rm_part_load), m->n_parts counting those tried, and set
 * m->sweep (a sweep's shards and a run's are refused together); then the
 * refusals of rm_parts_check, and out_dir prepared as a results directory
 * (force: over an existing one), its path into dir (dir_cap bytes), and
 * every part counted present. 0, or -1 after a one-line error;
 * rm_merge_free frees m either way. */
int rm_parts_open(struct merge *m, const char *const *dirs, size_t n, const char *out_dir,
                  int force, char *dir, size_t dir_cap);

/* The end of a merge of a run's shards (a whole one or --hist-only),
 * after its summary (outcome, taken over; code its exit status so far):
 * the incomplete status unless allow_partial, the server's /metrics
 * copied, run.json written with "merged" (and merged.hist_only when
 * hist_only), then "results: DIR" on out (NULL: nothing printed).
 * Returns the exit status; with outcome NULL (the summary failed) it does
 * nothing and returns code. */
int rm_run_finish(struct merge *m, const char *dir, int allow_partial, json_t *outcome, int code,
                  int hist_only, FILE *out);

/* Pass 1: every line's id and place, over every part, sorted by
 * rm_ref_cmp (step, id, part, line). Refuses (-1, said) a line that does
 * not parse and a request there twice: in one part (its two lines named)
 * or in two parts. */
int rm_refs_read(struct merge *m);

/* qsort order of struct ref: by step, id, part, then line. */
int rm_ref_cmp(const void *a, const void *b);

/* The words of the incomplete line (m->incomplete, "" when complete). */
void rm_incomplete_text(struct merge *m);

/* Two exit statuses as one: the lowest non-zero wins. */
int rm_exit_combine(int a, int b);

/* The summary of the merged records (mergesummary.c): printed to out (NULL:
 * not printed), written to out_dir/summary.json, run.json's outcome into
 * *outcome (the caller's). rate_scale: each part's offered rate times it
 * is the whole's (the shard count; 1 in a rebuild). Returns the exit
 * status before the incomplete rule. */
int rm_summary_write(struct merge *m, const json_t *cfg, const char *slo_text, double rate_scale,
                     const char *out_dir, FILE *out, json_t **outcome);

/* The merged directory's hist.jsonl (histmerge.c): every shard's windows
 * of one second (and sweep step) added up into one line without "shard"
 * or "worker" (histlog.h's combined window), lines in step and time order,
 * each shard's t_ns as it wrote it (every shard counts from the one
 * --start-at instant: docs/distributed.md, "Merging the shards"). Written
 * atomically (hist.jsonl.tmp, fsynced, renamed). Two passes: each line's
 * step, second and place (a 32-byte struct hist_ref a line; up to 64
 * bytes a line in memory as the array doubles), then each second's lines
 * read back and merged through one scratch window, so memory does not
 * grow with the seconds' histograms (24 h of 2 shards x 8 workers: 35 s
 * of CPU, 76 MB; bench/merge-hist-long.sh). Returns 0 written; 1 when a
 * shard's hist.jsonl is missing or has a bad line (a warning on stderr
 * naming it; no hist.jsonl in dir, an old one removed: the merged records
 * stand without it; a bad last line without its newline, a killed
 * shard's, is skipped with a warning instead); -1 when it cannot be
 * written (said on stderr, and an old one removed as well). */
int rm_hist_write(const struct merge *m, const char *dir);

/* The server's /metrics series into out_dir: the scraping shard's file. */
int rm_copy_metrics(const struct merge *m, const char *out_dir);

/* run.json of the merged directory: the first shard's, its shard keys
 * gone, a "merged" object listing the shards, and the outcome. */
json_t *rm_merged_run_json(struct merge *m, int allow_partial, json_t *outcome, int code);

/* The shards of a sweep into dir (sweepmerge.c): requests.jsonl ordered
 * by step and id, steps.jsonl with each step's facts merged, run.json,
 * the scraping shard's server_metrics.jsonl; then every figure from the
 * merged files through build, as `llmload report` does, and "results:
 * DIR" on out (not when refused or the files could not be written). */
int rm_sweep_merge(struct merge *m, const char *dir, int allow_partial,
                   int (*build)(const char *dir, FILE *out), FILE *out);

#endif
