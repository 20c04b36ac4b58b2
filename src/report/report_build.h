/* report_build.h: the one routine that turns a sweep's results directory
 * into its summary.json, steps.csv, classes.csv and report.html. `llmload
 * report DIR` rebuilds a saved sweep with it and `llmload sweep` writes its
 * own results with it at its end, so the two are byte-identical
 * (tests/data/report/sweep-classes holds a saved sweep to compare). */
#ifndef LL_REPORT_BUILD_H
#define LL_REPORT_BUILD_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "sweep/sweep.h"

/* Rebuild summary.json, steps.csv (and classes.csv when the sweep broke
 * out traffic classes) and report.html of the sweep results in dir from
 * run.json, steps.jsonl, requests.jsonl and, when present,
 * server_metrics.jsonl, and print the step table and the findings to out
 * (NULL = print nothing). Returns an exit status: LL_EXIT_OK;
 * LL_EXIT_FAIL when no load step could be judged (every one INVALID);
 * LL_EXIT_EXPECT when an --expect-capacity / --expect-slo check recorded in
 * run.json fails (a one-line reason on stderr); LL_EXIT_USAGE for missing
 * or malformed files; LL_EXIT_RUNTIME when a file cannot be written (the
 * reason on stderr in both). */
int report_build_dir(const char *dir, FILE *out);

/* A saved sweep read and analysed as report_build_dir does, for a reader
 * that wants its figures and writes nothing (`llmload compare`). */
struct report_sweep {
    json_t *run;               /* run.json */
    struct sweep_settings set; /* its config.sweep */
    struct sweep_step *steps;  /* every step, finished (sweep_step_finish) */
    size_t n_steps;
    struct sweep_point *points; /* one per offered rate */
    size_t n_points;
    struct sweep_findings *fd; /* the SLO capacity, the knee... */
};

/* Read run.json, steps.jsonl and requests.jsonl of dir into *out and
 * analyse them. Returns 0, or -1 with the reason on stderr (then *out
 * holds nothing). Free with report_sweep_free. */
int report_sweep_load(const char *dir, struct report_sweep *out);
void report_sweep_free(struct report_sweep *s);

#endif
