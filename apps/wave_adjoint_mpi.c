/* stenc-wave-adjoint: a distributed adjoint-state gradient, end to end.
 *
 *   mpirun -np N build/bin/stenc-wave-adjoint [-n LOCAL] [-t STEPS] [--lambda L]
 *
 * J(K) = 1/2 sum_t sum_r (P_t(r) - d_t(r))^2 + lambda * TV(K): the data
 * misfit of T steps of 3D acoustic waves (tests/stencils/wave3d.stn: P, the
 * staggered velocities, a bulk-modulus field K) recorded at receivers, plus
 * a total-variation regularizer of K (stencils/tv.stn), on a distributed
 * grid.  The gradient dJ/dK comes from the forward run, the reverse run with
 * the generated adjoint kernels and adjoint halo updates (H^T), and the
 * distributed TV value_grad; it is checked by a Taylor test: the remainder
 * |J(K + h dK) - J(K) - h <g, dK>| must shrink as h^2 (ratio 4 per halving).
 * The global problem does not depend on the process count (the global grid
 * is fixed: -n is the global size), so runs at different N must print the
 * same J and <g, dK> up to rounding.  Prints "taylor: ..." lines and a
 * Check-style summary line; exit 0 when the test passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc_mpi.h"
#include "tv.h"
#include "wave3d.h"

typedef struct {
    stenc_grid *g;
    stenc_grid_info I;
    size_t n[3], N, nv[3]; /* local extents, points; staggered point counts */
    int T, nrec;
    double dt, rho, h, lambda;
    long long src[3], rec[16][3];
    double *d; /* observed data [T][nrec] */
} Prob;

/* local index of a global point this process owns, or -1 */
static long long owner_index(const Prob *p, const long long gp[3])
{
    size_t l[3];
    for (int d = 0; d < 3; ++d) {
        long long v = gp[d] - p->I.offset[d];
        if (v < (long long)p->I.own_lo[d] || v >= (long long)p->I.own_hi[d]) return -1;
        l[d] = (size_t)v;
    }
    return (long long)(l[0] + p->n[0] * (l[1] + p->n[1] * l[2]));
}

static double source(const Prob *p, int t)
{
    const double f = 0.15; /* peak frequency: a wavelength of about 7 cells */
    double a = 3.14159265358979 * f * ((double)t * p->dt - 1.5 / f);
    (void)p;
    return (1 - 2 * a * a) * exp(-a * a); /* a Ricker wavelet */
}

/* H (adjoint = 0) or H^T (adjoint = 1) of nf double fields with these staggers */
static int halo_op(Prob *p, int nf, double **a, const int (*st)[3], int adjoint)
{
    stenc_field f[4];
    for (int i = 0; i < nf; ++i) {
        f[i].data = a[i];
        f[i].elem = 8;
        memcpy(f[i].stagger, st[i], sizeof f[i].stagger);
    }
    return adjoint ? stenc_halo_adjoint(p->g, nf, f) : stenc_halo_update(p->g, nf, f);
}
#define halo(p, nf, a, st) halo_op(p, nf, a, st, 0)
#define halo_t(p, nf, a, st) halo_op(p, nf, a, st, 1)
static const int ST_V[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, ST_0[1][3] = {{0, 0, 0}};

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != STENC_OK) {                                                                                         \
            fprintf(stderr, "stenc-wave-adjoint: %s: %s (%s)\n", #call, stenc_strerror(rc_), stenc_grid_error(p->g));  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

/* forward: J(K); with hist != NULL keeps the states the reverse run needs
 * (P and V before each step: 4 arrays x T) and the residuals */
static double forward(Prob *p, const double *K, double **hist, double *resid, int record_data)
{
    double *P = calloc(p->N, 8), *V[3];
    for (int d = 0; d < 3; ++d) V[d] = calloc(p->nv[d], 8);
    double *Kh = malloc(p->N * 8);
    memcpy(Kh, K, p->N * 8);
    CK(halo(p, 1, &Kh, ST_0)); /* K's ghosts once, before the time loop */
    double misfit = 0;
    for (int t = 0; t < p->T; ++t) {
        if (hist) {
            memcpy(hist[4 * t], P, p->N * 8);
            for (int d = 0; d < 3; ++d) memcpy(hist[4 * t + 1 + d], V[d], p->nv[d] * 8);
        }
        CK(stenc_dist_wave3d_velocity_3d_f64(p->g, V[0], V[1], V[2], P, p->dt, p->rho, p->h, p->h, p->h));
        CK(halo(p, 3, V, ST_V));
        CK(stenc_dist_wave3d_pressure_3d_f64(p->g, P, V[0], V[1], V[2], Kh, p->dt, p->h, p->h, p->h));
        long long s = owner_index(p, p->src);
        if (s >= 0) P[s] += p->dt * source(p, t);
        CK(halo(p, 1, &P, ST_0));
        for (int r = 0; r < p->nrec; ++r) {
            long long q = owner_index(p, p->rec[r]);
            if (q < 0) continue;
            if (record_data) p->d[t * p->nrec + r] = P[q];
            double e = P[q] - p->d[t * p->nrec + r];
            if (resid) resid[t * p->nrec + r] = e;
            misfit += 0.5 * e * e;
        }
    }
    double tv = 0, J = 0;
    CK(stenc_dist_tv_value_3d_f64(p->g, STENC_NEUMANN, Kh, 1, 1, 1, 1e-4, &tv));
    CK(stenc_grid_sum(p->g, STENC_OK, misfit, &J));
    free(P); free(Kh);
    for (int d = 0; d < 3; ++d) free(V[d]);
    return J + p->lambda * tv;
}

/* reverse: the gradient dJ/dK on the owned points (G) */
static double gradient(Prob *p, const double *K, double *G)
{
    double **hist = malloc(sizeof *hist * 4 * (size_t)p->T), *resid = calloc((size_t)p->T * (size_t)p->nrec, 8);
    for (int t = 0; t < p->T; ++t) {
        hist[4 * t] = malloc(p->N * 8);
        for (int d = 0; d < 3; ++d) hist[4 * t + 1 + d] = malloc(p->nv[d] * 8);
    }
    double J = forward(p, K, hist, resid, 0);
    double *Kh = malloc(p->N * 8);
    memcpy(Kh, K, p->N * 8);
    CK(halo(p, 1, &Kh, ST_0));
    double *Pb = calloc(p->N, 8), *Vb[3], *Kb = calloc(p->N, 8), *Pn = malloc(p->N * 8), *Vn[3];
    for (int d = 0; d < 3; ++d) { Vb[d] = calloc(p->nv[d], 8); Vn[d] = malloc(p->nv[d] * 8); }
    for (int t = p->T - 1; t >= 0; --t) {
        /* the recorded P after step t: dJ/dP at the receivers */
        for (int r = 0; r < p->nrec; ++r) {
            long long q = owner_index(p, p->rec[r]);
            if (q >= 0) Pb[q] += resid[t * p->nrec + r];
        }
        CK(halo_t(p, 1, &Pb, ST_0));
        /* the pressure step read P before it and V after the velocity step */
        double *P0 = hist[4 * t], *V0[3] = {hist[4 * t + 1], hist[4 * t + 2], hist[4 * t + 3]};
        memcpy(Pn, P0, p->N * 8);
        for (int d = 0; d < 3; ++d) memcpy(Vn[d], V0[d], p->nv[d] * 8);
        CK(stenc_dist_wave3d_velocity_3d_f64(p->g, Vn[0], Vn[1], Vn[2], Pn, p->dt, p->rho, p->h, p->h, p->h));
        CK(halo(p, 3, Vn, ST_V));
        CK(stenc_dist_wave3d_pressure_adjoint_3d_f64(p->g, P0, Vn[0], Vn[1], Vn[2], Kh, p->dt, p->h, p->h, p->h, Pb,
                                                     Vb[0], Vb[1], Vb[2], Kb));
        CK(halo_t(p, 3, Vb, ST_V));
        CK(stenc_dist_wave3d_velocity_adjoint_3d_f64(p->g, P0, V0[0], V0[1], V0[2], p->dt, p->rho, p->h, p->h, p->h, Pb,
                                                     Vb[0], Vb[1], Vb[2]));
    }
    CK(halo_t(p, 1, &Kb, ST_0)); /* K's ghosts were copies: their share goes to the owners */
    memcpy(G, Kb, p->N * 8);
    double tv = 0;
    CK(stenc_dist_tv_value_grad_3d_f64(p->g, STENC_NEUMANN, Kh, 1, 1, 1, 1e-4, &tv, p->lambda, 1, G));
    for (int t = 0; t < p->T; ++t)
        for (int a = 0; a < 4; ++a) free(hist[4 * t + a]);
    free(hist); free(resid); free(Kh); free(Pb); free(Kb); free(Pn);
    for (int d = 0; d < 3; ++d) { free(Vb[d]); free(Vn[d]); }
    return J;
}

/* a smooth model: background 1 plus a bump at c (global coordinates) */
static void model(const Prob *p, double *K, double amp, const double c[3], double w)
{
    const stenc_grid_info *I = &p->I;
    for (size_t k = 0; k < p->n[2]; ++k)
        for (size_t j = 0; j < p->n[1]; ++j)
            for (size_t i = 0; i < p->n[0]; ++i) {
                double x = (double)(I->offset[0] + (long long)i), y = (double)(I->offset[1] + (long long)j),
                       z = (double)(I->offset[2] + (long long)k);
                double r2 = (x - c[0]) * (x - c[0]) + (y - c[1]) * (y - c[1]) + (z - c[2]) * (z - c[2]);
                K[i + p->n[0] * (j + p->n[1] * k)] = 1 + amp * exp(-r2 / (w * w));
            }
}

static double owned_dot(const Prob *p, const double *a, const double *b)
{
    double s = 0, all = 0;
    const stenc_grid_info *I = &p->I;
    for (size_t k = I->own_lo[2]; k < I->own_hi[2]; ++k)
        for (size_t j = I->own_lo[1]; j < I->own_hi[1]; ++j)
            for (size_t i = I->own_lo[0]; i < I->own_hi[0]; ++i) {
                size_t q = i + p->n[0] * (j + p->n[1] * k);
                s += a[q] * b[q];
            }
    stenc_grid_sum(p->g, STENC_OK, s, &all);
    return all;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long nglob = 24, T = 80;
    double lambda = 1e-3;
    for (int a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc) nglob = strtol(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "-t") && a + 1 < argc) T = strtol(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--lambda") && a + 1 < argc) lambda = strtod(argv[++a], NULL);
        else {
            if (!rank) fprintf(stderr, "usage: stenc-wave-adjoint [-n GLOBAL] [-t STEPS] [--lambda L]\n");
            MPI_Finalize();
            return 2;
        }
    }
    /* the process grid first, then local sizes that give the global size */
    int pd[3] = {0, 0, 0};
    MPI_Dims_create(np, 3, pd);
    Prob P0;
    Prob *p = &P0;
    memset(p, 0, sizeof *p);
    size_t nl[3];
    int ghost = 1, ok = 1;
    for (int d = 0; d < 3; ++d) {
        long inner = nglob - 2 * ghost;
        ok &= inner % pd[d] == 0 && inner / pd[d] >= 1 && nglob >= 8 && nglob <= 512 && T >= 2 && T <= 10000;
        nl[d] = (size_t)(inner / (pd[d] ? pd[d] : 1) + 2 * ghost);
    }
    if (!ok) {
        if (!rank) fprintf(stderr, "stenc-wave-adjoint: -n %ld: n-2 must divide among the process grid %dx%dx%d (8..512)\n", nglob, pd[0], pd[1], pd[2]);
        MPI_Finalize();
        return 2;
    }
    char err[200];
    if (stenc_grid_create(MPI_COMM_WORLD, 3, nl, ghost, NULL, pd, &p->g, err, sizeof err) != STENC_OK) {
        fprintf(stderr, "stenc-wave-adjoint: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    stenc_grid_get_info(p->g, &p->I);
    for (int d = 0; d < 3; ++d) p->n[d] = nl[d];
    p->N = nl[0] * nl[1] * nl[2];
    p->nv[0] = (nl[0] + 1) * nl[1] * nl[2];
    p->nv[1] = nl[0] * (nl[1] + 1) * nl[2];
    p->nv[2] = nl[0] * nl[1] * (nl[2] + 1);
    p->T = (int)T;
    p->h = 1;
    p->rho = 1;
    p->dt = 0.3; /* CFL: c*dt/h = sqrt(K/rho)*0.3 < 1/sqrt(3) for K up to 3.5 */
    p->lambda = lambda;
    long long c = nglob / 2, q = nglob / 4;
    p->src[0] = c; p->src[1] = c; p->src[2] = q;
    p->nrec = 8;
    for (int r = 0; r < p->nrec; ++r) {
        p->rec[r][0] = q + (r & 1) * 2 * q;
        p->rec[r][1] = q + ((r >> 1) & 1) * 2 * q;
        p->rec[r][2] = c + (r >> 2);
    }
    p->d = calloc((size_t)p->T * (size_t)p->nrec, 8);
    double *Ktrue = malloc(p->N * 8), *K = malloc(p->N * 8), *G = malloc(p->N * 8), *dK = malloc(p->N * 8),
           *Kh = malloc(p->N * 8);
    const double cb[3] = {(double)c, (double)c, (double)c}, cd[3] = {(double)c + 2, (double)c - 1, (double)c + 1};
    model(p, Ktrue, 0.5, cb, nglob / 5.0);
    forward(p, Ktrue, NULL, NULL, 1); /* observed data: the owners' receivers */
    model(p, K, 0.2, cb, nglob / 4.0);
    model(p, dK, 1.0, cd, nglob / 6.0);
    for (size_t i = 0; i < p->N; ++i) dK[i] -= 1; /* a smooth perturbation, 0 far away */
    double J = gradient(p, K, G), gdk = owned_dot(p, G, dK);
    if (!rank) printf("grid %ldx%ldx%ld, %ld steps, %d process(es) (%dx%dx%d), lambda %g\nJ = %.15e\n<g, dK> = %.15e\n",
                      nglob, nglob, nglob, T, np, pd[0], pd[1], pd[2], lambda, J, gdk);
    double hstep = 1e-2, prev = 0;
    int pass = 1, nchk = 0;
    for (int s = 0; s < 5; ++s, hstep /= 2) {
        for (size_t i = 0; i < p->N; ++i) Kh[i] = K[i] + hstep * dK[i];
        double Jh = forward(p, Kh, NULL, NULL, 0), r = fabs(Jh - J - hstep * gdk);
        if (!rank) printf("taylor: h = %.3e  |J(K+h dK) - J(K) - h<g,dK>| = %.3e%s", hstep, r, s ? "" : "\n");
        if (s) {
            double ratio = prev / r;
            if (!rank) printf("  ratio %.3f\n", ratio);
            pass &= ratio > 3.5 && ratio < 4.5;
            ++nchk;
        }
        prev = r;
    }
    if (!rank)
        printf("%d%%: Checks: %d, Failures: %d, Errors: 0   (Taylor test of the distributed adjoint-state gradient)\n",
               pass ? 100 : 0, nchk, pass ? 0 : nchk);
    free(Ktrue); free(K); free(G); free(dK); free(Kh); free(p->d);
    stenc_grid_free(p->g);
    MPI_Finalize();
    return pass ? 0 : 1;
}
