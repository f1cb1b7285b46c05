/* Distributed grids under mpirun -np N: the halo update H and its adjoint
 * H^T, and generated kernels and reductions on local blocks, against the
 * same computation on the global grid in one process.
 *   - H fills every ghost with the value of the point it stands for (fields
 *     filled with a function of the global index; staggered, float and
 *     double fields, periodic and not, 2D and 3D);
 *   - the dot test <H x, y> = <x, H^T y> to 1e-13;
 *   - five diffusion steps (generated update + halo update) equal the
 *     one-process run bitwise on every local point, and the entry point with
 *     the exchange hidden behind the interior equals update + halo bitwise
 *     (process grids split along x and along the outermost dimension);
 *   - TV and central-difference TV values (valid, neumann, periodic) to
 *     1e-13, gradients with alpha/beta to 1e-12, value_grad;
 *   - a ghost width below a stencil's reach is refused with a message that
 *     names the stencil and the width it needs.
 * Prints Check's summary line format ("100%: Checks: N, Failures: F, Errors: 0")
 * from rank 0; exit status 0 only if every rank passed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc_mpi.h"
#include "diffusion.h"
#include "hessian.h"
#include "tv.h"
#include "tv_central.h"

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
} Grid;

/* global index along d of local index l (wrapped when periodic) */
static long long gidx(const stenc_grid_info *I, int d, size_t l)
{
    long long v = I->offset[d] + (long long)l, N = (long long)I->nglobal[d];
    return I->periodic[d] ? ((v % N) + N) % N : v;
}

/* local point p <- global array value at the point it stands for */
static void scatter(const Grid *G, const double *glob, double *loc)
{
    const stenc_grid_info *I = &G->I;
    for (size_t k = 0; k < I->nlocal[2]; ++k)
        for (size_t j = 0; j < I->nlocal[1]; ++j)
            for (size_t i = 0; i < I->nlocal[0]; ++i) {
                long long gi = gidx(I, 0, i), gj = gidx(I, 1, j), gk = I->dims == 3 ? gidx(I, 2, k) : 0;
                loc[i + I->nlocal[0] * (j + I->nlocal[1] * k)] =
                    glob[gi + (long long)I->nglobal[0] * (gj + (long long)I->nglobal[1] * gk)];
            }
}

static int owned(const stenc_grid_info *I, size_t i, size_t j, size_t k)
{
    return i >= I->own_lo[0] && i < I->own_hi[0] && j >= I->own_lo[1] && j < I->own_hi[1] && k >= I->own_lo[2] &&
           k < I->own_hi[2];
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
                    size_t h = (size_t)I->ghost, lo = I->neighbour[d][0] >= 0 ? h : 0;
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

/* <H x, y> = <x, H^T y> with two double fields (one staggered) at once */
static void check_dot(Grid *G)
{
    const stenc_grid_info *I = &G->I;
    size_t n0 = G->nl, n1 = (I->nlocal[0] + 1) * I->nlocal[1] * I->nlocal[2];
    double *x0 = malloc(n0 * 8), *x1 = malloc(n1 * 8), *y0 = malloc(n0 * 8), *y1 = malloc(n1 * 8);
    double *h0 = malloc(n0 * 8), *h1 = malloc(n1 * 8);
    for (size_t q = 0; q < n0; ++q) { x0[q] = urand() - 0.5; y0[q] = urand() - 0.5; }
    for (size_t q = 0; q < n1; ++q) { x1[q] = urand() - 0.5; y1[q] = urand() - 0.5; }
    memcpy(h0, x0, n0 * 8);
    memcpy(h1, x1, n1 * 8);
    stenc_field f[2] = {{h0, 8, {0, 0, 0}}, {h1, 8, {1, 0, 0}}};
    int rc = stenc_halo_update(G->g, 2, f);
    double lhs = 0, rhs = 0;
    for (size_t q = 0; q < n0; ++q) lhs += h0[q] * y0[q];
    for (size_t q = 0; q < n1; ++q) lhs += h1[q] * y1[q];
    memcpy(h0, y0, n0 * 8);
    memcpy(h1, y1, n1 * 8);
    int rc2 = stenc_halo_adjoint(G->g, 2, f);
    for (size_t q = 0; q < n0; ++q) rhs += x0[q] * h0[q];
    for (size_t q = 0; q < n1; ++q) rhs += x1[q] * h1[q];
    lhs = allsum(G, lhs);
    rhs = allsum(G, rhs);
    CHECK(rc == STENC_OK && rc2 == STENC_OK, "halo calls: %s / %s", stenc_strerror(rc), stenc_strerror(rc2));
    CHECK(fabs(lhs - rhs) <= 1e-13 * fmax(fabs(lhs), 1), "dot test: <Hx,y> = %.17g, <x,H^T y> = %.17g", lhs, rhs);
    free(x0); free(x1); free(y0); free(y1); free(h0); free(h1);
}

/* five diffusion steps: distributed (generated update + halo) == global
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
    for (int s = 0; s < 5 && rc == STENC_OK && rch == STENC_OK; ++s) {
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

typedef int (*val_fn)(const Grid *, int glob, int mode, const double *x, double *v);
typedef int (*grad_fn)(const Grid *, int glob, int mode, const double *x, double a, double b, double *G);

#define REG_FNS(NAME, ...)                                                                                             \
    static int NAME##_val(const Grid *G, int glob, int mode, const double *x, double *v)                              \
    {                                                                                                                  \
        const size_t *N = G->I.nglobal;                                                                                \
        if (G->I.dims == 2)                                                                                            \
            return glob ? stenc_##NAME##_value_2d_f64(N[0], N[1], mode, x, 0.7, 1.3, __VA_ARGS__, v)                   \
                        : stenc_dist_##NAME##_value_2d_f64(G->g, mode, x, 0.7, 1.3, __VA_ARGS__, v);                   \
        return glob ? stenc_##NAME##_value_3d_f64(N[0], N[1], N[2], mode, x, 0.7, 1.3, 0.9, __VA_ARGS__, v)            \
                    : stenc_dist_##NAME##_value_3d_f64(G->g, mode, x, 0.7, 1.3, 0.9, __VA_ARGS__, v);                  \
    }                                                                                                                  \
    static int NAME##_grad(const Grid *G, int glob, int mode, const double *x, double a, double b, double *g)         \
    {                                                                                                                  \
        const size_t *N = G->I.nglobal;                                                                                \
        if (G->I.dims == 2)                                                                                            \
            return glob ? stenc_##NAME##_grad_2d_f64(N[0], N[1], mode, x, 0.7, 1.3, __VA_ARGS__, a, b, g)              \
                        : stenc_dist_##NAME##_grad_2d_f64(G->g, mode, x, 0.7, 1.3, __VA_ARGS__, a, b, g);              \
        return glob ? stenc_##NAME##_grad_3d_f64(N[0], N[1], N[2], mode, x, 0.7, 1.3, 0.9, __VA_ARGS__, a, b, g)       \
                    : stenc_dist_##NAME##_grad_3d_f64(G->g, mode, x, 0.7, 1.3, 0.9, __VA_ARGS__, a, b, g);             \
    }
REG_FNS(tv, 1e-2)
REG_FNS(tv_central, 1e-2)

static void check_reduction(Grid *G, const char *name, val_fn vf, grad_fn gf, int mode)
{
    const stenc_grid_info *I = &G->I;
    double *gx = malloc(G->ng * 8), *gG0 = malloc(G->ng * 8), *gref = malloc(G->ng * 8);
    for (size_t q = 0; q < G->ng; ++q) { gx[q] = urand() - 0.5; gG0[q] = urand(); }
    MPI_Bcast(gx, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    MPI_Bcast(gG0, (int)G->ng, MPI_DOUBLE, 0, stenc_grid_comm(G->g));
    double *x = malloc(G->nl * 8), *Gl = malloc(G->nl * 8), *G0 = malloc(G->nl * 8);
    scatter(G, gx, x);
    scatter(G, gG0, G0);
    double vref = 0, v = 0, v2 = 0;
    int rc = vf(G, 1, mode, gx, &vref);
    CHECK(rc == STENC_OK, "%s one-process value: %s", name, stenc_strerror(rc));
    rc = vf(G, 0, mode, x, &v);
    CHECK(rc == STENC_OK, "%s distributed value: %s (%s)", name, stenc_strerror(rc), stenc_grid_error(G->g));
    CHECK(fabs(v - vref) <= 1e-13 * fabs(vref), "%s mode %d: value %.17g, one process %.17g", name, mode, v, vref);
    rc = vf(G, 0, mode, x, &v2);
    CHECK(memcmp(&v, &v2, 8) == 0, "%s: distributed value not reproducible", name);
    /* gradient, beta = 0 (G poisoned) and beta != 0 */
    rc = gf(G, 1, mode, gx, 1, 0, gref);
    double gmax = 0;
    for (size_t q = 0; q < G->ng; ++q) gmax = fmax(gmax, fabs(gref[q]));
    double *ref = malloc(G->nl * 8);
    scatter(G, gref, ref);
    for (int pass = 0; pass < 2; ++pass) {
        double a = 0.7, b = pass ? 0.3 : 0;
        for (size_t q = 0; q < G->nl; ++q) Gl[q] = pass ? G0[q] : NAN;
        rc = gf(G, 0, mode, x, a, b, Gl);
        CHECK(rc == STENC_OK, "%s distributed grad: %s (%s)", name, stenc_strerror(rc), stenc_grid_error(G->g));
        size_t bad = 0, nown = 0;
        for (size_t k = 0; k < I->nlocal[2]; ++k)
            for (size_t j = 0; j < I->nlocal[1]; ++j)
                for (size_t i = 0; i < I->nlocal[0]; ++i) {
                    if (!owned(I, i, j, k)) continue;
                    size_t q = i + I->nlocal[0] * (j + I->nlocal[1] * k);
                    double want = b * (pass ? G0[q] : 0) + a * ref[q];
                    bad += !(fabs(Gl[q] - want) <= 1e-12 * fmax(gmax, 1e-3));
                    ++nown;
                }
        CHECK(bad == 0 && nown > 0, "%s mode %d beta %g: %zu of %zu owned gradient points differ", name, mode, b, bad,
              nown);
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
    int st[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, D == 3}};
    for (int s = 0; s < (periodic ? 1 : 3); ++s) { /* staggered fields: non-periodic grids */
        check_halo_values(&G, 8, st[s]);
        check_halo_values(&G, 4, st[s]);
    }
    check_dot(&G);
    rng_state = 77 + (uint64_t)(10 * D + periodic); /* the same global data on every rank */
    check_diffusion(&G, periodic);
    int modes[2] = {periodic ? STENC_PERIODIC : STENC_VALID, STENC_NEUMANN};
    for (int m = 0; m < (periodic ? 1 : 2); ++m) {
        check_reduction(&G, "tv", tv_val, tv_grad, modes[m]);
        check_reduction(&G, "tv_central", tv_central_val, tv_central_grad, modes[m]);
    }
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
