/* fuzz_smi.c: libFuzzer target for smi_line_parse (nvidia-smi's CSV, read
 * from a child's stdout by --gpu-sampler nvidia-smi).
 *
 * The input is copied to a buffer of exactly its size, so any read past n
 * is ASan's to catch. An accepted line must hold what the contract says:
 * an index in range, values finite and non-negative where present, zero
 * where missing, a NUL-terminated timestamp; and its values, written back
 * as a line, parse to the same ones. Every line goes through a period too,
 * whose point must be ok only with no malformed line in it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/smi.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    memcpy(s, data, size);
    struct smi_line l, back;
    char err[200];
    struct smi_group g;
    struct scrape_point p;
    memset(&g, 0, sizeof g);
    int rc = smi_line_parse(s, size, &l, err, sizeof err);
    if (rc == 0) {
        if (l.index > SMI_MAX_INDEX || memchr(l.timestamp, '\0', sizeof l.timestamp) == NULL)
            abort();
        char line[400];
        int n = snprintf(line, sizeof line, "ts,%u", l.index);
        for (int f = 0; f < SMI_VALUE_COUNT; f++) {
            if (l.present[f] > 1 || (l.present[f] && !(isfinite(l.value[f]) && l.value[f] >= 0)) ||
                (!l.present[f] && l.value[f] != 0))
                abort();
            n += l.present[f] ? snprintf(line + n, sizeof line - (size_t)n, ",%.17g", l.value[f])
                              : snprintf(line + n, sizeof line - (size_t)n, ",[N/A]");
        }
        if (smi_line_parse(line, (size_t)n, &back, err, sizeof err) != 0 || back.index != l.index)
            abort();
        for (int f = 0; f < SMI_VALUE_COUNT; f++)
            if (back.present[f] != l.present[f] || back.value[f] != l.value[f])
                abort();
        smi_group_add(&g, &l, 1);
        if (smi_group_take(&g, &p) != 1 || !p.ok || p.gpus != 1)
            abort();
    } else {
        if (rc != LL_E_PROTO || err[0] == '\0')
            abort();
        smi_group_bad(&g, 1);
        if (smi_group_take(&g, &p) != 1 || p.ok)
            abort();
    }
    free(s);
    return 0;
}
