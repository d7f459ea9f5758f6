// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: as241_a, as241_b, as241_c, as241_d, as241_e, as241_f
// @depends:
// @source: M. J. Wichura (1988), "Algorithm AS 241: The percentage points of the normal
//          distribution", Applied Statistics 37(3), 477-484 (PPND16, about 16 digits).
//
// The coefficients of PPND16's three rational approximations of degree 7 / 7 of the normal
// quantile, lowest power first: A / B for |q| <= 0.425, C / D for r <= 5, E / F beyond (qnorm.cl
// says in what).  qnorm and the normal generator (rnorm.cl) evaluate them; static, so that a unit
// compiled on its own (DASKCL_LINK) holds its own copy rather than linking to a shared one.

static __constant double as241_a[8] = {   // numerator, |q| <= 0.425
    3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3,
    1.3731693765509461125e+4, 4.5921953931549871457e+4, 6.7265770927008700853e+4,
    3.3430575583588128105e+4, 2.5090809287301226727e+3
};
static __constant double as241_b[8] = {   // denominator, |q| <= 0.425
    1., 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
    2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4,
    5.2264952788528545610e+3
};
static __constant double as241_c[8] = {   // numerator, r <= 5
    1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
    3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
    2.27238449892691845833e-2, 7.74545014278341407640e-4
};
static __constant double as241_d[8] = {   // denominator, r <= 5
    1., 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
    1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
    1.05075007164441684324e-9
};
static __constant double as241_e[8] = {   // numerator, r > 5
    6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
    2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
    2.71155556874348757815e-5, 2.01033439929228813265e-7
};
static __constant double as241_f[8] = {   // denominator, r > 5
    1., 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
    7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
    2.04426310338993978564e-15
};
