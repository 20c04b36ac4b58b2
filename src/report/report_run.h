/* report_run.h: report.html of one load point (`llmload run`, `llmload
 * replay`, a directory `llmload merge` wrote), the one-file page a person
 * reads beside summary.json.
 *
 * The page is drawn from the results directory's files alone: run.json
 * (what was run), summary.json (every figure: the page quotes it and
 * computes none of its own but the server/client ratios of two quoted
 * counts, as the terminal prints them), hist.jsonl (the per-second
 * charts) and
 * server_metrics.jsonl (the server's scrapes, on the same time axis). So
 * the run writes it at its end and `llmload report DIR` rebuilds it byte
 * for byte. It shares the sweep page's skeleton, CSS and time charts
 * (report_html.c, report_timecharts.c); docs/report.md shows it. */
#ifndef LL_REPORT_RUN_H
#define LL_REPORT_RUN_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "util/strbuf.h"

/* Whether dir holds a single run's results: a run.json whose command is
 * run or replay (not a sweep's, whose config has "sweep"). Reads run.json
 * only; 0 when it is missing or unreadable. */
int report_run_dir_is_run(const char *dir);

/* Render the page of run (run.json, may be NULL), sum (summary.json) and
 * the two line files hist_path and scrapes_path (each may be missing:
 * then no such charts) as a complete HTML document appended to out.
 * Deterministic: the same inputs give byte-identical text. Everything is
 * borrowed. Aborts on out of memory. */
void report_run_render(const json_t *run, const json_t *sum, const char *hist_path,
                       const char *scrapes_path, struct strbuf *out);

/* Write dir/report.html atomically from dir's run.json, summary.json,
 * hist.jsonl and server_metrics.jsonl (report_run_render), and, when out
 * is not NULL, name it there once written: "report: DIR/report.html", the
 * last line of run, replay and merge, after their "results: DIR" (which
 * scripts parse and which stays as it was). Returns 0, or LL_E_NOTFOUND
 * (no summary.json), LL_E_INVAL (a file is not JSON) or LL_E_IO /
 * LL_E_RANGE with the reason, naming the file, in err (errlen bytes, may
 * be 0); then out gets nothing. */
int report_run_write(const char *dir, FILE *out, char *err, size_t errlen);

/* --expect judged again on a run's results directory: the thresholds
 * run.json's "expect" recorded (llmload run and replay write it), on
 * summary.json's figures, one line on f per failed threshold as the run
 * printed them. *failed gets how many failed: 0 without thresholds (none
 * given, or a directory from before run.json kept them). Returns 0, or
 * LL_E_INVAL (a file unreadable, or a spec that no longer parses) with
 * the reason, naming the file, in err. summary.json is not rewritten. */
int report_run_expect(const char *dir, FILE *f, size_t *failed, char *err, size_t errlen);

#endif
