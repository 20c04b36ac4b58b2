/* fit.c: the numerical fits of a sweep's analysis (see fit.h): the
 * order-statistic interval of a quantile, a binomial's lower tail (the
 * sweep's stop rules test a fall against counting noise with it), the
 * least-squares slope, the 3x3 solver and the hinge fit it serves, and
 * Student's t. Moved out of sweep.c unchanged, so every figure stays
 * byte for byte what it was. */
#include "sweep/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measure/tdist.h"
#include "util/util.h"

static double binom_logpmf(uint64_t n, uint64_t k, double lq, double l1q)
{
    double nn = (double)n, kk = (double)k;
    return lgamma(nn + 1) - lgamma(kk + 1) - lgamma(nn - kk + 1) + kk * lq + (nn - kk) * l1q;
}

/* The number of samples at or below the true q-quantile is Binomial(n, q).
 * X(l) <= x_q exactly when at least l samples are <= x_q, so
 * P(X(l) <= x_q <= X(u)) = F(u - 1) - F(l - 1) with F the binomial CDF:
 * l is the largest rank with F(l - 1) <= alpha/2 and u the smallest with
 * F(u - 1) >= 1 - alpha/2. */
int fit_quantile_ci_ranks(uint64_t n, double q, double conf, uint64_t *lo, uint64_t *hi)
{
    if (n == 0 || !(q > 0 && q < 1) || !(conf > 0 && conf < 1))
        return LL_E_INVAL;
    double alpha = (1 - conf) / 2, lq = log(q), l1q = log1p(-q), cdf = 0;
    *lo = 0;
    *hi = 0;
    /* cdf holds F(k - 1) at the top of each pass, i.e. P(B < k). */
    for (uint64_t k = 1; k <= n; k++) {
        cdf += exp(binom_logpmf(n, k - 1, lq, l1q));
        double below = cdf; /* F(k - 1) */
        if (below <= alpha)
            *lo = k;
        if (below >= 1 - alpha) {
            *hi = k;
            break;
        }
    }
    return 0;
}

double fit_binom_cdf(uint64_t n, uint64_t k, double p)
{
    if (k >= n || p <= 0)
        return 1;
    if (p >= 1)
        return 0;
    double lq = log(p), l1q = log1p(-p), cdf = 0;
    for (uint64_t x = 0; x <= k; x++)
        cdf += exp(binom_logpmf(n, x, lq, l1q));
    return LL_MIN(cdf, 1.0);
}

/* log C(n, k), k <= n */
static double log_choose(uint64_t n, uint64_t k)
{
    return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);
}

double fit_hypergeom_upper_tail(uint64_t N, uint64_t K, uint64_t n, uint64_t k)
{
    if (k == 0)
        return 1;
    uint64_t top = LL_MIN(K, n);
    if (K > N || n > N || k > top)
        return 0;
    double all = log_choose(N, n), sum = 0;
    for (uint64_t x = k; x <= top; x++)
        if (n - x <= N - K)
            sum += exp(log_choose(K, x) + log_choose(N - K, n - x) - all);
    return LL_MIN(sum, 1.0);
}

double fit_slope(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return 0;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

/* Gaussian elimination with partial pivoting, then back substitution. */
int fit_solve3(double m[3][3], double r[3], double v[3])
{
    for (int c = 0; c < 3; c++) {
        int p = c;
        for (int i = c + 1; i < 3; i++)
            if (fabs(m[i][c]) > fabs(m[p][c]))
                p = i;
        if (fabs(m[p][c]) < 1e-12)
            return -1;
        if (p != c) {
            for (int j = 0; j < 3; j++) {
                double t = m[c][j];
                m[c][j] = m[p][j];
                m[p][j] = t;
            }
            double t = r[c];
            r[c] = r[p];
            r[p] = t;
        }
        for (int i = c + 1; i < 3; i++) {
            double k = m[i][c] / m[c][c];
            for (int j = c; j < 3; j++)
                m[i][j] -= k * m[c][j];
            r[i] -= k * r[c];
        }
    }
    for (int i = 2; i >= 0; i--) {
        double t = r[i];
        for (int j = i + 1; j < 3; j++)
            t -= m[i][j] * v[j];
        v[i] = t / m[i][i];
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define KNEE_GRID 400

/* Fit the hinge at breakpoint k; keeps it in *out when its residual is
 * the smallest so far. */
static void knee_try(const double *x, const double *y, size_t n, double k,
                     struct fit_knee *out)
{
    double m[3][3] = {{0}}, r[3] = {0}, v[3];
    for (size_t i = 0; i < n; i++) {
        double f[3] = {1, x[i], x[i] > k ? x[i] - k : 0};
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++)
                m[a][b] += f[a] * f[b];
            r[a] += f[a] * y[i];
        }
    }
    if (fit_solve3(m, r, v) != 0)
        return;
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double e = y[i] - (v[0] + v[1] * x[i] + v[2] * (x[i] > k ? x[i] - k : 0));
        sse += e * e;
    }
    if (sse < out->sse - 1e-12) {
        out->sse = sse;
        out->knee_x = k;
        out->slope_below = v[1];
        out->slope_above = v[1] + v[2];
        out->y_at_knee = v[0] + v[1] * k;
    }
}

/* For breakpoints k between the second smallest and the second largest x
 * (the data's own x, a grid, then a finer grid around the best), fit
 * y = a + b x + c max(0, x - k) by least squares and keep the k with the
 * smallest residual. The grid matters: the knee usually lies between two
 * steps. */
void fit_knee(const double *x, const double *y, size_t n, struct fit_knee *out)
{
    memset(out, 0, sizeof *out);
    out->sse = INFINITY;
    if (n < 4)
        return;
    double *xs = ll_malloc(n * sizeof *xs);
    memcpy(xs, x, n * sizeof *xs);
    qsort(xs, n, sizeof *xs, cmp_double);
    double k0 = xs[1], k1 = xs[n - 2], hi = xs[n - 1];
    free(xs);
    if (!(k1 > k0))
        return;
    for (size_t i = 0; i < n; i++)
        if (x[i] >= k0 && x[i] <= k1)
            knee_try(x, y, n, x[i], out);
    double step = (k1 - k0) / KNEE_GRID;
    for (int g = 0; g <= KNEE_GRID; g++)
        knee_try(x, y, n, k0 + step * g, out);
    double c = out->knee_x;
    for (int g = -100; g <= 100 && isfinite(out->sse); g++) {
        double k = c + step * g / 100;
        if (k >= k0 && k <= k1)
            knee_try(x, y, n, k, out);
    }
    out->found = isfinite(out->sse) && out->slope_below > 0 &&
                 out->slope_above < 0.5 * out->slope_below;
    out->edge = out->knee_x >= k1;
    out->beyond_x = out->edge ? hi : 0;
}

void fit_mean_ci95(const double *v, uint32_t n, double *mean, double *ci)
{
    double m = 0;
    for (uint32_t i = 0; i < n; i++)
        m += v[i];
    m /= n ? n : 1;
    *mean = m;
    *ci = 0;
    if (n < 2)
        return;
    double ss = 0;
    for (uint32_t i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    *ci = t975((double)n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n);
}

double fit_poisson_cdf(uint64_t k, double lambda)
{
    if (!(lambda > 0))
        return 1;
    /* Summed from k down: below the mean each term is smaller than the
     * one above it, so the sum stops once a term no longer adds. */
    double l = log(lambda), cdf = 0;
    for (uint64_t x = k + 1; x-- > 0;) {
        double t = exp((double)x * l - lambda - lgamma((double)x + 1));
        cdf += t;
        if ((double)x < lambda && t < cdf * 1e-17)
            break;
    }
    return LL_MIN(cdf, 1.0);
}
