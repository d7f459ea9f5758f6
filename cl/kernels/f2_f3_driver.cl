// SPDX-License-Identifier: GPL-2.0-or-later
// The f2_f3 entry points, shared by every f2_f3_<family>_<link>.cl.
//
// daskcl/glm.py appends this file to the program of one family file (layers 0-2 and the family
// file, assembled through the dependency index), so a program is one family/link.  The family
// file provides
//
//   #define F2F3_NOBS n                     doubles per observation in the prepared table, o[0] = alpha
//   f2f3_prepare(y, wt, alpha, double *o)   the table row of one observation (once per data set)
//   f2f3_term(eta, const double *o, double *l, double *g)
//                                           its negative log-likelihood l and g = dl/deta
//
// and the host sets, as build options (-D...):
//
//   F2F3_L2     l2, the number of coefficients (the program is specialised on it)
//   F2F3_L2P    l2 rounded up to even (x rows are padded with zeros to L2P)
//   F2F3_NOBSP  F2F3_NOBS rounded up to even
//   F2F3_WG     work-group size (a power of two)
//   F2F3_TILE   observations staged in local memory at a time (item kernel; a multiple of RU)
//   F2F3_PPW    grid points per work-item (item kernel)
//   F2F3_RU     observations per step of the inner loop (item kernel)
//   F2F3_FACT   1: the grid is factorial, decoded on the device; 0: b is given row by row
//   F2F3_PB     grid points per work-group (tile kernel; a power of two, 4 <= PB <= WG)
//   F2F3_L2Q    l2 padded (tile kernel; x rows padded to it): to a multiple of 8 with MMA,
//               else of 2 WG / (PB / 4)
//   F2F3_MMA    1: the tile kernel's products on fp64 tensor cores (NVIDIA sm_80+; PB = WG / 2)
//
// Grid points: b is (m, L2), row j = point j of this launch.  In the factorial form bsrc holds
// the value vectors of all coefficients one after the other and fdesc[3k..3k+2] = (offset,
// count, stride) of coefficient k; point J = j0 + j of the whole grid takes value
// (J / stride_k) % count_k of coefficient k, stride_k = count_{k+1} ... count_{l2-1}: the
// order of itertools.product, the last coefficient fastest.
//
// Two kernels compute, for each grid point j with d = b_j - mu and eta_i = alpha_i + x_i . b_j,
//
//   qf_j = 0.5 d' P d + sum_i l_i(eta_i),       grad_j = P d + sum_i x_i g_i(eta_i),
//
// never storing eta:
//
// f2_f3_item   one work-item per PPW grid points, for l2 up to a few dozen.  b_j and the
//              gradient accumulators live in private arrays of compile-time size (registers
//              on a GPU); the work-group stages TILE rows of x and of the observation table in
//              local memory, and every work-item reads the same element at the same time (a
//              broadcast), as double2.  Per observation: the dot product with 4 partial sums,
//              the family term, and l2 fused multiply-adds into the gradient; RU observations
//              per step give the GPU independent chains of transcendental work to overlap.
//
// f2_f3_tile   PB grid points per work-group, for l2 from about 8 to a few dozen.  Per tile of
//              TILE observations, three steps separated by barriers (the scheme of flash
//              attention, which fuses its two products around an elementwise softmax):
//                1. eta (TILE x PB) = x (TILE x l2) b' (l2 x PB) + alpha, register-blocked:
//                   work-item (a, c), a < PB/4, c < C = WG / (PB/4), computes points 2a, 2a+1,
//                   2a+PB/2, 2a+PB/2+1 at observations c, c + C, ..., each loaded operand used
//                   4 or TM times, and stores them to local memory;
//                2. the terms, one work-item per point and WG/PB of them per observation: l is
//                   summed in a register, g overwrites eta;
//                3. grad (PB x l2) += g' x, register-blocked: work-item (a, c) keeps the same
//                   4 points' coefficient pairs c, c + C, ... in registers.
//              b of the work-group's points stays in local memory; rows of b, x and eta are
//              strided so that the loads of a warp hit distinct banks.  The terms run with
//              little private state (the item kernel evaluates them beside 2 l2 doubles of
//              registers per point), so more warps hide their latency.  With F2F3_MMA the two
//              products are 8x8x4 blocks on the fp64 tensor cores (inline PTX
//              mma.sync.m8n8k4.f64, NVIDIA PTX ISA; the fragment layout is at f2f3_mma): warp w
//              owns point blocks w and w + WG/32, keeps b's A fragments in registers and the
//              gradient's accumulator blocks too.  Both versions compute the same sums in
//              different orders (agreement to rounding, not bit for bit).
//
// f2_f3_group  one work-group per grid point (looping over points), for any l2: b_j in local
//              memory; in each round the work-items take one observation each (eta, l, g),
//              then one coefficient each to add sum_r g_r x_rk to their private accumulators;
//              qf is a tree reduction.  Local memory holds l2 + 2 WG doubles: the host checks it.
//
// f2_f3_prepare  the observation table, one work-item per observation (f2f3_prepare).

#define F2F3_L2H (F2F3_L2P / 2)
#define F2F3_OH (F2F3_NOBSP / 2)
#define F2F3_KPW ((F2F3_L2 + F2F3_WG - 1) / F2F3_WG)

// One observation's table row o[] from local memory: its field pairs are stride apart
static inline void f2f3_row(__local const double2 *src, const int stride, double *o)
{
#pragma unroll
    for (int f = 0; f < F2F3_OH; f++) {
        const double2 v = src[f * stride];
        o[2 * f] = v.x;
        o[2 * f + 1] = v.y;
    }
}

// The family's term, NaN where eta is (a NaN coefficient or datum reaches l and g whatever
// branch the family's formulas take)
static inline void f2f3_eval(const double eta, const double *o, double *l, double *g)
{
    f2f3_term(eta, o, l, g);
    if (isnan(eta))
        *l = *g = eta;
}

static inline double f2f3_coef(const long j, const long j0, const int k,
                               __global const double *restrict bsrc,
                               __global const long *restrict fdesc)
{
#if F2F3_FACT
    const long J = j0 + j;
    return bsrc[fdesc[3 * k] + (J / fdesc[3 * k + 2]) % fdesc[3 * k + 1]];
#else
    return bsrc[j * F2F3_L2 + k];
#endif
}

// The arguments of the three f2_f3 kernels (x and the observation table as T, T = double2 or
// double): the launch's m points from j0 on, l1 observations, the grid (bsrc, fdesc), x, the
// table, the prior, the outputs
#define F2F3_ARGS(T, x, obs)                                                                     \
    const long m, const long j0, const int l1, __global const double *restrict bsrc,           \
        __global const long *restrict fdesc, __global const T *restrict x,                     \
        __global const T *restrict obs, __global const double *restrict mu,                    \
        __global const double *restrict P, __global double *restrict qf,                       \
        __global double *restrict grad

__kernel void f2_f3_prepare(const int l1, __global const double *restrict y,
                            __global const double *restrict wt,
                            __global const double *restrict alpha,
                            __global double *restrict obs)
{
    const int i = get_global_id(0);
    if (i >= l1)
        return;
    double o[F2F3_NOBSP];
    for (int c = 0; c < F2F3_NOBSP; c++)
        o[c] = 0.0;
    f2f3_prepare(y[i], wt[i], alpha[i], o);
    for (int c = 0; c < F2F3_NOBSP; c++)
        obs[(long)i * F2F3_NOBSP + c] = o[c];
}

__kernel __attribute__((reqd_work_group_size(F2F3_WG, 1, 1)))
void f2_f3_item(F2F3_ARGS(double2, xg, og))
{
    __local double2 xs[F2F3_TILE * F2F3_L2H];
    __local double2 os[F2F3_TILE * F2F3_OH];
    const int lid = get_local_id(0);
    const long base = (long)get_group_id(0) * (F2F3_WG * F2F3_PPW) + lid;

    double bj[F2F3_PPW][F2F3_L2P];
    double gr[F2F3_PPW][F2F3_L2P];
    double q[F2F3_PPW];
#pragma unroll
    for (int p = 0; p < F2F3_PPW; p++) {
        const long j = min(base + p * F2F3_WG, m - 1);   // surplus work-items repeat the last point
#pragma unroll
        for (int k = 0; k < F2F3_L2P; k++) {
            bj[p][k] = (k < F2F3_L2) ? f2f3_coef(j, j0, k, bsrc, fdesc) : 0.0;
            gr[p][k] = 0.0;
        }
        q[p] = 0.0;
    }

    for (int t0 = 0; t0 < l1; t0 += F2F3_TILE) {
        const int nr = min(F2F3_TILE, l1 - t0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = lid; e < F2F3_TILE * F2F3_L2H; e += F2F3_WG)
            xs[e] = (e < nr * F2F3_L2H) ? xg[(long)t0 * F2F3_L2H + e] : (double2)(0.0, 0.0);
        for (int e = lid; e < F2F3_TILE * F2F3_OH; e += F2F3_WG)
            os[e] = (e < nr * F2F3_OH) ? og[(long)t0 * F2F3_OH + e] : (double2)(0.0, 0.0);
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int r = 0; r < nr; r += F2F3_RU) {
            double gi[F2F3_RU][F2F3_PPW];
#pragma unroll
            for (int u = 0; u < F2F3_RU; u++) {
                const int rr = r + u;
                double o[F2F3_NOBSP];
                f2f3_row(os + rr * F2F3_OH, 1, o);
#pragma unroll
                for (int p = 0; p < F2F3_PPW; p++) {
                    double a0 = o[0], a1 = 0.0, a2 = 0.0, a3 = 0.0;
#pragma unroll
                    for (int k2 = 0; k2 < F2F3_L2H; k2 += 2) {
                        const double2 xv = xs[rr * F2F3_L2H + k2];
                        a0 = fma(xv.x, bj[p][2 * k2], a0);
                        a1 = fma(xv.y, bj[p][2 * k2 + 1], a1);
                        if (k2 + 1 < F2F3_L2H) {
                            const double2 xw = xs[rr * F2F3_L2H + k2 + 1];
                            a2 = fma(xw.x, bj[p][2 * k2 + 2], a2);
                            a3 = fma(xw.y, bj[p][2 * k2 + 3], a3);
                        }
                    }
                    const double eta = (a0 + a1) + (a2 + a3);
                    double l, g;
                    f2f3_eval(eta, o, &l, &g);
                    const int ok = rr < nr;
                    q[p] += ok ? l : 0.0;
                    gi[u][p] = ok ? g : 0.0;
                }
            }
#pragma unroll
            for (int k2 = 0; k2 < F2F3_L2H; k2++) {
#pragma unroll
                for (int u = 0; u < F2F3_RU; u++) {
                    const double2 xv = xs[(r + u) * F2F3_L2H + k2];
#pragma unroll
                    for (int p = 0; p < F2F3_PPW; p++) {
                        gr[p][2 * k2] = fma(gi[u][p], xv.x, gr[p][2 * k2]);
                        gr[p][2 * k2 + 1] = fma(gi[u][p], xv.y, gr[p][2 * k2 + 1]);
                    }
                }
            }
        }
    }

#pragma unroll
    for (int p = 0; p < F2F3_PPW; p++) {
        const long j = base + p * F2F3_WG;
#pragma unroll
        for (int k = 0; k < F2F3_L2; k++)
            bj[p][k] -= mu[k];                                   // d = b - mu
        double quad = 0.0;
#pragma unroll
        for (int k = 0; k < F2F3_L2; k++) {
            double pd = 0.0;
#pragma unroll
            for (int kk = 0; kk < F2F3_L2; kk++)
                pd = fma(P[k * F2F3_L2 + kk], bj[p][kk], pd);    // (P d)_k
            gr[p][k] += pd;
            quad = fma(bj[p][k], pd, quad);
        }
        if (j < m) {
            qf[j] = q[p] + 0.5 * quad;
#pragma unroll
            for (int k = 0; k < F2F3_L2; k++)
                grad[j * F2F3_L2 + k] = gr[p][k];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(F2F3_WG, 1, 1)))
void f2_f3_group(F2F3_ARGS(double, x, obs))
{
    __local double bl[F2F3_L2];
    __local double gl[F2F3_WG];
    const int lid = get_local_id(0);

    for (long j = get_group_id(0); j < m; j += get_num_groups(0)) {
        for (int k = lid; k < F2F3_L2; k += F2F3_WG)
            bl[k] = f2f3_coef(j, j0, k, bsrc, fdesc);
        barrier(CLK_LOCAL_MEM_FENCE);

        double acc[F2F3_KPW];
        for (int c = 0; c < F2F3_KPW; c++)
            acc[c] = 0.0;
        double part = 0.0;
        for (int i0 = 0; i0 < l1; i0 += F2F3_WG) {
            const int i = i0 + lid;
            double gi = 0.0;
            if (i < l1) {
                double o[F2F3_NOBSP];
                for (int c = 0; c < F2F3_NOBSP; c++)
                    o[c] = obs[(long)i * F2F3_NOBSP + c];
                double eta = o[0];
                for (int k = 0; k < F2F3_L2; k++)
                    eta = fma(x[(long)i * F2F3_L2 + k], bl[k], eta);
                double l;
                f2f3_eval(eta, o, &l, &gi);
                part += l;
            }
            gl[lid] = gi;
            barrier(CLK_LOCAL_MEM_FENCE);
            const int nr = min(F2F3_WG, l1 - i0);
            for (int c = 0; c < F2F3_KPW; c++) {
                const int k = lid + c * F2F3_WG;
                if (k < F2F3_L2)
                    for (int r = 0; r < nr; r++)
                        acc[c] = fma(gl[r], x[(long)(i0 + r) * F2F3_L2 + k], acc[c]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }

        double quad = 0.0;
        for (int c = 0; c < F2F3_KPW; c++) {
            const int k = lid + c * F2F3_WG;
            if (k < F2F3_L2) {
                double pd = 0.0;
                for (int kk = 0; kk < F2F3_L2; kk++)
                    pd = fma(P[(long)k * F2F3_L2 + kk], bl[kk] - mu[kk], pd);
                grad[j * F2F3_L2 + k] = acc[c] + pd;
                quad = fma(bl[k] - mu[k], pd, quad);
            }
        }
        gl[lid] = part + 0.5 * quad;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = F2F3_WG / 2; h > 0; h >>= 1) {
            if (lid < h)
                gl[lid] += gl[lid + h];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0)
            qf[j] = gl[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#ifdef F2F3_PB
#ifndef F2F3_MMA
#define F2F3_MMA 0
#endif
#define F2F3_R (F2F3_WG / F2F3_PB)           // work-items per point in the terms
#if F2F3_MMA
// fp64 tensor cores (NVIDIA sm_80 and later, PTX mma.m8n8k4.f64): warp w owns point blocks
// w and w + NW (8 points each, PB = 16 NW); row strides of 4 mod 16 doubles make the fragment
// loads of a warp conflict-free (2 wavefronts of 256 bytes)
#define F2F3_NW (F2F3_WG / 32)
#define F2F3_SB (F2F3_L2Q + 4)               // row stride of bs and xs in doubles
#define F2F3_G (F2F3_PB + 4)                 // row stride of es in doubles
#define F2F3_KS (F2F3_L2Q / 4)               // k-steps of step 1
#define F2F3_NB (F2F3_L2Q / 8)               // coefficient blocks of step 3

// D = A B + C for one 8x8x4 block: a = A[lane / 4][lane % 4], b = B[lane % 4][lane / 4],
// c0, c1 = C[lane / 4][2 (lane % 4) + {0, 1}] (the layout of the PTX ISA's m8n8k4 .f64)
static inline void f2f3_mma(double *c0, double *c1, const double a, const double b)
{
    double d0, d1;
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};"
        : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(*c0), "d"(*c1));
    *c0 = d0;
    *c1 = d1;
}
#else
#define F2F3_C (F2F3_WG / (F2F3_PB / 4))     // work-items per point quad in the products
#define F2F3_TM (F2F3_TILE / F2F3_C)         // observations per work-item in step 1
#define F2F3_KC (F2F3_L2Q / (2 * F2F3_C))    // coefficient pairs per work-item in step 3
#define F2F3_SB (F2F3_L2Q + 2)               // row stride of bs and xs in doubles (odd in double2)
#define F2F3_G (F2F3_PB + 2)                 // row stride of es in doubles (odd in double2)
#define F2F3_PH (F2F3_PB / 2)                // a work-item's second point pair
#endif

__kernel __attribute__((reqd_work_group_size(F2F3_WG, 1, 1)))
void f2_f3_tile(F2F3_ARGS(double2, xg, og))
{
    __local double2 bs[F2F3_PB * F2F3_SB / 2];     // b of the work-group's points, by point
    __local double2 xs[F2F3_TILE * F2F3_SB / 2];   // the tile of x, by observation
    __local double es[F2F3_TILE * F2F3_G];         // eta, then g, of the tile, by observation
    __local double2 os[F2F3_OH * F2F3_TILE];       // the tile of the observation table, by field
    __local double *const bsd = (__local double *)bs;
    __local double *const xsd = (__local double *)xs;
    const int lid = get_local_id(0);
    const int tp = lid % F2F3_PB, tr = lid / F2F3_PB;  // the terms: point tp, rows tr + R i
    const long jb = (long)get_group_id(0) * F2F3_PB;

    for (int e = lid; e < F2F3_PB * F2F3_L2Q; e += F2F3_WG) {
        const int p = e / F2F3_L2Q, k = e % F2F3_L2Q;
        const long j = min(jb + p, m - 1);            // surplus points repeat the last one
        bsd[p * F2F3_SB + k] = (k < F2F3_L2) ? f2f3_coef(j, j0, k, bsrc, fdesc) : 0.0;
    }
    double q = 0.0;                                // sum of l of point tp over rows tr + R i

#if F2F3_MMA
    const int lane = lid & 31, w = lid >> 5;
    const int pw[2] = {8 * w + (lane >> 2), 8 * (w + F2F3_NW) + (lane >> 2)};
    barrier(CLK_LOCAL_MEM_FENCE);
    double bf[2][F2F3_KS];                         // A fragments of b, for the whole kernel
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int ks = 0; ks < F2F3_KS; ks++)
            bf[h][ks] = bsd[pw[h] * F2F3_SB + 4 * ks + (lane & 3)];
    double acc[2][F2F3_NB][2];                     // grad of points pw[h], coefficients
#pragma unroll                                     // 8 nb + 2 (lane % 4) + {0, 1}
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int nb = 0; nb < F2F3_NB; nb++)
            acc[h][nb][0] = acc[h][nb][1] = 0.0;
#else
    const int a = lid / F2F3_C, c = lid % F2F3_C;   // the products: point quad a, lane c
    double2 acc[4][F2F3_KC];                       // points 2a, 2a+1, 2a+PH, 2a+PH+1 (i = 0..3),
#pragma unroll                                     // coefficients 2 (c + C cc) + {0, 1}
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int cc = 0; cc < F2F3_KC; cc++)
            acc[i][cc] = (double2)(0.0, 0.0);
#endif

    for (int t0 = 0; t0 < l1; t0 += F2F3_TILE) {
        const int nr = min(F2F3_TILE, l1 - t0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int e = lid; e < F2F3_TILE * (F2F3_L2Q / 2); e += F2F3_WG) {
            const int t = e / (F2F3_L2Q / 2), k2 = e % (F2F3_L2Q / 2);
            xs[t * (F2F3_SB / 2) + k2] =
                (t < nr) ? xg[(long)(t0 + t) * (F2F3_L2Q / 2) + k2] : (double2)(0.0, 0.0);
        }
        for (int e = lid; e < F2F3_TILE * F2F3_OH; e += F2F3_WG) {
            const int t = e / F2F3_OH, f = e % F2F3_OH;
            os[f * F2F3_TILE + t] =
                (t < nr) ? og[(long)(t0 + t) * F2F3_OH + f] : (double2)(0.0, 0.0);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // step 1: eta = alpha + x . b into es
#if F2F3_MMA
        _Pragma("unroll 1")
        for (int ob = 0; ob < F2F3_TILE / 8; ob++) {
            const int tc = 8 * ob + 2 * (lane & 3);
            double cf[2][2];
            cf[0][0] = cf[1][0] = os[tc].x;        // alpha of the block's columns
            cf[0][1] = cf[1][1] = os[tc + 1].x;
            __local const double *xr = xsd + (8 * ob + (lane >> 2)) * F2F3_SB + (lane & 3);
#pragma unroll
            for (int ks = 0; ks < F2F3_KS; ks++) {
                const double xb = xr[4 * ks];
                f2f3_mma(&cf[0][0], &cf[0][1], bf[0][ks], xb);
                f2f3_mma(&cf[1][0], &cf[1][1], bf[1][ks], xb);
            }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                es[tc * F2F3_G + pw[h]] = cf[h][0];
                es[(tc + 1) * F2F3_G + pw[h]] = cf[h][1];
            }
        }
#else
        {
            double eta[4][F2F3_TM];
#pragma unroll
            for (int u = 0; u < F2F3_TM; u++) {
                const double al = os[c + F2F3_C * u].x;
#pragma unroll
                for (int i = 0; i < 4; i++)
                    eta[i][u] = al;
            }
            _Pragma("unroll 1")
            for (int k2 = 0; k2 < F2F3_L2Q / 2; k2++) {
                double2 bv[4], xv[F2F3_TM];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    bv[i] = bs[(2 * a + (i & 1) + (i >> 1) * F2F3_PH) * (F2F3_SB / 2) + k2];
#pragma unroll
                for (int u = 0; u < F2F3_TM; u++)
                    xv[u] = xs[(c + F2F3_C * u) * (F2F3_SB / 2) + k2];
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int u = 0; u < F2F3_TM; u++)
                        eta[i][u] = fma(bv[i].y, xv[u].y, fma(bv[i].x, xv[u].x, eta[i][u]));
            }
#pragma unroll
            for (int u = 0; u < F2F3_TM; u++) {
                __local double *er = es + (c + F2F3_C * u) * F2F3_G + 2 * a;
                *(__local double2 *)er = (double2)(eta[0][u], eta[1][u]);
                *(__local double2 *)(er + F2F3_PH) = (double2)(eta[2][u], eta[3][u]);
            }
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);

        // step 2: the terms, one point per work-item (a warp shares its observation: broadcast
        // loads of the table); g replaces eta
        _Pragma("unroll 1")
        for (int t = tr; t < F2F3_TILE; t += F2F3_R) {
            double o[F2F3_NOBSP];
            f2f3_row(os + t, F2F3_TILE, o);
            const double eta = es[t * F2F3_G + tp];
            double l, g;
            f2f3_eval(eta, o, &l, &g);
            q += (t < nr) ? l : 0.0;
            es[t * F2F3_G + tp] = (t < nr) ? g : 0.0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // step 3: grad += g x (rows of the tile past nr are zero in both)
#if F2F3_MMA
        _Pragma("unroll 1")
        for (int ks = 0; ks < F2F3_TILE / 4; ks++) {
            const int t = 4 * ks + (lane & 3);
            const double ga0 = es[t * F2F3_G + pw[0]], ga1 = es[t * F2F3_G + pw[1]];
            __local const double *xr = xsd + t * F2F3_SB + (lane >> 2);
#pragma unroll
            for (int nb = 0; nb < F2F3_NB; nb++) {
                const double xb = xr[8 * nb];
                f2f3_mma(&acc[0][nb][0], &acc[0][nb][1], ga0, xb);
                f2f3_mma(&acc[1][nb][0], &acc[1][nb][1], ga1, xb);
            }
        }
#else
        _Pragma("unroll 1")
        for (int t = 0; t < F2F3_TILE; t++) {
            const double2 g01 = *(__local const double2 *)(es + t * F2F3_G + 2 * a);
            const double2 g23 = *(__local const double2 *)(es + t * F2F3_G + 2 * a + F2F3_PH);
#pragma unroll
            for (int cc = 0; cc < F2F3_KC; cc++) {
                const double2 xv = xs[t * (F2F3_SB / 2) + c + F2F3_C * cc];
                acc[0][cc] = fma((double2)(g01.x), xv, acc[0][cc]);
                acc[1][cc] = fma((double2)(g01.y), xv, acc[1][cc]);
                acc[2][cc] = fma((double2)(g23.x), xv, acc[2][cc]);
                acc[3][cc] = fma((double2)(g23.y), xv, acc[3][cc]);
            }
        }
#endif
    }

    // the prior: (P d)_k for this work-item's coefficients, and d' P d summed over them (one
    // coefficient at a time: P's row is read once for the work-item's points, and not kept in
    // registers); then the partial sums of qf to local memory
#if F2F3_MMA
#define F2F3_NP 2                                  // points per work-item
#define F2F3_NK (F2F3_NB * 2)                      // coefficients per work-item
#define F2F3_PT(i) pw[i]
#define F2F3_K(ck) (8 * ((ck) >> 1) + 2 * (lane & 3) + ((ck) & 1))
#define F2F3_ACC(i, ck) acc[i][(ck) >> 1][(ck) & 1]
#define F2F3_SLOT (lane & 3)
#define F2F3_NSLOT 4
#else
#define F2F3_NP 4
#define F2F3_NK (F2F3_KC * 2)
#define F2F3_PT(i) (2 * a + ((i) & 1) + ((i) >> 1) * F2F3_PH)
#define F2F3_K(ck) (2 * (c + F2F3_C * ((ck) >> 1)) + ((ck) & 1))
#define F2F3_ACC(i, ck) (((ck) & 1) ? acc[i][(ck) >> 1].y : acc[i][(ck) >> 1].x)
#define F2F3_SLOT c
#define F2F3_NSLOT F2F3_C
#endif
    double quad[F2F3_NP];
    __local const double *bp[F2F3_NP];
#pragma unroll
    for (int i = 0; i < F2F3_NP; i++) {
        quad[i] = 0.0;
        bp[i] = bsd + F2F3_PT(i) * F2F3_SB;
    }
#pragma unroll
    for (int ck = 0; ck < F2F3_NK; ck++) {
        const int k = F2F3_K(ck);
        if (k < F2F3_L2) {
            double pd[F2F3_NP];
#pragma unroll
            for (int i = 0; i < F2F3_NP; i++)
                pd[i] = 0.0;
            _Pragma("unroll 1")
            for (int kk = 0; kk < F2F3_L2; kk++) {
                const double pk = P[k * F2F3_L2 + kk], mk = mu[kk];
#pragma unroll
                for (int i = 0; i < F2F3_NP; i++)
                    pd[i] = fma(pk, bp[i][kk] - mk, pd[i]);
            }
#pragma unroll
            for (int i = 0; i < F2F3_NP; i++) {
                quad[i] = fma(bp[i][k] - mu[k], pd[i], quad[i]);
                const long j = jb + F2F3_PT(i);
                if (j < m)
                    grad[j * F2F3_L2 + k] = F2F3_ACC(i, ck) + pd[i];
            }
        }
    }
    // qf = the work-item sums of the terms (R per point) and of the prior (NSLOT per point)
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < F2F3_NP; i++)
        es[F2F3_PT(i) * F2F3_NSLOT + F2F3_SLOT] = quad[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    double prior = 0.0;
    if (lid < F2F3_PB)
        for (int sl = 0; sl < F2F3_NSLOT; sl++)
            prior += es[lid * F2F3_NSLOT + sl];
    barrier(CLK_LOCAL_MEM_FENCE);
    es[lid] = q;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < F2F3_PB && jb + lid < m) {
        double s = 0.5 * prior;
        for (int r = 0; r < F2F3_R; r++)
            s += es[lid + F2F3_PB * r];
        qf[jb + lid] = s;
    }
}

#undef F2F3_NP
#undef F2F3_NK
#undef F2F3_PT
#undef F2F3_K
#undef F2F3_ACC
#undef F2F3_SLOT
#undef F2F3_NSLOT
#undef F2F3_R
#undef F2F3_SB
#undef F2F3_G
#if F2F3_MMA
#undef F2F3_NW
#undef F2F3_KS
#undef F2F3_NB
#else
#undef F2F3_C
#undef F2F3_TM
#undef F2F3_KC
#undef F2F3_PH
#endif
#endif

#undef F2F3_ARGS
#undef F2F3_L2H
#undef F2F3_OH
#undef F2F3_KPW
