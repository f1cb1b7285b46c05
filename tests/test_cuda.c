/* CUDA kernels against the CPU kernels: regularizer values, gradients and
 * fused value_grad (float ~1e-5 relative, double ~1e-12), determinism of the
 * device reduction, array updates and adjoints.  Without a CUDA device the
 * suite is skipped (exit status 77) with a message saying so. */
#include "testutil.h"
#include "diffusion.h"
#include "acoustic2d.h"
#include "tv.h"
#include "huber.h"
#include "hessian.h"
#include "tv_weighted.h"

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    CK_OK(stenc_cuda_malloc(&d, bytes));
    CK_OK(stenc_cuda_to_device(d, h, bytes));
    return d;
}
static void host_copy(void *h, const void *d, size_t bytes) { CK_OK(stenc_cuda_to_host(h, d, bytes)); }

#define UNP(...) __VA_ARGS__

/* one regularizer entry triple, CPU and CUDA, for one precision */
#define REG_CASE(T, SFX, BASE, D, ARGS_CPU, ARGS_GPU, TOL)                                                               \
    do {                                                                                                                 \
        T *xh = malloc(N * sizeof(T)), *mh = malloc(N * sizeof(T)), *gc = malloc(N * sizeof(T)), *gg = malloc(N * sizeof(T)); \
        for (size_t q = 0; q < N; ++q) { xh[q] = (T)x[q]; mh[q] = (T)m[q]; }                                            \
        T *xd = dev_copy(xh, N * sizeof(T)), *md = dev_copy(mh, N * sizeof(T)), *gd = dev_copy(xh, N * sizeof(T));     \
        (void)md; (void)mh;                                                                                              \
        for (int mode = 0; mode < 3; ++mode) {                                                                           \
            double vc, vg, vg2, vfc, vfg;                                                                                \
            CK_OK(stenc_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, &vc));                                     \
            CK_OK(stenc_cuda_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vg, NULL));                          \
            CK_OK(stenc_cuda_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vg2, NULL));                         \
            ck_assert_msg(reldiff(vc, vg, 1e-300) < TOL, #BASE " " #D " " #SFX " mode %d: CPU %.17g GPU %.17g", mode, vc, vg); \
            ck_assert_msg(memcmp(&vg, &vg2, sizeof vg) == 0, #BASE ": GPU value not reproducible");                    \
            CK_OK(stenc_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, 1, 0, gc));                                 \
            CK_OK(stenc_cuda_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, 1, 0, gd, NULL));                      \
            host_copy(gg, gd, N * sizeof(T));                                                                            \
            double gmax = 0;                                                                                             \
            for (size_t q = 0; q < N; ++q) gmax = fmax(gmax, fabs((double)gc[q]));                                       \
            for (size_t q = 0; q < N; ++q)                                                                               \
                ck_assert_msg(fabs((double)gc[q] - (double)gg[q]) <= TOL * fmax(gmax, 1e-3), #BASE " grad at %zu", q); \
            CK_OK(stenc_##BASE##_value_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, &vfc, 1, 0, gc));                     \
            CK_OK(stenc_cuda_##BASE##_value_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vfg, 1, 0, gd, NULL));          \
            host_copy(gg, gd, N * sizeof(T));                                                                            \
            ck_assert_msg(reldiff(vfc, vfg, 1e-300) < TOL, #BASE " fused value");                                      \
            for (size_t q = 0; q < N; ++q)                                                                               \
                ck_assert_msg(fabs((double)gc[q] - (double)gg[q]) <= TOL * fmax(gmax, 1e-3), #BASE " fused grad at %zu", q); \
        }                                                                                                                \
        stenc_cuda_free(xd); stenc_cuda_free(md); stenc_cuda_free(gd);                                                   \
        free(xh); free(mh); free(gc); free(gg);                                                                          \
    } while (0)

START_TEST(regularizers_cpu_vs_gpu)
{
    for (int D = 2; D <= 3; ++D) {
        size_t nx = D == 2 ? 301 : 61, ny = D == 2 ? 97 : 37, nz = D == 2 ? 1 : 23, N = nx * ny * nz;
        rng_t r = {31};
        double *x = dalloc(N), *m = dalloc(N);
        dfill(x, N, &r, -1, 1);
        dfill(m, N, &r, 0.5, 2);
#define DIMS_2d nx, ny
#define DIMS_3d nx, ny, nz
        if (D == 2) {
            REG_CASE(double, f64, tv, 2d, (xh, 0.7, 1.3, 1e-2), (xd, 0.7, 1.3, 1e-2), 1e-12);
            REG_CASE(float, f32, tv, 2d, (xh, 0.7f, 1.3f, 1e-2f), (xd, 0.7f, 1.3f, 1e-2f), 1e-5);
            REG_CASE(double, f64, huber, 2d, (xh, 0.7, 1.3, 0.6), (xd, 0.7, 1.3, 0.6), 1e-12);
            REG_CASE(float, f32, hessian, 2d, (xh, 0.7f, 1.3f, 1e-2f), (xd, 0.7f, 1.3f, 1e-2f), 1e-5);
            REG_CASE(double, f64, tv_weighted, 2d, (xh, mh, 0.7, 1.3, 1e-2), (xd, md, 0.7, 1.3, 1e-2), 1e-12);
        } else {
            REG_CASE(double, f64, tv, 3d, (xh, 0.7, 1.3, 0.9, 1e-2), (xd, 0.7, 1.3, 0.9, 1e-2), 1e-12);
            REG_CASE(float, f32, tv, 3d, (xh, 0.7f, 1.3f, 0.9f, 1e-2f), (xd, 0.7f, 1.3f, 0.9f, 1e-2f), 1e-5);
            REG_CASE(double, f64, hessian, 3d, (xh, 0.7, 1.3, 0.9, 1e-2), (xd, 0.7, 1.3, 0.9, 1e-2), 1e-12);
            REG_CASE(float, f32, huber, 3d, (xh, 0.7f, 1.3f, 0.9f, 0.6f), (xd, 0.7f, 1.3f, 0.9f, 0.6f), 1e-5);
        }
        free(x); free(m);
    }
}
END_TEST

START_TEST(kernels_cpu_vs_gpu)
{
    size_t nx = 257, ny = 129, N = nx * ny;
    rng_t r = {32};
    double *T = dalloc(N), *Ci = dalloc(N), *o = dalloc(N), *og = dalloc(N);
    dfill(T, N, &r, 0, 1);
    dfill(Ci, N, &r, 0.5, 1);
    memcpy(o, T, N * 8);
    double *Td = dev_copy(T, N * 8), *Cd = dev_copy(Ci, N * 8), *od = dev_copy(T, N * 8);
    CK_OK(stenc_diffusion_step_2d_f64(nx, ny, o, T, Ci, 0.1, 1, 1, 1));
    CK_OK(stenc_cuda_diffusion_step_2d_f64(nx, ny, od, Td, Cd, 0.1, 1, 1, 1, NULL));
    host_copy(og, od, N * 8);
    for (size_t q = 0; q < N; ++q) ck_assert_msg(reldiff(o[q], og[q], 1) < 1e-13, "diffusion step at %zu", q);
    /* adjoint */
    double *b[3], *bg[3], *bd[3];
    for (int a = 0; a < 3; ++a) {
        b[a] = dalloc(N); bg[a] = dalloc(N);
        dfill(b[a], N, &r, -1, 1);
        bd[a] = dev_copy(b[a], N * 8);
    }
    CK_OK(stenc_diffusion_step_adjoint_2d_f64(nx, ny, T, Ci, 0.1, 1, 1, 1, b[0], b[1], b[2]));
    CK_OK(stenc_cuda_diffusion_step_adjoint_2d_f64(nx, ny, Td, Cd, 0.1, 1, 1, 1, bd[0], bd[1], bd[2], NULL));
    for (int a = 0; a < 3; ++a) {
        host_copy(bg[a], bd[a], N * 8);
        for (size_t q = 0; q < N; ++q) ck_assert_msg(reldiff(b[a][q], bg[a][q], 1) < 1e-13, "adjoint %d at %zu", a, q);
        stenc_cuda_free(bd[a]); free(b[a]); free(bg[a]);
    }
    stenc_cuda_free(Td); stenc_cuda_free(Cd); stenc_cuda_free(od);
    free(T); free(Ci); free(o); free(og);
}
END_TEST

START_TEST(cuda_bad_arguments)
{
    double v;
    ck_assert_int_eq(stenc_cuda_tv_value_2d_f64(8, 8, 9, (const double *)8, 1, 1, 1, &v, NULL), STENC_ERR_MODE);
    ck_assert_int_eq(stenc_cuda_tv_value_2d_f64(8, 8, 0, NULL, 1, 1, 1, &v, NULL), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_cuda_tv_value_2d_f64(1, 8, 0, (const double *)8, 1, 1, 1, &v, NULL), STENC_ERR_GRID);
}
END_TEST

int main(void)
{
    int n = 0;
    int rc = stenc_cuda_device_count(&n);
    if (rc != STENC_OK || n == 0) {
        printf("test_cuda: SKIP: no CUDA device available (%s); the CUDA kernels were compiled but not run\n",
               stenc_strerror(rc == STENC_OK ? STENC_ERR_NO_DEVICE : rc));
        return 77;
    }
    char name[256];
    stenc_cuda_device_name(name, sizeof name);
    printf("test_cuda: device %s\n", name);
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, regularizers_cpu_vs_gpu);
    tcase_add_test(tc, kernels_cpu_vs_gpu);
    tcase_add_test(tc, cuda_bad_arguments);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
