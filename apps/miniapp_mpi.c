/* stenc-miniapp-mpi: the 3D mini-apps on a distributed grid.
 *
 *   mpirun -np N build/bin/stenc-miniapp-mpi {diffusion3d|acoustic3d|stokes3d} [-n LOCAL] [-t STEPS] [--split-z] [--hide]
 *
 * Every process holds a LOCAL^3 block (ghost width 1; 2 for stokes3d, whose
 * residual array is 3 points shorter than the grid; weak scaling: the
 * global grid grows with N).  Each step runs the generated kernels on the
 * local blocks through their distributed entry points and updates the halos
 * of what they wrote (one message per neighbour and direction for all
 * fields).  Prints the time per step (the slowest process), the effective
 * throughput T_eff of the kernels (bytes every process must move / time),
 * the fraction of the step spent in halo updates, and the bytes each
 * process sends per step against its ghost-layer bytes.  --split-z puts
 * every process along z (the outermost dimension); --hide uses the entry
 * points that hide the exchange along z behind the interior (diffusion's
 * step, acoustic's pressure; the velocity update, whose statements write
 * different z ranges, keeps its plain halo update; Stokes' velocity update). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acoustic3d.h"
#include "diffusion.h"
#include "stokes3d.h"
#include "stenc_mpi.h"

static void must(int rc, stenc_grid *g, const char *what)
{
    if (rc == STENC_OK) return;
    fprintf(stderr, "stenc-miniapp-mpi: %s: %s (%s)\n", what, stenc_strerror(rc), g ? stenc_grid_error(g) : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* a Gaussian bump in global coordinates */
static void bump(const stenc_grid_info *I, double *a)
{
    double c[3];
    for (int d = 0; d < 3; ++d) c[d] = (double)I->nglobal[d] / 2;
    for (size_t k = 0; k < I->nlocal[2]; ++k)
        for (size_t j = 0; j < I->nlocal[1]; ++j)
            for (size_t i = 0; i < I->nlocal[0]; ++i) {
                double x = (double)(I->offset[0] + (long long)i) - c[0], y = (double)(I->offset[1] + (long long)j) - c[1],
                       z = (double)(I->offset[2] + (long long)k) - c[2], w = (double)I->nglobal[0] / 8;
                a[i + I->nlocal[0] * (j + I->nlocal[1] * k)] = exp(-(x * x + y * y + z * z) / (w * w));
            }
}

/* bytes one halo update of fields with these staggers sends, over all directions */
static double halo_bytes(const stenc_grid_info *I, int nf, const int (*st)[3])
{
    double b = 0;
    for (int f = 0; f < nf; ++f)
        for (int d = 0; d < 3; ++d) {
            double slab = I->ghost * 8.0;
            for (int e = 0; e < 3; ++e)
                if (e != d) slab *= (double)(I->nlocal[e] + (size_t)st[f][e]);
            b += slab * ((I->neighbour[d][0] >= 0) + (I->neighbour[d][1] >= 0));
        }
    return b;
}

/* the sum of a grid-extent array over the points this process owns */
static double owned_sum(const stenc_grid_info *I, const double *a)
{
    double s = 0;
    for (size_t k = I->own_lo[2]; k < I->own_hi[2]; ++k)
        for (size_t j = I->own_lo[1]; j < I->own_hi[1]; ++j)
            for (size_t i = I->own_lo[0]; i < I->own_hi[0]; ++i) s += a[i + I->nlocal[0] * (j + I->nlocal[1] * k)];
    return s;
}

/* where a step's time goes, summed over steps (this process) */
typedef struct {
    double kern, wait, halo, t;
} Clock;

/* time since the last mark is kernel time; then wait for the slowest
 * process (imbalance, not communication) */
static void kernels_done(Clock *c)
{
    double t = MPI_Wtime();
    c->kern += t - c->t;
    MPI_Barrier(MPI_COMM_WORLD);
    c->t = MPI_Wtime();
    c->wait += c->t - t;
}
static void halo_done(Clock *c)
{
    double t = MPI_Wtime();
    c->halo += t - c->t;
    c->t = t;
}

/* what a run reports: kernel bytes per step, halo bytes per step, block bytes */
typedef struct {
    double bytes_kern, bytes_halo, bytes_block, check;
} Work;

static Work diffusion(stenc_grid *g, const stenc_grid_info *I, long nt, int hide, Clock *c)
{
    const size_t N = I->nlocal[0] * I->nlocal[1] * I->nlocal[2];
    const double h = 1.0 / (double)I->nglobal[0], dt = h * h / 6.1;
    double *T = malloc(N * 8), *T2 = malloc(N * 8), *C = malloc(N * 8);
    if (!T || !T2 || !C) must(STENC_ERR_ALLOC, g, "arrays");
    bump(I, T);
    memcpy(T2, T, N * 8);
    for (size_t q = 0; q < N; ++q) C[q] = 1;
    static const int st[1][3] = {{0, 0, 0}};
    c->t = MPI_Wtime();
    for (long s = 0; s < nt; ++s) {
        if (hide) must(stenc_dist_diffusion_step_hide_3d_f64(g, T2, T, C, dt, 1, h, h, h), g, "step + halo");
        else must(stenc_dist_diffusion_step_3d_f64(g, T2, T, C, dt, 1, h, h, h), g, "step");
        kernels_done(c);
        stenc_field f = {T2, 8, {0, 0, 0}};
        if (!hide) must(stenc_halo_update(g, 1, &f), g, "halo");
        halo_done(c);
        double *t = T; T = T2; T2 = t;
    }
    Work w = {3.0 * (double)N * 8, halo_bytes(I, 1, st), (double)N * 8, 0}; /* read T, Ci; write T2 */
    w.check = owned_sum(I, T);
    free(T); free(T2); free(C);
    return w;
}

static Work acoustic(stenc_grid *g, const stenc_grid_info *I, long nt, int hide, Clock *c)
{
    const size_t *nl = I->nlocal, N = nl[0] * nl[1] * nl[2];
    const double h = 1.0 / (double)I->nglobal[0], dt = h / 2.1;
    double *P = malloc(N * 8), *V[3];
    size_t nv[3] = {(nl[0] + 1) * nl[1] * nl[2], nl[0] * (nl[1] + 1) * nl[2], nl[0] * nl[1] * (nl[2] + 1)};
    for (int d = 0; d < 3; ++d) V[d] = calloc(nv[d], 8);
    if (!P || !V[0] || !V[1] || !V[2]) must(STENC_ERR_ALLOC, g, "arrays");
    bump(I, P);
    static const int st[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
    stenc_field fv[3] = {{V[0], 8, {1, 0, 0}}, {V[1], 8, {0, 1, 0}}, {V[2], 8, {0, 0, 1}}}, fp = {P, 8, {0, 0, 0}};
    c->t = MPI_Wtime();
    for (long s = 0; s < nt; ++s) {
        must(stenc_dist_acoustic3d_velocity_3d_f64(g, V[0], V[1], V[2], P, dt, 1, h, h, h), g, "velocity");
        kernels_done(c);
        must(stenc_halo_update(g, 3, fv), g, "halo V");
        halo_done(c);
        if (hide) must(stenc_dist_acoustic3d_pressure_hide_3d_f64(g, P, V[0], V[1], V[2], dt, 1, h, h, h), g, "pressure + halo");
        else must(stenc_dist_acoustic3d_pressure_3d_f64(g, P, V[0], V[1], V[2], dt, 1, h, h, h), g, "pressure");
        kernels_done(c);
        if (!hide) must(stenc_halo_update(g, 1, &fp), g, "halo P");
        halo_done(c);
    }
    /* each kernel: 4 arrays read or read+written */
    Work w = {3.0 * 4.0 * (double)N * 8, halo_bytes(I, 4, st), 4.0 * (double)N * 8, 0};
    w.check = owned_sum(I, P);
    free(P);
    for (int d = 0; d < 3; ++d) free(V[d]);
    return w;
}

/* the single-process stokes3d mini-app's iteration: viscosity, shear stress,
 * residual, velocity update, then the halo update of Vx (the only array
 * the next iteration reads that this one wrote) */
static Work stokes(stenc_grid *g, const stenc_grid_info *I, long nt, int hide, Clock *c)
{
    const size_t N = I->nlocal[0] * I->nlocal[1] * I->nlocal[2];
    const double dx = 1.0 / (double)I->nglobal[0], dy = dx, dtau = dy * dy / 8.1;
    double *Eta = malloc(N * 8), *EtaC = calloc(N, 8), *Vx = malloc(N * 8), *Vy = malloc(N * 8),
           *Txy = calloc(N, 8), *Rx = calloc(N, 8), *Pt = malloc(N * 8);
    if (!Eta || !EtaC || !Vx || !Vy || !Txy || !Rx || !Pt) must(STENC_ERR_ALLOC, g, "arrays");
    bump(I, Vx);
    bump(I, Pt);
    for (size_t q = 0; q < N; ++q) { Eta[q] = 1 + Vx[q]; Vy[q] = 0.5 * Vx[q]; }
    static const int st[1][3] = {{0, 0, 0}};
    stenc_field fv = {Vx, 8, {0, 0, 0}};
    c->t = MPI_Wtime();
    for (long s = 0; s < nt; ++s) {
        must(stenc_dist_stokes3d_viscosity_3d_f64(g, EtaC, Eta), g, "viscosity");
        must(stenc_dist_stokes3d_shear_3d_f64(g, Txy, Eta, Vx, Vy, dx, dy), g, "shear");
        must(stenc_dist_stokes3d_residual_3d_f64(g, Rx, Txy, Pt, dx, dy), g, "residual");
        if (hide) must(stenc_dist_stokes3d_velocity_hide_3d_f64(g, Vx, Rx, dtau), g, "velocity + halo");
        else must(stenc_dist_stokes3d_velocity_3d_f64(g, Vx, Rx, dtau), g, "velocity");
        kernels_done(c);
        if (!hide) must(stenc_halo_update(g, 1, &fv), g, "halo Vx");
        halo_done(c);
    }
    Work w = {(2.0 + 4.0 + 3.0 + 3.0) * (double)N * 8, halo_bytes(I, 1, st), 7.0 * (double)N * 8, 0};
    w.check = owned_sum(I, Vx);
    free(Eta); free(EtaC); free(Vx); free(Vy); free(Txy); free(Rx); free(Pt);
    return w;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *name = argc > 1 ? argv[1] : "";
    long n = 128, nt = 20;
    int app = !strcmp(name, "diffusion3d") ? 1 : !strcmp(name, "acoustic3d") ? 2 : !strcmp(name, "stokes3d") ? 3 : 0;
    int ok = app != 0, splitz = 0, hide = 0;
    for (int a = 2; a < argc && ok; ++a) {
        char *e;
        if (!strcmp(argv[a], "-n") && a + 1 < argc) n = strtol(argv[++a], &e, 10), ok = !*e && n >= 8 && n <= 2048;
        else if (!strcmp(argv[a], "-t") && a + 1 < argc) nt = strtol(argv[++a], &e, 10), ok = !*e && nt >= 1 && nt <= 100000;
        else if (!strcmp(argv[a], "--split-z")) splitz = 1;
        else if (!strcmp(argv[a], "--hide")) hide = 1;
        else ok = 0;
    }
    if (!ok) {
        if (!rank)
            fprintf(stderr, "usage: mpirun -np N stenc-miniapp-mpi diffusion3d|acoustic3d|stokes3d [-n LOCAL 8..2048] "
                            "[-t STEPS] [--split-z] [--hide]\n");
        MPI_Finalize();
        return 2;
    }
    size_t nl[3] = {(size_t)n, (size_t)n, (size_t)n};
    stenc_grid *g = NULL;
    char err[200];
    int pz[3] = {1, 1, np};
    must(stenc_grid_create(MPI_COMM_WORLD, 3, nl, app == 3 ? 2 : 1, NULL, splitz ? pz : NULL, &g, err, sizeof err),
         NULL, err);
    stenc_grid_info I;
    stenc_grid_get_info(g, &I);
    Clock c = {0, 0, 0, 0};
    Work w = app == 1 ? diffusion(g, &I, nt, hide, &c) : app == 2 ? acoustic(g, &I, nt, hide, &c)
                                                                  : stokes(g, &I, nt, hide, &c);
    double tk = 0, th = 0, tw = 0, bh = 0, cs = 0;
    MPI_Reduce(&c.wait, &tw, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&c.kern, &tk, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&c.halo, &th, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&w.bytes_halo, &bh, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    stenc_grid_sum(g, STENC_OK, w.check, &cs);
    if (!rank) {
        double ts = (tk + th + tw) / (double)nt;
        printf("%s: %d process(es) %dx%dx%d, local %ld^3, global %zux%zux%zu, %ld steps\n", name, np, I.pdims[0],
               I.pdims[1], I.pdims[2], n, I.nglobal[0], I.nglobal[1], I.nglobal[2], nt);
        printf("  time per step %.3f ms (kernels %.3f ms, waiting for the slowest process %.3f ms, halo updates "
               "%.3f ms: %.1f%% of the step)\n", 1e3 * ts, 1e3 * tk / (double)nt, 1e3 * tw / (double)nt,
               1e3 * th / (double)nt, 100 * th / (tk + th + tw));
        printf("  T_eff of the kernels %.2f GB/s per process; halo bytes sent per step per process %.3f MB "
               "(ghost layers %.2f%% of the block's bytes)\n",
               w.bytes_kern / (tk / (double)nt) / 1e9, bh / 1e6, 100 * bh / w.bytes_block);
        printf("  checksum (sum over the global grid) %.12e\n", cs);
        if (hide)
            printf("  (hidden: the z exchange overlaps the interior; 'kernels' then include the exchange they hide)\n");
    }
    stenc_grid_free(g);
    MPI_Finalize();
    return 0;
}
