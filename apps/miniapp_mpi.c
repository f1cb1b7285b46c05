/* stenc-miniapp-mpi: the 3D mini-apps on a distributed grid.
 *
 *   mpirun -np N build/bin/stenc-miniapp-mpi {diffusion3d|acoustic3d} [-n LOCAL] [-t STEPS] [--split-z] [--hide]
 *
 * Every process holds a LOCAL^3 block (ghost width 1; weak scaling: the
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
 * different z ranges, keeps its plain halo update). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acoustic3d.h"
#include "diffusion.h"
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *name = argc > 1 ? argv[1] : "";
    long n = 128, nt = 20;
    int ok = !strcmp(name, "diffusion3d") || !strcmp(name, "acoustic3d"), splitz = 0, hide = 0;
    for (int a = 2; a < argc && ok; ++a) {
        char *e;
        if (!strcmp(argv[a], "-n") && a + 1 < argc) n = strtol(argv[++a], &e, 10), ok = !*e && n >= 8 && n <= 2048;
        else if (!strcmp(argv[a], "-t") && a + 1 < argc) nt = strtol(argv[++a], &e, 10), ok = !*e && nt >= 1 && nt <= 100000;
        else if (!strcmp(argv[a], "--split-z")) splitz = 1;
        else if (!strcmp(argv[a], "--hide")) hide = 1;
        else ok = 0;
    }
    if (!ok) {
        if (!rank) fprintf(stderr, "usage: mpirun -np N stenc-miniapp-mpi diffusion3d|acoustic3d [-n LOCAL 8..2048] [-t STEPS] [--split-z] [--hide]\n");
        MPI_Finalize();
        return 2;
    }
    size_t nl[3] = {(size_t)n, (size_t)n, (size_t)n}, N = nl[0] * nl[1] * nl[2];
    stenc_grid *g = NULL;
    char err[200];
    int pz[3] = {1, 1, np};
    must(stenc_grid_create(MPI_COMM_WORLD, 3, nl, 1, NULL, splitz ? pz : NULL, &g, err, sizeof err), NULL, err);
    stenc_grid_info I;
    stenc_grid_get_info(g, &I);
    double t_kern = 0, t_halo = 0, t_wait = 0, bytes_kern = 0, bytes_halo = 0, check = 0;
    int diff = !strcmp(name, "diffusion3d");
    const double h = 1.0 / (double)I.nglobal[0];
    if (diff) {
        double *T = malloc(N * 8), *T2 = malloc(N * 8), *C = malloc(N * 8);
        bump(&I, T);
        memcpy(T2, T, N * 8);
        for (size_t q = 0; q < N; ++q) C[q] = 1;
        const double dt = h * h / 6.1;
        static const int st[1][3] = {{0, 0, 0}};
        for (long s = 0; s < nt; ++s) {
            double t0 = MPI_Wtime();
            if (hide) must(stenc_dist_diffusion_step_hide_3d_f64(g, T2, T, C, dt, 1, h, h, h), g, "step + halo");
            else must(stenc_dist_diffusion_step_3d_f64(g, T2, T, C, dt, 1, h, h, h), g, "step");
            double tb = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD); /* waiting for the slowest process is imbalance, not communication */
            double t1 = MPI_Wtime();
            t_wait += t1 - tb;
            stenc_field f = {T2, 8, {0, 0, 0}};
            if (!hide) must(stenc_halo_update(g, 1, &f), g, "halo");
            double t2 = MPI_Wtime();
            t_kern += tb - t0;
            t_halo += t2 - t1;
            double *t = T; T = T2; T2 = t;
        }
        bytes_kern = 3.0 * (double)N * 8; /* read T, Ci; write T2 */
        bytes_halo = halo_bytes(&I, 1, st);
        for (size_t q = 0; q < N; ++q) check += T[q];
        free(T); free(T2); free(C);
    } else {
        double *P = malloc(N * 8), *V[3];
        size_t nv[3] = {(nl[0] + 1) * nl[1] * nl[2], nl[0] * (nl[1] + 1) * nl[2], nl[0] * nl[1] * (nl[2] + 1)};
        for (int d = 0; d < 3; ++d) V[d] = calloc(nv[d], 8);
        bump(&I, P);
        const double dt = h / 2.1;
        static const int st[4][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}};
        for (long s = 0; s < nt; ++s) {
            double t0 = MPI_Wtime();
            must(stenc_dist_acoustic3d_velocity_3d_f64(g, V[0], V[1], V[2], P, dt, 1, h, h, h), g, "velocity");
            double tb = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            t_wait += t1 - tb;
            stenc_field fv[3] = {{V[0], 8, {1, 0, 0}}, {V[1], 8, {0, 1, 0}}, {V[2], 8, {0, 0, 1}}};
            must(stenc_halo_update(g, 3, fv), g, "halo V");
            double t2 = MPI_Wtime();
            if (hide) must(stenc_dist_acoustic3d_pressure_hide_3d_f64(g, P, V[0], V[1], V[2], dt, 1, h, h, h), g, "pressure + halo");
            else must(stenc_dist_acoustic3d_pressure_3d_f64(g, P, V[0], V[1], V[2], dt, 1, h, h, h), g, "pressure");
            double tc = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            double t3 = MPI_Wtime();
            t_wait += t3 - tc;
            stenc_field fp = {P, 8, {0, 0, 0}};
            if (!hide) must(stenc_halo_update(g, 1, &fp), g, "halo P");
            double t4 = MPI_Wtime();
            t_kern += (tb - t0) + (tc - t2);
            t_halo += (t2 - t1) + (t4 - t3);
        }
        bytes_kern = 3.0 * 4.0 * (double)N * 8; /* each kernel: 4 arrays read or read+written */
        bytes_halo = halo_bytes(&I, 4, st);
        for (size_t q = 0; q < N; ++q) check += P[q];
        free(P);
        for (int d = 0; d < 3; ++d) free(V[d]);
    }
    double tk = 0, th = 0, tw = 0, bh = 0, cs = 0;
    MPI_Reduce(&t_wait, &tw, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_kern, &tk, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t_halo, &th, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bytes_halo, &bh, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    stenc_grid_sum(g, STENC_OK, check, &cs);
    if (!rank) {
        double ts = (tk + th + tw) / (double)nt;
        printf("%s: %d process(es) %dx%dx%d, local %ld^3, global %zux%zux%zu, %ld steps\n", name, np, I.pdims[0],
               I.pdims[1], I.pdims[2], n, I.nglobal[0], I.nglobal[1], I.nglobal[2], nt);
        printf("  time per step %.3f ms (kernels %.3f ms, waiting for the slowest process %.3f ms, halo updates "
               "%.3f ms: %.1f%% of the step)\n", 1e3 * ts, 1e3 * tk / (double)nt, 1e3 * tw / (double)nt,
               1e3 * th / (double)nt, 100 * th / (tk + th + tw));
        printf("  T_eff of the kernels %.2f GB/s per process; halo bytes sent per step per process %.3f MB "
               "(ghost layers %.2f%% of the block's bytes)\n",
               bytes_kern / (tk / (double)nt) / 1e9, bh / 1e6, 100 * bh / ((diff ? 1.0 : 4.0) * (double)N * 8));
        printf("  checksum %.12e\n", cs);
        if (hide)
            printf("  (hidden: the z exchange overlaps the interior; 'kernels' then include the exchange they hide)\n");
    }
    stenc_grid_free(g);
    MPI_Finalize();
    return 0;
}
