/* Uses kernels generated from smooth.stn by an installed stenc. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "stenc.h"
#include "smooth.h"

int main(void)
{
    const size_t nx = 64, ny = 48, n = nx * ny;
    double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v), *g = malloc(n * sizeof *g);
    if (!u || !v || !g) return 1;
    for (size_t j = 0; j < ny; ++j)
        for (size_t i = 0; i < nx; ++i) u[i + nx * j] = (i > nx / 2) ^ (j > ny / 2) ? 1.0 : 0.0;
    for (size_t q = 0; q < n; ++q) v[q] = u[q];
    double tv0, tv1;
    int rc = stenc_smooth_tv_value_2d_f64(nx, ny, STENC_NEUMANN, u, 1e-6, &tv0);
    for (int s = 0; s < 20 && rc == STENC_OK; ++s) {
        rc = stenc_smooth_step_2d_f64(nx, ny, v, u, 0.2);
        double *t = u; u = v; v = t;
    }
    if (rc == STENC_OK) rc = stenc_smooth_tv_value_grad_2d_f64(nx, ny, STENC_NEUMANN, u, 1e-6, &tv1, 1.0, 0.0, g);
    if (rc != STENC_OK) { fprintf(stderr, "stenc: %s\n", stenc_strerror(rc)); return 1; }
    printf("TV before smoothing %.4f, after %.4f (%s)\n", tv0, tv1, tv1 < tv0 ? "smoother" : "NOT smoother");
    free(u); free(v); free(g);
    return tv1 < tv0 ? 0 : 1;
}
