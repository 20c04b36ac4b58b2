/* report_runsrv.h: the parts of a single run's report.html that say what
 * the server said (report_run.c draws the rest), and the reading of
 * summary.json the run page's files share.
 *
 * Everything here quotes summary.json: a figure it lacks is left out (a
 * block) or an en dash (a cell), never a 0. */
#ifndef LL_REPORT_RUNSRV_H
#define LL_REPORT_RUNSRV_H

#include <jansson.h>

#include "util/strbuf.h"

/* o's member at a dotted path ("latency_ns.ttft.p99"); NULL when absent
 * or when a key is over 63 bytes. Borrowed from o. */
const json_t *report_run_jpath(const json_t *o, const char *path);

/* A table cell of the JSON number v: the exact figure in data-v, and v /
 * scale as text for people (report_put_value); an en dash when v is not
 * a number. scale != 0 (0.01 shows a fraction as a percentage). */
void report_run_cell(struct strbuf *b, const json_t *v, double scale);

/* The Server section: summary.json's "server" block (the server's own
 * /metrics joined to the run, beside the client's count of the same
 * thing, in the terminal's words: scrapejoin.c) and what the responses'
 * usage reported (cached prompt tokens, the server's prompt count against
 * the requested). Nothing when summary.json has neither. */
void report_run_server(struct strbuf *b, const json_t *sum);

#endif
