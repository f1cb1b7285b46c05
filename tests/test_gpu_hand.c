/* The GPU benchmark's hand-written total variation, 3D and 2D (perf/gpu_hand.cu),
 * run on the host through the warp emulation (tests/emu, EMU_WARPS: each
 * warp a team of 32 threads, so its shuffles exchange real values), against
 * stenc's C kernels (neumann), which test_regularizers checks against
 * independent references: the value and the gradient, float and double.
 * The grids leave partial x bands (30 points a warp), y bands (8 rows in
 * float, 4 in double) and z chunks (32 planes), and take a single point and
 * single rows and planes; 2D: grids2. */
#include "testutil.h"
#include "tv.h"
#include "gpu_hand.h"

static const size_t grids3[][3] = {{67, 21, 35}, {31, 9, 33}, {1, 1, 1}, {2, 1, 40}, {30, 17, 1}, {61, 1, 3}};
/* 2D: partial x bands (30 points a warp, 256 columns a value block), row
 * chunks (64 rows a gradient warp, 32 a value thread) */
static const size_t grids2[][3] = {{67, 130, 1}, {300, 33, 1}, {1, 1, 1}, {2, 65, 1}, {31, 1, 1}};
enum { NGRID3 = sizeof grids3 / sizeof grids3[0], NGRID2 = sizeof grids2 / sizeof grids2[0] };

/* the largest |a - b| over n, relative to the largest |a| (at least 1e-3) */
#define MAXREL(a, b, n, out)                                                         \
    do {                                                                             \
        double m_ = 1e-3, d_ = 0;                                                    \
        for (size_t q_ = 0; q_ < (n); ++q_) m_ = fmax(m_, fabs((double)(a)[q_]));    \
        for (size_t q_ = 0; q_ < (n); ++q_) d_ = fmax(d_, fabs((double)(a)[q_] - (double)(b)[q_])); \
        (out) = d_ / m_;                                                             \
    } while (0)

/* the four calls in D dimensions (precision suffix S) */
#define STENC_VALUE3(S) stenc_tv_value_3d_##S(n[0], n[1], n[2], STENC_NEUMANN, x, wx, wy, wz, eps, &vs)
#define STENC_VALUE2(S) stenc_tv_value_2d_##S(n[0], n[1], STENC_NEUMANN, x, wx, wy, eps, &vs)
#define STENC_GRAD3(S) stenc_tv_grad_3d_##S(n[0], n[1], n[2], STENC_NEUMANN, x, wx, wy, wz, eps, 1, 0, gs)
#define STENC_GRAD2(S) stenc_tv_grad_2d_##S(n[0], n[1], STENC_NEUMANN, x, wx, wy, eps, 1, 0, gs)
#define HAND_VALUE3(S) stenc_bench_hand_tv3_value_##S(n[0], n[1], n[2], x, wx, wy, wz, eps, &ws, &vh)
#define HAND_VALUE2(S) stenc_bench_hand_tv2_value_##S(n[0], n[1], x, wx, wy, eps, &ws, &vh)
#define HAND_GRAD3(S) stenc_bench_hand_tv3_grad_##S(n[0], n[1], n[2], x, wx, wy, wz, eps, gh)
#define HAND_GRAD2(S) stenc_bench_hand_tv2_grad_##S(n[0], n[1], x, wx, wy, eps, gh)

/* one precision and dimension: T, its suffix S, D (2 or 3), the tolerance
 * TOL (relative to the largest gradient component; the value relative to
 * itself), the seed */
#define HAND_CASE(T, S, D, TOL, SEED)                                                                                \
    const size_t *n = grids##D[_i], N = n[0] * n[1] * n[2];                                                        \
    T *x = malloc(N * sizeof *x), *gs = malloc(N * sizeof *x), *gh = malloc(N * sizeof *x);                         \
    ck_assert(x && gs && gh);                                                                                       \
    double ws = 0, vs = 0, vh = 0, e;                                                                               \
    rng_t r = {(uint64_t)_i + (SEED)};                                                                              \
    for (size_t q = 0; q < N; ++q) x[q] = (T)rng_uniform(&r, -1, 1);                                               \
    for (size_t q = 0; q < N; ++q) gh[q] = NAN;                                                                     \
    const T wx = (T)0.7, wy = (T)1.3, wz = (T)0.9, eps = (T)1e-3;                                                  \
    (void)wz;                                                                                                       \
    ck_assert_int_eq(STENC_VALUE##D(S), STENC_OK);                                                                  \
    ck_assert_int_eq(STENC_GRAD##D(S), STENC_OK);                                                                   \
    ck_assert_int_eq(HAND_VALUE##D(S), 0);                                                                          \
    ck_assert_int_eq(HAND_GRAD##D(S), 0);                                                                           \
    MAXREL(gs, gh, N, e);                                                                                           \
    ck_assert_msg(e < (TOL), "gradient %zux%zux%zu off by %.3g", n[0], n[1], n[2], e);                             \
    ck_assert_msg(fabs(vh - vs) <= (TOL) * fabs(vs), "value %zux%zux%zu: %.17g, stenc %.17g", n[0], n[1], n[2], vh, \
                  vs);                                                                                              \
    free(x); free(gs); free(gh)

START_TEST(hand_tv3_f64) { HAND_CASE(double, f64, 3, 1e-12, 11); }
END_TEST

START_TEST(hand_tv3_f32) { HAND_CASE(float, f32, 3, 1e-5, 29); }
END_TEST

START_TEST(hand_tv2_f64) { HAND_CASE(double, f64, 2, 1e-12, 47); }
END_TEST

START_TEST(hand_tv2_f32) { HAND_CASE(float, f32, 2, 1e-5, 53); }
END_TEST

/* planes of 2^32 points or more are refused before any memory is touched */
START_TEST(hand_refuses_huge_planes)
{
    double ws = 0, v = 0;
    ck_assert_int_eq(stenc_bench_hand_tv3_value_f32((size_t)1 << 16, (size_t)1 << 16, 1, NULL, 1, 1, 1, 1, &ws, &v), -1);
    ck_assert_int_eq(stenc_bench_hand_tv3_grad_f64((size_t)1 << 16, (size_t)1 << 16, 1, NULL, 1, 1, 1, 1, NULL), -1);
    ck_assert_int_eq(stenc_bench_hand_tv3_grad_f32(0, 5, 5, NULL, 1, 1, 1, 1, NULL), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gpu_hand");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, hand_tv3_f64, 0, NGRID3);
    tcase_add_loop_test(tc, hand_tv3_f32, 0, NGRID3);
    tcase_add_loop_test(tc, hand_tv2_f64, 0, NGRID2);
    tcase_add_loop_test(tc, hand_tv2_f32, 0, NGRID2);
    tcase_add_test(tc, hand_refuses_huge_planes);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
