/* Distributed grids under mpirun -np N: the halo update H and its adjoint
 * H^T, and generated kernels and reductions on local blocks, against the
 * same computation on the global grid in one process.
 *   - H fills every ghost with the value of the point it stands for (fields
 *     filled with a function of the global index; staggered, float and
 *     double fields, periodic and not, 2D and 3D);
 *   - the dot test <H x, y> = <x, H^T y> to 1e-13;
 *   - 50 steps of each 3D mini-app (diffusion; acoustic with staggered
 *     velocities; Stokes with arrays 1 to 3 points shorter than the grid)
 *     equal the one-process run bitwise on every local point, with and
 *     without the exchange hidden behind the interior (process grids split
 *     along x and along the outermost dimension); 2D diffusion too;
 *   - TV and central-difference TV values (valid, neumann, periodic) to
 *     1e-13, gradients with alpha/beta to 1e-12, value_grad;
 *   - a ghost width below a stencil's reach (or below what an array shorter
 *     than the grid needs) is refused with a message that names the stencil
 *     and the width it needs; mismatched arguments across processes, a
 *     process grid that does not fit, calls without a grid and fields out
 *     of range are errors on every process.
 * Prints Check's summary line format ("100%: Checks: N, Failures: F, Errors: 0")
 * from rank 0; exit status 0 only if every rank passed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc_mpi.h"
#include "acoustic3d.h"
#include "diffusion.h"
#include "goods.h"
#include "hessian.h"
#include "huber.h"
#include "stokes3d.h"
#include "tikhonov.h"
#include "tv.h"
#include "tv_aniso.h"
#include "tv_central.h"
#include "tv_weighted.h"

static int checks, failures, rank;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        ++checks;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            ++failures;                                                                                                \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
        }                                                                                                              \
    } while (0)

static uint64_t rng_state;
static double urand(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct {
    stenc_grid *g;
    stenc_grid_info I;
    size_t nl, ng; /* local and global point counts */
    double *gm, *lm; /* a positive weight field (tv_weighted): global, local */
} Grid;

/* global index along d of local index l (wrapped when periodic) */
static long long gidx(const stenc_grid_info *I, int d, size_t l)
{
    long long v = I->offset[d] + (long long)l, N = (long long)I->nglobal[d];
    return I->periodic[d] ? ((v % N) + N) % N : v;
}

/* local point <- global array value at the point it stands for, for an
 * array of extent n + st (local) / N + st (global) */
static void scatter_st(const Grid *G, const int st[3], const double *glob, double *loc)
{
    const stenc_grid_info *I = &G->I;
    size_t m[3], M[3];
    for (int d = 0; d < 3; ++d) {
        m[d] = I->nlocal[d] + (size_t)st[d];
        M[d] = I->nglobal[d] + (size_t)st[d];
    }
    for (size_t k = 0; k < m[2]; ++k)
        for (size_t j = 0; j < m[1]; ++j)
            for (size_t i = 0; i < m[0]; ++i) {
                long long gi = gidx(I, 0, i), gj = gidx(I, 1, j), gk = I->dims == 3 ? gidx(I, 2, k) : 0;
                loc[i + m[0] * (j + m[1] * k)] = glob[gi + (long long)M[0] * (gj + (long long)M[1] * gk)];
            }
}
static const int ST0[3] = {0, 0, 0};
static void scatter(const Grid *G, const double *glob, double *loc) { scatter_st(G, ST0, glob, loc); }

/* points of a local array (extent n + st) that differ bitwise from the
 * global one restricted to this block */
static size_t differ(const Grid *G, const int st[3], const double *glob, const double *loc)
{
    size_t n = 1;
    for (int d = 0; d < 3; ++d) n *= G->I.nlocal[d] + (size_t)st[d];
    double *ref = malloc(n * 8);
    scatter_st(G, st, glob, ref);
    size_t bad = 0;
    for (size_t q = 0; q < n; ++q) bad += memcmp(&ref[q], &loc[q], 8) != 0;
    free(ref);
    return bad;
}

/* a global array of extent N + st filled with lo + (hi - lo)*uniform, the
 * same on every rank, and its local block */
static double *global_random(const Grid *G, const int st[3], double lo, double hi, double **loc)
{
    size_t n = 1, m = 1;
    for (int d = 0; d < 3; ++d) {
        n *= G->I.nglobal[d] + (size_t)st[d];
        m *= G->I.nlocal[d] + (size_t)st[d];
    }
    double *a = malloc(n * 8);
    for (size_t q = 0; q < n; ++q) a[q] = lo + (hi - lo) * urand();
    MPI_Bcast(a, (int)n, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    *loc = malloc(m * 8);
    scatter_st(G, st, a, *loc);
    return a;
}

static double allsum(const Grid *G, double v)
{
    double s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, stenc_grid_comm(G->g));
    return s;
}

/* H is right: fill owned points of a (staggered) field with a function of
 * the global index, H must reproduce it on every local point */
static void check_halo_values(Grid *G, int elem, const int stagger[3])
{
    const stenc_grid_info *I = &G->I;
    size_t m[3];
    for (int d = 0; d < 3; ++d) m[d] = I->nlocal[d] + (size_t)(d < I->dims ? stagger[d] : 0);
    size_t n = m[0] * m[1] * m[2];
    void *a = calloc(n, (size_t)elem);
    /* every point but the ghost layers facing a neighbour holds its value;
     * H must fill the ghosts (the face a staggered field shares with its
     * neighbour is kept by both, as ImplicitGlobalGrid does) */
    for (size_t k = 0; k < m[2]; ++k)
        for (size_t j = 0; j < m[1]; ++j)
            for (size_t i = 0; i < m[0]; ++i) {
                size_t l[3] = {i, j, k};
                int own = 1;
                double v = 0;
                for (int d = 0; d < I->dims; ++d) {
                    /* ghost layers: ghost wide, or half the overlap 2*ghost + s when that is narrower */
                    size_t h = (size_t)(stagger[d] >= 0 ? I->ghost : (2 * I->ghost + stagger[d]) / 2);
                    size_t lo = I->neighbour[d][0] >= 0 ? h : 0;
                    size_t hi = I->neighbour[d][1] >= 0 ? m[d] - h : m[d];
                    own &= l[d] >= lo && l[d] < hi;
                    long long N = (long long)I->nglobal[d] + stagger[d], g = I->offset[d] + (long long)l[d];
                    if (I->periodic[d]) g = ((g % N) + N) % N;
                    v = v * 1000 + (double)g;
                }
                size_t q = i + m[0] * (j + m[1] * k);
                if (!own) v = -1;
                if (elem == 8) ((double *)a)[q] = v;
                else ((float *)a)[q] = (float)v;
            }
    stenc_field f = {a, elem, {stagger[0], stagger[1], stagger[2]}};
    int rc = stenc_halo_update(G->g, 1, &f);
    CHECK(rc == STENC_OK, "halo update: %s", stenc_strerror(rc));
    size_t bad = 0;
    for (size_t k = 0; k < m[2]; ++k)
        for (size_t j = 0; j < m[1]; ++j)
            for (size_t i = 0; i < m[0]; ++i) {
                size_t l[3] = {i, j, k};
                double v = 0;
                for (int d = 0; d < I->dims; ++d) {
                    long long N = (long long)I->nglobal[d] + stagger[d], g = I->offset[d] + (long long)l[d];
                    if (I->periodic[d]) g = ((g % N) + N) % N;
                    v = v * 1000 + (double)g;
                }
                size_t q = i + m[0] * (j + m[1] * k);
                double got = elem == 8 ? ((double *)a)[q] : (double)((float *)a)[q];
                bad += got != (elem == 8 ? v : (double)(float)v);
            }
    CHECK(bad == 0, "halo values: %zu points differ (elem %d, stagger %d %d %d)", bad, elem, stagger[0], stagger[1],
          stagger[2]);
    free(a);
}

/* <H x, y> = <x, H^T y> with three double fields at once: grid extent,
 * one point longer along x, and shorter than the grid (by up to 3 points,
 * within what the ghost width allows) */
static void check_dot(Grid *G)
{
    const stenc_grid_info *I = &G->I;
    const int sh = -2 * I->ghost < -3 ? -3 : -2 * I->ghost;
    const int st[3][3] = {{0, 0, 0}, {1, 0, 0}, {sh, -1, I->dims == 3 ? -2 : 0}};
    double *x[3], *y[3], *h[3];
    size_t n[3];
    stenc_field f[3];
    for (int a = 0; a < 3; ++a) {
        n[a] = 1;
        for (int d = 0; d < 3; ++d) n[a] *= I->nlocal[d] + (size_t)(d < I->dims ? st[a][d] : 0);
        x[a] = malloc(n[a] * 8); y[a] = malloc(n[a] * 8); h[a] = malloc(n[a] * 8);
        for (size_t q = 0; q < n[a]; ++q) { x[a][q] = urand() - 0.5; y[a][q] = urand() - 0.5; }
        memcpy(h[a], x[a], n[a] * 8);
        f[a] = (stenc_field){h[a], 8, {st[a][0], st[a][1], st[a][2]}};
    }
    int rc = stenc_halo_update(G->g, 3, f);
    double lhs = 0, rhs = 0;
    for (int a = 0; a < 3; ++a) {
        for (size_t q = 0; q < n[a]; ++q) lhs += h[a][q] * y[a][q];
        memcpy(h[a], y[a], n[a] * 8);
    }
    int rc2 = stenc_halo_adjoint(G->g, 3, f);
    for (int a = 0; a < 3; ++a)
        for (size_t q = 0; q < n[a]; ++q) rhs += x[a][q] * h[a][q];
    lhs = allsum(G, lhs);
    rhs = allsum(G, rhs);
    CHECK(rc == STENC_OK && rc2 == STENC_OK, "halo calls: %s / %s", stenc_strerror(rc), stenc_strerror(rc2));
    CHECK(fabs(lhs - rhs) <= 1e-13 * fmax(fabs(lhs), 1), "dot test: <Hx,y> = %.17g, <x,H^T y> = %.17g", lhs, rhs);
    for (int a = 0; a < 3; ++a) { free(x[a]); free(y[a]); free(h[a]); }
}

/* 50 diffusion steps: distributed (generated update + halo) == global
 * (not periodic), and the hidden-communication entry point == update + halo */
static void check_diffusion(Grid *G, int periodic)
{
    const stenc_grid_info *I = &G->I;
    const int D = I->dims;
    double *gT = malloc(G->ng * 8), *gT2 = malloc(G->ng * 8), *gC = malloc(G->ng * 8);
    for (size_t q = 0; q < G->ng; ++q) { gT[q] = urand(); gC[q] = 0.5 + urand(); }
    MPI_Bcast(gT, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    MPI_Bcast(gC, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    memcpy(gT2, gT, G->ng * 8);
    double *T = malloc(G->nl * 8), *T2 = malloc(G->nl * 8), *C = malloc(G->nl * 8);
    double *H = malloc(G->nl * 8), *H2 = malloc(G->nl * 8);
    scatter(G, gT, T);
    scatter(G, gT, T2);
    scatter(G, gC, C);
    memcpy(H, T, G->nl * 8);
    memcpy(H2, T2, G->nl * 8);
    const size_t *N = I->nglobal;
    int rc = STENC_OK, rch = STENC_OK;
    for (int s = 0; s < 50 && rc == STENC_OK && rch == STENC_OK; ++s) {
        if (D == 2) {
            rc = stenc_diffusion_step_2d_f64(N[0], N[1], gT2, gT, gC, 0.1, 1, 1, 1);
            if (rc == STENC_OK) rc = stenc_dist_diffusion_step_2d_f64(G->g, T2, T, C, 0.1, 1, 1, 1);
            rch = stenc_dist_diffusion_step_hide_2d_f64(G->g, H2, H, C, 0.1, 1, 1, 1);
        } else {
            rc = stenc_diffusion_step_3d_f64(N[0], N[1], N[2], gT2, gT, gC, 0.1, 1, 1, 1, 1);
            if (rc == STENC_OK) rc = stenc_dist_diffusion_step_3d_f64(G->g, T2, T, C, 0.1, 1, 1, 1, 1);
            rch = stenc_dist_diffusion_step_hide_3d_f64(G->g, H2, H, C, 0.1, 1, 1, 1, 1);
        }
        stenc_field f = {T2, 8, {0, 0, 0}};
        if (rc == STENC_OK) rc = stenc_halo_update(G->g, 1, &f);
        double *t = gT; gT = gT2; gT2 = t;
        t = T; T = T2; T2 = t;
        t = H; H = H2; H2 = t;
    }
    CHECK(rc == STENC_OK, "diffusion: %s (%s)", stenc_strerror(rc), stenc_grid_error(G->g));
    CHECK(rch == STENC_OK, "diffusion, hidden communication: %s (%s)", stenc_strerror(rch), stenc_grid_error(G->g));
    size_t hbad = 0;
    for (size_t q = 0; q < G->nl; ++q) hbad += memcmp(&T[q], &H[q], 8) != 0;
    CHECK(hbad == 0, "diffusion with hidden communication: %zu of %zu local points differ from update + halo", hbad, G->nl);
    free(H); free(H2);
    if (periodic) { free(gT); free(gT2); free(gC); free(T); free(T2); free(C); return; }
    double *ref = malloc(G->nl * 8);
    scatter(G, gT, ref);
    size_t bad = 0;
    for (size_t k = 0; k < I->nlocal[2]; ++k)
        for (size_t j = 0; j < I->nlocal[1]; ++j)
            for (size_t i = 0; i < I->nlocal[0]; ++i) {
                size_t q = i + I->nlocal[0] * (j + I->nlocal[1] * k);
                bad += memcmp(&T[q], &ref[q], 8) != 0; /* bitwise, ghosts included (updated by H) */
            }
    CHECK(bad == 0, "diffusion: %zu of %zu local points differ from the one-process run", bad, G->nl);
    free(gT); free(gT2); free(gC); free(T); free(T2); free(C); free(ref);
}

/* 50 steps of the 3D acoustic mini-app (velocity, halo of the three
 * staggered velocities, pressure, halo of P) equal the one-process run
 * bitwise on every local point; a second copy updates the pressure with
 * the exchange hidden behind the interior */
static void check_acoustic(Grid *G)
{
    const size_t *N = G->I.nglobal;
    static const int sv[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double *P[2], *V[2][3], *gV[3];
    double *gP = global_random(G, ST0, -1, 1, &P[0]);
    scatter(G, gP, P[1] = malloc(G->nl * 8));
    for (int d = 0; d < 3; ++d) {
        gV[d] = global_random(G, sv[d], -0.1, 0.1, &V[0][d]);
        size_t m = (G->I.nlocal[0] + (size_t)sv[d][0]) * (G->I.nlocal[1] + (size_t)sv[d][1]) * (G->I.nlocal[2] + (size_t)sv[d][2]);
        V[1][d] = malloc(m * 8);
        memcpy(V[1][d], V[0][d], m * 8);
    }
    const double dt = 0.2, rho = 1.1, kap = 0.9, h = 1;
    int rc = STENC_OK;
    for (int s = 0; s < 50 && rc == STENC_OK; ++s) {
        rc = stenc_acoustic3d_velocity_3d_f64(N[0], N[1], N[2], gV[0], gV[1], gV[2], gP, dt, rho, h, h, h);
        if (rc == STENC_OK) rc = stenc_acoustic3d_pressure_3d_f64(N[0], N[1], N[2], gP, gV[0], gV[1], gV[2], dt, kap, h, h, h);
        for (int c = 0; c < 2 && rc == STENC_OK; ++c) {
            stenc_field fv[3] = {{V[c][0], 8, {1, 0, 0}}, {V[c][1], 8, {0, 1, 0}}, {V[c][2], 8, {0, 0, 1}}};
            stenc_field fp = {P[c], 8, {0, 0, 0}};
            rc = stenc_dist_acoustic3d_velocity_3d_f64(G->g, V[c][0], V[c][1], V[c][2], P[c], dt, rho, h, h, h);
            if (rc == STENC_OK) rc = stenc_halo_update(G->g, 3, fv);
            if (rc != STENC_OK) break;
            if (c == 0) {
                rc = stenc_dist_acoustic3d_pressure_3d_f64(G->g, P[c], V[c][0], V[c][1], V[c][2], dt, kap, h, h, h);
                if (rc == STENC_OK) rc = stenc_halo_update(G->g, 1, &fp);
            } else
                rc = stenc_dist_acoustic3d_pressure_hide_3d_f64(G->g, P[c], V[c][0], V[c][1], V[c][2], dt, kap, h, h, h);
        }
    }
    CHECK(rc == STENC_OK, "acoustic: %s (%s)", stenc_strerror(rc), stenc_grid_error(G->g));
    for (int c = 0; c < 2; ++c) {
        size_t bad = differ(G, ST0, gP, P[c]);
        for (int d = 0; d < 3; ++d) bad += differ(G, sv[d], gV[d], V[c][d]);
        CHECK(bad == 0, "acoustic%s after 50 steps: %zu local points differ from the one-process run",
              c ? " (hidden communication)" : "", bad);
    }
    free(gP); free(P[0]); free(P[1]);
    for (int d = 0; d < 3; ++d) { free(gV[d]); free(V[0][d]); free(V[1][d]); }
}

/* 50 iterations of the Stokes mini-app (viscosity, shear stress, residual,
 * velocity update, halo of Vx; arrays 1 to 3 points shorter than the grid)
 * equal the one-process run bitwise on every local point of every array;
 * a second copy hides the Vx exchange behind the velocity update */
static void check_stokes(Grid *G)
{
    const size_t *N = G->I.nglobal;
    static const int sC[3] = {-1, -1, -1}, sT[3] = {-1, -1, -2}, sR[3] = {-1, -3, -2};
    double *Eta, *Vy, *Pt, *Vx[2], *EtaC[2], *Txy[2], *Rx[2];
    double *gEta = global_random(G, ST0, 0.5, 2, &Eta), *gVy = global_random(G, ST0, -1, 1, &Vy);
    double *gPt = global_random(G, ST0, -1, 1, &Pt), *gVx = global_random(G, ST0, -1, 1, &Vx[0]);
    double *gEtaC = global_random(G, sC, 0, 0, &EtaC[0]), *gTxy = global_random(G, sT, 0, 0, &Txy[0]);
    double *gRx = global_random(G, sR, 0, 0, &Rx[0]);
    free(global_random(G, ST0, -1, 1, &Vx[1]));
    memcpy(Vx[1], Vx[0], G->nl * 8);
    free(global_random(G, sC, 0, 0, &EtaC[1]));
    free(global_random(G, sT, 0, 0, &Txy[1]));
    free(global_random(G, sR, 0, 0, &Rx[1]));
    const double dx = 1, dy = 1.2, dtau = 0.1;
    int rc = STENC_OK;
    for (int s = 0; s < 50 && rc == STENC_OK; ++s) {
        rc = stenc_stokes3d_viscosity_3d_f64(N[0], N[1], N[2], gEtaC, gEta);
        if (rc == STENC_OK) rc = stenc_stokes3d_shear_3d_f64(N[0], N[1], N[2], gTxy, gEta, gVx, gVy, dx, dy);
        if (rc == STENC_OK) rc = stenc_stokes3d_residual_3d_f64(N[0], N[1], N[2], gRx, gTxy, gPt, dx, dy);
        if (rc == STENC_OK) rc = stenc_stokes3d_velocity_3d_f64(N[0], N[1], N[2], gVx, gRx, dtau);
        for (int c = 0; c < 2 && rc == STENC_OK; ++c) {
            rc = stenc_dist_stokes3d_viscosity_3d_f64(G->g, EtaC[c], Eta);
            if (rc == STENC_OK) rc = stenc_dist_stokes3d_shear_3d_f64(G->g, Txy[c], Eta, Vx[c], Vy, dx, dy);
            if (rc == STENC_OK) rc = stenc_dist_stokes3d_residual_3d_f64(G->g, Rx[c], Txy[c], Pt, dx, dy);
            stenc_field f = {Vx[c], 8, {0, 0, 0}};
            if (rc != STENC_OK) break;
            if (c == 0) {
                rc = stenc_dist_stokes3d_velocity_3d_f64(G->g, Vx[c], Rx[c], dtau);
                if (rc == STENC_OK) rc = stenc_halo_update(G->g, 1, &f);
            } else
                rc = stenc_dist_stokes3d_velocity_hide_3d_f64(G->g, Vx[c], Rx[c], dtau);
        }
    }
    CHECK(rc == STENC_OK, "stokes: %s (%s)", stenc_strerror(rc), stenc_grid_error(G->g));
    for (int c = 0; c < 2; ++c) {
        size_t bad = differ(G, ST0, gVx, Vx[c]) + differ(G, sC, gEtaC, EtaC[c]) + differ(G, sT, gTxy, Txy[c]) +
                     differ(G, sR, gRx, Rx[c]);
        CHECK(bad == 0, "stokes%s after 50 iterations: %zu local points differ from the one-process run",
              c ? " (hidden communication)" : "", bad);
    }
    free(gEta); free(gVy); free(gPt); free(gVx); free(gEtaC); free(gTxy); free(gRx);
    free(Eta); free(Vy); free(Pt);
    for (int c = 0; c < 2; ++c) { free(Vx[c]); free(EtaC[c]); free(Txy[c]); free(Rx[c]); }
}

typedef int (*val_fn)(const Grid *, int glob, int mode, const double *x, double *v);
typedef int (*grad_fn)(const Grid *, int glob, int mode, const double *x, double a, double b, double *G);
typedef int (*vg_fn)(const Grid *, int mode, const double *x, double *v, double a, double b, double *G);

/* a regularizer's value, gradient and value_grad, one process on the global
 * grid (glob) or distributed; PRE: arguments after x (tv_weighted's weight
 * field), W2/W3: the weights, EXTRA: the parameters after them, each with
 * its leading comma or empty */
#define WM (glob ? G->gm : G->lm)
#define REG_FNS(NAME, PRE, W2, W3, EXTRA)                                                                              \
    static int NAME##_val(const Grid *G, int glob, int mode, const double *x, double *v)                              \
    {                                                                                                                  \
        const size_t *N = G->I.nglobal;                                                                                \
        if (G->I.dims == 2)                                                                                            \
            return glob ? stenc_##NAME##_value_2d_f64(N[0], N[1], mode, x PRE W2 EXTRA, v)                             \
                        : stenc_dist_##NAME##_value_2d_f64(G->g, mode, x PRE W2 EXTRA, v);                             \
        return glob ? stenc_##NAME##_value_3d_f64(N[0], N[1], N[2], mode, x PRE W3 EXTRA, v)                           \
                    : stenc_dist_##NAME##_value_3d_f64(G->g, mode, x PRE W3 EXTRA, v);                                 \
    }                                                                                                                  \
    static int NAME##_grad(const Grid *G, int glob, int mode, const double *x, double a, double b, double *g)         \
    {                                                                                                                  \
        const size_t *N = G->I.nglobal;                                                                                \
        if (G->I.dims == 2)                                                                                            \
            return glob ? stenc_##NAME##_grad_2d_f64(N[0], N[1], mode, x PRE W2 EXTRA, a, b, g)                        \
                        : stenc_dist_##NAME##_grad_2d_f64(G->g, mode, x PRE W2 EXTRA, a, b, g);                        \
        return glob ? stenc_##NAME##_grad_3d_f64(N[0], N[1], N[2], mode, x PRE W3 EXTRA, a, b, g)                      \
                    : stenc_dist_##NAME##_grad_3d_f64(G->g, mode, x PRE W3 EXTRA, a, b, g);                            \
    }                                                                                                                  \
    static int NAME##_vg(const Grid *G, int mode, const double *x, double *v, double a, double b, double *g)          \
    {                                                                                                                  \
        const int glob = 0;                                                                                            \
        (void)glob;                                                                                                    \
        if (G->I.dims == 2) return stenc_dist_##NAME##_value_grad_2d_f64(G->g, mode, x PRE W2 EXTRA, v, a, b, g);      \
        return stenc_dist_##NAME##_value_grad_3d_f64(G->g, mode, x PRE W3 EXTRA, v, a, b, g);                          \
    }
#define W2 , 0.7, 1.3
#define W3 , 0.7, 1.3, 0.9
#define PM , WM
#define EPS , 1e-2
#define DELTA , 0.05
REG_FNS(tv, , W2, W3, EPS)
REG_FNS(tv_aniso, , W2, W3, EPS)
REG_FNS(tv_central, , W2, W3, EPS)
REG_FNS(tv_weighted, PM, W2, W3, EPS)
REG_FNS(huber, , W2, W3, DELTA)
REG_FNS(goods, , W2, W3, EPS)
REG_FNS(hessian, , W2, W3, EPS)
REG_FNS(tikhonov_laplace, , W2, W3, )
REG_FNS(tikhonov_gradient, , W2, W3, )
REG_FNS(tikhonov_identity, , , , )

typedef struct {
    const char *name;
    val_fn val;
    grad_fn grad;
    vg_fn vg;
} Reg;
#define REG(NAME) {#NAME, NAME##_val, NAME##_grad, NAME##_vg}
static const Reg regs[] = {REG(tv),    REG(tv_aniso), REG(tv_central),       REG(tv_weighted),       REG(huber),
                           REG(goods), REG(hessian),  REG(tikhonov_laplace), REG(tikhonov_gradient), REG(tikhonov_identity)};

/* the largest difference, relative to the largest |reference|, between a
 * distributed gradient and beta*G0 + alpha*(one-process gradient) over the
 * owned points */
static double grad_error(const Grid *G, const double *Gl, const double *G0, const double *ref, double a, double b,
                         double gmax)
{
    const stenc_grid_info *I = &G->I;
    double err = 0;
    for (size_t k = I->own_lo[2]; k < I->own_hi[2]; ++k)
        for (size_t j = I->own_lo[1]; j < I->own_hi[1]; ++j)
            for (size_t i = I->own_lo[0]; i < I->own_hi[0]; ++i) {
                size_t q = i + I->nlocal[0] * (j + I->nlocal[1] * k);
                double want = b * (b != 0 ? G0[q] : 0) + a * ref[q], e = fabs(Gl[q] - want) / fmax(gmax, 1e-300);
                err = e > err || e != e ? e : err; /* NaN counts */
            }
    return err;
}

static void check_reduction(Grid *G, const Reg *R, int mode, double *worst)
{
    double *gx = malloc(G->ng * 8), *gG0 = malloc(G->ng * 8), *gref = malloc(G->ng * 8);
    for (size_t q = 0; q < G->ng; ++q) { gx[q] = 0.5 + urand(); gG0[q] = urand(); } /* positive: goods divides by x */
    MPI_Bcast(gx, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    MPI_Bcast(gG0, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    double *x = malloc(G->nl * 8), *Gl = malloc(G->nl * 8), *G0 = malloc(G->nl * 8);
    scatter(G, gx, x);
    scatter(G, gG0, G0);
    double vref = 0, v = 0, v2 = 0;
    int rc = R->val(G, 1, mode, gx, &vref);
    CHECK(rc == STENC_OK, "%s one-process value: %s", R->name, stenc_strerror(rc));
    rc = R->val(G, 0, mode, x, &v);
    CHECK(rc == STENC_OK, "%s distributed value: %s (%s)", R->name, stenc_strerror(rc), stenc_grid_error(G->g));
    CHECK(fabs(v - vref) <= 1e-13 * fabs(vref), "%s mode %d: value %.17g, one process %.17g", R->name, mode, v, vref);
    rc = R->val(G, 0, mode, x, &v2);
    CHECK(memcmp(&v, &v2, 8) == 0, "%s: distributed value not reproducible", R->name);
    /* gradient, beta = 0 (G poisoned) and beta != 0; then value_grad */
    rc = R->grad(G, 1, mode, gx, 1, 0, gref);
    double gmax = 0;
    for (size_t q = 0; q < G->ng; ++q) gmax = fmax(gmax, fabs(gref[q]));
    double *ref = malloc(G->nl * 8);
    scatter(G, gref, ref);
    for (int pass = 0; pass < 3; ++pass) {
        double a = 0.7, b = pass ? 0.3 : 0, vv = 0;
        for (size_t q = 0; q < G->nl; ++q) Gl[q] = pass ? G0[q] : NAN;
        rc = pass < 2 ? R->grad(G, 0, mode, x, a, b, Gl) : R->vg(G, mode, x, &vv, a, b, Gl);
        CHECK(rc == STENC_OK, "%s distributed %s: %s (%s)", R->name, pass < 2 ? "grad" : "value_grad",
              stenc_strerror(rc), stenc_grid_error(G->g));
        if (pass == 2)
            CHECK(fabs(vv - vref) <= 1e-13 * fabs(vref), "%s mode %d: value_grad's value %.17g, one process %.17g",
                  R->name, mode, vv, vref);
        double e = grad_error(G, Gl, G0, ref, a, b, gmax);
        if (e > *worst || e != e) *worst = e;
        CHECK(e <= 1e-14, "%s mode %d beta %g (%s): owned gradient points differ by %.3g of the largest", R->name, mode,
              b, pass < 2 ? "grad" : "value_grad", e);
    }
    free(gx); free(gG0); free(gref); free(x); free(Gl); free(G0); free(ref);
}

static void check_ghost_refusal(MPI_Comm comm, int D)
{
    size_t n[3] = {10, 9, 8};
    stenc_grid *g = NULL;
    char err[200];
    int rc = stenc_grid_create(comm, D, n, 1, NULL, NULL, &g, err, sizeof err);
    CHECK(rc == STENC_OK, "create: %s", err);
    double *x = calloc(n[0] * n[1] * n[2], 8), *G = calloc(n[0] * n[1] * n[2], 8);
    /* the Hessian's gradient reaches 2 points: partials at i-1..i+1 of reads at i-1..i+1 */
    rc = D == 2 ? stenc_dist_hessian_grad_2d_f64(g, STENC_NEUMANN, x, 1, 1, 1e-2, 1, 0, G)
                : stenc_dist_hessian_grad_3d_f64(g, STENC_NEUMANN, x, 1, 1, 1, 1e-2, 1, 0, G);
    CHECK(rc == STENC_ERR_GHOST, "hessian gradient on ghost width 1: %s", stenc_strerror(rc));
    CHECK(strstr(stenc_grid_error(g), "hessian") && strstr(stenc_grid_error(g), "at least 2"), "message: %s",
          stenc_grid_error(g));
    free(x);
    free(G);
    stenc_grid_free(g);
}

/* bad input is a clear error on every process, never a hang or an abort */
static void check_bad_input(MPI_Comm comm)
{
    int np = 1;
    MPI_Comm_size(comm, &np);
    stenc_grid *g = NULL;
    char err[300] = "";
    size_t n[3] = {10, 9, 8};
    /* one process passes another local size (or another ghost width) */
    size_t nb[3] = {rank == 0 && np > 1 ? 11u : 10u, 9, 8};
    int rc = stenc_grid_create(comm, 3, nb, 1, NULL, NULL, &g, err, sizeof err);
    if (np > 1)
        CHECK(rc == STENC_ERR_ARG && !g && strstr(err, "nlocal[0] differs between processes"), "mismatched sizes: %s (%s)",
              stenc_strerror(rc), err);
    else
        stenc_grid_free(g);
    g = NULL;
    rc = stenc_grid_create(comm, 3, n, rank == 0 ? 0 : 1, NULL, NULL, &g, err, sizeof err);
    CHECK(rc == STENC_ERR_ARG && !g && (rank == 0 ? strstr(err, "ghost width") != NULL
                                                  : strstr(err, "another process") != NULL),
          "ghost 0 on rank 0: %s (%s)", stenc_strerror(rc), err);
    int pd[3] = {np + 1, 1, 1};
    rc = stenc_grid_create(comm, 3, n, 1, NULL, pd, &g, err, sizeof err);
    CHECK(rc == STENC_ERR_ARG && !g && strstr(err, "do not divide"), "process grid %d for %d processes: %s (%s)", np + 1,
          np, stenc_strerror(rc), err);
    /* use before the grid exists */
    double x = 0, v = 0;
    stenc_field f0 = {&x, 8, {0, 0, 0}};
    CHECK(stenc_halo_update(NULL, 1, &f0) == STENC_ERR_NULL, "halo update without a grid");
    CHECK(stenc_dist_tv_value_3d_f64(NULL, STENC_VALID, &x, 1, 1, 1, 1e-2, &v) == STENC_ERR_NULL, "value without a grid");
    CHECK(stenc_grid_sum(NULL, STENC_OK, 1, &v) == STENC_ERR_NULL, "sum without a grid");
    /* a field shorter than the blocks' overlap allows, on ghost width 1 */
    rc = stenc_grid_create(comm, 3, n, 1, NULL, NULL, &g, err, sizeof err);
    CHECK(rc == STENC_OK, "create: %s", err);
    if (rc != STENC_OK) return;
    size_t N = n[0] * n[1] * n[2];
    double *a = calloc(N, 8), *b = calloc(N, 8), *c = calloc(N, 8);
    stenc_field f = {a, 8, {0, rank == 0 ? -3 : 0, 0}};
    rc = stenc_halo_update(g, 1, &f);
    CHECK(rc == STENC_ERR_ARG && (rank == 0 ? strstr(stenc_grid_error(g), "at least 2") != NULL
                                            : strstr(stenc_grid_error(g), "another process") != NULL),
          "stagger -3 on ghost width 1: %s (%s)", stenc_strerror(rc), stenc_grid_error(g));
    /* the Stokes residual's array is 3 points short along y: ghost width 2 */
    rc = stenc_dist_stokes3d_residual_3d_f64(g, a, b, c, 1, 1);
    CHECK(rc == STENC_ERR_GHOST && strstr(stenc_grid_error(g), "residual") && strstr(stenc_grid_error(g), "at least 2"),
          "stokes residual on ghost width 1: %s (%s)", stenc_strerror(rc), stenc_grid_error(g));
#ifdef STENC_DIST_CUDA
    /* the device entry point checks the grid before it touches the device */
    rc = stenc_dist_cuda_stokes3d_residual_3d_f64(g, a, b, c, 1, 1, NULL);
    CHECK(rc == STENC_ERR_GHOST && strstr(stenc_grid_error(g), "at least 2"), "device stokes residual on ghost width 1: %s",
          stenc_strerror(rc));
    rc = stenc_dist_cuda_stokes3d_velocity_hide_3d_f64(g, a, b, 1, NULL, NULL);
    CHECK(rc == STENC_ERR_GHOST && strstr(stenc_grid_error(g), "velocity"), "device stokes velocity (hidden) on ghost width 1: %s",
          stenc_strerror(rc));
#endif
    free(a); free(b); free(c);
    stenc_grid_free(g);
}

static void run_config(MPI_Comm comm, int D, int periodic, int split_outer)
{
    size_t n[3] = {D == 2 ? 13u : 9u, D == 2 ? 11u : 8u, D == 2 ? 1u : 7u};
    int per[3] = {periodic, periodic, periodic}, np = 1;
    MPI_Comm_size(comm, &np);
    int pd[3] = {1, 1, 1};
    pd[D - 1] = np; /* split_outer: every process along the outermost dimension */
    Grid G;
    char err[200];
    int rc = stenc_grid_create(comm, D, n, 2, per, split_outer ? pd : NULL, &G.g, err, sizeof err);
    CHECK(rc == STENC_OK, "create %dD periodic %d: %s", D, periodic, err);
    if (rc != STENC_OK) return;
    stenc_grid_get_info(G.g, &G.I);
    G.nl = G.I.nlocal[0] * G.I.nlocal[1] * G.I.nlocal[2];
    G.ng = G.I.nglobal[0] * G.I.nglobal[1] * G.I.nglobal[2];
    rng_state = 1000 + 17 * (uint64_t)rank + (uint64_t)(10 * D + periodic);
    int st[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, D == 3}, {-1, 0, 0}, {-2, -3, 0}, {-4, 2, D == 3 ? -3 : 0}};
    for (int s = 0; s < (periodic ? 1 : 6); ++s) { /* staggered fields: non-periodic grids */
        check_halo_values(&G, 8, st[s]);
        check_halo_values(&G, 4, st[s]);
    }
    check_dot(&G);
    rng_state = 77 + (uint64_t)(10 * D + periodic); /* the same global data on every rank */
    check_diffusion(&G, periodic);
    if (D == 3 && !periodic) {
        check_acoustic(&G);
        check_stokes(&G);
    }
    int modes[2] = {periodic ? STENC_PERIODIC : STENC_VALID, STENC_NEUMANN};
    double *gm = malloc(G.ng * 8), worst = 0;
    for (size_t q = 0; q < G.ng; ++q) gm[q] = 0.5 + urand();
    MPI_Bcast(gm, (int)G.ng, MPI_DOUBLE, 0, comm);
    G.gm = gm;
    scatter(&G, gm, G.lm = malloc(G.nl * 8));
    for (int m = 0; m < (periodic ? 1 : 2); ++m)
        for (size_t r = 0; r < sizeof regs / sizeof *regs; ++r) check_reduction(&G, &regs[r], modes[m], &worst);
    if (rank == 0 && getenv("STENC_TEST_VERBOSE"))
        printf("%dD periodic %d: largest gradient difference %.3g of the largest value\n", D, periodic, worst);
    free(gm);
    free(G.lm);
    stenc_grid_free(G.g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int D = 2; D <= 3; ++D) {
        run_config(MPI_COMM_WORLD, D, 0, 0);
        run_config(MPI_COMM_WORLD, D, 1, 0);
        run_config(MPI_COMM_WORLD, D, 0, 1);
        check_ghost_refusal(MPI_COMM_WORLD, D);
    }
    check_bad_input(MPI_COMM_WORLD);
    int tot[2] = {checks, failures}, all[2] = {0, 0};
    MPI_Reduce(tot, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int anyfail = 0;
    MPI_Allreduce(&failures, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d%%: Checks: %d, Failures: %d, Errors: 0   (test_dist, %d process(es))\n",
               all[0] ? 100 * (all[0] - all[1]) / all[0] : 0, all[0], all[1], np);
    MPI_Finalize();
    return anyfail ? 1 : 0;
}
