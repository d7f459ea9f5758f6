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
// f2_f3_group  one work-group per grid point (looping over points), for any l2: b_j in local
//              memory; in each round the work-items take one observation each (eta, l, g),
//              then one coefficient each to add sum_r g_r x_rk to their private accumulators;
//              qf is a tree reduction.  Local memory holds l2 + 2 WG doubles: the host checks it.
//
// f2_f3_prepare  the observation table, one work-item per observation (f2f3_prepare).

#define F2F3_L2H (F2F3_L2P / 2)
#define F2F3_OH (F2F3_NOBSP / 2)
#define F2F3_KPW ((F2F3_L2 + F2F3_WG - 1) / F2F3_WG)

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
void f2_f3_item(const long m, const long j0, const int l1,
                __global const double *restrict bsrc, __global const long *restrict fdesc,
                __global const double2 *restrict xg, __global const double2 *restrict og,
                __global const double *restrict mu, __global const double *restrict P,
                __global double *restrict qf, __global double *restrict grad)
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
#pragma unroll
                for (int c = 0; c < F2F3_OH; c++) {
                    const double2 v = os[rr * F2F3_OH + c];
                    o[2 * c] = v.x;
                    o[2 * c + 1] = v.y;
                }
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
                    f2f3_term(eta, o, &l, &g);
                    if (isnan(eta))
                        l = g = eta;
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
void f2_f3_group(const long m, const long j0, const int l1,
                 __global const double *restrict bsrc, __global const long *restrict fdesc,
                 __global const double *restrict x, __global const double *restrict obs,
                 __global const double *restrict mu, __global const double *restrict P,
                 __global double *restrict qf, __global double *restrict grad)
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
                f2f3_term(eta, o, &l, &gi);
                if (isnan(eta))
                    l = gi = eta;
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

#undef F2F3_L2H
#undef F2F3_OH
#undef F2F3_KPW
