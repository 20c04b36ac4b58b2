/* libFuzzer target for hist.jsonl's reader (histlog.c): the bytes as one
 * line and as a whole log. Checks that no input crashes it, that every
 * rejection is one line (a whole log's starting with the file name), and
 * that an accepted line writes back to a line that parses to the same
 * window (the format is lossless). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/histlog.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[512];
    struct histlog_window w, back, total;
    histlog_window_init(&w);
    histlog_window_init(&back);
    histlog_window_init(&total);

    err[0] = '\0';
    if (histlog_parse_line(text, size, &w, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n') || !histlog_window_empty(&w))
            abort();
    } else {
        char *line = histlog_line(&w);
        if (histlog_parse_line(line, strlen(line), &back, err, sizeof err) != 0)
            abort();
        char *again = histlog_line(&back);
        if (strcmp(line, again) != 0 || back.ok != w.ok || back.failed != w.failed ||
            back.t_ns != w.t_ns || back.step != w.step)
            abort();
        free(line);
        free(again);
    }

    uint64_t windows = 0;
    err[0] = '\0';
    if (histlog_merge_text("fuzz", text, size, HISTLOG_ALL_STEPS, &total, &windows, err,
                           sizeof err) != 0) {
        if (strncmp(err, "fuzz:", 5) != 0 || strchr(err, '\n'))
            abort();
    }
    histlog_window_free(&w);
    histlog_window_free(&back);
    histlog_window_free(&total);
    return 0;
}
