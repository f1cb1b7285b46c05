/* stenc-miniapp: ParallelStencil's classic mini-apps, run on generated
 * kernels.  Runs N steps on an embedded default setup and prints the
 * effective memory throughput T_eff (bytes that must move per step / time).
 *
 *   stenc-miniapp NAME [-n SIZE] [-t STEPS]
 *   NAME: diffusion2d diffusion3d acoustic2d acoustic3d stokes3d
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stenc.h"
#include "diffusion.h"
#include "acoustic2d.h"
#include "acoustic3d.h"
#include "stokes3d.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double *alloc(size_t n, double v)
{
    double *p = malloc(n * sizeof *p);
    if (!p) { fprintf(stderr, "stenc-miniapp: out of memory\n"); exit(3); }
    for (size_t i = 0; i < n; ++i) p[i] = v;
    return p;
}

/* Gaussian bump centred in the domain */
static void gauss(double *a, size_t nx, size_t ny, size_t nz)
{
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                double x = ((double)i + 0.5) / (double)nx - 0.5, y = ((double)j + 0.5) / (double)ny - 0.5;
                double z = nz > 1 ? ((double)k + 0.5) / (double)nz - 0.5 : 0;
                a[i + nx * (j + ny * k)] = exp(-(x * x + y * y + z * z) / 0.01);
            }
}

static int check(int rc, const char *what)
{
    if (rc != STENC_OK) {
        fprintf(stderr, "stenc-miniapp: %s failed: %s\n", what, stenc_strerror(rc));
        exit(4);
    }
    return rc;
}

static void report(int nt, double t, double bytes_per_step, double checksum)
{
    printf("%d steps in %.3f s (%.3f ms/step), T_eff = %.2f GB/s, checksum %.9e\n", nt, t, 1e3 * t / nt,
           bytes_per_step * nt / t / 1e9, checksum);
}

static double sum(const double *a, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += a[i];
    return s;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    long n = 0, nt = 0; /* 0: the mini-app's default */
    if (name && strcmp(name, "--version") == 0) { printf("stenc-miniapp %s\n", STENC_VERSION); return 0; }
    for (int i = 2; i < argc; ++i) {
        int is_n = strcmp(argv[i], "-n") == 0, is_t = strcmp(argv[i], "-t") == 0;
        if (!is_n && !is_t) { fprintf(stderr, "stenc-miniapp: unknown argument %s (try --help)\n", argv[i]); return 2; }
        if (i + 1 >= argc) { fprintf(stderr, "stenc-miniapp: %s needs a value\n", argv[i]); return 2; }
        char *end;
        long v = strtol(argv[++i], &end, 10);
        long lo = is_n ? 8 : 1, hi = is_n ? 100000 : 10000000;
        if (*argv[i] == 0 || *end || v < lo || v > hi) {
            fprintf(stderr, "stenc-miniapp: invalid value '%s' for %s (an integer from %ld to %ld)\n", argv[i],
                    argv[i - 1], lo, hi);
            return 2;
        }
        *(is_n ? &n : &nt) = v;
    }
    if (!name || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        printf("usage: stenc-miniapp NAME [-n SIZE] [-t STEPS]\n"
               "NAME: diffusion2d diffusion3d acoustic2d acoustic3d stokes3d\n"
               "SIZE: grid points per side, 8 to 100000 (default 1024 in 2D, 128 in 3D)\n"
               "STEPS: time steps (default 200 in 2D, 100 in 3D, 50 for stokes3d)\n");
        return name ? 0 : 2;
    }
    double t0, t;
    if (strcmp(name, "diffusion2d") == 0 || strcmp(name, "diffusion3d") == 0) {
        int three = name[9] == '3';
        size_t nx = n ? (size_t)n : (three ? 128 : 1024), ny = nx, nz = three ? nx : 1, N = nx * ny * nz;
        int steps = nt ? (int)nt : (three ? 100 : 200);
        double lam = 1, dx = 10.0 / (double)nx, dy = dx, dz = dx;
        double dt = dx * dx / lam / (three ? 6.1 : 4.1);
        double *T = alloc(N, 0), *T2 = alloc(N, 0), *Ci = alloc(N, 1);
        gauss(T, nx, ny, nz);
        memcpy(T2, T, N * sizeof *T);
        t0 = now();
        for (int s = 0; s < steps; ++s) {
            if (three) check(stenc_diffusion_step_3d_f64(nx, ny, nz, T2, T, Ci, dt, lam, dx, dy, dz), "step");
            else check(stenc_diffusion_step_2d_f64(nx, ny, T2, T, Ci, dt, lam, dx, dy), "step");
            double *tmp = T; T = T2; T2 = tmp;
        }
        t = now() - t0;
        printf("%s: %zu^%d grid, ", name, nx, three ? 3 : 2);
        report(steps, t, 3.0 * (double)N * sizeof(double), sum(T, N));
        free(T); free(T2); free(Ci);
    } else if (strcmp(name, "acoustic2d") == 0) {
        size_t nx = n ? (size_t)n : 1024, ny = nx, N = nx * ny;
        int steps = nt ? (int)nt : 200;
        double dx = 10.0 / (double)nx, dy = dx, rho = 1, kappa = 1, dt = dx / sqrt(kappa / rho) / 2.1;
        double *P = alloc(N, 0), *Vx = alloc((nx + 1) * ny, 0), *Vy = alloc(nx * (ny + 1), 0);
        gauss(P, nx, ny, 1);
        t0 = now();
        for (int s = 0; s < steps; ++s) {
            check(stenc_acoustic2d_velocity_2d_f64(nx, ny, Vx, Vy, P, dt, rho, dx, dy), "velocity");
            check(stenc_acoustic2d_pressure_2d_f64(nx, ny, P, Vx, Vy, dt, kappa, dx, dy), "pressure");
        }
        t = now() - t0;
        printf("%s: %zu^2 grid, ", name, nx);
        /* P read twice and written once, Vx and Vy read twice and written once */
        report(steps, t, 3.0 * 3.0 * (double)N * sizeof(double), sum(P, N));
        free(P); free(Vx); free(Vy);
    } else if (strcmp(name, "acoustic3d") == 0) {
        size_t nx = n ? (size_t)n : 128, ny = nx, nz = nx, N = nx * ny * nz;
        int steps = nt ? (int)nt : 100;
        double dx = 10.0 / (double)nx, dy = dx, dz = dx, rho = 1, kappa = 1, dt = dx / sqrt(kappa / rho) / 2.1;
        double *P = alloc(N, 0), *Vx = alloc((nx + 1) * ny * nz, 0), *Vy = alloc(nx * (ny + 1) * nz, 0),
               *Vz = alloc(nx * ny * (nz + 1), 0);
        gauss(P, nx, ny, nz);
        t0 = now();
        for (int s = 0; s < steps; ++s) {
            check(stenc_acoustic3d_velocity_3d_f64(nx, ny, nz, Vx, Vy, Vz, P, dt, rho, dx, dy, dz), "velocity");
            check(stenc_acoustic3d_pressure_3d_f64(nx, ny, nz, P, Vx, Vy, Vz, dt, kappa, dx, dy, dz), "pressure");
        }
        t = now() - t0;
        printf("%s: %zu^3 grid, ", name, nx);
        report(steps, t, 3.0 * 4.0 * (double)N * sizeof(double), sum(P, N));
        free(P); free(Vx); free(Vy); free(Vz);
    } else if (strcmp(name, "stokes3d") == 0) {
        size_t nx = n ? (size_t)n : 128, ny = nx, nz = nx, N = nx * ny * nz;
        int steps = nt ? (int)nt : 50;
        double dx = 1.0 / (double)nx, dy = dx, dtau = dy * dy / 8.1; /* max viscosity 2: stable */
        double *Eta = alloc(N, 1), *EtaC = alloc(N, 0), *Vx = alloc(N, 0), *Vy = alloc(N, 0), *Txy = alloc(N, 0),
               *Rx = alloc(N, 0), *Pt = alloc(N, 0);
        gauss(Vx, nx, ny, nz);
        gauss(Pt, nx, ny, nz);
        for (size_t i = 0; i < N; ++i) { Eta[i] = 1 + Vx[i]; Vy[i] = 0.5 * Vx[i]; }
        t0 = now();
        for (int s = 0; s < steps; ++s) {
            check(stenc_stokes3d_viscosity_3d_f64(nx, ny, nz, EtaC, Eta), "viscosity");
            check(stenc_stokes3d_shear_3d_f64(nx, ny, nz, Txy, Eta, Vx, Vy, dx, dy), "shear");
            check(stenc_stokes3d_residual_3d_f64(nx, ny, nz, Rx, Txy, Pt, dx, dy), "residual");
            check(stenc_stokes3d_velocity_3d_f64(nx, ny, nz, Vx, Rx, dtau), "velocity");
        }
        t = now() - t0;
        printf("%s: %zu^3 grid, ", name, nx);
        report(steps, t, (2.0 + 4.0 + 3.0 + 3.0) * (double)N * sizeof(double), sum(Vx, N));
        free(Eta); free(EtaC); free(Vx); free(Vy); free(Txy); free(Rx); free(Pt);
    } else {
        fprintf(stderr, "stenc-miniapp: unknown mini-app '%s' (try --help)\n", name);
        return 2;
    }
    return 0;
}
