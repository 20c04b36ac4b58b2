/* fuzz_scrapeline.c: libFuzzer target for scrape_line_parse (a line of
 * server_metrics.jsonl read back by `llmload merge`, metrics/scrapeline.c).
 *
 * The input is copied to a buffer of exactly its size, so any read past n
 * is ASan's to catch. A rejected line gives LL_E_PROTO and a one-line
 * reason; an accepted one a point that holds the contract: its end not
 * before its start, its source's URL terminated within a small buffer
 * (and empty for a server's line), present flags 0 or 1, a TTFT histogram whose bounds
 * ascend and end at +Inf. The point is freed either way (LeakSanitizer
 * checks the error paths free what they took). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/scrapeline.h"
#include "util/util.h"

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
    free(s);
    return 0;
}
