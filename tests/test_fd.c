/* Every finite-difference macro, 2D and 3D, against hand-written references
 * of the semantics in docs/language.md, on non-cubic grids with random data
 * and NaN-poisoned outputs: the written points must match, every other point
 * must stay untouched. */
#include "testutil.h"
#include "fd2.h"
#include "fd3.h"

enum { LIN, HARM, MAX, MIN };
typedef struct { double w; int o[3]; } Tap;
typedef struct { const char *name; int kind; int n; Tap t[8]; } Ref;

/* Offsets from the point p; "a" = all (0) in the other dimensions, "i" = inner (+1). */
static const Ref ref2[] = {
    {"all", LIN, 1, {{1, {0, 0}}}},
    {"inn", LIN, 1, {{1, {1, 1}}}},
    {"inn_x", LIN, 1, {{1, {1, 0}}}},
    {"inn_y", LIN, 1, {{1, {0, 1}}}},
    {"d_xa", LIN, 2, {{1, {1, 0}}, {-1, {0, 0}}}},
    {"d_ya", LIN, 2, {{1, {0, 1}}, {-1, {0, 0}}}},
    {"d_xi", LIN, 2, {{1, {1, 1}}, {-1, {0, 1}}}},
    {"d_yi", LIN, 2, {{1, {1, 1}}, {-1, {1, 0}}}},
    {"d2_xa", LIN, 3, {{1, {2, 0}}, {-2, {1, 0}}, {1, {0, 0}}}},
    {"d2_ya", LIN, 3, {{1, {0, 2}}, {-2, {0, 1}}, {1, {0, 0}}}},
    {"d2_xi", LIN, 3, {{1, {2, 1}}, {-2, {1, 1}}, {1, {0, 1}}}},
    {"d2_yi", LIN, 3, {{1, {1, 2}}, {-2, {1, 1}}, {1, {1, 0}}}},
    {"av", LIN, 4, {{.25, {0, 0}}, {.25, {1, 0}}, {.25, {0, 1}}, {.25, {1, 1}}}},
    {"av_xa", LIN, 2, {{.5, {0, 0}}, {.5, {1, 0}}}},
    {"av_ya", LIN, 2, {{.5, {0, 0}}, {.5, {0, 1}}}},
    {"av_xi", LIN, 2, {{.5, {0, 1}}, {.5, {1, 1}}}},
    {"av_yi", LIN, 2, {{.5, {1, 0}}, {.5, {1, 1}}}},
    {"harm", HARM, 4, {{1, {0, 0}}, {1, {1, 0}}, {1, {0, 1}}, {1, {1, 1}}}},
    {"harm_xa", HARM, 2, {{1, {0, 0}}, {1, {1, 0}}}},
    {"harm_ya", HARM, 2, {{1, {0, 0}}, {1, {0, 1}}}},
    {"harm_xi", HARM, 2, {{1, {0, 1}}, {1, {1, 1}}}},
    {"harm_yi", HARM, 2, {{1, {1, 0}}, {1, {1, 1}}}},
    {"maxloc", MAX, 5, {{1, {1, 1}}, {1, {0, 1}}, {1, {2, 1}}, {1, {1, 0}}, {1, {1, 2}}}},
    {"minloc", MIN, 5, {{1, {1, 1}}, {1, {0, 1}}, {1, {2, 1}}, {1, {1, 0}}, {1, {1, 2}}}},
};

#define C8(k) {1, {0, 0, k}}, {1, {1, 0, k}}, {1, {0, 1, k}}, {1, {1, 1, k}}
static const Ref ref3[] = {
    {"all", LIN, 1, {{1, {0, 0, 0}}}},
    {"inn", LIN, 1, {{1, {1, 1, 1}}}},
    {"inn_x", LIN, 1, {{1, {1, 0, 0}}}},
    {"inn_y", LIN, 1, {{1, {0, 1, 0}}}},
    {"inn_z", LIN, 1, {{1, {0, 0, 1}}}},
    {"inn_xy", LIN, 1, {{1, {1, 1, 0}}}},
    {"inn_xz", LIN, 1, {{1, {1, 0, 1}}}},
    {"inn_yz", LIN, 1, {{1, {0, 1, 1}}}},
    {"d_xa", LIN, 2, {{1, {1, 0, 0}}, {-1, {0, 0, 0}}}},
    {"d_ya", LIN, 2, {{1, {0, 1, 0}}, {-1, {0, 0, 0}}}},
    {"d_za", LIN, 2, {{1, {0, 0, 1}}, {-1, {0, 0, 0}}}},
    {"d_xi", LIN, 2, {{1, {1, 1, 1}}, {-1, {0, 1, 1}}}},
    {"d_yi", LIN, 2, {{1, {1, 1, 1}}, {-1, {1, 0, 1}}}},
    {"d_zi", LIN, 2, {{1, {1, 1, 1}}, {-1, {1, 1, 0}}}},
    {"d2_xa", LIN, 3, {{1, {2, 0, 0}}, {-2, {1, 0, 0}}, {1, {0, 0, 0}}}},
    {"d2_ya", LIN, 3, {{1, {0, 2, 0}}, {-2, {0, 1, 0}}, {1, {0, 0, 0}}}},
    {"d2_za", LIN, 3, {{1, {0, 0, 2}}, {-2, {0, 0, 1}}, {1, {0, 0, 0}}}},
    {"d2_xi", LIN, 3, {{1, {2, 1, 1}}, {-2, {1, 1, 1}}, {1, {0, 1, 1}}}},
    {"d2_yi", LIN, 3, {{1, {1, 2, 1}}, {-2, {1, 1, 1}}, {1, {1, 0, 1}}}},
    {"d2_zi", LIN, 3, {{1, {1, 1, 2}}, {-2, {1, 1, 1}}, {1, {1, 1, 0}}}},
    {"av", LIN, 8, {C8(0), C8(1)}},
    {"av_xa", LIN, 2, {{1, {0, 0, 0}}, {1, {1, 0, 0}}}},
    {"av_ya", LIN, 2, {{1, {0, 0, 0}}, {1, {0, 1, 0}}}},
    {"av_za", LIN, 2, {{1, {0, 0, 0}}, {1, {0, 0, 1}}}},
    {"av_xi", LIN, 2, {{1, {0, 1, 1}}, {1, {1, 1, 1}}}},
    {"av_yi", LIN, 2, {{1, {1, 0, 1}}, {1, {1, 1, 1}}}},
    {"av_zi", LIN, 2, {{1, {1, 1, 0}}, {1, {1, 1, 1}}}},
    {"av_xya", LIN, 4, {C8(0)}},
    {"av_xza", LIN, 4, {{1, {0, 0, 0}}, {1, {1, 0, 0}}, {1, {0, 0, 1}}, {1, {1, 0, 1}}}},
    {"av_yza", LIN, 4, {{1, {0, 0, 0}}, {1, {0, 1, 0}}, {1, {0, 0, 1}}, {1, {0, 1, 1}}}},
    {"av_xyi", LIN, 4, {C8(1)}},
    {"av_xzi", LIN, 4, {{1, {0, 1, 0}}, {1, {1, 1, 0}}, {1, {0, 1, 1}}, {1, {1, 1, 1}}}},
    {"av_yzi", LIN, 4, {{1, {1, 0, 0}}, {1, {1, 1, 0}}, {1, {1, 0, 1}}, {1, {1, 1, 1}}}},
    {"maxloc", MAX, 7, {{1, {1, 1, 1}}, {1, {0, 1, 1}}, {1, {2, 1, 1}}, {1, {1, 0, 1}}, {1, {1, 2, 1}}, {1, {1, 1, 0}}, {1, {1, 1, 2}}}},
    {"minloc", MIN, 7, {{1, {1, 1, 1}}, {1, {0, 1, 1}}, {1, {2, 1, 1}}, {1, {1, 0, 1}}, {1, {1, 2, 1}}, {1, {1, 1, 0}}, {1, {1, 1, 2}}}},
};

/* 3D av* entries with weight 1 are means: weight 1/n applied below */
static double eval(const Ref *r, const double *A, size_t nx, size_t ny, size_t i, size_t j, size_t k, int three)
{
    double acc = (r->kind == MAX) ? -INFINITY : (r->kind == MIN) ? INFINITY : 0;
    for (int t = 0; t < r->n; ++t) {
        const int *o = r->t[t].o;
        double v = A[(i + (size_t)o[0]) + nx * ((j + (size_t)o[1]) + ny * (k + (size_t)(three ? o[2] : 0)))];
        switch (r->kind) {
        case LIN: {
            double w = r->t[t].w;
            if (three && strncmp(r->name, "av", 2) == 0) w = 1.0 / r->n;
            acc += w * v;
            break;
        }
        case HARM: acc += 1.0 / v; break;
        case MAX: acc = fmax(acc, v); break;
        case MIN: acc = fmin(acc, v); break;
        }
    }
    return r->kind == HARM ? r->n / acc : acc;
}

typedef int (*k2_t)(size_t, size_t, double *, const double *);
typedef int (*k3_t)(size_t, size_t, size_t, double *, const double *);

#define K2(m) {#m, stenc_fd2_k_##m##_2d_f64}
static const struct { const char *name; k2_t f; } kern2[] = {
    K2(all), K2(inn), K2(inn_x), K2(inn_y), K2(d_xa), K2(d_ya), K2(d_xi), K2(d_yi), K2(d2_xa), K2(d2_ya),
    K2(d2_xi), K2(d2_yi), K2(av), K2(av_xa), K2(av_ya), K2(av_xi), K2(av_yi), K2(harm), K2(harm_xa),
    K2(harm_ya), K2(harm_xi), K2(harm_yi), K2(maxloc), K2(minloc)};
#define K3(m) {#m, stenc_fd3_k_##m##_3d_f64}
static const struct { const char *name; k3_t f; } kern3[] = {
    K3(all), K3(inn), K3(inn_x), K3(inn_y), K3(inn_z), K3(inn_xy), K3(inn_xz), K3(inn_yz), K3(d_xa), K3(d_ya),
    K3(d_za), K3(d_xi), K3(d_yi), K3(d_zi), K3(d2_xa), K3(d2_ya), K3(d2_za), K3(d2_xi), K3(d2_yi), K3(d2_zi),
    K3(av), K3(av_xa), K3(av_ya), K3(av_za), K3(av_xi), K3(av_yi), K3(av_zi), K3(av_xya), K3(av_xza),
    K3(av_yza), K3(av_xyi), K3(av_xzi), K3(av_yzi), K3(harm), K3(harm_xa), K3(harm_ya), K3(harm_za),
    K3(harm_xi), K3(harm_yi), K3(harm_zi), K3(harm_xya), K3(harm_xza), K3(harm_yza), K3(harm_xyi),
    K3(harm_xzi), K3(harm_yzi), K3(maxloc), K3(minloc)};

static const Ref *find_ref(const char *name, int three)
{
    static Ref harm3[16];
    const Ref *tab = three ? ref3 : ref2;
    size_t n = three ? sizeof ref3 / sizeof *ref3 : sizeof ref2 / sizeof *ref2;
    for (size_t i = 0; i < n; ++i)
        if (strcmp(tab[i].name, name) == 0) return &tab[i];
    /* 3D harm_*: the same points as av_* */
    if (three && strncmp(name, "harm", 4) == 0) {
        char av[32];
        snprintf(av, sizeof av, "av%s", name + 4);
        for (size_t i = 0; i < n; ++i)
            if (strcmp(tab[i].name, av) == 0) {
                static int used;
                Ref *h = &harm3[used++ % 16];
                *h = tab[i];
                h->name = name;
                h->kind = HARM;
                return h;
            }
    }
    return NULL;
}

/* every 2D macro kernel on an NX x NY grid against its reference */
static void check_macros_2d(size_t nx, size_t ny)
{
    const size_t N = nx * ny;
    rng_t r = {42};
    double *A = dalloc(N), *O = dalloc(N);
    dfill(A, N, &r, 0.5, 1.5);
    for (size_t m = 0; m < sizeof kern2 / sizeof *kern2; ++m) {
        const Ref *ref = find_ref(kern2[m].name, 0);
        ck_assert_msg(ref != NULL, "no reference for %s", kern2[m].name);
        dnan(O, N);
        CK_OK(kern2[m].f(nx, ny, O, A));
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                double got = O[i + nx * j];
                int written = i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1;
                if (written) {
                    double want = eval(ref, A, nx, ny, i - 1, j - 1, 0, 0);
                    ck_assert_msg(reldiff(got, want, 1e-300) < 1e-14, "%s at (%zu,%zu) of %zux%zu: %.17g vs %.17g", ref->name,
                                  i, j, nx, ny, got, want);
                } else {
                    ck_assert_msg(isnan(got), "%s wrote outside its region at (%zu,%zu)", ref->name, i, j);
                }
            }
    }
    free(A); free(O);
}

/* every 3D macro kernel on an NX x NY x NZ grid against its reference */
static void check_macros_3d(size_t nx, size_t ny, size_t nz)
{
    const size_t N = nx * ny * nz;
    rng_t r = {43};
    double *A = dalloc(N), *O = dalloc(N);
    dfill(A, N, &r, 0.5, 1.5);
    for (size_t m = 0; m < sizeof kern3 / sizeof *kern3; ++m) {
        const Ref *ref = find_ref(kern3[m].name, 1);
        ck_assert_msg(ref != NULL, "no reference for %s", kern3[m].name);
        dnan(O, N);
        CK_OK(kern3[m].f(nx, ny, nz, O, A));
        for (size_t k = 0; k < nz; ++k)
            for (size_t j = 0; j < ny; ++j)
                for (size_t i = 0; i < nx; ++i) {
                    double got = O[i + nx * (j + ny * k)];
                    int written = i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1 && k >= 1 && k < nz - 1;
                    if (written) {
                        double want = eval(ref, A, nx, ny, i - 1, j - 1, k - 1, 1);
                        ck_assert_msg(reldiff(got, want, 1e-300) < 1e-14, "%s at (%zu,%zu,%zu) of %zux%zux%zu: %.17g vs %.17g",
                                      ref->name, i, j, k, nx, ny, nz, got, want);
                    } else {
                        ck_assert_msg(isnan(got), "%s wrote outside its region at (%zu,%zu,%zu)", ref->name, i, j, k);
                    }
                }
    }
    free(A); free(O);
}

START_TEST(fd_macros_2d) { check_macros_2d(13, 7); }
END_TEST

START_TEST(fd_macros_3d) { check_macros_3d(11, 6, 5); }
END_TEST

/* The harmonic means evaluate each reciprocal once a point into strips of
 * rows (point fields, STENC_FIELD_BYTES: 1024 doubles by default): rows of
 * three strips and more, runs of several rows (the strips' rows kept along
 * y), and grids of one interior point along x */
START_TEST(fd_macros_strips)
{
    check_macros_2d(2100, 9);
    check_macros_3d(2100, 6, 4);
    check_macros_2d(3, 9);
    check_macros_3d(3, 7, 4);
}
END_TEST

/* left-hand-side macros: which points are written (ParallelStencil rule:
 * offset a along a dimension writes a .. E-1-a) */
static void check_lhs(int three, const char *name, const int off[3])
{
    const size_t nx = three ? 11 : 13, ny = three ? 6 : 7, nz = three ? 5 : 1, N = nx * ny * nz;
    rng_t r = {44};
    double *A = dalloc(N), *O = dalloc(N);
    dfill(A, N, &r, -1, 1);
    dnan(O, N);
    int rc = STENC_ERR_ARG;
#define L2(m) if (strcmp(name, #m) == 0) rc = stenc_fd2_l_##m##_2d_f64(nx, ny, O, A);
#define L3(m) if (strcmp(name, #m) == 0) rc = stenc_fd3_l_##m##_3d_f64(nx, ny, nz, O, A);
    if (!three) { L2(all) L2(inn) L2(inn_x) L2(inn_y) }
    else { L3(all) L3(inn) L3(inn_x) L3(inn_y) L3(inn_z) L3(inn_xy) L3(inn_xz) L3(inn_yz) }
    ck_assert_msg(rc == STENC_OK, "%s: %s", name, stenc_strerror(rc));
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                size_t q = i + nx * (j + ny * k);
                int w = (int)i >= off[0] && i < nx - (size_t)off[0] && (int)j >= off[1] && j < ny - (size_t)off[1] &&
                        (!three || ((int)k >= off[2] && k < nz - (size_t)off[2]));
                if (w) ck_assert_msg(O[q] == 2 * A[q], "%s: wrong value at (%zu,%zu,%zu)", name, i, j, k);
                else ck_assert_msg(isnan(O[q]), "%s: wrote (%zu,%zu,%zu) outside its region", name, i, j, k);
            }
    free(A); free(O);
}

START_TEST(lhs_macros)
{
    static const struct { const char *n; int o[3]; int three; } L[] = {
        {"all", {0, 0, 0}, 0}, {"inn", {1, 1, 0}, 0}, {"inn_x", {1, 0, 0}, 0}, {"inn_y", {0, 1, 0}, 0},
        {"all", {0, 0, 0}, 1}, {"inn", {1, 1, 1}, 1}, {"inn_x", {1, 0, 0}, 1}, {"inn_y", {0, 1, 0}, 1},
        {"inn_z", {0, 0, 1}, 1}, {"inn_xy", {1, 1, 0}, 1}, {"inn_xz", {1, 0, 1}, 1}, {"inn_yz", {0, 1, 1}, 1}};
    for (size_t i = 0; i < sizeof L / sizeof *L; ++i) check_lhs(L[i].three, L[i].n, L[i].o);
}
END_TEST

START_TEST(grid_too_small)
{
    double A[9], O[9];
    for (int i = 0; i < 9; ++i) A[i] = 1;
    ck_assert_int_eq(stenc_fd2_k_d2_xi_2d_f64(2, 3, O, A), STENC_ERR_GRID);
    ck_assert_int_eq(stenc_fd2_k_d2_xi_2d_f64(3, 2, O, A), STENC_ERR_GRID);
    CK_OK(stenc_fd2_k_d2_xi_2d_f64(3, 3, O, A));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fd_macros");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fd_macros_2d);
    tcase_add_test(tc, fd_macros_3d);
    tcase_add_test(tc, fd_macros_strips);
    tcase_add_test(tc, lhs_macros);
    tcase_add_test(tc, grid_too_small);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
