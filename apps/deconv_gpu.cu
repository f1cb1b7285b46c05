/* stenc demo: the CUDA solver (see deconv_gpu.h).  CUDA C++ stays in this
 * file; the program sees the C API of deconv_gpu.h. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deconv_gpu.h"
#include "stenc.h"
#include "tv.h"
#include "tv_aniso.h"
#include "huber.h"
#include "hessian.h"
#include "tikhonov.h"

enum { MEM = 8, THREADS = 256 };

struct dcg_problem {
    int dims, noise, reg;
    size_t n[3], N, Nc;
    double lambda;
    int have_truth;
    double tnorm;                         /* |truth| */
    double *y, *x, *hx, *res, *gx, *tmp;  /* device, N each */
    double *truth, *ones;
    cufftDoubleComplex *otf, *spec;       /* device, Nc each */
    cufftHandle fwd, inv;
    int have_fwd, have_inv;
    cublasHandle_t blas;
    int have_blas;
    cudaEvent_t ev[5];
    int have_ev;
    dc_stats st;
    char err[256];
};

/* ---- error plumbing: the first failure is kept in P->err ---- */
static int fail(dcg_problem *P, const char *what, const char *detail)
{
    if (!P->err[0]) snprintf(P->err, sizeof P->err, "%s failed: %s", what, detail);
    return -1;
}
static int ck(dcg_problem *P, cudaError_t e, const char *what) { return e == cudaSuccess ? 0 : fail(P, what, cudaGetErrorString(e)); }
static int ckf(dcg_problem *P, cufftResult r, const char *what)
{
    char b[32];
    snprintf(b, sizeof b, "cuFFT status %d", (int)r);
    return r == CUFFT_SUCCESS ? 0 : fail(P, what, b);
}
static int ckb(dcg_problem *P, cublasStatus_t r, const char *what)
{
    char b[32];
    snprintf(b, sizeof b, "cuBLAS status %d", (int)r);
    return r == CUBLAS_STATUS_SUCCESS ? 0 : fail(P, what, b);
}
static unsigned blocks(size_t n)
{
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b > 65535 ? 65535 : b);
}

/* ---- element-wise kernels (grid-stride loops) ---- */
__global__ void k_square(size_t n, const double *p, double *x)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) x[q] = p[q] * p[q];
}
/* spec *= otf (or its conjugate) / N */
__global__ void k_cmul(size_t n, cufftDoubleComplex *spec, const cufftDoubleComplex *otf, int conj, double s)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) {
        double a = spec[q].x, b = spec[q].y, c = otf[q].x, d = conj ? -otf[q].y : otf[q].y;
        spec[q].x = (a * c - b * d) * s;
        spec[q].y = (a * d + b * c) * s;
    }
}
/* data term per point into term, its derivative with respect to hx into res */
__global__ void k_data(size_t n, int poisson, const double *hx, const double *y, double *term, double *res)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) {
        if (!poisson) {
            double r = hx[q] - y[q];
            term[q] = 0.5 * r * r;
            res[q] = r;
        } else {
            const double tiny = 1e-12;
            double m = hx[q] > tiny ? hx[q] : tiny;
            term[q] = m - (y[q] > 0 ? y[q] * log(m) : 0);
            res[q] = 1.0 - y[q] / m;
        }
    }
}
__global__ void k_chain(size_t n, const double *p, const double *gx, double *g)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) g[q] = 2.0 * p[q] * gx[q];
}
__global__ void k_err(size_t n, const double *p, const double *t, double *d)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) d[q] = p[q] * p[q] - t[q];
}
__global__ void k_fill(size_t n, double v, double *a)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) a[q] = v;
}

/* cuBLAS takes int lengths: the problem size is checked at creation */
static int iN(const dcg_problem *P) { return (int)P->N; }

/* out = h * in (conj = 0) or h^T * in (conj = 1); in and out may be the same */
static int convolve(dcg_problem *P, const double *in, double *out, int conj)
{
    if (ckf(P, cufftExecD2Z(P->fwd, (cufftDoubleReal *)in, P->spec), "cufftExecD2Z")) return -1;
    k_cmul<<<blocks(P->Nc), THREADS>>>(P->Nc, P->spec, P->otf, conj, 1.0 / (double)P->N);
    if (ck(P, cudaGetLastError(), "complex product kernel")) return -1;
    return ckf(P, cufftExecZ2D(P->inv, P->spec, out), "cufftExecZ2D");
}

/* R(x), lambda * dR/dx added onto gx: one generated fused kernel */
static int reg_value_grad(dcg_problem *P, double *v)
{
    int rc = STENC_OK;
    DC_REG_VALUE_GRAD(stenc_cuda_, DC_CALL_CUDA, rc, P->dims, P->reg, P->n[0], P->n[1], P->n[2], P->x, P->lambda, v, P->gx);
    P->st.reg_bytes += 3.0 * (double)P->N * sizeof(double); /* read x, read and write g (beta = 1) */
    return rc == STENC_OK ? 0 : fail(P, "regularizer", stenc_strerror(rc));
}

/* L(p) and its gradient g, both device vectors; NAN on failure */
static double eval_dev(dcg_problem *P, const double *p, double *g)
{
    const size_t N = P->N;
    double f = 0, R = 0;
    cudaEventRecord(P->ev[0]);
    k_square<<<blocks(N), THREADS>>>(N, p, P->x);
    if (ck(P, cudaGetLastError(), "square kernel") || convolve(P, P->x, P->hx, 0)) return NAN;
    cudaEventRecord(P->ev[1]);
    k_data<<<blocks(N), THREADS>>>(N, P->noise == DC_POISSON, P->hx, P->y, P->tmp, P->res);
    if (ck(P, cudaGetLastError(), "data-term kernel")) return NAN;
    /* sum of the per-point terms: a dot product with ones */
    if (ckb(P, cublasDdot(P->blas, iN(P), P->tmp, 1, P->ones, 1, &f), "cublasDdot")) return NAN;
    cudaEventRecord(P->ev[2]);
    if (convolve(P, P->res, P->gx, 1)) return NAN; /* gx = h^T (residual) */
    cudaEventRecord(P->ev[3]);
    if (reg_value_grad(P, &R)) return NAN; /* adds lambda * dR/dx onto gx; waits for R */
    cudaEventRecord(P->ev[4]);
    k_chain<<<blocks(N), THREADS>>>(N, p, P->gx, g);
    if (ck(P, cudaGetLastError(), "chain-rule kernel") || ck(P, cudaEventSynchronize(P->ev[4]), "event")) return NAN;
    float t01, t12, t23, t34;
    cudaEventElapsedTime(&t01, P->ev[0], P->ev[1]);
    cudaEventElapsedTime(&t12, P->ev[1], P->ev[2]);
    cudaEventElapsedTime(&t23, P->ev[2], P->ev[3]);
    cudaEventElapsedTime(&t34, P->ev[3], P->ev[4]);
    P->st.t_fft += 1e-3 * (t01 + t23);
    P->st.t_other += 1e-3 * t12;
    P->st.t_reg += 1e-3 * t34;
    P->st.f_data = f;
    P->st.f_reg = R;
    P->st.n_eval++;
    return f + P->lambda * R;
}

extern "C" dcg_problem *dcg_create(int dims, size_t nx, size_t ny, size_t nz, const double *y, const double *psf, int noise,
                                   int reg, double lambda, const double *truth, char *err, size_t errlen)
{
    int count = 0;
    if (stenc_cuda_device_count(&count) != STENC_OK || count < 1) {
        snprintf(err, errlen, "no CUDA device is available");
        return NULL;
    }
    if ((dims != 2 && dims != 3) || nx < 2 || ny < 2 || (dims == 3 && nz < 2) || nx > 65536 || ny > 65536 || nz > 65536 ||
        reg < 0 || reg >= DC_NREG || !(lambda >= 0) || !y || !psf) {
        snprintf(err, errlen, "invalid problem arguments");
        return NULL;
    }
    dcg_problem *P = (dcg_problem *)calloc(1, sizeof *P);
    if (!P) { snprintf(err, errlen, "out of memory"); return NULL; }
    P->dims = dims; P->noise = noise; P->reg = reg; P->lambda = lambda;
    P->n[0] = nx; P->n[1] = ny; P->n[2] = dims == 3 ? nz : 1;
    P->N = nx * ny * P->n[2];
    P->Nc = (nx / 2 + 1) * ny * P->n[2];
    double *h = (double *)malloc(P->N * sizeof *h);
    int bad = !h;
    if (!bad && P->N > (size_t)2147483647) { /* cuBLAS vector lengths are int */
        snprintf(P->err, sizeof P->err, "problem too large for the CUDA solver (more than 2^31-1 points)");
        bad = 1;
    }
    if (!bad && dc_center_psf(P->n, psf, h)) { snprintf(P->err, sizeof P->err, "the PSF must have a positive sum"); bad = 1; }
    double **vec[] = {&P->y, &P->x, &P->hx, &P->res, &P->gx, &P->tmp, &P->truth, &P->ones};
    for (size_t v = 0; v < sizeof vec / sizeof vec[0] && !bad; ++v) bad = ck(P, cudaMalloc((void **)vec[v], P->N * sizeof(double)), "cudaMalloc");
    if (!bad) bad = ck(P, cudaMalloc((void **)&P->otf, P->Nc * sizeof(cufftDoubleComplex)), "cudaMalloc") ||
                    ck(P, cudaMalloc((void **)&P->spec, P->Nc * sizeof(cufftDoubleComplex)), "cudaMalloc");
    if (!bad) {
        int d3[3] = {(int)P->n[2], (int)ny, (int)nx}, d2[2] = {(int)ny, (int)nx};
        int *dd = dims == 3 ? d3 : d2;
        bad = ckf(P, cufftPlanMany(&P->fwd, dims, dd, NULL, 1, 0, NULL, 1, 0, CUFFT_D2Z, 1), "cufftPlanMany");
        P->have_fwd = !bad;
        if (!bad) { bad = ckf(P, cufftPlanMany(&P->inv, dims, dd, NULL, 1, 0, NULL, 1, 0, CUFFT_Z2D, 1), "cufftPlanMany"); P->have_inv = !bad; }
    }
    if (!bad) { bad = ckb(P, cublasCreate(&P->blas), "cublasCreate"); P->have_blas = !bad; }
    if (!bad) {
        int made = 0;
        while (made < 5 && !(bad = ck(P, cudaEventCreate(&P->ev[made]), "cudaEventCreate"))) ++made;
        P->have_ev = !bad;
        while (bad && made > 0) cudaEventDestroy(P->ev[--made]); /* a partial failure keeps none */
    }
    if (!bad) bad = ck(P, cudaMemcpy(P->y, y, P->N * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    if (!bad) bad = ck(P, cudaMemcpy(P->tmp, h, P->N * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    if (!bad) bad = ckf(P, cufftExecD2Z(P->fwd, P->tmp, P->otf), "cufftExecD2Z");
    if (!bad) {
        k_fill<<<blocks(P->N), THREADS>>>(P->N, 1.0, P->ones);
        bad = ck(P, cudaGetLastError(), "fill kernel");
    }
    if (!bad && truth) {
        P->have_truth = 1;
        bad = ck(P, cudaMemcpy(P->truth, truth, P->N * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy") ||
              ckb(P, cublasDnrm2(P->blas, iN(P), P->truth, 1, &P->tnorm), "cublasDnrm2");
    }
    if (!bad) bad = ck(P, cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    free(h);
    if (bad) {
        snprintf(err, errlen, "%s", P->err[0] ? P->err : "out of memory");
        dcg_free(P);
        return NULL;
    }
    return P;
}

extern "C" void dcg_free(dcg_problem *P)
{
    if (!P) return;
    if (P->have_fwd) cufftDestroy(P->fwd);
    if (P->have_inv) cufftDestroy(P->inv);
    if (P->have_blas) cublasDestroy(P->blas);
    if (P->have_ev)
        for (int e = 0; e < 5; ++e) cudaEventDestroy(P->ev[e]);
    double *vec[] = {P->y, P->x, P->hx, P->res, P->gx, P->tmp, P->truth, P->ones};
    for (size_t v = 0; v < sizeof vec / sizeof vec[0]; ++v) cudaFree(vec[v]);
    cudaFree(P->otf);
    cudaFree(P->spec);
    free(P);
}

extern "C" const dc_stats *dcg_get_stats(const dcg_problem *P) { return &P->st; }

extern "C" double dcg_eval(dcg_problem *P, const double *p, double *grad)
{
    double *dp = NULL, *dg = NULL, f = NAN;
    const size_t bytes = P->N * sizeof(double);
    if (!ck(P, cudaMalloc((void **)&dp, bytes), "cudaMalloc") && !ck(P, cudaMalloc((void **)&dg, bytes), "cudaMalloc") &&
        !ck(P, cudaMemcpy(dp, p, bytes, cudaMemcpyHostToDevice), "cudaMemcpy")) {
        f = eval_dev(P, dp, dg);
        if (ck(P, cudaMemcpy(grad, dg, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy")) f = NAN;
    }
    cudaFree(dp);
    cudaFree(dg);
    return f;
}

/* relative error of x = p^2 to the truth, on the device (NAN without truth) */
static double rel_err_dev(dcg_problem *P, const double *p, double *work)
{
    if (!P->have_truth || !(P->tnorm > 0)) return NAN;
    k_err<<<blocks(P->N), THREADS>>>(P->N, p, P->truth, work);
    double e = NAN;
    if (ck(P, cudaGetLastError(), "error kernel") || ckb(P, cublasDnrm2(P->blas, iN(P), work, 1, &e), "cublasDnrm2")) return NAN;
    return e / P->tnorm;
}

extern "C" int dcg_solve(dcg_problem *P, double *p_host, int iters, void (*log)(int, double, double, double, void *),
                         void *ctx, char *err, size_t errlen)
{
    const size_t bytes = P->N * sizeof(double);
    const int n = iN(P);
    /* device vectors: iterate, gradient, trial point and gradient, direction, memory */
    double *p = NULL, *g = NULL, *pn = NULL, *gn = NULL, *d = NULL, *S[MEM] = {0}, *Y[MEM] = {0};
    double *sc = NULL, *yc = NULL; /* the candidate pair, kept only if accepted */
    double rho[MEM], alpha[MEM];
    int status = 0, bad = 0;
    double **all[7] = {&p, &g, &pn, &gn, &d, &sc, &yc};
    for (int v = 0; v < 7 && !bad; ++v) bad = ck(P, cudaMalloc((void **)all[v], bytes), "cudaMalloc");
    for (int m = 0; m < MEM && !bad; ++m)
        bad = ck(P, cudaMalloc((void **)&S[m], bytes), "cudaMalloc") || ck(P, cudaMalloc((void **)&Y[m], bytes), "cudaMalloc");
    if (!bad) bad = ck(P, cudaMemcpy(p, p_host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    double f = bad ? NAN : eval_dev(P, p, g), gnorm = 0;
    if (!bad && isnan(f)) bad = 1;
    if (!bad) bad = ckb(P, cublasDnrm2(P->blas, n, g, 1, &gnorm), "cublasDnrm2");
    int stored = 0, newest = -1; /* memory: a ring of the last MEM pairs */
    for (int k = 0; k < iters && !bad; ++k) {
        /* two-loop recursion: d = -H g */
        bad = ckb(P, cublasDcopy(P->blas, n, g, 1, d, 1), "cublasDcopy");
        for (int c = 0; c < stored && !bad; ++c) {
            int i = (newest - c + MEM) % MEM;
            double sq;
            bad = ckb(P, cublasDdot(P->blas, n, S[i], 1, d, 1, &sq), "cublasDdot");
            alpha[i] = rho[i] * sq;
            double na = -alpha[i];
            if (!bad) bad = ckb(P, cublasDaxpy(P->blas, n, &na, Y[i], 1, d, 1), "cublasDaxpy");
        }
        double gamma = 1.0 / (gnorm > 0 ? gnorm : 1.0); /* first step: unit length */
        if (stored && !bad) {
            double yy;
            bad = ckb(P, cublasDdot(P->blas, n, Y[newest], 1, Y[newest], 1, &yy), "cublasDdot");
            gamma = 1.0 / (rho[newest] * yy);
        }
        if (!bad) bad = ckb(P, cublasDscal(P->blas, n, &gamma, d, 1), "cublasDscal");
        for (int c = stored - 1; c >= 0 && !bad; --c) {
            int i = (newest - c + MEM) % MEM;
            double yq;
            bad = ckb(P, cublasDdot(P->blas, n, Y[i], 1, d, 1, &yq), "cublasDdot");
            double coef = alpha[i] - rho[i] * yq;
            if (!bad) bad = ckb(P, cublasDaxpy(P->blas, n, &coef, S[i], 1, d, 1), "cublasDaxpy");
        }
        double minus1 = -1, dg = 0;
        if (!bad) bad = ckb(P, cublasDscal(P->blas, n, &minus1, d, 1), "cublasDscal");
        if (!bad) bad = ckb(P, cublasDdot(P->blas, n, d, 1, g, 1, &dg), "cublasDdot");
        if (bad) break;
        if (!(dg < 0)) { /* not a descent direction: forget the memory, steepest descent */
            stored = 0;
            double s = -1.0 / (gnorm > 0 ? gnorm : 1.0);
            bad = ckb(P, cublasDcopy(P->blas, n, g, 1, d, 1), "cublasDcopy") || ckb(P, cublasDscal(P->blas, n, &s, d, 1), "cublasDscal");
            dg = -gnorm;
            if (bad) break;
        }
        /* backtracking line search with the Armijo condition */
        double step = 1, fn = NAN;
        int ok = 0;
        for (int ls = 0; ls < 40 && !bad; ++ls) {
            bad = ckb(P, cublasDcopy(P->blas, n, p, 1, pn, 1), "cublasDcopy") || ckb(P, cublasDaxpy(P->blas, n, &step, d, 1, pn, 1), "cublasDaxpy");
            if (bad) break;
            fn = eval_dev(P, pn, gn);
            if (isnan(fn) && P->err[0]) { bad = 1; break; }
            if (fn <= f + 1e-4 * step * dg) { ok = 1; break; }
            step *= 0.5;
        }
        if (bad) break;
        if (!ok) { status = 1; break; }
        /* s = pn - p, y = gn - g as a candidate pair; only a pair with positive
         * curvature enters the ring (its slot then drops the oldest pair),
         * so a rejected pair never overwrites a kept one */
        double sy = 0;
        bad = ckb(P, cublasDcopy(P->blas, n, pn, 1, sc, 1), "cublasDcopy") ||
              ckb(P, cublasDaxpy(P->blas, n, &minus1, p, 1, sc, 1), "cublasDaxpy") ||
              ckb(P, cublasDcopy(P->blas, n, gn, 1, yc, 1), "cublasDcopy") ||
              ckb(P, cublasDaxpy(P->blas, n, &minus1, g, 1, yc, 1), "cublasDaxpy") ||
              ckb(P, cublasDdot(P->blas, n, sc, 1, yc, 1, &sy), "cublasDdot");
        if (bad) break;
        if (sy > 0) {
            int slot = (newest + 1) % MEM;
            double *t = S[slot]; S[slot] = sc; sc = t;
            t = Y[slot]; Y[slot] = yc; yc = t;
            rho[slot] = 1.0 / sy;
            newest = slot;
            if (stored < MEM) ++stored;
        }
        double *t = p; p = pn; pn = t;
        t = g; g = gn; gn = t;
        f = fn;
        bad = ckb(P, cublasDnrm2(P->blas, n, g, 1, &gnorm), "cublasDnrm2");
        if (!bad && log) log(k + 1, f, gnorm, rel_err_dev(P, p, d), ctx);
        if (P->err[0]) bad = 1;
    }
    if (!bad) bad = ck(P, cudaMemcpy(p_host, p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int v = 0; v < 7; ++v) cudaFree(*all[v]);
    for (int m = 0; m < MEM; ++m) { cudaFree(S[m]); cudaFree(Y[m]); }
    if (bad) {
        snprintf(err, errlen, "%s", P->err[0] ? P->err : "device error");
        return -1;
    }
    return status;
}
