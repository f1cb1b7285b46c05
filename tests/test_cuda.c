/* CUDA kernels against the CPU kernels: regularizer values, gradients and
 * fused value_grad (float ~1e-5 relative, double ~1e-12), determinism of the
 * device reduction, array updates and adjoints in 2D and 3D.
 *
 * The grids are chosen so that every loop shape of the CUDA templates runs:
 * more rows than a launch has blocks (the block-stride loop over rows and a
 * multi-block grid reduction), rows longer than a block (the thread-stride
 * loop over i), and short rows.  Gradients are checked with beta = 0 into a
 * NaN-poisoned output (beta = 0 must never read it), with beta != 0 onto the
 * same random starting values on both sides, and on a non-default stream.
 *
 * Without a CUDA device the suite is skipped (exit status 77) with a message
 * saying so.  The probe does not initialise CUDA in this process before the
 * suite runs: the suite runs without fork (a CUDA context does not survive
 * fork), see main().  Built with -DSTENC_CUDA_EMU and linked with the
 * emulated CUDA units (tests/emu; test_cuda_emu) it runs the same checks
 * with every launch executed block by block and thread by thread on the
 * host; test_cuda_emu_rows the same with the units built with
 * -DSTENC_CUDA_ZMARCH=0 (3D loops one block per row). */
#include "testutil.h"
#include "diffusion.h"
#include "acoustic2d.h"
#include "acoustic3d.h"
#include "stokes3d.h"
#include "tv.h"
#include "tv_aniso.h"
#include "tv_central.h"
#include "goods.h"
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

/* compare a CPU and a GPU gradient component-wise, relative to the largest:
 * the first component off by more than TOL fails (one assertion per array:
 * Check records every passing assertion, millions of them took minutes) */
#define GRAD_CMP(T, gc, gg, N, TOL, WHAT)                                                                               \
    do {                                                                                                                \
        double gmax_ = 0;                                                                                               \
        size_t bad_ = (N);                                                                                              \
        for (size_t q_ = 0; q_ < (N); ++q_) gmax_ = fmax(gmax_, fabs((double)(gc)[q_]));                               \
        for (size_t q_ = 0; q_ < (N) && bad_ == (N); ++q_)                                                              \
            if (!(fabs((double)(gc)[q_] - (double)(gg)[q_]) <= (TOL) * fmax(gmax_, 1e-3))) bad_ = q_;                  \
        ck_assert_msg(bad_ == (N), "%s at %zu: CPU %.17g GPU %.17g", WHAT, bad_, bad_ < (N) ? (double)(gc)[bad_] : 0.0, \
                      bad_ < (N) ? (double)(gg)[bad_] : 0.0);                                                          \
    } while (0)

/* One regularizer's entry triple, CPU and CUDA, for one precision and grid,
 * every boundary mode: value (twice, bitwise equal), grad with beta = 0 into
 * NaN, grad with alpha = 0.7, beta = -0.4 onto random values, value_grad on
 * the stream st. */
#define REG_CASE(T, SFX, BASE, D, ARGS_CPU, ARGS_GPU, TOL)                                                               \
    do {                                                                                                                 \
        T *xh = malloc(N * sizeof(T)), *mh = malloc(N * sizeof(T)), *gc = malloc(N * sizeof(T)), *gg = malloc(N * sizeof(T)); \
        T *g0 = malloc(N * sizeof(T)), *nanv = malloc(N * sizeof(T));                                                  \
        for (size_t q = 0; q < N; ++q) { xh[q] = (T)x[q]; mh[q] = (T)m[q]; g0[q] = (T)m[q] - 1; nanv[q] = (T)NAN; }     \
        T *xd = dev_copy(xh, N * sizeof(T)), *md = dev_copy(mh, N * sizeof(T)), *gd = dev_copy(nanv, N * sizeof(T));  \
        (void)md; (void)mh;                                                                                              \
        for (int mode = 0; mode < 3; ++mode) {                                                                           \
            double vc, vg, vg2, vfc, vfg;                                                                                \
            char what[96];                                                                                               \
            snprintf(what, sizeof what, #BASE " " #D " " #SFX " %zux%zux%zu mode %d", nx, ny, nz, mode);               \
            CK_OK(stenc_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, &vc));                                 \
            CK_OK(stenc_cuda_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vg, NULL));                      \
            CK_OK(stenc_cuda_##BASE##_value_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vg2, NULL));                     \
            ck_assert_msg(reldiff(vc, vg, 1e-300) < TOL, "%s: value CPU %.17g GPU %.17g", what, vc, vg);              \
            ck_assert_msg(memcmp(&vg, &vg2, sizeof vg) == 0, "%s: GPU value not reproducible", what);                  \
            /* beta = 0 into NaN: the output must never be read */                                                     \
            for (size_t q = 0; q < N; ++q) gc[q] = (T)NAN;                                                              \
            CK_OK(stenc_cuda_to_device(gd, nanv, N * sizeof(T)));                                                        \
            CK_OK(stenc_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, 1, 0, gc));                             \
            CK_OK(stenc_cuda_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, 1, 0, gd, NULL));                  \
            host_copy(gg, gd, N * sizeof(T));                                                                            \
            GRAD_CMP(T, gc, gg, N, TOL, what);                                                                           \
            /* beta != 0: G = beta*G + alpha*grad from the same start */                                                 \
            memcpy(gc, g0, N * sizeof(T));                                                                               \
            CK_OK(stenc_cuda_to_device(gd, g0, N * sizeof(T)));                                                          \
            CK_OK(stenc_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, (T)0.7, (T)-0.4, gc));                  \
            CK_OK(stenc_cuda_##BASE##_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, (T)0.7, (T)-0.4, gd, NULL));       \
            host_copy(gg, gd, N * sizeof(T));                                                                            \
            GRAD_CMP(T, gc, gg, N, TOL, what);                                                                           \
            /* fused, on a non-default stream */                                                                         \
            CK_OK(stenc_cuda_to_device(gd, nanv, N * sizeof(T)));                                                        \
            CK_OK(stenc_##BASE##_value_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_CPU, &vfc, 1, 0, gc));                 \
            CK_OK(stenc_cuda_##BASE##_value_grad_##D##_##SFX(DIMS_##D, mode, UNP ARGS_GPU, &vfg, 1, 0, gd, st));        \
            CK_OK(stenc_cuda_stream_synchronize(st));                                                                    \
            host_copy(gg, gd, N * sizeof(T));                                                                            \
            ck_assert_msg(reldiff(vfc, vfg, 1e-300) < TOL, "%s: fused value CPU %.17g GPU %.17g", what, vfc, vfg);    \
            GRAD_CMP(T, gc, gg, N, TOL, what);                                                                           \
        }                                                                                                                \
        stenc_cuda_free(xd); stenc_cuda_free(md); stenc_cuda_free(gd);                                                   \
        free(xh); free(mh); free(gc); free(gg); free(g0); free(nanv);                                                    \
    } while (0)

/* 2D grids: ordinary, more rows than blocks in a launch, long short rows;
 * 3D: nx below a block, nx above a block, many rows, and one whose z-marching
 * loops (STENC_CUDA_ZMARCH) have chunks of several planes, a last chunk
 * shorter than the others, and more work items than a launch has blocks */
static const size_t grid2[][2] = {{301, 97}, {37, 2100}, {1500, 5}};
static const size_t grid3[][3] = {{61, 37, 23}, {300, 9, 7}, {17, 40, 70}, {40, 300, 301}};
#define NGRID2 3
#define NGRID3 4

START_TEST(regularizers_cpu_vs_gpu)
{
    const int D = _i < NGRID2 ? 2 : 3, g = D == 2 ? _i : _i - NGRID2;
    size_t nx = D == 2 ? grid2[g][0] : grid3[g][0], ny = D == 2 ? grid2[g][1] : grid3[g][1];
    size_t nz = D == 2 ? 1 : grid3[g][2], N = nx * ny * nz;
    rng_t r = {31 + (uint64_t)_i};
    double *x = dalloc(N), *m = dalloc(N);
    dfill(x, N, &r, -1, 1);
    dfill(m, N, &r, 0.5, 2);
    struct CUstream_st *st = NULL;
    CK_OK(stenc_cuda_stream_create(&st));
#define DIMS_2d nx, ny
#define DIMS_3d nx, ny, nz
    if (D == 2) {
        REG_CASE(double, f64, tv, 2d, (xh, 0.7, 1.3, 1e-2), (xd, 0.7, 1.3, 1e-2), 1e-12);
        REG_CASE(float, f32, tv, 2d, (xh, 0.7f, 1.3f, 1e-2f), (xd, 0.7f, 1.3f, 1e-2f), 1e-5);
        REG_CASE(float, f32, tv_aniso, 2d, (xh, 0.7f, 1.3f, 1e-2f), (xd, 0.7f, 1.3f, 1e-2f), 1e-5);
        REG_CASE(double, f64, tv_central, 2d, (xh, 0.7, 1.3, 1e-2), (xd, 0.7, 1.3, 1e-2), 1e-12);
        REG_CASE(double, f64, goods, 2d, (mh, 0.7, 1.3, 1e-2), (md, 0.7, 1.3, 1e-2), 1e-12); /* sqrt(x + eps): x > 0 */
        REG_CASE(double, f64, huber, 2d, (xh, 0.7, 1.3, 0.6), (xd, 0.7, 1.3, 0.6), 1e-12);
        REG_CASE(float, f32, hessian, 2d, (xh, 0.7f, 1.3f, 1e-2f), (xd, 0.7f, 1.3f, 1e-2f), 1e-5);
        REG_CASE(double, f64, tv_weighted, 2d, (xh, mh, 0.7, 1.3, 1e-2), (xd, md, 0.7, 1.3, 1e-2), 1e-12);
    } else {
        REG_CASE(double, f64, tv, 3d, (xh, 0.7, 1.3, 0.9, 1e-2), (xd, 0.7, 1.3, 0.9, 1e-2), 1e-12);
        REG_CASE(float, f32, tv, 3d, (xh, 0.7f, 1.3f, 0.9f, 1e-2f), (xd, 0.7f, 1.3f, 0.9f, 1e-2f), 1e-5);
        REG_CASE(double, f64, tv_aniso, 3d, (xh, 0.7, 1.3, 0.9, 1e-2), (xd, 0.7, 1.3, 0.9, 1e-2), 1e-12);
        REG_CASE(float, f32, tv_central, 3d, (xh, 0.7f, 1.3f, 0.9f, 1e-2f), (xd, 0.7f, 1.3f, 0.9f, 1e-2f), 1e-5);
        REG_CASE(float, f32, goods, 3d, (mh, 0.7f, 1.3f, 0.9f, 1e-2f), (md, 0.7f, 1.3f, 0.9f, 1e-2f), 1e-5);
        REG_CASE(double, f64, hessian, 3d, (xh, 0.7, 1.3, 0.9, 1e-2), (xd, 0.7, 1.3, 0.9, 1e-2), 1e-12);
        REG_CASE(float, f32, huber, 3d, (xh, 0.7f, 1.3f, 0.9f, 0.6f), (xd, 0.7f, 1.3f, 0.9f, 0.6f), 1e-5);
    }
    CK_OK(stenc_cuda_stream_destroy(st));
    free(x); free(m);
}
END_TEST

/* A set of same-size arrays, random on the host and copied to the device, so
 * that a CPU call on h[] and a CUDA call on d[] start from the same state. */
#define NA 8
typedef struct { size_t n; double *h[NA], *d[NA]; } arrset;

static void arr_init(arrset *s, size_t n, uint64_t seed)
{
    rng_t r = {seed};
    s->n = n;
    for (int a = 0; a < NA; ++a) {
        s->h[a] = dalloc(n);
        dfill(s->h[a], n, &r, 0.5, 1.5);
        s->d[a] = dev_copy(s->h[a], n * sizeof(double));
    }
}

/* every array equal after the CPU and the CUDA call; frees the set */
static void arr_compare_free(arrset *s, const char *what, double tol)
{
    double *t = dalloc(s->n);
    CK_OK(stenc_cuda_synchronize());
    for (int a = 0; a < NA; ++a) {
        host_copy(t, s->d[a], s->n * sizeof(double));
        size_t q = 0; /* the first point off by more than tol (one assertion per array) */
        while (q < s->n && reldiff(s->h[a][q], t[q], 1) < tol) ++q;
        ck_assert_msg(q == s->n, "%s: array %d at %zu: CPU %.17g GPU %.17g", what, a, q, q < s->n ? s->h[a][q] : 0.0,
                      q < s->n ? t[q] : 0.0);
        stenc_cuda_free(s->d[a]);
        free(s->h[a]);
    }
    free(t);
}

START_TEST(kernels_2d_cpu_vs_gpu)
{
    size_t nx = 257, ny = 1300;
    arrset s;
    arr_init(&s, (nx + 1) * (ny + 1), 32);
    CK_OK(stenc_diffusion_step_2d_f64(nx, ny, s.h[0], s.h[1], s.h[2], 0.1, 1, 1, 1));
    CK_OK(stenc_cuda_diffusion_step_2d_f64(nx, ny, s.d[0], s.d[1], s.d[2], 0.1, 1, 1, 1, NULL));
    CK_OK(stenc_diffusion_step_adjoint_2d_f64(nx, ny, s.h[1], s.h[2], 0.1, 1, 1, 1, s.h[3], s.h[4], s.h[5]));
    CK_OK(stenc_cuda_diffusion_step_adjoint_2d_f64(nx, ny, s.d[1], s.d[2], 0.1, 1, 1, 1, s.d[3], s.d[4], s.d[5], NULL));
    arr_compare_free(&s, "diffusion 2d", 1e-13);
}
END_TEST

START_TEST(kernels_3d_cpu_vs_gpu)
{
    const size_t nx = grid3[_i][0], ny = grid3[_i][1], nz = grid3[_i][2], M = (nx + 1) * (ny + 1) * (nz + 1);
    struct CUstream_st *st = NULL;
    CK_OK(stenc_cuda_stream_create(&st));
    arrset s;
    arr_init(&s, M, 40 + (uint64_t)_i);
    CK_OK(stenc_diffusion_step_3d_f64(nx, ny, nz, s.h[0], s.h[1], s.h[2], 0.1, 1, 1, 1, 1));
    CK_OK(stenc_cuda_diffusion_step_3d_f64(nx, ny, nz, s.d[0], s.d[1], s.d[2], 0.1, 1, 1, 1, 1, st));
    CK_OK(stenc_diffusion_step_adjoint_3d_f64(nx, ny, nz, s.h[1], s.h[2], 0.1, 1, 1, 1, 1, s.h[3], s.h[4], s.h[5]));
    CK_OK(stenc_cuda_diffusion_step_adjoint_3d_f64(nx, ny, nz, s.d[1], s.d[2], 0.1, 1, 1, 1, 1, s.d[3], s.d[4], s.d[5], st));
    arr_compare_free(&s, "diffusion 3d", 1e-12);

    arr_init(&s, M, 50 + (uint64_t)_i);
    CK_OK(stenc_acoustic3d_velocity_3d_f64(nx, ny, nz, s.h[0], s.h[1], s.h[2], s.h[3], 0.1, 1.2, 1, 1, 1));
    CK_OK(stenc_cuda_acoustic3d_velocity_3d_f64(nx, ny, nz, s.d[0], s.d[1], s.d[2], s.d[3], 0.1, 1.2, 1, 1, 1, NULL));
    CK_OK(stenc_acoustic3d_pressure_3d_f64(nx, ny, nz, s.h[3], s.h[0], s.h[1], s.h[2], 0.1, 0.8, 1, 1, 1));
    CK_OK(stenc_cuda_acoustic3d_pressure_3d_f64(nx, ny, nz, s.d[3], s.d[0], s.d[1], s.d[2], 0.1, 0.8, 1, 1, 1, NULL));
    CK_OK(stenc_acoustic3d_velocity_adjoint_3d_f64(nx, ny, nz, s.h[3], s.h[0], s.h[1], s.h[2], 0.1, 1.2, 1, 1, 1,
                                                   s.h[4], s.h[5], s.h[6], s.h[7]));
    CK_OK(stenc_cuda_acoustic3d_velocity_adjoint_3d_f64(nx, ny, nz, s.d[3], s.d[0], s.d[1], s.d[2], 0.1, 1.2, 1, 1, 1,
                                                        s.d[4], s.d[5], s.d[6], s.d[7], NULL));
    arr_compare_free(&s, "acoustic 3d", 1e-12);

    arr_init(&s, M, 60 + (uint64_t)_i);
    CK_OK(stenc_stokes3d_viscosity_3d_f64(nx, ny, nz, s.h[0], s.h[1]));
    CK_OK(stenc_cuda_stokes3d_viscosity_3d_f64(nx, ny, nz, s.d[0], s.d[1], st));
    /* C gathers its cell factor over the whole box, CUDA inside and on the border */
    CK_OK(stenc_stokes3d_viscosity_adjoint_3d_f64(nx, ny, nz, s.h[0], s.h[6], s.h[7]));
    CK_OK(stenc_cuda_stokes3d_viscosity_adjoint_3d_f64(nx, ny, nz, s.d[0], s.d[6], s.d[7], st));
    CK_OK(stenc_stokes3d_shear_3d_f64(nx, ny, nz, s.h[2], s.h[1], s.h[3], s.h[4], 1, 1));
    CK_OK(stenc_cuda_stokes3d_shear_3d_f64(nx, ny, nz, s.d[2], s.d[1], s.d[3], s.d[4], 1, 1, st));
    CK_OK(stenc_stokes3d_shear_adjoint_3d_f64(nx, ny, nz, s.h[1], s.h[3], s.h[4], 1, 1, s.h[5], s.h[6], s.h[7], s.h[2]));
    CK_OK(stenc_cuda_stokes3d_shear_adjoint_3d_f64(nx, ny, nz, s.d[1], s.d[3], s.d[4], 1, 1, s.d[5], s.d[6], s.d[7],
                                                   s.d[2], st));
    arr_compare_free(&s, "stokes 3d", 1e-12);
    CK_OK(stenc_cuda_stream_destroy(st));
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
    /* Check forks a child per test by default, and a CUDA context made in
     * the parent is unusable in a forked child: probe in this process and run
     * the suite without fork. */
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
#if defined STENC_CUDA_EMU && defined STENC_CUDA_ZMARCH && !STENC_CUDA_ZMARCH
    Suite *s = suite_create("cuda kernels emulated on the host (tests/emu), 3D loops one block per row");
#elif defined STENC_CUDA_EMU
    Suite *s = suite_create("cuda kernels emulated on the host (tests/emu)");
#else
    Suite *s = suite_create("cuda");
#endif
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, regularizers_cpu_vs_gpu, 0, NGRID2 + NGRID3);
    tcase_add_test(tc, kernels_2d_cpu_vs_gpu);
    tcase_add_loop_test(tc, kernels_3d_cpu_vs_gpu, 0, NGRID3);
    tcase_add_test(tc, cuda_bad_arguments);
    suite_add_tcase(s, tc);
    return run_suite_nofork(s) ? 1 : 0;
}
