/* libFuzzer target for the comma-separated lists of the command line:
 * --slo (slo_parse), --expect (expect_parse) and compare's --fail-on
 * (cmp_thresholds_parse), all walked by ll_list_item and ll_list_next,
 * which take blanks around an item and its '=', operator or ':'. Any bytes
 * (up to the first NUL) as each spec. Checks that no parse crashes, that a
 * rejection always says why, and that what is accepted reads back: an SLO
 * formats to a spec that parses to the same thresholds, an --expect set
 * formats (its items kept without blanks) to one that parses to the same
 * items, and a --fail-on row holds no colon and no blank at either end
 * (its name is checked against compare's rows later). */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "measure/compare.h"
#include "measure/expect.h"
#include "measure/slo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_slo(const char *spec)
{
    struct slo s, t;
    char err[512], buf[256];
    err[0] = '\0';
    if (slo_parse(spec, &s, err, sizeof err) != 0) {
        if (!err[0])
            abort(); /* every rejection explains itself */
        return;
    }
    slo_format(&s, buf, sizeof buf);
    if (slo_parse(buf, &t, err, sizeof err) != 0)
        abort(); /* the canonical form must parse */
    if (t.ttft_ns != s.ttft_ns || t.tpot_ns != s.tpot_ns || t.e2e_ns != s.e2e_ns)
        abort();
}

static void check_expect(const char *spec)
{
    static struct expect_set s, t;
    char err[512], buf[EXPECT_MAX * 100];
    err[0] = '\0';
    if (expect_parse(spec, &s, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        return;
    }
    expect_format(&s, buf, sizeof buf);
    for (const char *q = buf; *q; q++)
        if (isspace((unsigned char)*q) && (q == buf || q[-1] == ',' || !q[1] || q[1] == ','))
            abort(); /* items are kept without the blanks around them */
    if (expect_parse(buf, &t, err, sizeof err) != 0 || t.n != s.n)
        abort();
    for (size_t i = 0; i < s.n; i++)
        if (strcmp(t.item[i].text, s.item[i].text) || strcmp(t.item[i].metric, s.item[i].metric) ||
            t.item[i].op != s.item[i].op || t.item[i].unit != s.item[i].unit ||
            !(t.item[i].bound == s.item[i].bound ||
              (isnan(t.item[i].bound) && isnan(s.item[i].bound))))
            abort();
}

static void check_fail_on(const char *spec)
{
    struct cmp_threshold th[16];
    size_t n = 0;
    char err[512];
    err[0] = '\0';
    if (cmp_thresholds_parse(spec, th, 16, &n, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(th[i].row); /* its name is checked later, by compare */
        if (!len || isspace((unsigned char)th[i].row[0]) ||
            isspace((unsigned char)th[i].row[len - 1]) || strchr(th[i].row, ':') ||
            !isfinite(th[i].amount) || th[i].amount == 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    check_slo(spec);
    check_expect(spec);
    check_fail_on(spec);
    free(spec);
    return 0;
}
