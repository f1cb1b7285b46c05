/* A reduction over two differentiable arrays (tests/stencils/pair.stn):
 * value against a direct double loop of its formula, and both gradients
 * (grad and value_grad, alpha/beta) against central differences of that
 * loop, in every boundary mode, on grids whose rows are long enough for the
 * rolling rows (several strips) and short enough for the end points to be a
 * large share.  The reference knows nothing of the generator.  Also the
 * select of tests/stencils/sel.stn, whose branches' partials share factors. */
#include "testutil.h"
#include "pair.h"
#include "sel.h"

typedef struct { size_t n[3]; int D; } Grid;

/* A reference given a point near (its coordinates; NULL: none) sums only
 * the terms within REF_REACH points of it along each dimension (across a
 * periodic edge too): the terms that read it (every tap of the stencils
 * here is within 2 points), so that a central difference at a point costs
 * the terms near it, not the grid's. */
enum { REF_REACH = 3 };

/* the term points of a reference: [lo, hi) along each dimension */
typedef struct { long lo[3], hi[3]; } Box;

/* the box of a reference's terms under the mode: all points, or in valid
 * mode those whose taps (offsets tlo[d] to thi[d] along dimension d) are
 * all inside; with a point near, only those near it */
static Box ref_box(const Grid *G, const long *near, int mode, const long tlo[3], const long thi[3])
{
    Box B;
    for (int d = 0; d < 3; ++d) {
        B.lo[d] = 0;
        B.hi[d] = (long)G->n[d];
        if (mode == STENC_VALID && d < G->D) {
            B.lo[d] = tlo[d] < 0 ? -tlo[d] : 0;
            B.hi[d] -= thi[d] > 0 ? thi[d] : 0;
        }
        /* the points within REF_REACH of near, where they do not wrap
         * (else ref_far picks them) */
        if (!near || d >= G->D) continue;
        const long a = near[d] - REF_REACH, b = near[d] + REF_REACH + 1;
        if (mode != STENC_PERIODIC || (a >= 0 && b <= (long)G->n[d])) {
            if (B.lo[d] < a) B.lo[d] = a;
            if (B.hi[d] > b) B.hi[d] = b;
        }
    }
    return B;
}

/* whether the term at (i, j, k) is left out: further than REF_REACH from
 * the point near */
TEST_REF static int ref_far(const Grid *G, const long *near, int mode, long i, long j, long k)
{
    if (!near) return 0;
    const long p[3] = {i, j, k};
    for (int d = 0; d < G->D; ++d) {
        long dist = labs(p[d] - near[d]);
        if (mode == STENC_PERIODIC && (long)G->n[d] - dist < dist) dist = (long)G->n[d] - dist;
        if (dist > REF_REACH) return 1;
    }
    return 0;
}

/* a reference's loop over the points (i, j, k) of box B it sums: those
 * near the point NEAR (ref_far), all of B without one */
#define REF_POINTS(B)                                                                                                  \
    for (long k = (B).lo[2]; k < (B).hi[2]; ++k)                                                                   \
        for (long j = (B).lo[1]; j < (B).hi[1]; ++j)                                                               \
            for (long i = (B).lo[0]; i < (B).hi[0]; ++i)                                                           \
                if (!ref_far(G, near, mode, i, j, k))

/* index of p + o along a dimension of n points under the mode; -1 when the
 * point is outside (valid mode never asks) */
TEST_REF static long ref_map(long p, long o, long n, int mode)
{
    long v = p + o;
    if (mode == STENC_PERIODIC) return ((v % n) + n) % n;
    if (mode == STENC_NEUMANN) return v < 0 ? 0 : v >= n ? n - 1 : v;
    return v;
}

TEST_REF static double ref_at(const Grid *G, const double *a, long i, long j, long k, long oi, long oj, long ok, int mode)
{
    long n0 = (long)G->n[0], n1 = (long)G->n[1], n2 = (long)G->n[2];
    long q0 = ref_map(i, oi, n0, mode), q1 = ref_map(j, oj, n1, mode), q2 = G->D == 3 ? ref_map(k, ok, n2, mode) : 0;
    return a[q0 + n0 * (q1 + n1 * q2)];
}

/* sum over the mode's points of sqrt(eps + (x[p+ex] - y[p-ex])^2 +
 * (x[p+ey] - y[p])^2 [+ (y[p+ez] - x[p-ey])^2]) */
#define PAIR_EPS 1e-2 /* the eps the pair test passes */
static double ref_value(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const double eps = PAIR_EPS;
    /* the taps: x in [-1, 1], y in [-1 (3D) or 0, 1], z in [0, 1] */
    const Box B = ref_box(G, near, mode, (const long[3]){-1, G->D == 3 ? -1 : 0, 0}, (const long[3]){1, 1, 1});
    double s = 0;
    REF_POINTS(B) {
        double a = ref_at(G, x, i, j, k, 1, 0, 0, mode) - ref_at(G, y, i, j, k, -1, 0, 0, mode);
        double b = ref_at(G, x, i, j, k, 0, 1, 0, mode) - ref_at(G, y, i, j, k, 0, 0, 0, mode);
        double r = eps + a * a + b * b;
        if (G->D == 3) {
            double c = ref_at(G, y, i, j, k, 0, 0, 1, mode) - ref_at(G, x, i, j, k, 0, -1, 0, mode);
            r += c * c;
        }
        s += sqrt(r);
    }
    return s;
}

static int call(const Grid *G, int kind, int mode, const double *x, const double *y, double eps, double *v, double alpha,
                double beta, double *gx, double *gy)
{
    if (G->D == 2) {
        if (kind == 0) return stenc_pair_value_2d_f64(G->n[0], G->n[1], mode, x, y, eps, v);
        if (kind == 1) return stenc_pair_grad_2d_f64(G->n[0], G->n[1], mode, x, y, eps, alpha, beta, gx, gy);
        return stenc_pair_value_grad_2d_f64(G->n[0], G->n[1], mode, x, y, eps, v, alpha, beta, gx, gy);
    }
    if (kind == 0) return stenc_pair_value_3d_f64(G->n[0], G->n[1], G->n[2], mode, x, y, eps, v);
    if (kind == 1) return stenc_pair_grad_3d_f64(G->n[0], G->n[1], G->n[2], mode, x, y, eps, alpha, beta, gx, gy);
    return stenc_pair_value_grad_3d_f64(G->n[0], G->n[1], G->n[2], mode, x, y, eps, v, alpha, beta, gx, gy);
}

/* a reference value of x and y (the pair, quad and cheap stencils') */
typedef double (*RefFn)(const Grid *G, const long *near, int mode, const double *x, const double *y);

/* the central difference with step h of REF at a[q] (a is x or y), over
 * the terms near q (the others do not read a[q]) */
static double central_diff(RefFn ref, const Grid *G, int mode, double *x, double *y, double *a, size_t q, double h)
{
    const long near[3] = {(long)(q % G->n[0]), (long)(q / G->n[0] % G->n[1]), (long)(q / G->n[0] / G->n[1])};
    const double a0 = a[q];
    a[q] = a0 + h;
    const double fp = ref(G, near, mode, x, y);
    a[q] = a0 - h;
    const double fm = ref(G, near, mode, x, y);
    a[q] = a0;
    return (fp - fm) / (2 * h);
}

/* the arrays of a gradient test: the inputs x, y (random in [-1, 1]), the
 * gradients gx, gy (NaN: every point must be written), value_grad's
 * gradients onto a random start hx, hy, kept in sx, sy */
typedef struct { double *x, *y, *gx, *gy, *hx, *hy, *sx, *sy; } Arrays;
static Arrays arrays_new(size_t N, rng_t *rg)
{
    Arrays A = {dalloc(N), dalloc(N), dalloc(N), dalloc(N), dalloc(N), dalloc(N), dalloc(N), dalloc(N)};
    dfill(A.x, N, rg, -1, 1);
    dfill(A.y, N, rg, -1, 1);
    dnan(A.gx, N);
    dnan(A.gy, N);
    dfill(A.hx, N, rg, -1, 1);
    dfill(A.hy, N, rg, -1, 1);
    memcpy(A.sx, A.hx, N * sizeof *A.sx);
    memcpy(A.sy, A.hy, N * sizeof *A.sy);
    return A;
}
static void arrays_free(Arrays *A)
{
    free(A->x); free(A->y); free(A->gx); free(A->gy); free(A->hx); free(A->hy); free(A->sx); free(A->sy);
}

static const Grid grids[] = {
    {{1100, 7, 1}, 2},   /* rows of several strips */
    {{9, 13, 1}, 2},     /* end points a large share */
    {{530, 5, 4}, 3},
    {{17, 9, 8}, 3},
};
enum { NGRID = sizeof grids / sizeof grids[0] };

/* A's gradients (grad into gx, gy; value_grad with alpha 0.5 and beta -2
 * onto the start sx, sy, into hx, hy) against central differences of REF
 * at every point of both arrays (each over the terms near the point) */
static void check_gradients(RefFn ref, const Grid *G, int mode, Arrays *A, const char *what)
{
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    const double h = 1e-6;
    double gmax = 0;
    for (size_t q = 0; q < N; ++q) gmax = fmax(gmax, fmax(fabs(A->gx[q]), fabs(A->gy[q])));
    for (int arr = 0; arr < 2; ++arr) {
        double *a = arr ? A->y : A->x, *g = arr ? A->gy : A->gx, *gv = arr ? A->hy : A->hx, *st = arr ? A->sy : A->sx;
        for (size_t q = 0; q < N; ++q) {
            const size_t i = q % G->n[0];
            const double fd = central_diff(ref, G, mode, A->x, A->y, a, q, h);
            ck_assert_msg(fabs(g[q] - fd) <= 1e-6 * (1 + gmax),
                          "%zux%zux%zu mode %d %s %s grad at %zu (%zu, %zu, %zu): %.12g vs FD %.12g", G->n[0], G->n[1],
                          G->n[2], mode, what, arr ? "y" : "x", q, i, q / G->n[0] % G->n[1], q / (G->n[0] * G->n[1]),
                          g[q], fd);
            ck_assert_msg(fabs(gv[q] - (-2 * st[q] + 0.5 * g[q])) <= 1e-12 * (1 + fabs(st[q]) + gmax),
                          "%s value_grad %s at %zu: %.15g, want %.15g", what, arr ? "y" : "x", q, gv[q],
                          -2 * st[q] + 0.5 * g[q]);
        }
    }
}

START_TEST(pair_value_and_gradients)
{
    const Grid *G = &grids[_i / 3];
    const int mode = _i % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    const double eps = PAIR_EPS;
    rng_t rg = {4100 + (uint64_t)_i};
    Arrays A = arrays_new(N, &rg);
    double *x = A.x, *y = A.y, *gx = A.gx, *gy = A.gy, *hx = A.hx, *hy = A.hy;
    double v = 0, vg = 0;
    CK_OK(call(G, 0, mode, x, y, eps, &v, 0, 0, NULL, NULL));
    const double vref = ref_value(G, NULL, mode, x, y);
    ck_assert_msg(reldiff(v, vref, 1) < 1e-12, "%zux%zux%zu mode %d value %.15g, reference %.15g", G->n[0], G->n[1],
                  G->n[2], mode, v, vref);
    CK_OK(call(G, 1, mode, x, y, eps, NULL, 1, 0, gx, gy));
    /* value_grad with alpha/beta onto a known start: beta*start + alpha*g */
    CK_OK(call(G, 2, mode, x, y, eps, &vg, 0.5, -2, hx, hy));
    ck_assert_msg(reldiff(vg, vref, 1) < 1e-12, "value_grad value %.15g, reference %.15g", vg, vref);
    check_gradients(ref_value, G, mode, &A, "pair");
    arrays_free(&A);
}
END_TEST

/* quad: sum over the mode's points of A^2 + 3 B^2, A = x[p+ex] - 2 x[p] +
 * x[p-ex], B = y[p+ey] - 2 y[p] + y[p-ey] [+ w (x[p+ez] - x[p-ez])], w
 * the stencil's eps (QUAD_W) */
#define QUAD_W 0.7
static double ref_quad(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const Box B = ref_box(G, near, mode, (const long[3]){-1, -1, -1}, (const long[3]){1, 1, 1});
    double s = 0;
    REF_POINTS(B) {
        const double a = ref_at(G, x, i, j, k, 1, 0, 0, mode) - 2 * ref_at(G, x, i, j, k, 0, 0, 0, mode) +
                         ref_at(G, x, i, j, k, -1, 0, 0, mode);
        double b = ref_at(G, y, i, j, k, 0, 1, 0, mode) - 2 * ref_at(G, y, i, j, k, 0, 0, 0, mode) +
                   ref_at(G, y, i, j, k, 0, -1, 0, mode);
        if (G->D == 3) b += QUAD_W * (ref_at(G, x, i, j, k, 0, 0, 1, mode) - ref_at(G, x, i, j, k, 0, 0, -1, mode));
        s += a * a + 3 * b * b;
    }
    return s;
}

static int call_quad(const Grid *G, int kind, int mode, const double *x, const double *y, double *v, double alpha,
                     double beta, double *gx, double *gy)
{
    const size_t *n = G->n;
    if (G->D == 2) {
        if (kind == 1) return stenc_pair_quad_grad_2d_f64(n[0], n[1], mode, x, y, alpha, beta, gx, gy);
        return stenc_pair_quad_value_grad_2d_f64(n[0], n[1], mode, x, y, v, alpha, beta, gx, gy);
    }
    if (kind == 1) return stenc_pair_quad_grad_3d_f64(n[0], n[1], n[2], mode, x, y, QUAD_W, alpha, beta, gx, gy);
    return stenc_pair_quad_value_grad_3d_f64(n[0], n[1], n[2], mode, x, y, QUAD_W, v, alpha, beta, gx, gy);
}

/* quad's value_grad value against the reference, its gradients (grad and
 * value_grad) against central differences of the reference (exact for a
 * quadratic up to rounding) at every row's ends and every 5th point */
START_TEST(quad_value_and_gradients)
{
    const Grid *G = &grids[_i / 3];
    const int mode = _i % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    rng_t rg = {5200 + (uint64_t)_i};
    double *x = dalloc(N), *y = dalloc(N), *gx = dalloc(N), *gy = dalloc(N), *hx = dalloc(N), *hy = dalloc(N);
    dfill(x, N, &rg, -1, 1);
    dfill(y, N, &rg, -1, 1);
    dnan(gx, N);
    dnan(gy, N);
    CK_OK(call_quad(G, 1, mode, x, y, NULL, 1, 0, gx, gy));
    dnan(hx, N);
    dnan(hy, N);
    double v = 0;
    CK_OK(call_quad(G, 2, mode, x, y, &v, 1, 0, hx, hy));
    const double vref = ref_quad(G, NULL, mode, x, y);
    ck_assert_msg(reldiff(v, vref, 1) < 1e-12, "%zux%zux%zu mode %d quad value %.15g, reference %.15g", G->n[0], G->n[1],
                  G->n[2], mode, v, vref);
    const double h = 1e-3;
    for (int arr = 0; arr < 2; ++arr) {
        double *a = arr ? y : x, *g = arr ? gy : gx, *gv = arr ? hy : hx;
        for (size_t q = 0; q < N; ++q) {
            const size_t i = q % G->n[0];
            if (i >= 4 && i + 4 < G->n[0] && q % 5) continue;
            const double fd = central_diff(ref_quad, G, mode, x, y, a, q, h);
            ck_assert_msg(fabs(g[q] - fd) <= 1e-7 * (1 + fabs(fd)) && fabs(gv[q] - g[q]) <= 1e-12 * (1 + fabs(g[q])),
                          "%zux%zux%zu mode %d quad %s grad at %zu (i %zu): grad %.12g value_grad %.12g FD %.12g", G->n[0],
                          G->n[1], G->n[2], mode, arr ? "y" : "x", q, i, g[q], gv[q], fd);
        }
    }
    free(x); free(y); free(gx); free(gy); free(hx); free(hy);
}
END_TEST

/* cheap: sum over the mode's points of (x[p+ey] - x[p-ey])^2 +
 * 2 (y[p+2ex] - x[p])^2 [+ (y[p+2ez] - x[p-ez])^2 + (x[p+ey] - y[p])^2] */
static double ref_cheap(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    /* the taps: x in [0, +2], y in [-1, +1], z in [-1, +2] */
    const Box B = ref_box(G, near, mode, (const long[3]){0, -1, -1}, (const long[3]){2, 1, 2});
    double s = 0;
    REF_POINTS(B) {
        const double xp = ref_at(G, x, i, j, k, 0, 0, 0, mode);
        const double a = ref_at(G, x, i, j, k, 0, 1, 0, mode) - ref_at(G, x, i, j, k, 0, -1, 0, mode);
        const double b = ref_at(G, y, i, j, k, 2, 0, 0, mode) - xp;
        s += a * a + 2 * b * b;
        if (G->D == 3) {
            const double c = ref_at(G, y, i, j, k, 0, 0, 2, mode) - ref_at(G, x, i, j, k, 0, 0, -1, mode);
            const double e = ref_at(G, x, i, j, k, 0, 1, 0, mode) - ref_at(G, y, i, j, k, 0, 0, 0, mode);
            s += c * c + e * e;
        }
    }
    return s;
}

static int call_cheap(const Grid *G, int kind, int mode, const double *x, const double *y, double *v, double alpha,
                      double beta, double *gx, double *gy)
{
    const size_t *n = G->n;
    if (G->D == 2) {
        if (kind == 1) return stenc_pair_cheap_grad_2d_f64(n[0], n[1], mode, x, y, alpha, beta, gx, gy);
        return stenc_pair_cheap_value_grad_2d_f64(n[0], n[1], mode, x, y, v, alpha, beta, gx, gy);
    }
    if (kind == 1) return stenc_pair_cheap_grad_3d_f64(n[0], n[1], n[2], mode, x, y, alpha, beta, gx, gy);
    return stenc_pair_cheap_value_grad_3d_f64(n[0], n[1], n[2], mode, x, y, v, alpha, beta, gx, gy);
}

/* 3D grids at least edge_min (10 x 10 x 14 here) along every dimension run
 * the border rows by edge class, the smallest such grid with their classes
 * next to each other; the third is one plane short of it along z (the
 * general border rows) */
static const Grid cheap_grids[] = {
    {{11, 10, 15}, 3},
    {{10, 10, 14}, 3},
    {{10, 10, 13}, 3},
    {{20, 12, 1}, 2},
};
enum { NCHEAP = sizeof cheap_grids / sizeof cheap_grids[0] };

/* cheap's values against the reference; its gradients (grad; value_grad
 * with alpha/beta onto a known start) at every point of both arrays against
 * central differences of the reference (exact for a quadratic up to
 * rounding) */
START_TEST(cheap_value_and_gradients)
{
    const Grid *G = &cheap_grids[_i / 3];
    const int mode = _i % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    rng_t rg = {6300 + (uint64_t)_i};
    Arrays A = arrays_new(N, &rg);
    double *x = A.x, *y = A.y, *gx = A.gx, *gy = A.gy, *hx = A.hx, *hy = A.hy, *sx = A.sx, *sy = A.sy;
    CK_OK(call_cheap(G, 1, mode, x, y, NULL, 1, 0, gx, gy));
    double v = 0;
    CK_OK(call_cheap(G, 2, mode, x, y, &v, 0.5, -2, hx, hy));
    const double vref = ref_cheap(G, NULL, mode, x, y);
    ck_assert_msg(reldiff(v, vref, 1) < 1e-12, "%zux%zux%zu mode %d cheap value %.15g, reference %.15g", G->n[0],
                  G->n[1], G->n[2], mode, v, vref);
    const double h = 1e-3;
    for (int arr = 0; arr < 2; ++arr) {
        double *a = arr ? y : x, *g = arr ? gy : gx, *gv = arr ? hy : hx, *st = arr ? sy : sx;
        for (size_t q = 0; q < N; ++q) {
            const double fd = central_diff(ref_cheap, G, mode, x, y, a, q, h);
            ck_assert_msg(fabs(g[q] - fd) <= 1e-7 * (1 + fabs(fd)) &&
                              fabs(gv[q] - (-2 * st[q] + 0.5 * g[q])) <= 1e-12 * (1 + fabs(st[q]) + fabs(g[q])),
                          "%zux%zux%zu mode %d cheap %s grad at (%zu, %zu, %zu): grad %.12g value_grad %.12g (start "
                          "%.12g) FD %.12g",
                          G->n[0], G->n[1], G->n[2], mode, arr ? "y" : "x", q % G->n[0], q / G->n[0] % G->n[1],
                          q / (G->n[0] * G->n[1]), g[q], gv[q], st[q], fd);
        }
    }
    arrays_free(&A);
}
END_TEST

/* call_NAME(G, KIND, MODE, X, Y, V, ALPHA, BETA, GX, GY): reduction NAME
 * of pair.stn (one parameter, eps = PAIR_EPS): KIND 0 its value, 1 its
 * gradients, 2 both, 2D or 3D as G says */
#define STN_CALLER(STN, NAME)                                                                                          \
    static int call_##NAME(const Grid *G, int kind, int mode, const double *x, const double *y, double *v,          \
                           double alpha, double beta, double *gx, double *gy)                                        \
    {                                                                                                                \
        const size_t *n = G->n;                                                                                      \
        const double eps = PAIR_EPS;                                                                                 \
        if (G->D == 2) {                                                                                             \
            if (kind == 0) return stenc_##STN##_##NAME##_value_2d_f64(n[0], n[1], mode, x, y, eps, v);               \
            if (kind == 1) return stenc_##STN##_##NAME##_grad_2d_f64(n[0], n[1], mode, x, y, eps, alpha, beta, gx, gy); \
            return stenc_##STN##_##NAME##_value_grad_2d_f64(n[0], n[1], mode, x, y, eps, v, alpha, beta, gx, gy);   \
        }                                                                                                            \
        if (kind == 0) return stenc_##STN##_##NAME##_value_3d_f64(n[0], n[1], n[2], mode, x, y, eps, v);             \
        if (kind == 1) return stenc_##STN##_##NAME##_grad_3d_f64(n[0], n[1], n[2], mode, x, y, eps, alpha, beta, gx, gy); \
        return stenc_##STN##_##NAME##_value_grad_3d_f64(n[0], n[1], n[2], mode, x, y, eps, v, alpha, beta, gx, gy); \
    }
#define PAIR_CALLER(NAME) STN_CALLER(pair, NAME)

/* field: sum over the mode's points of (Lx[p+2ex] - Lx[p-ex])^2 +
 * (Lx[p+ey] - Lx[p-ey]) Sy[p] + Sy[p+ex+ey] x[p] [+ Lx[p+ez] Sy[p-ez]],
 * L = log(eps + v^2), S = sqrt(eps + v^2); with ABS the sum of the terms'
 * magnitudes (the scale of a float value's rounding) */
static double ref_field_sum(const Grid *G, const long *near, int mode, const double *x, const double *y, int abs_terms)
{
    const double eps = PAIR_EPS;
    /* the taps: x in [-1, 2], y in [-1, 1], z in [-1, 1] */
    const Box B = ref_box(G, near, mode, (const long[3]){-1, -1, -1}, (const long[3]){2, 1, 1});
#define REF_L(oi, oj, ok) log(eps + ref_at(G, x, i, j, k, oi, oj, ok, mode) * ref_at(G, x, i, j, k, oi, oj, ok, mode))
#define REF_S(oi, oj, ok) sqrt(eps + ref_at(G, y, i, j, k, oi, oj, ok, mode) * ref_at(G, y, i, j, k, oi, oj, ok, mode))
    double s = 0;
    REF_POINTS(B) {
        const double a = REF_L(2, 0, 0) - REF_L(-1, 0, 0);
        double t[3] = {a * a, (REF_L(0, 1, 0) - REF_L(0, -1, 0)) * REF_S(0, 0, 0),
                       REF_S(1, 1, 0) * ref_at(G, x, i, j, k, 0, 0, 0, mode)};
        if (G->D == 3) t[2] += REF_L(0, 0, 1) * REF_S(0, 0, -1);
        for (int u = 0; u < 3; ++u) s += abs_terms ? fabs(t[u]) : t[u];
    }
#undef REF_L
#undef REF_S
    return s;
}
static double ref_field(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    return ref_field_sum(G, near, mode, x, y, 0);
}

PAIR_CALLER(field)

/* the grids of pair's test, and two with more rows a plane */
static const Grid field_grids[] = {
    {{1100, 7, 1}, 2}, {{9, 13, 1}, 2}, {{530, 5, 4}, 3}, {{17, 9, 8}, 3}, {{300, 41, 1}, 2}, {{70, 33, 5}, 3},
};
enum { NFIELD = sizeof field_grids / sizeof field_grids[0] };

/* field's f64 and f32 values against the reference (SX, SY: scratch) */
static void check_field_values(const Grid *G, int mode, const double *x, const double *y, double *sx, double *sy)
{
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    double v = 0;
    CK_OK(call_field(G, 0, mode, x, y, &v, 0, 0, NULL, NULL));
    const double vref = ref_field(G, NULL, mode, x, y);
    ck_assert_msg(reldiff(v, vref, 1) < 1e-12, "%zux%zux%zu mode %d field value %.15g, reference %.15g", G->n[0],
                  G->n[1], G->n[2], mode, v, vref);
    /* f32: the inputs rounded to float, the reference of those */
    float *xf = malloc(N * sizeof *xf), *yf = malloc(N * sizeof *yf);
    ck_assert(xf && yf);
    for (size_t q = 0; q < N; ++q) xf[q] = (float)x[q], yf[q] = (float)y[q], sx[q] = xf[q], sy[q] = yf[q];
    double vf = 0;
    if (G->D == 2) CK_OK(stenc_pair_field_value_2d_f32(G->n[0], G->n[1], mode, xf, yf, (float)PAIR_EPS, &vf));
    else CK_OK(stenc_pair_field_value_3d_f32(G->n[0], G->n[1], G->n[2], mode, xf, yf, (float)PAIR_EPS, &vf));
    const double vfref = ref_field(G, NULL, mode, sx, sy), scale = ref_field_sum(G, NULL, mode, sx, sy, 1);
    ck_assert_msg(fabs(vf - vfref) <= 1e-5 * scale, "%zux%zux%zu mode %d field f32 value %.9g, reference %.9g (terms %.3g)",
                  G->n[0], G->n[1], G->n[2], mode, vf, vfref, scale);
    free(xf); free(yf);
}

/* grids of more rows than the value's 256 chunks: each chunk's rows of a
 * plane run through one row function, whose fields' rows then carry from
 * row to row (values only: a gradient check's central differences at
 * every point would take minutes in the sanitizer build);
 * and grids narrower than the taps' reach along x, whose rows have no
 * x-interior (no strip: their ends alone) */
static const Grid field_run_grids[] = {
    {{16, 2000, 1}, 2}, {{1030, 700, 1}, 2}, {{24, 300, 6}, 3}, {{19, 64, 40}, 3}, {{2, 600, 1}, 2}, {{3, 40, 9}, 3},
};
enum { NFIELDRUN = sizeof field_run_grids / sizeof field_run_grids[0] };

START_TEST(field_runs)
{
    const Grid *G = &field_run_grids[_i / 3];
    const int mode = _i % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    rng_t rg = {8500 + (uint64_t)_i};
    Arrays A = arrays_new(N, &rg);
    double v = 0;
    if (mode == STENC_VALID && G->n[0] < 4) { /* no valid point: the entry says so */
        ck_assert_int_eq(call_field(G, 0, mode, A.x, A.y, &v, 0, 0, NULL, NULL), STENC_ERR_GRID);
        arrays_free(&A);
        return;
    }
    check_field_values(G, mode, A.x, A.y, A.sx, A.sy);
    arrays_free(&A);
}
END_TEST

/* field's values (value, value_grad; f64 and f32) against the reference,
 * its gradients at every point against central differences of the
 * reference */
START_TEST(field_value_and_gradients)
{
    const Grid *G = &field_grids[_i / 3];
    const int mode = _i % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    rng_t rg = {7400 + (uint64_t)_i};
    Arrays A = arrays_new(N, &rg);
    double *x = A.x, *y = A.y, *gx = A.gx, *gy = A.gy, *hx = A.hx, *hy = A.hy, *sx = A.sx, *sy = A.sy;
    double vg = 0;
    check_field_values(G, mode, x, y, sx, sy);
    const double vref = ref_field(G, NULL, mode, x, y);
    memcpy(sx, hx, N * sizeof *sx);
    memcpy(sy, hy, N * sizeof *sy);
    CK_OK(call_field(G, 1, mode, x, y, NULL, 1, 0, gx, gy));
    CK_OK(call_field(G, 2, mode, x, y, &vg, 0.5, -2, hx, hy));
    ck_assert_msg(reldiff(vg, vref, 1) < 1e-12, "field value_grad value %.15g, reference %.15g", vg, vref);
    check_gradients(ref_field, G, mode, &A, "field");
    arrays_free(&A);
}
END_TEST

/* reach: sum over the mode's points of (S x[p-2ey] - S y[p])^2 +
 * 1 / ((eps + y[p+ey]^2) (eps + x[p+2ez]^2)) (2D: x[p+2ex]), S v =
 * sqrt(eps + v^2) */
static double ref_reach(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const double eps = PAIR_EPS;
    /* the taps: y in [-2, 1]; x in [0, 2] (2D) or z in [0, 2] (3D) */
    const Box B = ref_box(G, near, mode, (const long[3]){0, -2, 0}, (const long[3]){G->D == 3 ? 0 : 2, 1, 2});
    double s = 0;
    REF_POINTS(B) {
        const double a = ref_at(G, x, i, j, k, 0, -2, 0, mode), b = ref_at(G, y, i, j, k, 0, 0, 0, mode);
        const double c = ref_at(G, y, i, j, k, 0, 1, 0, mode);
        const double e = G->D == 3 ? ref_at(G, x, i, j, k, 0, 0, 2, mode) : ref_at(G, x, i, j, k, 2, 0, 0, mode);
        const double t = sqrt(eps + a * a) - sqrt(eps + b * b);
        s += t * t + 1 / ((eps + c * c) * (eps + e * e));
    }
    return s;
}

PAIR_CALLER(reach)

/* pair's grids, two with more rows and planes (runs of rows, several
 * planes past the value's interior) */
static const Grid reach_grids[] = {
    {{1100, 7, 1}, 2}, {{9, 13, 1}, 2}, {{530, 5, 4}, 3}, {{17, 9, 8}, 3}, {{20, 40, 6}, 3}, {{13, 6, 30}, 3},
};
enum { NREACH = sizeof reach_grids / sizeof reach_grids[0] };

typedef int (*PairCall)(const Grid *G, int kind, int mode, const double *x, const double *y, double *v, double alpha,
                        double beta, double *gx, double *gy);

/* a reduction's value and value_grad value (CALL) against its reference
 * REF, its gradients against central differences of REF; mode and grid
 * (of GRIDS) from the loop index I */
static void check_reduction(const char *name, PairCall call, RefFn ref, const Grid *grids, int I, uint64_t seed)
{
    const Grid *G = &grids[I / 3];
    const int mode = I % 3;
    const size_t N = G->n[0] * G->n[1] * G->n[2];
    rng_t rg = {seed + (uint64_t)I};
    Arrays A = arrays_new(N, &rg);
    double v = 0, vg = 0;
    CK_OK(call(G, 0, mode, A.x, A.y, &v, 0, 0, NULL, NULL));
    CK_OK(call(G, 1, mode, A.x, A.y, NULL, 1, 0, A.gx, A.gy));
    CK_OK(call(G, 2, mode, A.x, A.y, &vg, 0.5, -2, A.hx, A.hy));
    const double vref = ref(G, NULL, mode, A.x, A.y);
    ck_assert_msg(reldiff(v, vref, 1) < 1e-12 && reldiff(vg, vref, 1) < 1e-12,
                  "%zux%zux%zu mode %d %s value %.15g, value_grad value %.15g, reference %.15g", G->n[0], G->n[1],
                  G->n[2], mode, name, v, vg, vref);
    check_gradients(ref, G, mode, &A, name);
    arrays_free(&A);
}

/* reach (the value_grad's rows whose reads leave the grid, or whose row
 * two below does not roll, count their own values) */
START_TEST(reach_value_and_gradients) { check_reduction("reach", call_reach, ref_reach, reach_grids, _i, 9600); }
END_TEST

/* oneside: sum over the mode's points of sqrt(eps + (x[p+ex-ey] -
 * y[p+2ex-2ez])^2) + x[p+2ex-2ey-ez] y[p+ex-ey] (2D: no z offsets) */
static double ref_oneside(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const double eps = PAIR_EPS;
    /* the taps: x in [0, 2], y in [-2, 0], z in [-2, 0] */
    const Box B = ref_box(G, near, mode, (const long[3]){0, -2, -2}, (const long[3]){2, 0, 0});
    const long z2 = G->D == 3 ? -2 : 0, z1 = G->D == 3 ? -1 : 0;
    double s = 0;
    REF_POINTS(B) {
        const double a = ref_at(G, x, i, j, k, 1, -1, 0, mode) - ref_at(G, y, i, j, k, 2, 0, z2, mode);
        s += sqrt(eps + a * a) + ref_at(G, x, i, j, k, 2, -2, z1, mode) * ref_at(G, y, i, j, k, 1, -1, 0, mode);
    }
    return s;
}

PAIR_CALLER(oneside)

/* oneside (reach's grids) */
START_TEST(oneside_value_and_gradients) { check_reduction("oneside", call_oneside, ref_oneside, reach_grids, _i, 10700); }
END_TEST

/* logtv: sum over the mode's points of sqrt(eps + sum_d (L x[p+e_d] -
 * L x[p])^2) (1 + y[p]^2), L v = log(eps + v^2) */
static double ref_logtv(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const double eps = PAIR_EPS;
    const Box B = ref_box(G, near, mode, (const long[3]){0, 0, 0}, (const long[3]){1, 1, 1}); /* every offset in [0, 1] */
    double s = 0;
    REF_POINTS(B) {
        const double x0 = ref_at(G, x, i, j, k, 0, 0, 0, mode), l0 = log(eps + x0 * x0);
        double q = eps;
        for (int d = 0; d < G->D; ++d) {
            const double xd = ref_at(G, x, i, j, k, d == 0, d == 1, d == 2, mode);
            const double t = log(eps + xd * xd) - l0;
            q += t * t;
        }
        const double y0 = ref_at(G, y, i, j, k, 0, 0, 0, mode);
        s += sqrt(q) * (1 + y0 * y0);
    }
    return s;
}

PAIR_CALLER(logtv)

/* logtv (reach's grids: rows of 1100 points, in strips where
 * STENC_RSTRIP is small, each strip's call extending its field rows' tags;
 * several rows and planes) */
START_TEST(logtv_value_and_gradients) { check_reduction("logtv", call_logtv, ref_logtv, reach_grids, _i, 11800); }
END_TEST

/* sel's hub (tests/stencils/sel.stn): sum over the mode's points of h(q)
 * + eps y[p], h(q) = q/2 for q <= 1, sqrt(q) - 1/2 above, q = (x[p+ex] -
 * y[p])^2 + (x[p+ey] - x[p])^2 [+ (y[p+ez] - x[p])^2].  h is C1 at q = 1,
 * so a central difference across it errs by about h, far inside the
 * tolerance. */
static double ref_hub(const Grid *G, const long *near, int mode, const double *x, const double *y)
{
    const Box B = ref_box(G, near, mode, (const long[3]){0, 0, 0}, (const long[3]){1, 1, 1}); /* every offset in [0, 1] */
    double s = 0;
    REF_POINTS(B) {
        const double x0 = ref_at(G, x, i, j, k, 0, 0, 0, mode), y0 = ref_at(G, y, i, j, k, 0, 0, 0, mode);
        const double a = ref_at(G, x, i, j, k, 1, 0, 0, mode) - y0, b = ref_at(G, x, i, j, k, 0, 1, 0, mode) - x0;
        double q = a * a + b * b;
        if (G->D == 3) {
            const double c = ref_at(G, y, i, j, k, 0, 0, 1, mode) - x0;
            q += c * c;
        }
        s += (q <= 1 ? 0.5 * q : sqrt(q) - 0.5) + PAIR_EPS * y0;
    }
    return s;
}

STN_CALLER(sel, hub)

/* hub (reach's grids; the data in [-1, 1] put q on both sides of 1) */
START_TEST(hub_value_and_gradients) { check_reduction("hub", call_hub, ref_hub, reach_grids, _i, 12900); }
END_TEST

int main(void)
{
    Suite *s = suite_create("pair");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, pair_value_and_gradients, 0, NGRID * 3);
    tcase_add_loop_test(tc, quad_value_and_gradients, 0, NGRID * 3);
    tcase_add_loop_test(tc, cheap_value_and_gradients, 0, NCHEAP * 3);
    tcase_add_loop_test(tc, field_value_and_gradients, 0, NFIELD * 3);
    tcase_add_loop_test(tc, field_runs, 0, NFIELDRUN * 3);
    tcase_add_loop_test(tc, reach_value_and_gradients, 0, NREACH * 3);
    tcase_add_loop_test(tc, oneside_value_and_gradients, 0, NREACH * 3);
    tcase_add_loop_test(tc, logtv_value_and_gradients, 0, NREACH * 3);
    tcase_add_loop_test(tc, hub_value_and_gradients, 0, NREACH * 3);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
