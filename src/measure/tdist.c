/* tdist.c: Student's t quantile (tdist.h). */
#include "measure/tdist.h"

#include <math.h>

double t975(double df)
{
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                               2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                               2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                               2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (!(df >= 1 - 1e-9))
        return INFINITY;
    if (df < 30) {
        /* Between two rows, log t linear in 1 / df (exact at the rows,
         * past a rounding error: 3.999... is 4). */
        double d = floor(df + 1e-9);
        int k = (int)d;
        if (df - d < 1e-9 || k >= 30)
            return t[k];
        double w = (1 / d - 1 / df) / (1 / d - 1 / (d + 1));
        return exp(log(t[k]) + w * (log(t[k + 1]) - log(t[k])));
    }
    double d = df;
    /* z + g1/d + g2/d^2 + g3/d^3, the Cornish-Fisher terms of t. */
    const double z = 1.959963984540054, z2 = z * z;
    double g1 = (z2 + 1) * z / 4;
    double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    return z + g1 / d + g2 / (d * d) + g3 / (d * d * d);
}
