/* hist_bench.c: the cost of the histogram's hot operations, printed as a
 * table on stdout. Run through bench/hist.sh. Not part of `make test`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hist.h"
#include "util/rng.h"
#include "util/util.h"

/* Keeps results alive so the compiler cannot drop the timed loops. */
static volatile uint64_t sink;

static void row(const char *what, uint64_t n, uint64_t elapsed_ns)
{
    printf("%-34s %12llu %10.2f\n", what, (unsigned long long)n,
           (double)elapsed_ns / (double)n);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ULL;
    if (n < 1000)
        n = 1000;
    const size_t nvals = 1 << 16;
    uint64_t *vals = ll_malloc(nvals * sizeof(*vals));
    struct rng r;
    rng_seed(&r, 1, 0);
    /* Latency-like values: 1 us to ~10 s, log-spread. */
    for (size_t i = 0; i < nvals; i++)
        vals[i] = 1000 + (rng_next(&r) >> (rng_next(&r) % 30 + 30));

    struct hist *h = hist_new();
    printf("%-34s %12s %10s\n", "operation", "iterations", "ns/op");

    uint64_t t0 = ll_now_ns();
    for (uint64_t i = 0; i < n; i++)
        hist_record(h, vals[i & (nvals - 1)]);
    row("hist_record", n, ll_now_ns() - t0);

    t0 = ll_now_ns();
    for (uint64_t i = 0; i < n; i++)
        hist_record_n(h, vals[i & (nvals - 1)], 3);
    row("hist_record_n", n, ll_now_ns() - t0);

    static const double pcts[] = {50, 99, 99.9};
    static const char *const names[] = {"hist_percentile p50",
                                        "hist_percentile p99",
                                        "hist_percentile p99.9"};
    uint64_t nq = n / 1000 + 1000;
    for (int k = 0; k < 3; k++) {
        uint64_t acc = 0;
        t0 = ll_now_ns();
        for (uint64_t i = 0; i < nq; i++)
            acc += hist_percentile(h, pcts[k]);
        row(names[k], nq, ll_now_ns() - t0);
        sink = acc;
    }

    struct hist *m = hist_new();
    t0 = ll_now_ns();
    for (uint64_t i = 0; i < nq; i++)
        hist_merge(m, h);
    row("hist_merge (full histogram)", nq, ll_now_ns() - t0);

    uint64_t bytes = 0;
    t0 = ll_now_ns();
    for (uint64_t i = 0; i < 1000; i++) {
        char *s = hist_to_string(h);
        bytes += strlen(s);
        free(s);
    }
    row("hist_to_string", 1000, ll_now_ns() - t0);
    printf("serialised size: %llu bytes\n", (unsigned long long)(bytes / 1000));
    sink = hist_count(m);

    hist_free(m);
    hist_free(h);
    free(vals);
    return 0;
}
