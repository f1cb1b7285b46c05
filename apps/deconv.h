/* stenc demo: regularized deconvolution (2D image or 3D volume) on CPU.
 *
 *   minimise  L(p) = D(h * x, y) + lambda * R(x),   x = p^2 (non-negative)
 *
 * D is the Gaussian (least squares) or Poisson negative log-likelihood, h*x
 * a circular convolution done with FFTW, R a regularizer from stenc's library
 * evaluated with its generated value_grad kernel (neumann boundaries), and
 * the optimiser liblbfgs's L-BFGS. */
#ifndef STENC_DECONV_H
#define STENC_DECONV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { DC_GAUSS = 0, DC_POISSON = 1 };
enum { DC_TV = 0, DC_TV_ANISO, DC_HUBER, DC_HESSIAN, DC_TIKHONOV, DC_NREG };

typedef struct dc_problem dc_problem;

typedef struct {
    double f_data, f_reg;     /* last evaluation */
    double t_fft, t_reg, t_other; /* seconds spent, cumulative */
    long n_eval;
    double reg_bytes;         /* bytes the regularizer calls had to move */
} dc_stats;

/* Creates a problem for measured data y (nx x ny x nz, nz = 1 in 2D) and a
 * PSF of the same size whose centre is at (nx/2, ny/2, nz/2).  Returns NULL on
 * allocation failure or bad arguments (message in err). */
dc_problem *dc_create(int dims, size_t nx, size_t ny, size_t nz, const double *y, const double *psf, int noise,
                      int reg, double lambda, char *err, size_t errlen);
void dc_free(dc_problem *P);

/* Replaces the measured data (same size as at creation). */
void dc_set_data(dc_problem *P, const double *y);

/* Objective and gradient with respect to p (x = p^2); returns L(p). */
double dc_eval(dc_problem *P, const double *p, double *grad);

/* The PSF (n[0] x n[1] x n[2], centre at n/2) moved so that its centre is at
 * the origin (circularly) and normalised to sum 1, into out.  Returns -1 when
 * the PSF's sum is not positive.  Shared by the CPU and CUDA solvers. */
int dc_center_psf(const size_t n[3], const double *psf, double *out);

/* Blur x with the problem's PSF into out (the forward model h * x). */
void dc_blur(dc_problem *P, const double *x, double *out);

/* Runs L-BFGS from p (in/out) for at most iters iterations; log(it, L, |g|,
 * ctx) is called per iteration.  Returns liblbfgs's status. */
int dc_solve(dc_problem *P, double *p, int iters, void (*log)(int it, double f, double gnorm, const double *p, void *ctx),
             void *ctx);

const dc_stats *dc_get_stats(const dc_problem *P);

/* liblbfgs's status (dc_solve's return) in words, and whether it is one a
 * user should hear about (not convergence or the iteration limit) */
const char *dc_status_text(int status);
int dc_status_unusual(int status);

/* The regularizer call both solvers make once per evaluation: R(x) into *V
 * and lambda * dR/dx added onto GX (alpha = lambda, beta = 1), neumann
 * boundaries, one fused generated kernel.  PFX is stenc_ (deconv.c) or
 * stenc_cuda_ (deconv_gpu.cu, device pointers); CALL is DC_CALL_CPU or
 * DC_CALL_CUDA (which adds the launchers' stream).  Needs the stencils'
 * headers (tv.h, tv_aniso.h, huber.h, hessian.h, tikhonov.h). */
#define DC_EPS 1e-6   /* TV / Hessian smoothing */
#define DC_DELTA 0.02 /* Huber threshold */
#define DC_CALL_CPU(f, ...) f(__VA_ARGS__)
#define DC_CALL_CUDA(f, ...) f(__VA_ARGS__, NULL)
#define DC_CAT3(a, b, c) a##b##c
#define DC_REG_VALUE_GRAD(PFX, CALL, RC, DIMS, REG, NX, NY, NZ, X, LAMBDA, V, GX)                                         \
    do {                                                                                                                 \
        const int m_ = STENC_NEUMANN;                                                                                    \
        if ((DIMS) == 2) {                                                                                               \
            switch (REG) {                                                                                               \
            case DC_TV: RC = CALL(DC_CAT3(PFX, tv, _value_grad_2d_f64), NX, NY, m_, X, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            case DC_TV_ANISO: RC = CALL(DC_CAT3(PFX, tv_aniso, _value_grad_2d_f64), NX, NY, m_, X, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            case DC_HUBER: RC = CALL(DC_CAT3(PFX, huber, _value_grad_2d_f64), NX, NY, m_, X, 1, 1, DC_DELTA, V, LAMBDA, 1, GX); break; \
            case DC_HESSIAN: RC = CALL(DC_CAT3(PFX, hessian, _value_grad_2d_f64), NX, NY, m_, X, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            default: RC = CALL(DC_CAT3(PFX, tikhonov_gradient, _value_grad_2d_f64), NX, NY, m_, X, 1, 1, V, LAMBDA, 1, GX); break; \
            }                                                                                                            \
        } else {                                                                                                         \
            switch (REG) {                                                                                               \
            case DC_TV: RC = CALL(DC_CAT3(PFX, tv, _value_grad_3d_f64), NX, NY, NZ, m_, X, 1, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            case DC_TV_ANISO: RC = CALL(DC_CAT3(PFX, tv_aniso, _value_grad_3d_f64), NX, NY, NZ, m_, X, 1, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            case DC_HUBER: RC = CALL(DC_CAT3(PFX, huber, _value_grad_3d_f64), NX, NY, NZ, m_, X, 1, 1, 1, DC_DELTA, V, LAMBDA, 1, GX); break; \
            case DC_HESSIAN: RC = CALL(DC_CAT3(PFX, hessian, _value_grad_3d_f64), NX, NY, NZ, m_, X, 1, 1, 1, DC_EPS, V, LAMBDA, 1, GX); break; \
            default: RC = CALL(DC_CAT3(PFX, tikhonov_gradient, _value_grad_3d_f64), NX, NY, NZ, m_, X, 1, 1, 1, V, LAMBDA, 1, GX); break; \
            }                                                                                                            \
        }                                                                                                                \
    } while (0)
const char *dc_reg_name(int reg);
int dc_reg_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif
