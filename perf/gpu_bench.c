/* stenc GPU performance suite: regularizers (value, grad, value_grad) and the
 * diffusion kernel (update, adjoint) on CUDA, float, against a read-only
 * device reduction and a device-to-device copy measured in the same run.
 *   stenc-gpu-bench [--quick] [--csv FILE]     (exit 77 without a device) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stenc.h"
#include "tv.h"
#include "huber.h"
#include "hessian.h"
#include "tikhonov.h"
#include "diffusion.h"

int stenc_bench_gpu_sum(const float *a, size_t n, double *result);
int stenc_bench_gpu_copy(float *dst, const float *src, size_t n);
int stenc_bench_gpu_sync(void);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

typedef struct { int what, reg, D; size_t nx, ny, nz; float *x, *g, *y, *c, *b0, *b1, *b2; double v; } Ctx;

static void must(int rc, const char *what)
{
    if (rc != STENC_OK) { fprintf(stderr, "stenc-gpu-bench: %s: %s\n", what, stenc_strerror(rc)); exit(1); }
}

static void run(Ctx *c)
{
    size_t nx = c->nx, ny = c->ny, nz = c->nz;
    int D = c->D, m = STENC_NEUMANN;
    switch (c->what) {
    case 100: if (stenc_bench_gpu_sum(c->x, nx * ny * nz, &c->v)) must(STENC_ERR_CUDA, "sum"); return;
    case 101: if (stenc_bench_gpu_copy(c->g, c->x, nx * ny * nz)) must(STENC_ERR_CUDA, "copy"); return;
    case 200: must(D == 2 ? stenc_cuda_diffusion_step_2d_f32(nx, ny, c->y, c->x, c->c, .1f, 1, 1, 1, NULL)
                          : stenc_cuda_diffusion_step_3d_f32(nx, ny, nz, c->y, c->x, c->c, .1f, 1, 1, 1, 1, NULL), "diffusion");
              return;
    case 201: must(D == 2 ? stenc_cuda_diffusion_step_adjoint_2d_f32(nx, ny, c->x, c->c, .1f, 1, 1, 1, c->b0, c->b1, c->b2, NULL)
                          : stenc_cuda_diffusion_step_adjoint_3d_f32(nx, ny, nz, c->x, c->c, .1f, 1, 1, 1, 1, c->b0, c->b1, c->b2, NULL), "adjoint");
              return;
    }
#define R3(B, P2, P3)                                                                                                    \
    if (D == 2) {                                                                                                        \
        if (c->what == 0) must(stenc_cuda_##B##_value_2d_f32(nx, ny, m, c->x, P2, &c->v, NULL), #B);                     \
        else if (c->what == 1) must(stenc_cuda_##B##_grad_2d_f32(nx, ny, m, c->x, P2, 1, 0, c->g, NULL), #B);            \
        else must(stenc_cuda_##B##_value_grad_2d_f32(nx, ny, m, c->x, P2, &c->v, 1, 0, c->g, NULL), #B);                  \
    } else {                                                                                                             \
        if (c->what == 0) must(stenc_cuda_##B##_value_3d_f32(nx, ny, nz, m, c->x, P3, &c->v, NULL), #B);                 \
        else if (c->what == 1) must(stenc_cuda_##B##_grad_3d_f32(nx, ny, nz, m, c->x, P3, 1, 0, c->g, NULL), #B);        \
        else must(stenc_cuda_##B##_value_grad_3d_f32(nx, ny, nz, m, c->x, P3, &c->v, 1, 0, c->g, NULL), #B);              \
    }
#define P_E2 1.f, 1.f, 1e-3f
#define P_E3 1.f, 1.f, 1.f, 1e-3f
#define P_N2 1.f, 1.f
#define P_N3 1.f, 1.f, 1.f
    switch (c->reg) {
    case 0: R3(tv, P_E2, P_E3) break;
    case 1: R3(huber, P_E2, P_E3) break;
    case 2: R3(hessian, P_E2, P_E3) break;
    case 3: R3(tikhonov_gradient, P_N2, P_N3) break;
    }
}

static double timeit(Ctx *c)
{
    double t[9];
    run(c);
    stenc_bench_gpu_sync();
    for (int r = 0; r < 9; ++r) {
        double s = now();
        for (int k = 0; k < 5; ++k) run(c);
        stenc_bench_gpu_sync();
        t[r] = (now() - s) / 5;
    }
    qsort(t, 9, sizeof *t, cmpd);
    return t[4];
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *csvpath = "build/perf/gpu_results.csv";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csvpath = argv[++i];
    }
    int nd = 0;
    if (stenc_cuda_device_count(&nd) != STENC_OK || nd == 0) { printf("stenc-gpu-bench: SKIP: no CUDA device\n"); return 77; }
    char name[256];
    stenc_cuda_device_name(name, sizeof name);
    FILE *csv = fopen(csvpath, "w");
    if (!csv) { perror(csvpath); return 1; }
    fprintf(csv, "kernel,entry,backend,dims,nx,ny,nz,precision,median_s,bytes,teff_gbs,ceiling,ceiling_gbs,ratio\n");
    fprintf(stderr, "stenc-gpu-bench on %s\n", name);
    size_t S[4][3] = {{4096, 4096, 1}, {10000, 10000, 1}, {256, 256, 256}, {512, 512, 512}};
    if (quick) { S[0][0] = S[0][1] = 1024; S[1][0] = S[1][1] = 2048; S[2][0] = S[2][1] = S[2][2] = 128; S[3][0] = S[3][1] = S[3][2] = 192; }
    static const char *regs[] = {"tv", "huber", "hessian", "tikhonov_gradient"};
    static const char *ent[] = {"value", "grad", "value_grad"};
    for (int si = 0; si < 4; ++si) {
        Ctx c = {0};
        c.nx = S[si][0]; c.ny = S[si][1]; c.nz = S[si][2]; c.D = c.nz > 1 ? 3 : 2;
        size_t N = c.nx * c.ny * c.nz, B = N * sizeof(float);
        float *h = malloc(B);
        if (!h) return 1;
        for (size_t q = 0; q < N; ++q) h[q] = (float)((q * 2654435761u) % 1000) * 1e-3f;
        float **bufs[] = {&c.x, &c.g, &c.y, &c.c, &c.b0, &c.b1, &c.b2};
        for (int b = 0; b < 7; ++b) {
            must(stenc_cuda_malloc((void **)bufs[b], B), "malloc");
            must(stenc_cuda_to_device(*bufs[b], h, B), "copy");
        }
        free(h);
        c.what = 100;
        double ts = timeit(&c), sum_gbs = (double)B / ts / 1e9;
        c.what = 101;
        double tc = timeit(&c), copy_gbs = 2.0 * (double)B / tc / 1e9;
#define ROW(K, E, T, BYTES, CN, CG)                                                                                      \
    do {                                                                                                                 \
        double te = (BYTES) / (T) / 1e9;                                                                                 \
        fprintf(csv, "%s,%s,cuda,%d,%zu,%zu,%zu,f32,%.6e,%.0f,%.3f,%s,%.3f,%.3f\n", K, E, c.D, c.nx, c.ny, c.nz, T,      \
                (double)(BYTES), te, CN, CG, te / (CG));                                                                 \
        fprintf(stderr, "  %-18s %-10s %dD %zux%zux%zu %9.3f ms %8.1f GB/s  %.2f of %s\n", K, E, c.D, c.nx, c.ny, c.nz,  \
                1e3 * (T), te, te / (CG), CN);                                                                           \
    } while (0)
        ROW("ceiling_sum", "read", ts, (double)B, "sum", sum_gbs);
        ROW("ceiling_copy", "copy", tc, 2.0 * B, "copy", copy_gbs);
        for (int r = 0; r < 4; ++r)
            for (int w = 0; w < 3; ++w) {
                c.reg = r; c.what = w;
                double t = timeit(&c);
                ROW(regs[r], ent[w], t, w == 0 ? (double)B : 2.0 * B, w == 0 ? "sum" : "copy", w == 0 ? sum_gbs : copy_gbs);
            }
        c.what = 200;
        double t = timeit(&c);
        ROW("diffusion", "update", t, 3.0 * B, "copy", copy_gbs);
        c.what = 201;
        t = timeit(&c);
        ROW("diffusion", "adjoint", t, 8.0 * B, "copy", copy_gbs);
        for (int b = 0; b < 7; ++b) stenc_cuda_free(*bufs[b]);
    }
    fclose(csv);
    return 0;
}
