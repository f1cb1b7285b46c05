/* stenc demo: the solver core (see deconv.h). */
#define _POSIX_C_SOURCE 200809L
#include "deconv.h"

#include <fftw3.h>
#include <lbfgs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stenc.h"
#include "tv.h"
#include "tv_aniso.h"
#include "huber.h"
#include "hessian.h"
#include "tikhonov.h"

struct dc_problem {
    int dims, noise, reg;
    size_t n[3], N, Nc;
    double lambda;
    double *y, *x, *hx, *gx, *res, *tmp;
    fftw_complex *otf, *spec;
    fftw_plan fwd, inv;
    dc_stats st;
    void (*log)(int, double, double, const double *, void *);
    void *log_ctx;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *reg_names[DC_NREG] = {"tv", "tv_aniso", "huber", "hessian", "tikhonov"};
const char *dc_reg_name(int reg) { return reg >= 0 && reg < DC_NREG ? reg_names[reg] : "?"; }
int dc_reg_parse(const char *name)
{
    for (int r = 0; r < DC_NREG; ++r)
        if (strcmp(name, reg_names[r]) == 0) return r;
    return -1;
}

/* FFTW wants row-major dims: our i (fastest) is its last dimension */
static void plan(dc_problem *P)
{
    int d[3];
    if (P->dims == 2) { d[0] = (int)P->n[1]; d[1] = (int)P->n[0]; }
    else { d[0] = (int)P->n[2]; d[1] = (int)P->n[1]; d[2] = (int)P->n[0]; }
    P->fwd = fftw_plan_dft_r2c(P->dims, d, P->tmp, P->spec, FFTW_ESTIMATE);
    P->inv = fftw_plan_dft_c2r(P->dims, d, P->spec, P->tmp, FFTW_ESTIMATE);
}

/* out = h * in (conj = 0) or the adjoint h^T * in (conj = 1) */
static void convolve(dc_problem *P, const double *in, double *out, int conj)
{
    double t0 = now();
    memcpy(P->tmp, in, P->N * sizeof *in);
    fftw_execute(P->fwd);
    const double s = 1.0 / (double)P->N;
    for (size_t q = 0; q < P->Nc; ++q) {
        double a = P->spec[q][0], b = P->spec[q][1], c = P->otf[q][0], d = conj ? -P->otf[q][1] : P->otf[q][1];
        P->spec[q][0] = (a * c - b * d) * s;
        P->spec[q][1] = (a * d + b * c) * s;
    }
    fftw_execute(P->inv);
    memcpy(out, P->tmp, P->N * sizeof *out);
    P->st.t_fft += now() - t0;
}

void dc_blur(dc_problem *P, const double *x, double *out) { convolve(P, x, out, 0); }

int dc_center_psf(const size_t n[3], const double *psf, double *out)
{
    const size_t N = n[0] * n[1] * n[2];
    double s = 0;
    for (size_t q = 0; q < N; ++q) s += psf[q];
    if (!(s > 0)) return -1;
    for (size_t k = 0; k < n[2]; ++k)
        for (size_t j = 0; j < n[1]; ++j)
            for (size_t i = 0; i < n[0]; ++i) {
                size_t si = (i + n[0] / 2) % n[0], sj = (j + n[1] / 2) % n[1], sk = (k + n[2] / 2) % n[2];
                out[i + n[0] * (j + n[1] * k)] = psf[si + n[0] * (sj + n[1] * sk)] / s;
            }
    return 0;
}

dc_problem *dc_create(int dims, size_t nx, size_t ny, size_t nz, const double *y, const double *psf, int noise, int reg,
                      double lambda, char *err, size_t errlen)
{
    if ((dims != 2 && dims != 3) || nx < 2 || ny < 2 || (dims == 3 && nz < 2) || nx > 65536 || ny > 65536 || nz > 65536 ||
        reg < 0 || reg >= DC_NREG || !(lambda >= 0) || !y || !psf) {
        snprintf(err, errlen, "invalid problem arguments");
        return NULL;
    }
    dc_problem *P = calloc(1, sizeof *P);
    if (!P) { snprintf(err, errlen, "out of memory"); return NULL; }
    P->dims = dims; P->noise = noise; P->reg = reg; P->lambda = lambda;
    P->n[0] = nx; P->n[1] = ny; P->n[2] = dims == 3 ? nz : 1;
    P->N = nx * ny * P->n[2];
    P->Nc = (nx / 2 + 1) * ny * P->n[2];
    P->y = fftw_malloc(P->N * sizeof(double));
    P->x = fftw_malloc(P->N * sizeof(double));
    P->hx = fftw_malloc(P->N * sizeof(double));
    P->gx = fftw_malloc(P->N * sizeof(double));
    P->res = fftw_malloc(P->N * sizeof(double));
    P->tmp = fftw_malloc(P->N * sizeof(double));
    P->otf = fftw_malloc(P->Nc * sizeof(fftw_complex));
    P->spec = fftw_malloc(P->Nc * sizeof(fftw_complex));
    if (!P->y || !P->x || !P->hx || !P->gx || !P->res || !P->tmp || !P->otf || !P->spec) {
        snprintf(err, errlen, "out of memory for a %zu-point problem", P->N);
        dc_free(P);
        return NULL;
    }
    memcpy(P->y, y, P->N * sizeof *y);
    plan(P);
    /* OTF of the PSF moved so that its centre is at the origin, normalised to sum 1 */
    if (dc_center_psf(P->n, psf, P->tmp)) { snprintf(err, errlen, "the PSF must have a positive sum"); dc_free(P); return NULL; }
    fftw_execute(P->fwd);
    memcpy(P->otf, P->spec, P->Nc * sizeof(fftw_complex));
    return P;
}

void dc_set_data(dc_problem *P, const double *y) { memcpy(P->y, y, P->N * sizeof *y); }

void dc_free(dc_problem *P)
{
    if (!P) return;
    if (P->fwd) fftw_destroy_plan(P->fwd);
    if (P->inv) fftw_destroy_plan(P->inv);
    fftw_free(P->y); fftw_free(P->x); fftw_free(P->hx); fftw_free(P->gx); fftw_free(P->res); fftw_free(P->tmp);
    fftw_free(P->otf); fftw_free(P->spec);
    free(P);
}

/* R(x) and lambda * dR/dx added onto gx, one fused generated kernel call */
static double reg_value_grad(dc_problem *P)
{
    double v = 0;
    int rc = STENC_OK;
    double t0 = now();
    DC_REG_VALUE_GRAD(stenc_, DC_CALL_CPU, rc, P->dims, P->reg, P->n[0], P->n[1], P->n[2], P->x, P->lambda, &v, P->gx);
    P->st.t_reg += now() - t0;
    P->st.reg_bytes += 3.0 * (double)P->N * sizeof(double); /* read x, read and write g (beta = 1) */
    if (rc != STENC_OK) {
        fprintf(stderr, "stenc-deconv: regularizer failed: %s\n", stenc_strerror(rc));
        return NAN;
    }
    return v;
}

double dc_eval(dc_problem *P, const double *p, double *grad)
{
    double t0 = now();
    for (size_t q = 0; q < P->N; ++q) P->x[q] = p[q] * p[q];
    P->st.t_other += now() - t0;
    convolve(P, P->x, P->hx, 0);
    t0 = now();
    double f = 0;
    if (P->noise == DC_GAUSS) {
        for (size_t q = 0; q < P->N; ++q) {
            double r = P->hx[q] - P->y[q];
            f += 0.5 * r * r;
            P->res[q] = r;
        }
    } else {
        const double tiny = 1e-12;
        for (size_t q = 0; q < P->N; ++q) {
            double m = P->hx[q] > tiny ? P->hx[q] : tiny;
            f += m - (P->y[q] > 0 ? P->y[q] * log(m) : 0);
            P->res[q] = 1.0 - P->y[q] / m;
        }
    }
    P->st.t_other += now() - t0;
    convolve(P, P->res, P->gx, 1); /* gx = h^T (residual) */
    double R = reg_value_grad(P); /* adds lambda * dR/dx onto gx */
    t0 = now();
    for (size_t q = 0; q < P->N; ++q) grad[q] = 2.0 * p[q] * P->gx[q];
    P->st.t_other += now() - t0;
    P->st.f_data = f;
    P->st.f_reg = R;
    P->st.n_eval++;
    return f + P->lambda * R;
}

static lbfgsfloatval_t evaluate(void *inst, const lbfgsfloatval_t *p, lbfgsfloatval_t *g, const int n,
                                const lbfgsfloatval_t step)
{
    (void)n; (void)step;
    return dc_eval(inst, p, g);
}

static int progress(void *inst, const lbfgsfloatval_t *p, const lbfgsfloatval_t *g, const lbfgsfloatval_t fx,
                    const lbfgsfloatval_t xnorm, const lbfgsfloatval_t gnorm, const lbfgsfloatval_t step, int n, int k,
                    int ls)
{
    (void)g; (void)xnorm; (void)step; (void)n; (void)ls;
    dc_problem *P = inst;
    if (P->log) P->log(k, fx, gnorm, p, P->log_ctx);
    return 0;
}

int dc_solve(dc_problem *P, double *p, int iters, void (*log)(int, double, double, const double *, void *), void *ctx)
{
    lbfgs_parameter_t prm;
    lbfgs_parameter_init(&prm);
    prm.max_iterations = iters;
    prm.epsilon = 1e-12;   /* stop on the iteration count, not on tolerances */
    prm.past = 0;
    prm.m = 8;
    P->log = log;
    P->log_ctx = ctx;
    double fx = 0;
    if (P->N > (size_t)2147483647) return LBFGSERR_INVALID_N;
    return lbfgs((int)P->N, p, &fx, evaluate, progress, P, &prm);
}

const dc_stats *dc_get_stats(const dc_problem *P) { return &P->st; }

const char *dc_status_text(int status)
{
    switch (status) {
    case LBFGS_SUCCESS: return "converged";
    case LBFGS_STOP: return "stopped by the progress callback";
    case LBFGS_ALREADY_MINIMIZED: return "the starting point is already a minimum";
    case LBFGSERR_MAXIMUMITERATION: return "reached the iteration limit";
    case LBFGSERR_MAXIMUMLINESEARCH: return "the line search reached its evaluation limit (no further decrease found)";
    case LBFGSERR_MINIMUMSTEP: return "the line search step became too small (at the limit of double precision)";
    case LBFGSERR_MAXIMUMSTEP: return "the line search step became too large";
    case LBFGSERR_ROUNDING_ERROR: return "rounding errors stopped the line search (converged as far as double precision allows)";
    case LBFGSERR_WIDTHTOOSMALL: return "the line search interval became too small";
    case LBFGSERR_INCREASEGRADIENT: return "the search direction does not decrease the objective";
    case LBFGSERR_OUTOFMEMORY: return "out of memory";
    default: return "stopped with an internal L-BFGS error";
    }
}

int dc_status_unusual(int status)
{
    return status != LBFGS_SUCCESS && status != LBFGSERR_MAXIMUMITERATION && status != LBFGSERR_MAXIMUMLINESEARCH &&
           status != LBFGSERR_MINIMUMSTEP && status != LBFGSERR_ROUNDING_ERROR && status != LBFGSERR_WIDTHTOOSMALL;
}
