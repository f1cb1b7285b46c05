/* The device halo update and its adjoint (stenc_halo_*_cuda) against the
 * host ones, under mpirun: the same fields (one staggered, float and
 * double) give bitwise the same ghosts, and <H x, y> = <x, H^T y>.  Exit 77
 * (skipped) without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc_mpi.h"

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
            size_t m0 = n[0] * n[1] * n[2], m1 = (n[0] + 1) * n[1] * n[2];
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
                stenc_field fh[2] = {{ah, 8, {0, 0, 0}}, {bh, 4, {per ? 0 : 1, 0, 0}}};
                stenc_field fd[2] = {{da, 8, {0, 0, 0}}, {db, 4, {per ? 0 : 1, 0, 0}}};
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
    int all[2] = {0, 0}, mine[2] = {checks, fails};
    MPI_Reduce(mine, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!rank) printf("%d%%: Checks: %d, Failures: %d, Errors: 0   (test_dist_cuda)\n", all[0] ? 100 * (all[0] - all[1]) / all[0] : 0, all[0], all[1]);
    MPI_Finalize();
    return fails ? 1 : 0;
}
