/* What the CPU and GPU benchmarks share: timing, the result rows, and the
 * kernels they call: every
 * regularizer (value, grad, value_grad) and every mini-app array kernel
 * (forward, adjoint), for either backend.  A caller defines its runners with
 *   DEFINE_RUN_REG(NAME, PFX, CALL) and DEFINE_RUN_MINI(NAME, T, S, PFX, CALL)
 * where PFX is stenc_ (CPU) or stenc_cuda_ (device pointers) and CALL is
 * BENCH_CPU_CALL or BENCH_CUDA_CALL (which adds the launchers' stream). */
#ifndef STENC_BENCH_KERNELS_H
#define STENC_BENCH_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "stenc.h"
#include "tv.h"
#include "tv_central.h"
#include "tv_aniso.h"
#include "huber.h"
#include "tikhonov.h"
#include "goods.h"
#include "hessian.h"
#include "tv_weighted.h"
#include "diffusion.h"
#include "acoustic2d.h"
#include "acoustic3d.h"
#include "stokes3d.h"

/* ---------------- timing and the result rows, both suites ---------------- */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline int bench_cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* the regularizers' input at point q (make perf and perf/ab.sh time the
 * same data): smooth along the array with a faster ripple, in [0, 3] */
static inline double bench_x(size_t q)
{
    return 1.5 + (sin(0.001 * (double)q) + 0.5 * cos(0.37 * (double)(q % 1013)));
}
/* one measurement: a CSV row (kernel,entry,backend,dims,nx,ny,nz,precision,
 * median_s,bytes,teff_gbs,ceiling,ceiling_gbs,ratio) and a progress line */
static inline void bench_row(FILE *csv, const char *kernel, const char *entry, const char *backend, int dims, size_t nx,
                             size_t ny, size_t nz, const char *prec, double t, double bytes, const char *ceil, double ceil_gbs)
{
    double teff = bytes / t / 1e9;
    fprintf(csv, "%s,%s,%s,%d,%zu,%zu,%zu,%s,%.6e,%.0f,%.3f,%s,%.3f,%.3f\n", kernel, entry, backend, dims, nx, ny, nz, prec,
            t, bytes, teff, ceil, ceil_gbs, teff / ceil_gbs);
    fflush(csv);
    fprintf(stderr, "  %-20s %-10s %-6s %dD %5zux%zux%zu %s  %9.3f ms  %7.2f GB/s  %.2f of %s\n", kernel, entry, backend, dims, nx,
            ny, nz, prec, 1e3 * t, teff, teff / ceil_gbs, ceil);
}

#define BENCH_CPU_CALL(f, ...) f(__VA_ARGS__)
#define BENCH_CUDA_CALL(f, ...) f(__VA_ARGS__, NULL) /* the launchers' stream */
#define BENCH_UNP(...) __VA_ARGS__
#define BENCH_CAT3(a, b, c) a##b##c

/* ---------------- regularizers ---------------- */
typedef struct {
    size_t nx, ny, nz;
    int dims, dbl, what, mode, reg; /* what: 0 value, 1 grad, 2 value_grad */
    void *x, *m, *g;                /* m: the weight of tv_weighted */
    double v;
} RegCall;

static const char *reg_names[] = {"tv", "tv_central", "tv_aniso", "huber", "tikhonov_laplace", "tikhonov_gradient",
                                  "tikhonov_identity", "goods", "hessian", "tv_weighted"};
#define NREG 10
/* arrays each entry reads (T_eff): tv_weighted also reads its weight */
static inline int reg_inputs(int reg) { return reg == 9 ? 2 : 1; }

/* one precision: T the element type, S its suffix, A2/A3 the 2D/3D arguments */
#define BENCH_REG_T(PFX, CALL, BASE, T, S, A2, A3)                                                                        \
    do {                                                                                                                 \
        const T *x = c->x, *m = c->m; T *g = c->g; (void)m;                                                              \
        if (c->dims == 2) {                                                                                              \
            if (c->what == 0) rc = CALL(BENCH_CAT3(PFX, BASE, _value_2d_##S), c->nx, c->ny, c->mode, BENCH_UNP A2, &c->v);   \
            else if (c->what == 1) rc = CALL(BENCH_CAT3(PFX, BASE, _grad_2d_##S), c->nx, c->ny, c->mode, BENCH_UNP A2, 1, 0, g); \
            else rc = CALL(BENCH_CAT3(PFX, BASE, _value_grad_2d_##S), c->nx, c->ny, c->mode, BENCH_UNP A2, &c->v, 1, 0, g); \
        } else {                                                                                                         \
            if (c->what == 0) rc = CALL(BENCH_CAT3(PFX, BASE, _value_3d_##S), c->nx, c->ny, c->nz, c->mode, BENCH_UNP A3, &c->v); \
            else if (c->what == 1) rc = CALL(BENCH_CAT3(PFX, BASE, _grad_3d_##S), c->nx, c->ny, c->nz, c->mode, BENCH_UNP A3, 1, 0, g); \
            else rc = CALL(BENCH_CAT3(PFX, BASE, _value_grad_3d_##S), c->nx, c->ny, c->nz, c->mode, BENCH_UNP A3, &c->v, 1, 0, g); \
        }                                                                                                                \
    } while (0)
#define BENCH_REG(PFX, CALL, BASE, A2F, A3F, A2D, A3D)                                                                    \
    if (c->dbl) BENCH_REG_T(PFX, CALL, BASE, double, f64, A2D, A3D);                                                     \
    else BENCH_REG_T(PFX, CALL, BASE, float, f32, A2F, A3F);

#define DEFINE_RUN_REG(NAME, PFX, CALL)                                                                                   \
    static int NAME(RegCall *c)                                                                                          \
    {                                                                                                                    \
        int rc = STENC_ERR_ARG;                                                                                          \
        switch (c->reg) {                                                                                                \
        case 0: BENCH_REG(PFX, CALL, tv, (x, 1.f, 1.f, 1e-3f), (x, 1.f, 1.f, 1.f, 1e-3f), (x, 1., 1., 1e-3), (x, 1., 1., 1., 1e-3)) break; \
        case 1: BENCH_REG(PFX, CALL, tv_central, (x, 1.f, 1.f, 1e-3f), (x, 1.f, 1.f, 1.f, 1e-3f), (x, 1., 1., 1e-3), (x, 1., 1., 1., 1e-3)) break; \
        case 2: BENCH_REG(PFX, CALL, tv_aniso, (x, 1.f, 1.f, 1e-3f), (x, 1.f, 1.f, 1.f, 1e-3f), (x, 1., 1., 1e-3), (x, 1., 1., 1., 1e-3)) break; \
        case 3: BENCH_REG(PFX, CALL, huber, (x, 1.f, 1.f, .1f), (x, 1.f, 1.f, 1.f, .1f), (x, 1., 1., .1), (x, 1., 1., 1., .1)) break; \
        case 4: BENCH_REG(PFX, CALL, tikhonov_laplace, (x, 1.f, 1.f), (x, 1.f, 1.f, 1.f), (x, 1., 1.), (x, 1., 1., 1.)) break; \
        case 5: BENCH_REG(PFX, CALL, tikhonov_gradient, (x, 1.f, 1.f), (x, 1.f, 1.f, 1.f), (x, 1., 1.), (x, 1., 1., 1.)) break; \
        case 6: BENCH_REG(PFX, CALL, tikhonov_identity, (x), (x), (x), (x)) break;                                      \
        case 7: BENCH_REG(PFX, CALL, goods, (x, 1.f, 1.f, 1e-3f), (x, 1.f, 1.f, 1.f, 1e-3f), (x, 1., 1., 1e-3), (x, 1., 1., 1., 1e-3)) break; \
        case 8: BENCH_REG(PFX, CALL, hessian, (x, 1.f, 1.f, 1e-3f), (x, 1.f, 1.f, 1.f, 1e-3f), (x, 1., 1., 1e-3), (x, 1., 1., 1., 1e-3)) break; \
        case 9: BENCH_REG(PFX, CALL, tv_weighted, (x, m, 1.f, 1.f, 1e-3f), (x, m, 1.f, 1.f, 1.f, 1e-3f), (x, m, 1., 1., 1e-3), (x, m, 1., 1., 1., 1e-3)) break; \
        }                                                                                                                \
        return rc;                                                                                                       \
    }

/* ---------------- mini-app kernels ----------------
 * Every array kernel of the mini-apps, forward and adjoint.  bytes: arrays
 * read count once, arrays written once, arrays updated in place twice (array
 * extents rounded to the grid size, e.g. Vx(nx+1, ny) counts as nx*ny). */
typedef struct { const char *stencil, *kernel; int dims, fwd_bytes, adj_bytes; } Mini;
static const Mini minis[] = {
    {"diffusion", "step", 2, 3, 8},          /* T2 = f(T, Ci); adj: T, Ci; T_bar, Ci_bar rw; T2_bar r+zeroed */
    {"diffusion", "step", 3, 3, 8},
    {"acoustic2d", "velocity", 2, 5, 4},     /* Vx, Vy rw, P r; adj: P_bar rw, Vx_bar, Vy_bar r */
    {"acoustic2d", "pressure", 2, 4, 5},     /* P rw, Vx, Vy r; adj: Vx_bar, Vy_bar rw, P_bar r */
    {"acoustic3d", "velocity", 3, 7, 5},
    {"acoustic3d", "pressure", 3, 5, 7},
    {"stokes3d", "viscosity", 3, 2, 5},      /* EtaC = harm(Eta); adj: Eta r, Eta_bar rw, EtaC_bar r+zeroed */
    {"stokes3d", "shear", 3, 4, 11},         /* Txy = f(Eta, Vx, Vy); adj: 3 r, 3 rw, Txy_bar r+zeroed */
    {"stokes3d", "residual", 3, 3, 6},       /* Rx = f(Txy, Pt); adj: Txy_bar, Pt_bar rw, Rx_bar r+zeroed */
    {"stokes3d", "velocity", 3, 3, 3},       /* Vx += dtau*Rx; adj: Vx_bar r, Rx_bar rw */
};
#define NMINI (sizeof minis / sizeof minis[0])
typedef struct { size_t nx, ny, nz; int which, adj, dbl; void *a[8]; } MCtx;

/* one caller per precision: T the element type, S the suffix */
#define DEFINE_RUN_MINI(NAME, T, S, PFX, CALL)                                                                                       \
    static int NAME(MCtx *c)                                                                                             \
    {                                                                                                                    \
        T *a0 = c->a[0], *a1 = c->a[1], *a2 = c->a[2], *a3 = c->a[3], *a4 = c->a[4], *a5 = c->a[5], *a6 = c->a[6],       \
          *a7 = c->a[7];                                                                                                 \
        size_t nx = c->nx, ny = c->ny, nz = c->nz;                                                                       \
        const T dt = (T)0.1, one = 1;                                                                                    \
        (void)a7;                                                                                                        \
        switch (c->which * 2 + c->adj) {                                                                                 \
        case 0: return CALL(BENCH_CAT3(PFX, diffusion_step_2d_, S), nx, ny, a0, a1, a2, dt, one, one, one);                               \
        case 1: return CALL(BENCH_CAT3(PFX, diffusion_step_adjoint_2d_, S), nx, ny, a1, a2, dt, one, one, one, a3, a4, a5);               \
        case 2: return CALL(BENCH_CAT3(PFX, diffusion_step_3d_, S), nx, ny, nz, a0, a1, a2, dt, one, one, one, one);                      \
        case 3: return CALL(BENCH_CAT3(PFX, diffusion_step_adjoint_3d_, S), nx, ny, nz, a1, a2, dt, one, one, one, one, a3, a4, a5);      \
        case 4: return CALL(BENCH_CAT3(PFX, acoustic2d_velocity_2d_, S), nx, ny, a1, a2, a0, dt, one, one, one);                          \
        case 5: return CALL(BENCH_CAT3(PFX, acoustic2d_velocity_adjoint_2d_, S), nx, ny, a0, a1, a2, dt, one, one, one, a4, a5, a6);      \
        case 6: return CALL(BENCH_CAT3(PFX, acoustic2d_pressure_2d_, S), nx, ny, a0, a1, a2, dt, one, one, one);                          \
        case 7: return CALL(BENCH_CAT3(PFX, acoustic2d_pressure_adjoint_2d_, S), nx, ny, a0, a1, a2, dt, one, one, one, a4, a5, a6);      \
        case 8: return CALL(BENCH_CAT3(PFX, acoustic3d_velocity_3d_, S), nx, ny, nz, a1, a2, a3, a0, dt, one, one, one, one);             \
        case 9: return CALL(BENCH_CAT3(PFX, acoustic3d_velocity_adjoint_3d_, S), nx, ny, nz, a0, a1, a2, a3, dt, one, one, one, one, a4,  \
                                                                 a5, a6, a7);                                            \
        case 10: return CALL(BENCH_CAT3(PFX, acoustic3d_pressure_3d_, S), nx, ny, nz, a0, a1, a2, a3, dt, one, one, one, one);            \
        case 11: return CALL(BENCH_CAT3(PFX, acoustic3d_pressure_adjoint_3d_, S), nx, ny, nz, a0, a1, a2, a3, dt, one, one, one, one, a4, \
                                                                  a5, a6, a7);                                           \
        case 12: return CALL(BENCH_CAT3(PFX, stokes3d_viscosity_3d_, S), nx, ny, nz, a1, a0);                                             \
        case 13: return CALL(BENCH_CAT3(PFX, stokes3d_viscosity_adjoint_3d_, S), nx, ny, nz, a0, a4, a5);                                 \
        case 14: return CALL(BENCH_CAT3(PFX, stokes3d_shear_3d_, S), nx, ny, nz, a3, a0, a1, a2, one, one);                               \
        case 15: return CALL(BENCH_CAT3(PFX, stokes3d_shear_adjoint_3d_, S), nx, ny, nz, a0, a1, a2, one, one, a4, a5, a6, a7);           \
        case 16: return CALL(BENCH_CAT3(PFX, stokes3d_residual_3d_, S), nx, ny, nz, a2, a0, a1, one, one);                                \
        case 17: return CALL(BENCH_CAT3(PFX, stokes3d_residual_adjoint_3d_, S), nx, ny, nz, a0, a1, one, one, a4, a5, a6);                \
        case 18: return CALL(BENCH_CAT3(PFX, stokes3d_velocity_3d_, S), nx, ny, nz, a0, a1, dt);                                          \
        case 19: return CALL(BENCH_CAT3(PFX, stokes3d_velocity_adjoint_3d_, S), nx, ny, nz, a0, a1, dt, a4, a5);                          \
        }                                                                                                                \
        return STENC_ERR_ARG;                                                                                            \
    }
#endif
