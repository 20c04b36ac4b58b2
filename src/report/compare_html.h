/* compare_html.h: compare.html, the page of `llmload compare`, drawn from
 * its compare.json document (schema llmload.compare/1, docs/compare.md):
 * one self-contained file (inline CSS and SVG, no script, nothing
 * fetched), the config differences at the top, each candidate's table
 * with colour only on the rows called better or worse, and the sides'
 * curves overlaid, one series per side: for sweeps TTFT p99, TPOT p99,
 * goodput and attainment against offered load, for runs the TTFT and E2E
 * percentiles. Every plotted point carries its numbers (svg.h). */
#ifndef LL_COMPARE_HTML_H
#define LL_COMPARE_HTML_H

#include <stddef.h>

#include <jansson.h>

#include "util/strbuf.h"

/* Append the page for doc to out. The same doc gives the same bytes. */
void compare_html_render(json_t *doc, struct strbuf *out);

/* Write dir/compare.html atomically (a temporary file, then a rename).
 * Returns 0, or -1 with a one-line reason in err. */
int compare_html_write(const char *dir, json_t *doc, char *err, size_t errlen);

#endif
