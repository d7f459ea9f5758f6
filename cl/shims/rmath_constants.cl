// SPDX-License-Identifier: GPL-2.0-or-later
// @provides: M_SQRT_2PI, M_LN_SQRT_2PI, M_LN_SQRT_PId2, M_1_SQRT_2PI, M_SQRT_32, M_2PI, M_LN_2PI, M_SQRT_PI, M_LN_SQRT_PI, M_SQRT_2dPI, M_LOG10_2
// @depends:
//
// Mathematical constants used by Mathlib that OpenCL C does not predefine (it does define
// M_E, M_LN2, M_LN10, M_PI, M_PI_2, M_1_PI, M_2_SQRTPI, M_SQRT2, M_SQRT1_2 and DBL_* for
// doubles). Values to 30 significant digits.

#define M_SQRT_32      5.656854249492380195206754896838   /* sqrt(32) */
#define M_2PI          6.283185307179586476925286766559   /* 2 pi */
#define M_SQRT_2PI     2.506628274631000502415765284811   /* sqrt(2 pi) */
#define M_LN_2PI       1.837877066409345483560659472811   /* log(2 pi) */
#define M_1_SQRT_2PI   0.398942280401432677939946059934   /* 1 / sqrt(2 pi) */
#define M_SQRT_PI      1.772453850905516027298167483341   /* sqrt(pi) */
#define M_SQRT_2dPI    0.797884560802865355879892119869   /* sqrt(2 / pi) */
#define M_LN_SQRT_PI   0.572364942924700087071713675677   /* log(sqrt(pi)) */
#define M_LN_SQRT_2PI  0.918938533204672741780329736406   /* log(sqrt(2 pi)) */
#define M_LN_SQRT_PId2 0.225791352644727432363097614947   /* log(sqrt(pi / 2)) */
#define M_LOG10_2      0.301029995663981195213738894724   /* log10(2) */
