// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: ptukey_best
// @depends: pnorm, stirlerr, dpq, rmath_constants, rmath_utils
// @source: the studentized range as C. W. Copenhaver and B. S. Holland (1988), J. Statist.
//          Comput. Simul. 30, 1-15, structure it (the range of nmeans normals, integrated over
//          the chi density of the standard deviation), with both integrals to double
//          precision: the range distribution W(w) = cc int phi(z) (Phi(z) - Phi(z - w))^(cc-1) dz
//          and its complement 1 - W(w) = cc int phi(z) Phi(z)^m (1 - (1 - Phi(z - w)/Phi(z))^m)
//          dz (m = cc - 1, no subtraction from one) by 20-point Gauss-Legendre panels of width 1
//          (Abramowitz & Stegun 25.4.30), Phi(z) - Phi(z - w) for w < 1/2 by the Taylor series of
//          the normal integral about the midpoint (phi(c + t) = phi(c) sum_k He_k(c) (-t)^k / k!, the Hermite polynomials of A&S 22.7.14);
//          the outer integral over t = log s by the trapezoidal rule, which converges
//          geometrically for analytic integrands decaying on the real line (L. N. Trefethen &
//          J. A. C. Weideman (2014), "The exponentially convergent trapezoidal rule", SIAM
//          Review 56, 385-458), step 0.2 / sqrt(df + 3), df + rr (cc - 1) + 3 in the lower tail
//          (the integrand decays in the strip
//          |Im t| < pi / 4 about as a chi density of df degrees of freedom: an error near
//          exp(-40)), from the largest term of a coarse scan outwards until the terms fall below
//          1e-17 of the largest;
//          everything on the log scale, so neither tail underflows.
//
// The `best` accuracy mode's ptukey for q > 0 finite, df >= 2 (ptukey.cl calls it under
// DASKCL_ACCURACY_BEST): about 1e-14 relative in both tails and on the log scale, where R's
// fixed rules reach about 1e-8 absolute.  The smaller tail is integrated;
// the other is one minus it.  NaN where a sum fails (ptukey then takes R's algorithm).  Cost:
// 50 to 400 inner integrals (by df) of 360 to 600 nodes per call.

__constant double ptkb_x[10] = {
    0.0765265211334973337546404, 0.2277858511416450780804962, 0.3737060887154195606725482,
    0.5108670019508270980043641, 0.6360536807265150254528367, 0.7463319064601507926143051,
    0.8391169718222188233945291, 0.9122344282513259058677524, 0.9639719272779137912676661,
    0.9931285991850949247861224};
__constant double ptkb_w[10] = {
    0.1527533871307258506980843, 0.1491729864726037467878287, 0.1420961093183820513292983,
    0.1316886384491766268984945, 0.1181945319615184173123774, 0.1019301198172404350367501,
    0.0832767415767047487247581, 0.0626720483341090635695065, 0.0406014298003869413310400,
    0.0176140071391521183118620};

// streaming log-sum-exp: (*m, *s) hold log of s exp(m)
static inline void ptkb_add(double *m, double *s, double l)
{
    if (l <= *m) {
        *s += exp(l - *m);
    } else {
        *s = *s * exp(*m - l) + 1.;
        *m = l;
    }
}

// log(1 - exp(x)), x < 0
static inline double ptkb_log1mexp(double x)
{
    return (x > -M_LN2) ? log(-expm1(x)) : log1p(-exp(x));
}

// log(Phi(z) - Phi(z - w)), w > 0
static double ptkb_logdiff(double z, double w)
{
    if (w < .5) {   // sum_{k even} He_k(c) h^(k+1) / (k+1)!, c the midpoint, h = w / 2
        double h = .5 * w, c = z - h;
        double hm = 1., hk = c, pw = h, sum = h;   // He_(k-1), He_k, h^k / k!
        for (int k = 1; k < 48; k++) {
            pw *= h / (k + 1);
            if (k % 2 == 0) {
                double t = hk * pw;
                sum += t;
                if (k > 16 && fabs(t) < 1e-18 * fabs(sum))
                    break;
            }
            double hn = c * hk - k * hm;
            hm = hk;
            hk = hn;
        }
        return M_LN2 - M_LN_SQRT_2PI - .5 * c * c + log(sum);
    }
    if (z <= 0.) {
        double la = pnorm5(z, 0., 1., 1, 1);
        return la + ptkb_log1mexp(pnorm5(z - w, 0., 1., 1, 1) - la);
    }
    if (z - w >= 0.) {
        double lb = pnorm5(z - w, 0., 1., 0, 1);
        return lb + ptkb_log1mexp(pnorm5(z, 0., 1., 0, 1) - lb);
    }
    return log1p(-(pnorm5(z, 0., 1., 0, 0) + pnorm5(z - w, 0., 1., 1, 0)));
}

// log of the integrand of the range distribution (upper: of its complement) at z, without phi
static inline double ptkb_inner_term(double z, double w, double m, int upper)
{
    if (!upper)
        return m * ptkb_logdiff(z, w);
    double la = pnorm5(z, 0., 1., 1, 1), d = pnorm5(z - w, 0., 1., 1, 1) - la;
    double r = (d < -700.) ? log(m) + d : log(-expm1(m * log1p(-exp(d))));
    return m * la + r;
}

// log P(range of cc normals <= w), or log of its complement (upper)
static double ptkb_rng1(double w, double cc, int upper)
{
    double m = cc - 1.;
    double lo = -9., hi = 9.;
    if (upper) {
        lo = fmax(-9., .5 * w - 7.5);
        hi = fmax(9., .5 * w + 7.5);
    }
    int n = (int)ceil(hi - lo);
    double h = (hi - lo) / n, mx = -INFINITY, s = 0.;
    for (int i = 0; i < n; i++) {
        double c = lo + (i + .5) * h;
        for (int j = 0; j < 20; j++) {
            double x = (j < 10) ? -ptkb_x[j] : ptkb_x[j - 10];
            double z = c + .5 * h * x;
            double l = ptkb_inner_term(z, w, m, upper) - .5 * z * z + log(ptkb_w[j % 10]);
            if (l > -INFINITY)
                ptkb_add(&mx, &s, l);
        }
    }
    return log(cc * .5 * h) - M_LN_SQRT_2PI + mx + log(s);
}

// the same for the maximum of rr independent ranges
static double ptkb_range(double w, double rr, double cc, int upper)
{
    double lw = ptkb_rng1(w, cc, upper);
    if (!upper)
        return rr * lw;
    if (rr == 1.)
        return lw;
    // 1 - (1 - u)^rr; for u > 1/2 with 1 - u integrated directly
    if (lw > -M_LN2)
        return ptkb_log1mexp(rr * fmin(ptkb_rng1(w, cc, 0), -DBL_MIN));
    return (lw < -700.) ? log(rr) + lw : log(-expm1(rr * log1p(-exp(lw))));
}

// 1 + x - e^x
static inline double ptkb_1pxme(double x)
{
    if (fabs(x) > .5)
        return -(expm1(x) - x);
    double t = x * x * .5, s = 0.;
    for (int k = 2; k < 30 && fabs(t) > 1e-18 * fabs(s); k++) {
        s += t;
        t *= x / (k + 1);
    }
    return -s;
}

// log of the outer integrand in t = log s (log of the chi density of s times s, times the tail)
static inline double ptkb_outer(double t, double q, double rr, double cc, double df,
                                double lc, int upper)
{
    return lc + .5 * df * ptkb_1pxme(2. * t) + ptkb_range(q * exp(t), rr, cc, upper);
}

double ptukey_best(double q, double rr, double cc, double df, int lower_tail, int log_p)
{
    // the smaller tail, told by that of the range (df = Inf); near the median either will do
    int upper = ptkb_range(q, rr, cc, 0) > -M_LN2;
    double l;
    if (!isfinite(df)) {
        l = ptkb_range(q, rr, cc, upper);
    } else {
        double a = .5 * df;
        double lc = M_LN2 + .5 * log(a) - M_LN_SQRT_2PI - stirlerr(a);
        // (the lower tail's W^rr ~ (q s)^(rr (cc - 1)) moves the peak out to s^2 = 1 + that / df)
        double h = .2 / sqrt(df + (upper ? 0. : rr * (cc - 1.)) + 3.);
        double t0 = 0., l0 = -INFINITY;
        for (double t = -30.; t <= 2.; t += 2.) {
            double v = ptkb_outer(t, q, rr, cc, df, lc, upper);
            if (v > l0) {
                l0 = v;
                t0 = t;
            }
        }
        if (!(l0 > -INFINITY))
            return ML_NAN;
        double mx = l0, s = 1.;
        for (int side = -1; side <= 1; side += 2) {
            double peak = l0, prev = l0;
            for (int i = 1;; i++) {
                if (i > 2000)
                    return ML_NAN;
                double v = ptkb_outer(t0 + side * i * h, q, rr, cc, df, lc, upper);
                ptkb_add(&mx, &s, v);
                peak = fmax(peak, v);
                if (v < prev && v < peak - 39.)
                    break;
                prev = v;
            }
        }
        l = mx + log(s) + log(h);
    }
    if (isnan(l))
        return ML_NAN;
    if (l > 0.)
        l = 0.;
    if (upper == !lower_tail)
        return log_p ? l : exp(l);
    return log_p ? ptkb_log1mexp(l) : -expm1(l);
}
