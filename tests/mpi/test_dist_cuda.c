/* The device halo update and its adjoint (stenc_halo_*_cuda) against the
 * host ones, under mpirun: the same fields (one staggered: one point longer
 * along x and three shorter along y; float and double) give bitwise the
 * same ghosts; and ten 3D diffusion steps through the distributed device
 * entry point (stenc_dist_cuda_diffusion_step_3d_f64 + device halo update)
 * equal the host ones to 1e-13, and the entry point that hides the z
 * exchange behind the interior (second stream) equals them bitwise.  Exit 77 (skipped) without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diffusion.h"
#include "stenc_mpi.h"

/* ten distributed diffusion steps on the device against the host (the
 * device entry points exist in builds with CUDA: STENC_DIST_CUDA) */
static void diffusion_device(int *checks, int *fails, int rank)
{
#ifndef STENC_DIST_CUDA
    (void)checks; (void)fails; (void)rank;
#else
    size_t n[3] = {21, 18, 15}, N = n[0] * n[1] * n[2];
    stenc_grid *g;
    char err[200];
    ++*checks;
    if (stenc_grid_create(MPI_COMM_WORLD, 3, n, 1, NULL, NULL, &g, err, sizeof err)) { ++*fails; return; }
    double *T = malloc(N * 8), *T2 = malloc(N * 8), *C = malloc(N * 8), *back = malloc(N * 8);
    for (size_t q = 0; q < N; ++q) { T[q] = sin(0.01 * (double)q + rank); C[q] = 1 + 0.5 * cos(0.03 * (double)q); }
    memcpy(T2, T, N * 8);
    void *dT = NULL, *dT2 = NULL, *dC = NULL, *hT = NULL, *hT2 = NULL;
    stenc_cuda_malloc(&dT, N * 8); stenc_cuda_malloc(&dT2, N * 8); stenc_cuda_malloc(&dC, N * 8);
    stenc_cuda_malloc(&hT, N * 8); stenc_cuda_malloc(&hT2, N * 8);
    stenc_cuda_to_device(dT, T, N * 8); stenc_cuda_to_device(dT2, T2, N * 8); stenc_cuda_to_device(dC, C, N * 8);
    stenc_cuda_to_device(hT, T, N * 8); stenc_cuda_to_device(hT2, T2, N * 8);
    struct CUstream_st *inner = NULL;
    int rc = stenc_cuda_stream_create(&inner);
    for (int s = 0; s < 10 && rc == STENC_OK; ++s) {
        stenc_field fh = {T2, 8, {0, 0, 0}}, fd = {dT2, 8, {0, 0, 0}};
        rc = stenc_dist_diffusion_step_3d_f64(g, T2, T, C, 0.1, 1, 1, 1, 1);
        if (rc == STENC_OK) rc = stenc_halo_update(g, 1, &fh);
        if (rc == STENC_OK) rc = stenc_dist_cuda_diffusion_step_3d_f64(g, dT2, dT, dC, 0.1, 1, 1, 1, 1, NULL);
        if (rc == STENC_OK) rc = stenc_halo_update_cuda(g, 1, &fd, NULL);
        /* the exchange along z hidden behind the interior, run on a second stream */
        if (rc == STENC_OK) rc = stenc_dist_cuda_diffusion_step_hide_3d_f64(g, hT2, hT, dC, 0.1, 1, 1, 1, 1, NULL, inner);
        double *t = T; T = T2; T2 = t;
        void *d = dT; dT = dT2; dT2 = d;
        d = hT; hT = hT2; hT2 = d;
    }
    stenc_cuda_to_host(back, dT, N * 8);
    double worst = 0;
    for (size_t q = 0; q < N; ++q) worst = fmax(worst, fabs(back[q] - T[q]));
    if (rc != STENC_OK || !(worst <= 1e-13)) {
        ++*fails;
        fprintf(stderr, "rank %d: device diffusion: %s, largest difference %.3g\n", rank, stenc_strerror(rc), worst);
    }
    ++*checks;
    double *hid = malloc(N * 8);
    stenc_cuda_to_host(hid, hT, N * 8);
    if (memcmp(hid, back, N * 8) != 0) {
        ++*fails;
        fprintf(stderr, "rank %d: device diffusion with the exchange hidden differs from kernel + halo update\n", rank);
    }
    free(hid);
    if (inner) stenc_cuda_stream_destroy(inner);
    stenc_cuda_free(hT); stenc_cuda_free(hT2);
    stenc_cuda_free(dT); stenc_cuda_free(dT2); stenc_cuda_free(dC);
    free(T); free(T2); free(C); free(back);
    stenc_grid_free(g);
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ndev = 0, any = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int have = stenc_cuda_device_count(&ndev) == STENC_OK && ndev > 0;
    MPI_Allreduce(&have, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!any) {
        if (!rank) printf("test_dist_cuda: SKIP: no CUDA device; the device halo updates were compiled but not run\n");
        MPI_Finalize();
        return 77;
    }
    int checks = 0, fails = 0;
    for (int D = 2; D <= 3; ++D)
        for (int per = 0; per <= 1; ++per) {
            size_t n[3] = {D == 2 ? 37u : 19u, D == 2 ? 23u : 17u, D == 2 ? 1u : 13u};
            int pr[3] = {per, per, per};
            stenc_grid *g;
            char err[200];
            if (stenc_grid_create(MPI_COMM_WORLD, D, n, 2, pr, NULL, &g, err, sizeof err)) { ++fails; continue; }
            const int sb[3] = {per ? 0 : 1, per ? 0 : -3, 0};
            size_t m0 = n[0] * n[1] * n[2], m1 = (n[0] + (size_t)sb[0]) * (n[1] + (size_t)sb[1]) * n[2];
            double *a = malloc(m0 * 8), *ah = malloc(m0 * 8);
            float *b = malloc(m1 * 4), *bh = malloc(m1 * 4);
            for (size_t q = 0; q < m0; ++q) a[q] = sin(0.37 * (double)q + rank);
            for (size_t q = 0; q < m1; ++q) b[q] = (float)cos(0.11 * (double)q - rank);
            for (int adj = 0; adj <= 1; ++adj) {
                void *da = NULL, *db = NULL;
                stenc_cuda_malloc(&da, m0 * 8);
                stenc_cuda_malloc(&db, m1 * 4);
                stenc_cuda_to_device(da, a, m0 * 8);
                stenc_cuda_to_device(db, b, m1 * 4);
                memcpy(ah, a, m0 * 8);
                memcpy(bh, b, m1 * 4);
                stenc_field fh[2] = {{ah, 8, {0, 0, 0}}, {bh, 4, {sb[0], sb[1], 0}}};
                stenc_field fd[2] = {{da, 8, {0, 0, 0}}, {db, 4, {sb[0], sb[1], 0}}};
                int r1 = adj ? stenc_halo_adjoint(g, 2, fh) : stenc_halo_update(g, 2, fh);
                int r2 = adj ? stenc_halo_adjoint_cuda(g, 2, fd, NULL) : stenc_halo_update_cuda(g, 2, fd, NULL);
                double *ad = malloc(m0 * 8);
                float *bd = malloc(m1 * 4);
                stenc_cuda_to_host(ad, da, m0 * 8);
                stenc_cuda_to_host(bd, db, m1 * 4);
                ++checks;
                int same = r1 == STENC_OK && r2 == STENC_OK && !memcmp(ad, ah, m0 * 8) && !memcmp(bd, bh, m1 * 4);
                if (!same) {
                    ++fails;
                    fprintf(stderr, "rank %d: %dD periodic %d %s: device result differs (%s / %s)\n", rank, D, per,
                            adj ? "adjoint" : "update", stenc_strerror(r1), stenc_strerror(r2));
                }
                free(ad); free(bd);
                stenc_cuda_free(da);
                stenc_cuda_free(db);
            }
            free(a); free(ah); free(b); free(bh);
            stenc_grid_free(g);
        }
    diffusion_device(&checks, &fails, rank);
    int all[2] = {0, 0}, mine[2] = {checks, fails};
    MPI_Reduce(mine, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
#ifdef STENC_CUDA_EMU
    const char *what = "test_dist_cuda, CUDA emulated on the host";
#else
    const char *what = "test_dist_cuda";
#endif
    if (!rank) printf("%d%%: Checks: %d, Failures: %d, Errors: 0   (%s)\n", all[0] ? 100 * (all[0] - all[1]) / all[0] : 0, all[0], all[1], what);
    MPI_Finalize();
    return fails ? 1 : 0;
}
