/* fuzz_scrapeline.c: libFuzzer target for scrape_line_parse (a line of
 * server_metrics.jsonl read back by `llmload merge`, metrics/scrapeline.c).
 *
 * The input is copied to a buffer of exactly its size, so any read past n
 * is ASan's to catch. A rejected line gives LL_E_PROTO and a one-line
 * reason; an accepted one a point that holds the contract: its end not
 * before its start, its source's URL terminated within a small buffer
 * (and empty for a server's line), present flags 0 or 1, a TTFT histogram whose bounds
 * ascend and end at +Inf. The point is freed either way (LeakSanitizer
 * checks the error paths free what they took).
 *
 * Then the input is read as lines, as `llmload merge` reads a file: each
 * line the parser accepts goes into a series (a lone one beside a copy
 * of itself a second later, so that every join has a span), and the
 * series is joined (its model "m"), both spans, so that what the parser lets through is
 * what the join must survive (a histogram of more buckets than a
 * struct prom_histogram holds once went through). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/scrapeline.h"
#include "util/util.h"

/* Parse each line of s into a series, as scrape_file_load does, and join
 * it over the whole timeline with both spans. */
static void join_lines(const char *s, size_t size)
{
    struct scrape_series srv;
    scrape_series_init(&srv);
    scrape_series_set_model(&srv, "m");
    const char *last = NULL;
    size_t last_len = 0;
    struct scrape_point p;
    char err[200];
    int gpu;
    memset(&p, 0, sizeof p);
    for (size_t off = 0; off < size;) {
        const char *nl = memchr(s + off, '\n', size - off);
        size_t len = nl ? (size_t)(nl - (s + off)) : size - off;
        if (len) {
            if (scrape_line_parse(s + off, len, &p, &gpu, NULL, 0, err, sizeof err) == 0) {
                last = s + off;
                last_len = len;
                scrape_series_add(&srv, &p); /* out of order: refused, p kept */
            }
            scrape_point_reset(&p);
        }
        off += len + 1;
    }
    /* One point: the same line again, a second later. */
    if (srv.n == 1 && scrape_line_parse(last, last_len, &p, &gpu, NULL, 0, err, sizeof err) == 0 &&
        p.end_abs_ns < UINT64_MAX - LL_NS_PER_SEC) {
        p.start_abs_ns += LL_NS_PER_SEC;
        p.end_abs_ns += LL_NS_PER_SEC;
        scrape_series_add(&srv, &p);
    }
    scrape_point_reset(&p);
    struct scrape_join j;
    for (int span = SCRAPE_SPAN_OUTER; span <= SCRAPE_SPAN_INNER; span++) {
        int rc = scrape_series_join(&srv, 0, UINT64_MAX, (enum scrape_span)span, &j);
        if (rc != 0 && rc != LL_E_NOTFOUND)
            abort();
    }
    scrape_series_reset(&srv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    memcpy(s, data, size);
    struct scrape_point p;
    char err[200], url[16];
    int gpu = -1;
    err[0] = '\0';
    memset(url, 'x', sizeof url);
    int rc = scrape_line_parse(s, size, &p, &gpu, url, sizeof url, err, sizeof err);
    if (gpu != 0 && gpu != 1)
        abort();
    /* The source's URL, cut to the buffer, always terminated; a server's
     * line has none. */
    if (!memchr(url, '\0', sizeof url) || (rc == 0 && !gpu && url[0]))
        abort();
    if (rc == 0) {
        if (p.end_abs_ns < p.start_abs_ns || (p.ok != 0 && p.ok != 1))
            abort();
        for (int m = 0; m < ENGINE_MEANING_COUNT; m++)
            if (p.present[m] > 1 || (!p.present[m] && p.value[m] != 0))
                abort();
        if (p.ttft_n) {
            if (!isinf(p.ttft_le[p.ttft_n - 1]))
                abort();
            for (size_t i = 1; i < p.ttft_n; i++)
                if (!(p.ttft_le[i] > p.ttft_le[i - 1]))
                    abort();
        }
    } else if (rc != LL_E_PROTO || !err[0] || strchr(err, '\n')) {
        abort();
    }
    scrape_point_reset(&p);
    join_lines(s, size);
    free(s);
    return 0;
}
