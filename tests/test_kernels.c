/* Array kernels: the mini-apps against hand-written reference loops over
 * several steps (double and float), boundary-condition kernels, the adjoint
 * of every kernel by the dot-product test, identical results with 1 and 2
 * threads, and run-time argument errors. */
#include "testutil.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include "diffusion.h"
#include "acoustic2d.h"
#include "acoustic3d.h"
#include "stokes3d.h"
#include "bc.h"
#include "fd2.h"
#include "fd3.h"
#include "cellf.h"

#define IX2(i, j, nx) ((i) + (nx) * (j))
#define IX3(i, j, k, nx, ny) ((i) + (nx) * ((j) + (ny) * (k)))

/* ---------------- references ---------------- */

static void ref_diffusion2d(size_t nx, size_t ny, double *T2, const double *T, const double *Ci, double dt, double lam,
                            double dx, double dy)
{
    for (size_t j = 1; j + 1 < ny; ++j)
        for (size_t i = 1; i + 1 < nx; ++i) {
            double txx = (T[IX2(i + 1, j, nx)] - 2 * T[IX2(i, j, nx)] + T[IX2(i - 1, j, nx)]) / (dx * dx);
            double tyy = (T[IX2(i, j + 1, nx)] - 2 * T[IX2(i, j, nx)] + T[IX2(i, j - 1, nx)]) / (dy * dy);
            T2[IX2(i, j, nx)] = T[IX2(i, j, nx)] + dt * lam * Ci[IX2(i, j, nx)] * (txx + tyy);
        }
}

static void ref_diffusion3d(size_t nx, size_t ny, size_t nz, double *T2, const double *T, const double *Ci, double dt,
                            double lam, double dx, double dy, double dz)
{
    for (size_t k = 1; k + 1 < nz; ++k)
        for (size_t j = 1; j + 1 < ny; ++j)
            for (size_t i = 1; i + 1 < nx; ++i) {
                size_t q = IX3(i, j, k, nx, ny);
                double c = T[q];
                double txx = (T[q + 1] - 2 * c + T[q - 1]) / (dx * dx);
                double tyy = (T[q + nx] - 2 * c + T[q - nx]) / (dy * dy);
                double tzz = (T[q + nx * ny] - 2 * c + T[q - nx * ny]) / (dz * dz);
                T2[q] = c + dt * lam * Ci[q] * (txx + tyy + tzz);
            }
}

static void ref_acoustic2d(size_t nx, size_t ny, double *P, double *Vx, double *Vy, double dt, double rho, double kappa,
                           double dx, double dy)
{
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 1; i < nx; ++i) Vx[IX2(i, j, nx + 1)] -= dt / rho * (P[IX2(i, j, nx)] - P[IX2(i - 1, j, nx)]) / dx;
    for (size_t j = 1; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i) Vy[IX2(i, j, nx)] -= dt / rho * (P[IX2(i, j, nx)] - P[IX2(i, j - 1, nx)]) / dy;
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i)
            P[IX2(i, j, nx)] -= dt * kappa *
                                ((Vx[IX2(i + 1, j, nx + 1)] - Vx[IX2(i, j, nx + 1)]) / dx + (Vy[IX2(i, j + 1, nx)] - Vy[IX2(i, j, nx)]) / dy);
}

static void ref_acoustic3d(size_t nx, size_t ny, size_t nz, double *P, double *Vx, double *Vy, double *Vz, double dt,
                           double rho, double kappa, double dx, double dy, double dz)
{
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 1; i < nx; ++i)
                Vx[IX3(i, j, k, nx + 1, ny)] -= dt / rho * (P[IX3(i, j, k, nx, ny)] - P[IX3(i - 1, j, k, nx, ny)]) / dx;
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 1; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i)
                Vy[IX3(i, j, k, nx, ny + 1)] -= dt / rho * (P[IX3(i, j, k, nx, ny)] - P[IX3(i, j - 1, k, nx, ny)]) / dy;
    for (size_t k = 1; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i)
                Vz[IX3(i, j, k, nx, ny)] -= dt / rho * (P[IX3(i, j, k, nx, ny)] - P[IX3(i, j, k - 1, nx, ny)]) / dz;
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i)
                P[IX3(i, j, k, nx, ny)] -=
                    dt * kappa *
                    ((Vx[IX3(i + 1, j, k, nx + 1, ny)] - Vx[IX3(i, j, k, nx + 1, ny)]) / dx +
                     (Vy[IX3(i, j + 1, k, nx, ny + 1)] - Vy[IX3(i, j, k, nx, ny + 1)]) / dy +
                     (Vz[IX3(i, j, k + 1, nx, ny)] - Vz[IX3(i, j, k, nx, ny)]) / dz);
}

static void cmp(const double *a, const double *b, size_t n, double tol, const char *what)
{
    for (size_t i = 0; i < n; ++i) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        ck_assert_msg(reldiff(a[i], b[i], 1) <= tol, "%s differs at %zu: %.17g vs %.17g", what, i, a[i], b[i]);
    }
}

START_TEST(diffusion_steps)
{
    for (int three = 0; three <= 1; ++three) {
        size_t nx = three ? 11 : 13, ny = three ? 6 : 7, nz = three ? 5 : 1, N = nx * ny * nz;
        rng_t r = {7};
        double *T = dalloc(N), *T2 = dalloc(N), *Ci = dalloc(N), *R = dalloc(N), *R2 = dalloc(N);
        float *Tf = falloc(N), *T2f = falloc(N), *Cif = falloc(N);
        dfill(T, N, &r, 0, 1);
        dfill(Ci, N, &r, 0.5, 1.5);
        memcpy(R, T, N * sizeof *T);
        to_float(Tf, T, N);
        to_float(Cif, Ci, N);
        dnan(T2, N);
        for (size_t i = 0; i < N; ++i) T2f[i] = NAN;
        /* boundaries of both buffers must hold the boundary values: copy */
        for (size_t i = 0; i < N; ++i) { T2[i] = T[i]; T2f[i] = Tf[i]; R2[i] = R[i]; }
        double dt = 0.1, lam = 1.0, dx = 1, dy = 1.2, dz = 0.9;
        for (int s = 0; s < 5; ++s) {
            if (three) {
                CK_OK(stenc_diffusion_step_3d_f64(nx, ny, nz, T2, T, Ci, dt, lam, dx, dy, dz));
                CK_OK(stenc_diffusion_step_3d_f32(nx, ny, nz, T2f, Tf, Cif, (float)dt, (float)lam, (float)dx, (float)dy, (float)dz));
                ref_diffusion3d(nx, ny, nz, R2, R, Ci, dt, lam, dx, dy, dz);
            } else {
                CK_OK(stenc_diffusion_step_2d_f64(nx, ny, T2, T, Ci, dt, lam, dx, dy));
                CK_OK(stenc_diffusion_step_2d_f32(nx, ny, T2f, Tf, Cif, (float)dt, (float)lam, (float)dx, (float)dy));
                ref_diffusion2d(nx, ny, R2, R, Ci, dt, lam, dx, dy);
            }
            double *t = T; T = T2; T2 = t;
            float *tf = Tf; Tf = T2f; T2f = tf;
            t = R; R = R2; R2 = t;
        }
        cmp(T, R, N, 1e-13, "diffusion f64");
        for (size_t i = 0; i < N; ++i) ck_assert_msg(fabs(Tf[i] - R[i]) < 1e-5, "diffusion f32 at %zu", i);
        free(T); free(T2); free(Ci); free(R); free(R2); free(Tf); free(T2f); free(Cif);
    }
}
END_TEST

START_TEST(acoustic_steps)
{
    for (int three = 0; three <= 1; ++three) {
        size_t nx = three ? 11 : 13, ny = three ? 6 : 7, nz = three ? 5 : 1, N = nx * ny * nz;
        size_t NX = (nx + 1) * ny * nz, NY = nx * (ny + 1) * nz, NZ = nx * ny * (nz + 1);
        rng_t r = {8};
        double *P = dalloc(N), *Vx = dalloc(NX), *Vy = dalloc(NY), *Vz = dalloc(NZ);
        dfill(P, N, &r, -1, 1); dfill(Vx, NX, &r, -1, 1); dfill(Vy, NY, &r, -1, 1); dfill(Vz, NZ, &r, -1, 1);
        double *RP = dalloc(N), *RVx = dalloc(NX), *RVy = dalloc(NY), *RVz = dalloc(NZ);
        memcpy(RP, P, N * 8); memcpy(RVx, Vx, NX * 8); memcpy(RVy, Vy, NY * 8); memcpy(RVz, Vz, NZ * 8);
        double dt = 0.05, rho = 1.3, kappa = 0.8, dx = 1, dy = 1.1, dz = 0.9;
        for (int s = 0; s < 6; ++s) {
            if (three) {
                CK_OK(stenc_acoustic3d_velocity_3d_f64(nx, ny, nz, Vx, Vy, Vz, P, dt, rho, dx, dy, dz));
                CK_OK(stenc_acoustic3d_pressure_3d_f64(nx, ny, nz, P, Vx, Vy, Vz, dt, kappa, dx, dy, dz));
                ref_acoustic3d(nx, ny, nz, RP, RVx, RVy, RVz, dt, rho, kappa, dx, dy, dz);
            } else {
                CK_OK(stenc_acoustic2d_velocity_2d_f64(nx, ny, Vx, Vy, P, dt, rho, dx, dy));
                CK_OK(stenc_acoustic2d_pressure_2d_f64(nx, ny, P, Vx, Vy, dt, kappa, dx, dy));
                ref_acoustic2d(nx, ny, RP, RVx, RVy, dt, rho, kappa, dx, dy);
            }
        }
        cmp(P, RP, N, 1e-13, "acoustic P");
        cmp(Vx, RVx, NX, 1e-13, "acoustic Vx");
        cmp(Vy, RVy, NY, 1e-13, "acoustic Vy");
        if (three) cmp(Vz, RVz, NZ, 1e-13, "acoustic Vz");
        free(P); free(Vx); free(Vy); free(Vz); free(RP); free(RVx); free(RVy); free(RVz);
    }
}
END_TEST

/* the Stokes kernels at 11 x 8 x 6 and at 75 x 9 x 6, whose rows of
 * shear's and residual's arrays (74 points) hold whole 64-byte lines: the
 * sanitized build (STENC_NT_BYTES=0) streams them (an update that writes
 * an array it does not read, perf/NOTES.md section 65), from a row start
 * of each alignment */
START_TEST(stokes_kernels)
{
    for (int big = 0; big <= 1; ++big) {
    size_t nx = big ? 75 : 11, ny = big ? 9 : 8, nz = 6, N = nx * ny * nz;
    rng_t r = {9};
    double *Eta = dalloc(N), *Vx = dalloc(N), *Vy = dalloc(N), *Pt = dalloc(N), *EtaC = dalloc(N), *Txy = dalloc(N),
           *Rx = dalloc(N);
    dfill(Eta, N, &r, 0.5, 2); dfill(Vx, N, &r, -1, 1); dfill(Vy, N, &r, -1, 1); dfill(Pt, N, &r, -1, 1);
    dnan(EtaC, N); dnan(Txy, N); dnan(Rx, N);
    double dx = 0.7, dy = 1.3;
    CK_OK(stenc_stokes3d_viscosity_3d_f64(nx, ny, nz, EtaC, Eta));
    CK_OK(stenc_stokes3d_shear_3d_f64(nx, ny, nz, Txy, Eta, Vx, Vy, dx, dy));
    CK_OK(stenc_stokes3d_residual_3d_f64(nx, ny, nz, Rx, Txy, Pt, dx, dy));
#define E3(i, j, k) Eta[IX3(i, j, k, nx, ny)]
    for (size_t k = 0; k + 1 < nz; ++k)
        for (size_t j = 0; j + 1 < ny; ++j)
            for (size_t i = 0; i + 1 < nx; ++i) {
                double s = 0;
                for (int c = 0; c < 8; ++c) s += 1.0 / E3(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2));
                double want = 8.0 / s, got = EtaC[IX3(i, j, k, nx - 1, ny - 1)];
                ck_assert_msg(reldiff(got, want, 1e-300) < 1e-14, "harm at %zu %zu %zu", i, j, k);
            }
    const size_t tx = nx - 1, ty = ny - 1, tz = nz - 2;
    for (size_t k = 0; k < tz; ++k)
        for (size_t j = 0; j < ty; ++j)
            for (size_t i = 0; i < tx; ++i) {
                double av = 0.25 * (E3(i, j, k + 1) + E3(i + 1, j, k + 1) + E3(i, j + 1, k + 1) + E3(i + 1, j + 1, k + 1));
                double dvx = Vx[IX3(i + 1, j + 1, k + 1, nx, ny)] - Vx[IX3(i + 1, j, k + 1, nx, ny)];
                double dvy = Vy[IX3(i + 1, j + 1, k + 1, nx, ny)] - Vy[IX3(i, j + 1, k + 1, nx, ny)];
                /* relative to the terms' size: the sum cancels, and the kernel
                 * multiplies by 1/dx where this divides (docs/language.md) */
                double want = 2 * av * 0.5 * (dvx / dy + dvy / dx), got = Txy[IX3(i, j, k, tx, ty)];
                double size = av * (fabs(dvx / dy) + fabs(dvy / dx));
                ck_assert_msg(reldiff(got, want, size) < 1e-13, "shear at %zu %zu %zu: %g vs %g", i, j, k, got, want);
            }
    for (size_t k = 0; k < nz - 2; ++k)
        for (size_t j = 0; j < ny - 3; ++j)
            for (size_t i = 0; i < nx - 1; ++i) {
                double want = (Txy[IX3(i, j + 1, k, tx, ty)] - Txy[IX3(i, j, k, tx, ty)]) / dy -
                              (Pt[IX3(i, j + 1, k + 1, nx, ny)] - Pt[IX3(i, j + 1, k, nx, ny)]) / dx;
                double got = Rx[IX3(i, j, k, nx - 1, ny - 3)];
                ck_assert_msg(reldiff(got, want, 1e-12) < 1e-13, "residual at %zu %zu %zu", i, j, k);
            }
    /* velocity: Vx[i+1, j+2, k+1] += dtau*Rx[i, j+1, k]; every other point kept */
    double *V0 = dalloc(N);
    memcpy(V0, Vx, N * sizeof *Vx);
    CK_OK(stenc_stokes3d_velocity_3d_f64(nx, ny, nz, Vx, Rx, 0.3));
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                int upd = i >= 1 && i + 1 < nx && j >= 2 && j + 2 < ny && k >= 1 && k + 1 < nz;
                double want = V0[IX3(i, j, k, nx, ny)] + (upd ? 0.3 * Rx[IX3(i - 1, j - 1, k - 1, nx - 1, ny - 3)] : 0);
                ck_assert_msg(reldiff(Vx[IX3(i, j, k, nx, ny)], want, 1e-12) < 1e-15, "velocity at %zu %zu %zu", i, j, k);
            }
    free(V0);
    free(Eta); free(Vx); free(Vy); free(Pt); free(EtaC); free(Txy); free(Rx);
    }
}
END_TEST

/* The diffusion step against the reference, one step, float and double:
 * on grids whose rows hold several 64-byte lines (streamed in the
 * sanitized build, STENC_NT_BYTES=0) and on grids of 32 MiB or more
 * (streamed in every build: T2's whole lines by non-temporal stores, the
 * points before a row's first line and after its last plainly; an
 * offset or edge error shows as a wrong point).  The reference
 * (ref_diffusion2d, ref_diffusion3d) reads the same inputs in double. */
static void check_diffusion_streamed(size_t nx, size_t ny, size_t nz, int dbl)
{
    const size_t N = nx * ny * nz, P = nx * ny;
    const double dt = 0.1, lam = 1, dx = 1, dy = 1.2, dz = 0.9;
    rng_t r = {11};
    double *T = dalloc(N), *Ci = dalloc(N), *T2 = dbl ? dalloc(N) : NULL;
    float *Tf = dbl ? NULL : falloc(N), *Cif = dbl ? NULL : falloc(N), *T2f = dbl ? NULL : falloc(N);
    dfill(T, N, &r, 0, 1);
    dfill(Ci, N, &r, 0.5, 1.5);
    if (!dbl) {
        to_float(Tf, T, N);
        to_float(Cif, Ci, N);
        for (size_t q = 0; q < N; ++q) T[q] = Tf[q], Ci[q] = Cif[q];
        for (size_t q = 0; q < N; ++q) T2f[q] = NAN;
    } else
        dnan(T2, N);
    if (nz > 1 && dbl) CK_OK(stenc_diffusion_step_3d_f64(nx, ny, nz, T2, T, Ci, dt, lam, dx, dy, dz));
    else if (nz > 1) CK_OK(stenc_diffusion_step_3d_f32(nx, ny, nz, T2f, Tf, Cif, (float)dt, (float)lam, (float)dx, (float)dy, (float)dz));
    else if (dbl) CK_OK(stenc_diffusion_step_2d_f64(nx, ny, T2, T, Ci, dt, lam, dx, dy));
    else CK_OK(stenc_diffusion_step_2d_f32(nx, ny, T2f, Tf, Cif, (float)dt, (float)lam, (float)dx, (float)dy));
    double *R = dalloc(N);
    if (nz > 1) ref_diffusion3d(nx, ny, nz, R, T, Ci, dt, lam, dx, dy, dz);
    else ref_diffusion2d(nx, ny, R, T, Ci, dt, lam, dx, dy);
    const size_t k0 = nz > 1 ? 1 : 0, k1 = nz > 1 ? nz - 1 : 1;
    double worst = 0; /* the largest error (a NaN, a point not written, counts as infinite), and where */
    size_t at = 0;
    for (size_t k = k0; k < k1; ++k)
        for (size_t j = 1; j + 1 < ny; ++j)
            for (size_t i = 1; i + 1 < nx; ++i) {
                const size_t q = i + nx * j + P * k;
                const double got = dbl ? T2[q] : T2f[q], e = isnan(got) ? INFINITY : fabs(got - R[q]);
                if (e > worst) worst = e, at = q;
            }
    free(R);
    ck_assert_msg(worst <= (dbl ? 1e-13 : 1e-5), "diffusion %zux%zux%zu %s: error %g at point %zu (i %zu, j %zu, k %zu)", nx, ny,
                  nz, dbl ? "f64" : "f32", worst, at, at % nx, at / nx % ny, at / P);
    free(T); free(Ci); free(T2); free(Tf); free(Cif); free(T2f);
}

START_TEST(diffusion_streamed)
{
    for (int dbl = 0; dbl <= 1; ++dbl) {
        check_diffusion_streamed(203, 37, 1, dbl);
        check_diffusion_streamed(75, 19, 7, dbl);
    }
    /* 32 MiB or more: 3001 x 2999 floats, 2051 x 2049 doubles, 207 x 203 x 201 floats */
    check_diffusion_streamed(3001, 2999, 1, 0);
    check_diffusion_streamed(2051, 2049, 1, 1);
    check_diffusion_streamed(207, 203, 201, 0);
}
END_TEST

START_TEST(boundary_kernels)
{
    size_t nx = 9, ny = 6, N = nx * ny;
    rng_t r = {10};
    double *A = dalloc(N), *R = dalloc(N), *U = dalloc(N);
    dfill(A, N, &r, -1, 1);
    memcpy(R, A, N * 8);
    CK_OK(stenc_bc_bc_x_2d_f64(nx, ny, A));
    for (size_t j = 0; j < ny; ++j) { R[IX2(0, j, nx)] = R[IX2(1, j, nx)]; R[IX2(nx - 1, j, nx)] = R[IX2(nx - 2, j, nx)]; }
    cmp(A, R, N, 0, "bc_x");
    CK_OK(stenc_bc_bc_y_2d_f64(nx, ny, A, 0.5));
    for (size_t i = 0; i < nx; ++i) {
        R[IX2(i, 0, nx)] = 2 * R[IX2(i, 1, nx)] - R[IX2(i, 2, nx)];
        R[IX2(i, ny - 1, nx)] = 0.5 * R[IX2(i, ny - 2, nx)] * R[IX2(i, ny - 3, nx)];
    }
    cmp(A, R, N, 1e-15, "bc_y");
    dnan(U, N);
    CK_OK(stenc_bc_diag_2d_f64(nx, ny, U, A, 0.5));
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i) {
            if (i >= 1 && i + 1 < nx && j >= 1 && j + 1 < ny) {
                double want = A[IX2(i - 1, j + 1, nx)] - A[IX2(i + 1, j - 1, nx)] + 0.5 * A[IX2(i, j, nx)] * A[IX2(i, j, nx)];
                ck_assert(reldiff(U[IX2(i, j, nx)], want, 1e-12) < 1e-14);
            } else
                ck_assert(isnan(U[IX2(i, j, nx)]));
        }
    ck_assert_int_eq(stenc_bc_bc_x_2d_f64(2, ny, A), STENC_ERR_GRID);
    ck_assert_int_eq(stenc_bc_bc_y_2d_f64(nx, 3, A, 1), STENC_ERR_GRID);
    free(A); free(R); free(U);
}
END_TEST

/* The viscosity adjoint against the harmonic mean's derivative written
 * out: each cell c adds EtaC_bar[c] * 8 / S_c^2 / Eta[p]^2 to each of its
 * corners p (S_c the sum of its corners' 1/Eta) and zeroes EtaC_bar[c].
 * Both precisions, on grids of several tiles and strips of cell and
 * reciprocal rows (the sanitized build's are small), from a start of
 * Eta_bar that is not zero. */
START_TEST(viscosity_adjoint_reference)
{
    const size_t grids[2][3] = {{75, 23, 19}, {300, 7, 9}};
    for (int g = 0; g < 2; ++g)
        for (int dbl = 0; dbl <= 1; ++dbl) {
            const size_t nx = grids[g][0], ny = grids[g][1], nz = grids[g][2], N = nx * ny * nz;
            const size_t M = (nx - 1) * (ny - 1) * (nz - 1);
            rng_t r = {31 + (uint64_t)g};
            double *Eta = dalloc(N), *Eb = dalloc(N), *Cb = dalloc(M), *want = dalloc(N);
            dfill(Eta, N, &r, 0.5, 2); dfill(Eb, N, &r, -1, 1); dfill(Cb, M, &r, -1, 1);
            memcpy(want, Eb, N * sizeof(double));
            for (size_t k = 0; k + 1 < nz; ++k)
                for (size_t j = 0; j + 1 < ny; ++j)
                    for (size_t i = 0; i + 1 < nx; ++i) {
                        double s = 0;
                        for (int c = 0; c < 8; ++c) s += 1.0 / Eta[IX3(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2), nx, ny)];
                        const double w = Cb[IX3(i, j, k, nx - 1, ny - 1)] * 8.0 / (s * s);
                        for (int c = 0; c < 8; ++c) {
                            const size_t p = IX3(i + (c & 1), j + ((c >> 1) & 1), k + (c >> 2), nx, ny);
                            want[p] += w / (Eta[p] * Eta[p]);
                        }
                    }
            double err = 0, big = 0;
            size_t left = 0;
            if (dbl) {
                CK_OK(stenc_stokes3d_viscosity_adjoint_3d_f64(nx, ny, nz, Eta, Eb, Cb));
                for (size_t p = 0; p < N; ++p) err = fmax(err, fabs(Eb[p] - want[p])), big = fmax(big, fabs(want[p]));
                for (size_t c = 0; c < M; ++c) left += Cb[c] != 0;
            } else {
                float *fe = falloc(N), *fb = falloc(N), *fc = falloc(M);
                for (size_t p = 0; p < N; ++p) fe[p] = (float)Eta[p], fb[p] = (float)Eb[p];
                for (size_t c = 0; c < M; ++c) fc[c] = (float)Cb[c];
                CK_OK(stenc_stokes3d_viscosity_adjoint_3d_f32(nx, ny, nz, fe, fb, fc));
                for (size_t p = 0; p < N; ++p) err = fmax(err, fabs(fb[p] - want[p])), big = fmax(big, fabs(want[p]));
                for (size_t c = 0; c < M; ++c) left += fc[c] != 0;
                free(fe); free(fb); free(fc);
            }
            ck_assert_msg(err <= (dbl ? 1e-13 : 1e-5) * big, "%zu x %zu x %zu %s: off by %g of %g", nx, ny, nz,
                          dbl ? "f64" : "f32", err, big);
            ck_assert_msg(left == 0, "%zu of EtaC_bar not zeroed", left);
            free(Eta); free(Eb); free(Cb); free(want);
        }
}
END_TEST

/* An adjoint adds nothing to a point its statement does not read: k_corner
 * writes O at (i+1, j+1, k+1) for i < nx-2, j < ny-2, k < nz-2 from A at
 * (i, j, k), (i+1, j, k) and (i, j, k+1), so no point of O reads A at
 * (nx-2, j, nz-2), inside the box of the points it reads; there A is 0
 * (1/A infinite), and A_bar stays what it was, not 0 * inf */
START_TEST(adjoint_unread_points)
{
    const size_t nx = 13, ny = 7, nz = 6, N = nx * ny * nz;
    rng_t r = {77};
    double *A = dalloc(N), *Ab = dalloc(N), *Ob = dalloc(N), *Ab0 = dalloc(N);
    dfill(A, N, &r, 0.5, 2); dfill(Ab, N, &r, -1, 1); dfill(Ob, N, &r, -1, 1);
    for (size_t j = 0; j < ny; ++j) A[IX3(nx - 2, j, nz - 2, nx, ny)] = 0;
    memcpy(Ab0, Ab, N * sizeof(double));
    CK_OK(stenc_cellf_k_corner_adjoint_3d_f64(nx, ny, nz, A, Ab, Ob));
    for (size_t j = 0; j < ny; ++j) {
        const size_t p = IX3(nx - 2, j, nz - 2, nx, ny);
        ck_assert_msg(Ab[p] == Ab0[p], "A_bar at (%zu, %zu, %zu): %g, was %g", nx - 2, j, nz - 2, Ab[p], Ab0[p]);
    }
    for (size_t p = 0; p < N; ++p) ck_assert_msg(isfinite(Ab[p]), "A_bar not finite at %zu", p);
    free(A); free(Ab); free(Ob); free(Ab0);
}
END_TEST

/* ---------------- adjoints: dot-product test ----------------
 * A kernel maps the state (all arrays it reads, and the old values of the
 * arrays it writes) to the new values of the written arrays.  With J its
 * Jacobian: <J dX, Ybar> must equal <dX, J^T Ybar>, where J^T Ybar is what
 * the adjoint entry point accumulates into the read arrays' adjoints and
 * leaves in the written arrays' adjoints. */
typedef struct {
    const char *name;
    int narr;
    size_t len[4];
    int written[4];
    int nonlinear;  /* not a polynomial of degree <= 2: needs small steps */
    void (*fwd)(size_t *n, double **a);
    void (*adj)(size_t *n, double **a, double **b);
    size_t n[3];
} Kern;

#define PRM 0.3, 1.1, 0.9, 1.2
static void f_diff2(size_t *n, double **a) { CK_OK(stenc_diffusion_step_2d_f64(n[0], n[1], a[1], a[0], a[2], PRM)); }
static void a_diff2(size_t *n, double **a, double **b) { CK_OK(stenc_diffusion_step_adjoint_2d_f64(n[0], n[1], a[0], a[2], PRM, b[0], b[1], b[2])); }
static void f_diff3(size_t *n, double **a) { CK_OK(stenc_diffusion_step_3d_f64(n[0], n[1], n[2], a[1], a[0], a[2], 0.1, PRM)); }
static void a_diff3(size_t *n, double **a, double **b) { CK_OK(stenc_diffusion_step_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[2], 0.1, PRM, b[0], b[1], b[2])); }
static void f_av2(size_t *n, double **a) { CK_OK(stenc_acoustic2d_velocity_2d_f64(n[0], n[1], a[1], a[2], a[0], PRM)); }
static void a_av2(size_t *n, double **a, double **b) { CK_OK(stenc_acoustic2d_velocity_adjoint_2d_f64(n[0], n[1], a[0], a[1], a[2], PRM, b[0], b[1], b[2])); }
static void f_ap2(size_t *n, double **a) { CK_OK(stenc_acoustic2d_pressure_2d_f64(n[0], n[1], a[0], a[1], a[2], PRM)); }
static void a_ap2(size_t *n, double **a, double **b) { CK_OK(stenc_acoustic2d_pressure_adjoint_2d_f64(n[0], n[1], a[0], a[1], a[2], PRM, b[0], b[1], b[2])); }
static void f_av3(size_t *n, double **a) { CK_OK(stenc_acoustic3d_velocity_3d_f64(n[0], n[1], n[2], a[1], a[2], a[3], a[0], PRM, 0.7)); }
static void a_av3(size_t *n, double **a, double **b) { CK_OK(stenc_acoustic3d_velocity_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], a[2], a[3], PRM, 0.7, b[0], b[1], b[2], b[3])); }
static void f_ap3(size_t *n, double **a) { CK_OK(stenc_acoustic3d_pressure_3d_f64(n[0], n[1], n[2], a[0], a[1], a[2], a[3], PRM, 0.7)); }
static void a_ap3(size_t *n, double **a, double **b) { CK_OK(stenc_acoustic3d_pressure_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], a[2], a[3], PRM, 0.7, b[0], b[1], b[2], b[3])); }
static void f_visc(size_t *n, double **a) { CK_OK(stenc_stokes3d_viscosity_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_visc(size_t *n, double **a, double **b) { CK_OK(stenc_stokes3d_viscosity_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
static void f_shear(size_t *n, double **a) { CK_OK(stenc_stokes3d_shear_3d_f64(n[0], n[1], n[2], a[3], a[0], a[1], a[2], 0.7, 1.3)); }
static void a_shear(size_t *n, double **a, double **b) { CK_OK(stenc_stokes3d_shear_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], a[2], 0.7, 1.3, b[0], b[1], b[2], b[3])); }
static void f_res(size_t *n, double **a) { CK_OK(stenc_stokes3d_residual_3d_f64(n[0], n[1], n[2], a[2], a[0], a[1], 0.7, 1.3)); }
static void a_res(size_t *n, double **a, double **b) { CK_OK(stenc_stokes3d_residual_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], 0.7, 1.3, b[0], b[2], b[1])); }
static void f_vel(size_t *n, double **a) { CK_OK(stenc_stokes3d_velocity_3d_f64(n[0], n[1], n[2], a[0], a[1], 0.6)); }
static void a_vel(size_t *n, double **a, double **b) { CK_OK(stenc_stokes3d_velocity_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], 0.6, b[0], b[1])); }
static void f_bcx(size_t *n, double **a) { CK_OK(stenc_bc_bc_x_2d_f64(n[0], n[1], a[0])); }
static void a_bcx(size_t *n, double **a, double **b) { CK_OK(stenc_bc_bc_x_adjoint_2d_f64(n[0], n[1], a[0], b[0])); }
static void f_bcy(size_t *n, double **a) { CK_OK(stenc_bc_bc_y_2d_f64(n[0], n[1], a[0], 0.5)); }
static void a_bcy(size_t *n, double **a, double **b) { CK_OK(stenc_bc_bc_y_adjoint_2d_f64(n[0], n[1], a[0], 0.5, b[0])); }
static void f_diag(size_t *n, double **a) { CK_OK(stenc_bc_diag_2d_f64(n[0], n[1], a[1], a[0], 0.5)); }
static void a_diag(size_t *n, double **a, double **b) { CK_OK(stenc_bc_diag_adjoint_2d_f64(n[0], n[1], a[0], 0.5, b[0], b[1])); }
/* harmonic means: their adjoints gather each cell's factor from a field
 * that is zero outside the cells, over the whole box (gen/emit.c
 * cell_gather_fields); harm_xi and harm_xyi read it at y offset 1 */
static void f_h2(size_t *n, double **a) { CK_OK(stenc_fd2_k_harm_2d_f64(n[0], n[1], a[1], a[0])); }
static void a_h2(size_t *n, double **a, double **b) { CK_OK(stenc_fd2_k_harm_adjoint_2d_f64(n[0], n[1], a[0], b[0], b[1])); }
static void f_h2xi(size_t *n, double **a) { CK_OK(stenc_fd2_k_harm_xi_2d_f64(n[0], n[1], a[1], a[0])); }
static void a_h2xi(size_t *n, double **a, double **b) { CK_OK(stenc_fd2_k_harm_xi_adjoint_2d_f64(n[0], n[1], a[0], b[0], b[1])); }
static void f_h3(size_t *n, double **a) { CK_OK(stenc_fd3_k_harm_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_h3(size_t *n, double **a, double **b) { CK_OK(stenc_fd3_k_harm_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
static void f_h3xyi(size_t *n, double **a) { CK_OK(stenc_fd3_k_harm_xyi_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_h3xyi(size_t *n, double **a, double **b) { CK_OK(stenc_fd3_k_harm_xyi_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
/* tests/stencils/cellf.stn: cell factors of two arrays, without a part of
 * the tap's own, at a fixed plane, of two statements */
static void f_cf2(size_t *n, double **a) { CK_OK(stenc_cellf_k_two_3d_f64(n[0], n[1], n[2], a[2], a[0], a[1])); }
static void a_cf2(size_t *n, double **a, double **b) { CK_OK(stenc_cellf_k_two_adjoint_3d_f64(n[0], n[1], n[2], a[0], a[1], b[0], b[1], b[2])); }
static void f_cfr(size_t *n, double **a) { CK_OK(stenc_cellf_k_root_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_cfr(size_t *n, double **a, double **b) { CK_OK(stenc_cellf_k_root_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
static void f_cff(size_t *n, double **a) { CK_OK(stenc_cellf_k_face_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_cff(size_t *n, double **a, double **b) { CK_OK(stenc_cellf_k_face_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
static void f_cfc(size_t *n, double **a) { CK_OK(stenc_cellf_k_corner_3d_f64(n[0], n[1], n[2], a[1], a[0])); }
static void a_cfc(size_t *n, double **a, double **b) { CK_OK(stenc_cellf_k_corner_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1])); }
static void f_cfp(size_t *n, double **a) { CK_OK(stenc_cellf_k_pair_3d_f64(n[0], n[1], n[2], a[1], a[2], a[0])); }
static void a_cfp(size_t *n, double **a, double **b) { CK_OK(stenc_cellf_k_pair_adjoint_3d_f64(n[0], n[1], n[2], a[0], b[0], b[1], b[2])); }

static Kern kerns[] = {
    /* arrays in the order a[]: for each, written flag */
    {"diffusion 2D", 3, {0}, {0, 1, 0}, 0, f_diff2, a_diff2, {13, 7, 1}},
    {"diffusion 3D", 3, {0}, {0, 1, 0}, 0, f_diff3, a_diff3, {11, 6, 5}},
    {"acoustic 2D velocity", 3, {0}, {0, 1, 1}, 0, f_av2, a_av2, {13, 7, 1}},
    {"acoustic 2D pressure", 3, {0}, {1, 0, 0}, 0, f_ap2, a_ap2, {13, 7, 1}},
    {"acoustic 3D velocity", 4, {0}, {0, 1, 1, 1}, 0, f_av3, a_av3, {11, 6, 5}},
    {"acoustic 3D pressure", 4, {0}, {1, 0, 0, 0}, 0, f_ap3, a_ap3, {11, 6, 5}},
    {"stokes viscosity", 2, {0}, {0, 1}, 1, f_visc, a_visc, {11, 8, 6}},
    /* rows of three strips of point fields (the reciprocals; 1024 doubles a
     * strip by default) and runs of several rows */
    {"stokes viscosity, wide rows", 2, {0}, {0, 1}, 1, f_visc, a_visc, {2100, 7, 5}},
    {"stokes shear", 4, {0}, {0, 0, 0, 1}, 0, f_shear, a_shear, {11, 8, 6}},
    {"stokes residual", 3, {0}, {0, 0, 1}, 0, f_res, a_res, {11, 8, 6}},
    {"stokes velocity", 2, {0}, {1, 0}, 0, f_vel, a_vel, {11, 8, 6}},
    {"bc_x", 1, {0}, {1}, 0, f_bcx, a_bcx, {9, 6, 1}},
    {"bc_y", 1, {0}, {1}, 0, f_bcy, a_bcy, {9, 6, 1}},
    {"diag", 2, {0}, {0, 1}, 0, f_diag, a_diag, {9, 6, 1}},
    {"harm 2D", 2, {0}, {0, 1}, 1, f_h2, a_h2, {13, 7, 1}},
    {"harm 2D, wide rows", 2, {0}, {0, 1}, 1, f_h2, a_h2, {2100, 6, 1}},
    {"harm_xi 2D", 2, {0}, {0, 1}, 1, f_h2xi, a_h2xi, {13, 7, 1}},
    {"harm 3D", 2, {0}, {0, 1}, 1, f_h3, a_h3, {11, 8, 6}},
    {"harm_xyi 3D", 2, {0}, {0, 1}, 1, f_h3xyi, a_h3xyi, {11, 8, 6}},
    {"cell factor of two arrays", 3, {0}, {0, 0, 1}, 1, f_cf2, a_cf2, {11, 8, 6}},
    {"cell factor of two arrays, wide rows", 3, {0}, {0, 0, 1}, 1, f_cf2, a_cf2, {300, 7, 5}},
    {"cell factor, no own part", 2, {0}, {0, 1}, 1, f_cfr, a_cfr, {11, 8, 6}},
    {"cell factor at a fixed plane", 2, {0}, {0, 1}, 1, f_cff, a_cff, {11, 8, 6}},
    {"cell factors of two statements", 3, {0}, {0, 1, 1}, 1, f_cfp, a_cfp, {11, 8, 6}},
    {"cell factor, taps not a box", 2, {0}, {0, 1}, 1, f_cfc, a_cfc, {11, 8, 6}},
};

static void lens(Kern *k)
{
    size_t nx = k->n[0], ny = k->n[1], nz = k->n[2], N = nx * ny * nz;
    for (int a = 0; a < 4; ++a) k->len[a] = N;
    /* staggered arrays are larger; allocate generously (extra entries are unused) */
    if (strncmp(k->name, "acoustic", 8) == 0)
        for (int a = 1; a < 4; ++a) k->len[a] = (nx + 1) * (ny + 1) * (nz + 1);
}

static double jvp_dot(Kern *k, double **x, double **dx, double **ybar, double h, int order4)
{
    double *p[4], *m[4];
    double out = 0;
    const double c[2] = {order4 ? 4.0 / 3.0 : 1.0, order4 ? -1.0 / 3.0 : 0.0};
    for (int stage = 0; stage < (order4 ? 2 : 1); ++stage) {
        double hh = stage ? 2 * h : h;
        for (int a = 0; a < k->narr; ++a) {
            p[a] = dalloc(k->len[a]);
            m[a] = dalloc(k->len[a]);
            for (size_t i = 0; i < k->len[a]; ++i) { p[a][i] = x[a][i] + hh * dx[a][i]; m[a][i] = x[a][i] - hh * dx[a][i]; }
        }
        k->fwd(k->n, p);
        k->fwd(k->n, m);
        for (int a = 0; a < k->narr; ++a) {
            if (k->written[a])
                for (size_t i = 0; i < k->len[a]; ++i) out += c[stage] * (p[a][i] - m[a][i]) / (2 * hh) * ybar[a][i];
            free(p[a]); free(m[a]);
        }
    }
    return out;
}

START_TEST(adjoint_dot_products)
{
    Kern *k = &kerns[_i];
    lens(k);
    rng_t r = {100 + (uint64_t)_i};
    double *x[4], *dx[4], *yb[4], *b[4];
    for (int a = 0; a < k->narr; ++a) {
        x[a] = dalloc(k->len[a]); dx[a] = dalloc(k->len[a]); yb[a] = dalloc(k->len[a]); b[a] = dalloc(k->len[a]);
        dfill(x[a], k->len[a], &r, 0.5, 1.5);
        dfill(dx[a], k->len[a], &r, -1, 1);
        dfill(yb[a], k->len[a], &r, -1, 1);
        if (k->written[a]) memcpy(b[a], yb[a], k->len[a] * 8);
        else memset(b[a], 0, k->len[a] * 8);
    }
    double lhs = k->nonlinear ? jvp_dot(k, x, dx, yb, 1e-3, 1) : jvp_dot(k, x, dx, yb, 1.0, 0);
    k->adj(k->n, x, b);
    double rhs = 0, scale = 0;
    for (int a = 0; a < k->narr; ++a)
        for (size_t i = 0; i < k->len[a]; ++i) { rhs += dx[a][i] * b[a][i]; scale += fabs(dx[a][i] * b[a][i]); }
    double tol = k->nonlinear ? 1e-9 : 1e-12;
    ck_assert_msg(fabs(lhs - rhs) <= tol * fmax(scale, 1e-300), "%s: <J dX, Ybar> = %.17g but <dX, J^T Ybar> = %.17g", k->name, lhs, rhs);
    for (int a = 0; a < k->narr; ++a) { free(x[a]); free(dx[a]); free(yb[a]); free(b[a]); }
}
END_TEST

START_TEST(threads_identical)
{
#ifdef _OPENMP
    size_t nx = 203, ny = 97, N = nx * ny;
    rng_t r = {11};
    double *T = dalloc(N), *Ci = dalloc(N), *o1 = dalloc(N), *o2 = dalloc(N), *b1[3], *b2[3];
    dfill(T, N, &r, 0, 1);
    dfill(Ci, N, &r, 0.5, 1);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    dnan(o1, N);
    CK_OK(stenc_diffusion_step_2d_f64(nx, ny, o1, T, Ci, PRM));
    omp_set_num_threads(2);
    dnan(o2, N);
    CK_OK(stenc_diffusion_step_2d_f64(nx, ny, o2, T, Ci, PRM));
    for (size_t i = 0; i < N; ++i) ck_assert((isnan(o1[i]) && isnan(o2[i])) || o1[i] == o2[i]);
    for (int a = 0; a < 3; ++a) { b1[a] = dalloc(N); b2[a] = dalloc(N); dfill(b1[a], N, &r, -1, 1); memcpy(b2[a], b1[a], N * 8); }
    omp_set_num_threads(1);
    CK_OK(stenc_diffusion_step_adjoint_2d_f64(nx, ny, T, Ci, PRM, b1[0], b1[1], b1[2]));
    omp_set_num_threads(2);
    CK_OK(stenc_diffusion_step_adjoint_2d_f64(nx, ny, T, Ci, PRM, b2[0], b2[1], b2[2]));
    for (int a = 0; a < 3; ++a) ck_assert(memcmp(b1[a], b2[a], N * 8) == 0);
    omp_set_num_threads(saved);
    free(T); free(Ci); free(o1); free(o2);
    for (int a = 0; a < 3; ++a) { free(b1[a]); free(b2[a]); }
#endif
}
END_TEST

START_TEST(bad_arguments)
{
    double a[64] = {0}, b[64] = {0}, c[64] = {0};
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(8, 8, NULL, a, c, PRM), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(8, 8, b, NULL, c, PRM), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(8, 8, a, a, c, PRM), STENC_ERR_ALIAS);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(8, 8, a + 3, a, c, PRM), STENC_ERR_ALIAS);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(2, 8, b, a, c, PRM), STENC_ERR_GRID);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64(8, 0, b, a, c, PRM), STENC_ERR_GRID);
    ck_assert_int_eq(stenc_diffusion_step_2d_f64((size_t)1 << 62, 8, b, a, c, PRM), STENC_ERR_OVERFLOW);
    ck_assert_int_eq(stenc_diffusion_step_3d_f64((size_t)1 << 30, (size_t)1 << 30, (size_t)1 << 30, b, a, c, 0.1, PRM), STENC_ERR_OVERFLOW);
    ck_assert_int_eq(stenc_diffusion_step_adjoint_2d_f64(8, 8, a, c, PRM, b, b, c + 32), STENC_ERR_ALIAS);
    ck_assert_int_eq(stenc_acoustic2d_velocity_2d_f64(7, 7, a, b, c, PRM), STENC_OK);
    ck_assert_str_eq(stenc_strerror(STENC_ERR_GRID), "grid is smaller than the stencil's footprint (see the header for the minimum size)");
    ck_assert_ptr_nonnull(stenc_strerror(12345));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, diffusion_steps);
    tcase_add_test(tc, diffusion_streamed);
    tcase_add_test(tc, acoustic_steps);
    tcase_add_test(tc, stokes_kernels);
    tcase_add_test(tc, viscosity_adjoint_reference);
    tcase_add_test(tc, adjoint_unread_points);
    tcase_add_test(tc, boundary_kernels);
    tcase_add_loop_test(tc, adjoint_dot_products, 0, (int)(sizeof kerns / sizeof *kerns));
    tcase_add_test(tc, threads_identical);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
