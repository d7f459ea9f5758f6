// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: gamma_cody
// @depends: rmath_utils
// @source: W. J. Cody, "An overview of software development for special functions", Lecture
//          Notes in Mathematics 506 (1976), and W. J. Cody, ACM TOMS Algorithm 715 (SPECFUN,
//          1993), function GAMMA: a rational approximation of gamma on (1, 2) (coefficients P,
//          Q), Stirling's series for x >= 12 (coefficients C, from Hart et al., "Computer
//          Approximations", 1968), the recurrence in between and the reflection formula below 0.
//
// The gamma function as Cody's Bessel routines (RIBESL, RJBESL) evaluate it, which is what R's
// bessel_i and bessel_j use in their normalisations; gammafn (SLATEC) differs from it in the
// last bits.  Poles and overflow give +Inf.

__constant double gamma_cody_p[8] = {
    -1.71618513886549492533811,   24.7656508055759199108314,
    -379.804256470945635097577,   629.331155312818442661052,
    866.966202790413211295064,    -31451.2729688483675254357,
    -36144.4134186911729807069,   66456.1438202405440627855
};
__constant double gamma_cody_q[8] = {
    -30.8402300119738975254353,   315.350626979604161529144,
    -1015.15636749021914166146,   -3107.77167157231109440444,
    22538.1184209801510330112,    4755.84627752788110767815,
    -134659.959864969306392456,   -115132.259675553483497211
};
__constant double gamma_cody_c[7] = {
    -.001910444077728,            8.4171387781295e-4,
    -5.952379913043012e-4,        7.93650793500350248e-4,
    -.002777777777777681622553,   .08333333333333333331554247,
    .0057083835261
};

#define GAMMA_CODY_LNSQRT2PI .9189385332046727417803297   /* log(sqrt(2 pi)) */
#define GAMMA_CODY_XBIG      171.624
#define GAMMA_CODY_XMININ    2.23e-308
#define GAMMA_CODY_EPS       2.22e-16

double gamma_cody(double x)
{
    int parity = 0;
    double fact = 1., res;
    double y = x;
    if (y <= 0.) {
        // reflection: gamma(x) = -pi / (y sin(pi y) gamma(y)) with y = -x, through y + 1
        y = -x;
        double y1 = trunc(y);
        res = y - y1;
        if (res == 0.)
            return ML_POSINF;
        if (y1 != trunc(y1 * .5) * 2.)
            parity = 1;
        fact = -M_PI / sin(M_PI * res);
        y += 1.;
    }
    if (y < GAMMA_CODY_EPS) {
        if (y >= GAMMA_CODY_XMININ)
            res = 1. / y;
        else
            return ML_POSINF;
    } else if (y < 12.) {
        double y1 = y, z;
        int n = 0;
        if (y < 1.) {
            z = y;
            y += 1.;
        } else {
            n = (int)y - 1;
            y -= (double)n;
            z = y - 1.;
        }
        // gamma(1 + z), 0 <= z < 1, by the rational approximation
        double xnum = 0., xden = 1.;
        for (int i = 0; i < 8; ++i) {
            xnum = (xnum + gamma_cody_p[i]) * z;
            xden = xden * z + gamma_cody_q[i];
        }
        res = xnum / xden + 1.;
        if (y1 < y) {
            res /= y1;
        } else if (y1 > y) {
            for (int i = 0; i < n; ++i) {
                res *= y;
                y += 1.;
            }
        }
    } else {
        if (y > GAMMA_CODY_XBIG)
            return ML_POSINF;
        double ysq = y * y;
        double sum = gamma_cody_c[6];
        for (int i = 0; i < 6; ++i)
            sum = sum / ysq + gamma_cody_c[i];
        sum = sum / y - y + GAMMA_CODY_LNSQRT2PI;
        sum += (y - .5) * log(y);
        res = exp(sum);
    }
    if (parity)
        res = -res;
    if (fact != 1.)
        res = fact / res;
    return res;
}

#undef GAMMA_CODY_LNSQRT2PI
#undef GAMMA_CODY_XBIG
#undef GAMMA_CODY_XMININ
#undef GAMMA_CODY_EPS
