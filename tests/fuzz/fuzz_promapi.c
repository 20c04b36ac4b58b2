/* fuzz_promapi.c: libFuzzer target for promapi.c (the JSON answer of a
 * Prometheus HTTP API, read by --prometheus, and the selector check).
 *
 * The input is copied to a buffer of exactly its size, so any read past n
 * is ASan's to catch. An accepted answer must hold what the contract says
 * (names and label strings NUL-terminated, value_len their length, groups
 * distinct), and writing it back out as text must give a body that the
 * text parser takes (its own fuzzer checks what it reads); a refused
 * answer leaves the answer empty with a reason. The same bytes as a
 * selector: accepted, its matchers put back in braces check again to the
 * same matchers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/prom.h"
#include "metrics/promapi.h"
#include "util/strbuf.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_answer(const char *s, size_t size)
{
    struct promapi_answer a;
    char err[300] = "";
    int rc = promapi_answer_parse(s, size, &a, err, sizeof err);
    if (rc != 0) {
        if (rc != LL_E_PROTO || err[0] == '\0' || a.n != 0 || a.series != NULL)
            abort();
        return;
    }
    for (size_t i = 0; i < a.n; i++) {
        const struct promapi_series *x = &a.series[i];
        if (!x->name)
            abort();
        for (size_t k = 0; k < x->n_labels; k++)
            if (strlen(x->labels[k].value) != x->labels[k].value_len)
                abort();
    }
    const char *g[8];
    size_t n = promapi_groups(&a, "pod", g, 8);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(g[i], g[j]) == 0)
                abort();
    struct strbuf b;
    strbuf_init(&b);
    promapi_render(&a, "pod", n ? g[0] : NULL, &b);
    struct prom_scrape *ps = NULL;
    if (prom_scrape_parse(b.data ? b.data : "", b.len, &ps) != 0)
        abort();
    prom_scrape_free(ps);
    double age, iv;
    promapi_staleness(&a, "pod", NULL, 1e9, &age, &iv);
    strbuf_free(&b);
    promapi_answer_reset(&a);
}

static void check_selector(const char *s)
{
    char inner[PROMAPI_MAX_SELECTOR + 1], err[300] = "";
    int rc = promapi_selector_check(s, inner, sizeof inner, err, sizeof err);
    if (rc == LL_E_INVAL && err[0] == '\0')
        abort();
    if (rc != 0)
        return;
    char again[PROMAPI_MAX_SELECTOR + 4], inner2[PROMAPI_MAX_SELECTOR + 1];
    snprintf(again, sizeof again, "{%s}", inner);
    if (promapi_selector_check(again, inner2, sizeof inner2, err, sizeof err) != 0 ||
        strcmp(inner, inner2) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    check_answer(s, size);
    s[size] = '\0';
    check_selector(s);
    free(s);
    return 0;
}
