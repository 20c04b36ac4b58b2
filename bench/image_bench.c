/* image_bench.c: the cost of one synthetic image (bench/image.sh): paint,
 * encode and base64, per size and format, the median of 5 runs of n
 * images each, and the bytes each image sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload/image.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: a busy machine barely moves it */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    static const unsigned sizes[][2] = {{256, 256}, {512, 512}, {1024, 768}, {1920, 1080}};
    static const enum image_format fmts[] = {IMAGE_PNG, IMAGE_JPEG};
    struct image_buf b = {0};
    char err[128];
    char *b64 = NULL;
    printf("%-6s %-10s %8s %10s %12s %10s\n", "format", "size", "tokens", "KB", "b64 KB",
           "cpu ms/img");
    for (size_t f = 0; f < 2; f++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            double runs[5];
            size_t raw = 0, enc = 0;
            for (int r = 0; r < 5; r++) {
                double t0 = now_s();
                for (int i = 0; i < n; i++) {
                    if (image_encode(fmts[f], 1, (uint64_t)(r * n + i), 0, sizes[s][0], sizes[s][1],
                                     &b, err, sizeof err) != 0) {
                        fprintf(stderr, "%s\n", err);
                        return 1;
                    }
                    b64 = realloc(b64, image_base64_len(b.len));
                    enc = image_base64(b.data, b.len, b64);
                    raw = b.len;
                }
                runs[r] = (now_s() - t0) / n * 1e3;
            }
            qsort(runs, 5, sizeof runs[0], cmp_d);
            char size[32];
            snprintf(size, sizeof size, "%ux%u", sizes[s][0], sizes[s][1]);
            printf("%-6s %-10s %8u %10.1f %12.1f %10.3f\n", image_format_name(fmts[f]), size,
                   image_tokens(sizes[s][0], sizes[s][1]), raw / 1024.0, enc / 1024.0, runs[2]);
        }
    }
    free(b64);
    image_buf_free(&b);
    return 0;
}
