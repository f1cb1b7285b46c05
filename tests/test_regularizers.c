/* The regularizer library: every regularizer x {2D, 3D} x {float, double} x
 * {valid, neumann, periodic}.  Values against independent hand-written
 * references; gradients against central finite differences of the reference
 * (double); a Taylor test; fused value_grad against value and grad; the
 * alpha/beta contract with NaN-poisoned outputs; the smallest grids; grids
 * large enough for several rows per row chunk, several strips per row and
 * several y tiles of the 3D row order (every gradient component against
 * local finite differences); and
 * bitwise-identical results with 1 and 2 OpenMP threads. */
#include "testutil.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include "tv.h"
#include "tv_central.h"
#include "tv_aniso.h"
#include "huber.h"
#include "tikhonov.h"
#include "goods.h"
#include "hessian.h"
#include "tv_weighted.h"

/* ---------------- independent reference ---------------- */

typedef struct {
    const double *x, *m;
    size_t n[3];
    int D, mode;
    long p[3];
} Pt;

TEST_REF static long map1(long v, long n, int mode)
{
    if (mode == STENC_PERIODIC) { long r = v % n; return r < 0 ? r + n : r; }
    if (mode == STENC_NEUMANN) return v < 0 ? 0 : (v >= n ? n - 1 : v);
    return v;
}
TEST_REF static double X(const Pt *P, long dx, long dy, long dz)
{
    long i = map1(P->p[0] + dx, (long)P->n[0], P->mode), j = map1(P->p[1] + dy, (long)P->n[1], P->mode);
    long k = P->D == 3 ? map1(P->p[2] + dz, (long)P->n[2], P->mode) : 0;
    return P->x[(size_t)i + P->n[0] * ((size_t)j + P->n[1] * (size_t)k)];
}
static const long E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
TEST_REF static double fwd(const Pt *P, int d) { return X(P, E[d][0], E[d][1], E[d][2]) - X(P, 0, 0, 0); }
TEST_REF static double cen(const Pt *P, int d) { return X(P, E[d][0], E[d][1], E[d][2]) - X(P, -E[d][0], -E[d][1], -E[d][2]); }
TEST_REF static double lap(const Pt *P, int d) { return X(P, E[d][0], E[d][1], E[d][2]) + X(P, -E[d][0], -E[d][1], -E[d][2]) - 2 * X(P, 0, 0, 0); }
TEST_REF static double mixed(const Pt *P, int d, int e)
{
    return X(P, E[d][0] + E[e][0], E[d][1] + E[e][1], E[d][2] + E[e][2]) - X(P, E[d][0], E[d][1], E[d][2]) -
           X(P, E[e][0], E[e][1], E[e][2]) + X(P, 0, 0, 0);
}

/* w = {wx, wy, wz}, c = eps or delta */
TEST_REF static double f_tv(const Pt *P, const double *w, double c)
{ double s = c; for (int d = 0; d < P->D; ++d) s += w[d] * fwd(P, d) * fwd(P, d); return sqrt(s); }
TEST_REF static double f_tvc(const Pt *P, const double *w, double c)
{ double s = c; for (int d = 0; d < P->D; ++d) s += w[d] * cen(P, d) * cen(P, d); return sqrt(s); }
TEST_REF static double f_tva(const Pt *P, const double *w, double c)
{ double s = 0; for (int d = 0; d < P->D; ++d) s += sqrt(c + w[d] * fwd(P, d) * fwd(P, d)); return s; }
TEST_REF static double f_huber(const Pt *P, const double *w, double c)
{
    double s = 0; for (int d = 0; d < P->D; ++d) s += w[d] * fwd(P, d) * fwd(P, d);
    double r = sqrt(s);
    return r <= c ? r * r / (2 * c) : r - c / 2;
}
TEST_REF static double f_lap(const Pt *P, const double *w, double c)
{ (void)c; double s = 0; for (int d = 0; d < P->D; ++d) s += w[d] * lap(P, d); return s * s; }
TEST_REF static double f_grad(const Pt *P, const double *w, double c)
{ (void)c; double s = 0; for (int d = 0; d < P->D; ++d) s += w[d] * fwd(P, d) * fwd(P, d); return s; }
TEST_REF static double f_id(const Pt *P, const double *w, double c) { (void)w; (void)c; double v = X(P, 0, 0, 0); return v * v; }
TEST_REF static double f_goods(const Pt *P, const double *w, double c)
{
    double s = 0;
    for (int d = 0; d < P->D; ++d) {
        double a = sqrt(X(P, E[d][0], E[d][1], E[d][2]) + c) - sqrt(X(P, 0, 0, 0) + c);
        s += w[d] * a * a;
    }
    return s;
}
TEST_REF static double f_hess(const Pt *P, const double *w, double c)
{
    double s = c;
    for (int d = 0; d < P->D; ++d) s += w[d] * w[d] * lap(P, d) * lap(P, d);
    for (int d = 0; d < P->D; ++d)
        for (int e = d + 1; e < P->D; ++e) s += 2 * w[d] * w[e] * mixed(P, d, e) * mixed(P, d, e);
    return sqrt(s);
}
TEST_REF static double f_tvw(const Pt *P, const double *w, double c)
{
    size_t q = (size_t)P->p[0] + P->n[0] * ((size_t)P->p[1] + P->n[1] * (size_t)P->p[2]);
    return P->m[q] * f_tv(P, w, c);
}

typedef double (*ref_f)(const Pt *, const double *, double);

/* ---------------- wrappers around the generated entry points ---------------- */

/* what: 0 value, 1 grad, 2 value_grad; p = {wx, wy, wz, c} */
typedef int (*wrap_f)(int what, size_t nx, size_t ny, size_t nz, int mode, const void *x, const void *m, const double *p,
                      double *value, double alpha, double beta, void *g);

#define W_ALL(NAME, BASE, A2, A3)                                                                                        \
    static int NAME##_f64(int what, size_t nx, size_t ny, size_t nz, int mode, const void *xv, const void *mv,            \
                          const double *p, double *value, double alpha, double beta, void *gv)                          \
    {                                                                                                                    \
        const double *x = xv, *m = mv; double *g = gv; (void)m; (void)p;                                                        \
        if (nz == 0) {                                                                                                   \
            if (what == 0) return stenc_##BASE##_value_2d_f64(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), value);          \
            if (what == 1) return stenc_##BASE##_grad_2d_f64(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), alpha, beta, g);   \
            return stenc_##BASE##_value_grad_2d_f64(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), value, alpha, beta, g);     \
        }                                                                                                                \
        if (what == 0) return stenc_##BASE##_value_3d_f64(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), value);   \
        if (what == 1) return stenc_##BASE##_grad_3d_f64(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), alpha, beta, g); \
        return stenc_##BASE##_value_grad_3d_f64(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), value, alpha, beta, g); \
    }                                                                                                                    \
    static int NAME##_f32(int what, size_t nx, size_t ny, size_t nz, int mode, const void *xv, const void *mv,            \
                          const double *pd, double *value, double alpha_, double beta_, void *gv)                       \
    {                                                                                                                    \
        const float *x = xv, *m = mv; float *g = gv; (void)m;                                                            \
        float p[4] = {(float)pd[0], (float)pd[1], (float)pd[2], (float)pd[3]}; (void)p;                                         \
        float alpha = (float)alpha_, beta = (float)beta_;                                                                \
        if (nz == 0) {                                                                                                   \
            if (what == 0) return stenc_##BASE##_value_2d_f32(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), value);          \
            if (what == 1) return stenc_##BASE##_grad_2d_f32(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), alpha, beta, g);   \
            return stenc_##BASE##_value_grad_2d_f32(nx, ny, mode, A2(x, m, p[0], p[1], p[3]), value, alpha, beta, g);     \
        }                                                                                                                \
        if (what == 0) return stenc_##BASE##_value_3d_f32(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), value);   \
        if (what == 1) return stenc_##BASE##_grad_3d_f32(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), alpha, beta, g); \
        return stenc_##BASE##_value_grad_3d_f32(nx, ny, nz, mode, A3(x, m, p[0], p[1], p[2], p[3]), value, alpha, beta, g); \
    }

#define A_W2(x, m, a, b, c) x, a, b, c
#define A_W3(x, m, a, b, c, d) x, a, b, c, d
#define A_N2(x, m, a, b, c) x, a, b
#define A_N3(x, m, a, b, c, d) x, a, b, c
#define A_X2(x, m, a, b, c) x
#define A_X3(x, m, a, b, c, d) x
#define A_M2(x, m, a, b, c) x, m, a, b, c
#define A_M3(x, m, a, b, c, d) x, m, a, b, c, d

W_ALL(w_tv, tv, A_W2, A_W3)
W_ALL(w_tvc, tv_central, A_W2, A_W3)
W_ALL(w_tva, tv_aniso, A_W2, A_W3)
W_ALL(w_huber, huber, A_W2, A_W3)
W_ALL(w_lap, tikhonov_laplace, A_N2, A_N3)
W_ALL(w_grad, tikhonov_gradient, A_N2, A_N3)
W_ALL(w_id, tikhonov_identity, A_X2, A_X3)
W_ALL(w_goods, goods, A_W2, A_W3)
W_ALL(w_hess, hessian, A_W2, A_W3)
W_ALL(w_tvw, tv_weighted, A_M2, A_M3)

typedef struct {
    const char *name;
    ref_f ref;
    wrap_f f64, f32;
    int lo, hi;        /* footprint: offsets lo..hi in every dimension used */
    double c;          /* eps or delta */
    double xlo, xhi;   /* data range */
} Reg;

static const Reg regs[] = {
    {"tv", f_tv, w_tv_f64, w_tv_f32, 0, 1, 1e-2, -1, 1},
    {"tv_central", f_tvc, w_tvc_f64, w_tvc_f32, -1, 1, 1e-2, -1, 1},
    {"tv_aniso", f_tva, w_tva_f64, w_tva_f32, 0, 1, 1e-2, -1, 1},
    {"huber", f_huber, w_huber_f64, w_huber_f32, 0, 1, 0.6, -1, 1},
    {"tikhonov_laplace", f_lap, w_lap_f64, w_lap_f32, -1, 1, 0, -1, 1},
    {"tikhonov_gradient", f_grad, w_grad_f64, w_grad_f32, 0, 1, 0, -1, 1},
    {"tikhonov_identity", f_id, w_id_f64, w_id_f32, 0, 0, 0, -1, 1},
    {"goods", f_goods, w_goods_f64, w_goods_f32, 0, 1, 1e-2, 0.1, 1},
    {"hessian", f_hess, w_hess_f64, w_hess_f32, -1, 1, 1e-2, -1, 1},
    {"tv_weighted", f_tvw, w_tvw_f64, w_tvw_f32, 0, 1, 1e-2, -1, 1},
};
#define NREG (sizeof regs / sizeof *regs)
static const double W[4] = {0.7, 1.3, 0.9, 0};

typedef struct {
    size_t n[3];
    int D;
    size_t N;
} Grid;

static double ref_value(const Reg *r, const Grid *G, int mode, const double *x, const double *m)
{
    Pt P = {x, m, {G->n[0], G->n[1], G->D == 3 ? G->n[2] : 1}, G->D, mode, {0, 0, 0}};
    double s = 0;
    long lo = mode == STENC_VALID ? -r->lo : 0;
    for (long k = 0; k < (G->D == 3 ? (long)G->n[2] : 1); ++k)
        for (long j = 0; j < (long)G->n[1]; ++j)
            for (long i = 0; i < (long)G->n[0]; ++i) {
                long q[3] = {i, j, k};
                int ok = 1;
                if (mode == STENC_VALID)
                    for (int d = 0; d < G->D; ++d)
                        if (q[d] < lo || q[d] + r->hi >= (long)G->n[d]) ok = 0;
                if (!ok) continue;
                P.p[0] = i; P.p[1] = j; P.p[2] = k;
                s += r->ref(&P, W, r->c);
            }
    return s;
}

static int call(const Reg *r, int f32, int what, const Grid *G, int mode, const double *x, const double *m,
                double *value, double alpha, double beta, double *g)
{
    double p[4] = {W[0], W[1], W[2], r->c};
    size_t nz = G->D == 3 ? G->n[2] : 0;
    if (!f32) return r->f64(what, G->n[0], G->n[1], nz, mode, x, m, p, value, alpha, beta, g);
    float *xf = falloc(G->N), *mf = falloc(G->N), *gf = falloc(G->N);
    to_float(xf, x, G->N);
    to_float(mf, m, G->N);
    if (g) to_float(gf, g, G->N);
    int rc = r->f32(what, G->n[0], G->n[1], nz, mode, xf, mf, p, value, alpha, beta, g ? gf : NULL);
    if (g) for (size_t i = 0; i < G->N; ++i) g[i] = gf[i];
    free(xf); free(mf); free(gf);
    return rc;
}

static const char *mname(int mode) { return stenc_mode_name(mode); }

static void setup(Grid *G, int D)
{
    G->D = D;
    if (D == 2) { G->n[0] = 13; G->n[1] = 7; G->n[2] = 1; }
    else { G->n[0] = 7; G->n[1] = 6; G->n[2] = 5; }
    G->N = G->n[0] * G->n[1] * G->n[2];
}

/* value (f64 and f32) against the reference, gradient against central FD */
static void check_reg(const Reg *r, int D, int mode)
{
    Grid G;
    setup(&G, D);
    rng_t rg = {1000 + (uint64_t)D * 10 + (uint64_t)mode};
    double *x = dalloc(G.N), *m = dalloc(G.N), *g = dalloc(G.N), *xp = dalloc(G.N);
    dfill(x, G.N, &rg, r->xlo, r->xhi);
    dfill(m, G.N, &rg, 0.5, 2);
    double want = ref_value(r, &G, mode, x, m), got = NAN, gotf = NAN;
    CK_OK(call(r, 0, 0, &G, mode, x, m, &got, 0, 0, NULL));
    ck_assert_msg(reldiff(got, want, 1e-300) < 1e-12, "%s %dD %s value f64: %.17g vs reference %.17g", r->name, D, mname(mode), got, want);
    CK_OK(call(r, 1, 0, &G, mode, x, m, &gotf, 0, 0, NULL));
    ck_assert_msg(reldiff(gotf, want, 1e-300) < 1e-5, "%s %dD %s value f32: %.9g vs reference %.9g", r->name, D, mname(mode), gotf, want);
    /* gradient vs central differences of the reference */
    dnan(g, G.N);
    CK_OK(call(r, 0, 1, &G, mode, x, m, NULL, 1, 0, g));
    double gmax = 0;
    for (size_t q = 0; q < G.N; ++q) gmax = fmax(gmax, fabs(g[q]));
    const double h = 1e-6;
    for (size_t q = 0; q < G.N; ++q) {
        memcpy(xp, x, G.N * sizeof *x);
        xp[q] = x[q] + h;
        double fp = ref_value(r, &G, mode, xp, m);
        xp[q] = x[q] - h;
        double fm = ref_value(r, &G, mode, xp, m);
        double fd = (fp - fm) / (2 * h);
        ck_assert_msg(fabs(fd - g[q]) <= 1e-6 * fmax(gmax, 1e-3), "%s %dD %s grad at %zu: %.12g vs FD %.12g", r->name, D,
                      mname(mode), q, g[q], fd);
    }
    /* float gradient against double */
    double *gf = dalloc(G.N);
    dnan(gf, G.N);
    CK_OK(call(r, 1, 1, &G, mode, x, m, NULL, 1, 0, gf));
    for (size_t q = 0; q < G.N; ++q)
        ck_assert_msg(fabs(gf[q] - g[q]) <= 1e-4 * fmax(gmax, 1e-3), "%s %dD %s grad f32 at %zu: %.8g vs %.8g", r->name, D,
                      mname(mode), q, gf[q], g[q]);
    /* Taylor: the first-order remainder shrinks as h^2 */
    double *v = dalloc(G.N);
    dfill(v, G.N, &rg, -1, 1);
    double gv = ddot(g, v, G.N), prev = 0;
    int ok = 0;
    for (int it = 0; it < 4; ++it) {
        double hh = 1e-2 / (double)(1 << it), fv;
        for (size_t q = 0; q < G.N; ++q) xp[q] = x[q] + hh * v[q];
        CK_OK(call(r, 0, 0, &G, mode, xp, m, &fv, 0, 0, NULL));
        double rem = fabs(fv - got - hh * gv);
        if (it > 0 && prev > 1e-11) {
            double ratio = prev / rem;
            ck_assert_msg(ratio > 3.0 && ratio < 5.5, "%s %dD %s Taylor ratio %.3f at h=%g (remainders %.3g, %.3g)", r->name,
                          D, mname(mode), ratio, hh, prev, rem);
            ++ok;
        }
        prev = rem;
    }
    /* the identity Tikhonov term is quadratic: its remainder is exactly h^2|v|^2 */
    ck_assert_msg(ok >= 2 || prev < 1e-11, "%s: Taylor test had too few usable steps", r->name);
    free(x); free(m); free(g); free(xp); free(gf); free(v);
}

/* fused value_grad == value and grad; alpha/beta; NaN-poisoned beta == 0 */
static void check_fused(const Reg *r, int D, int mode, int f32)
{
    Grid G;
    setup(&G, D);
    rng_t rg = {2000 + (uint64_t)D * 10 + (uint64_t)mode};
    double *x = dalloc(G.N), *m = dalloc(G.N), *g1 = dalloc(G.N), *g2 = dalloc(G.N), *g0 = dalloc(G.N), *g3 = dalloc(G.N);
    dfill(x, G.N, &rg, r->xlo, r->xhi);
    dfill(m, G.N, &rg, 0.5, 2);
    dfill(g0, G.N, &rg, -1, 1);
    double v1, v2;
    CK_OK(call(r, f32, 0, &G, mode, x, m, &v1, 0, 0, NULL));
    dnan(g1, G.N);
    CK_OK(call(r, f32, 1, &G, mode, x, m, NULL, 1, 0, g1));
    dnan(g2, G.N);
    CK_OK(call(r, f32, 2, &G, mode, x, m, &v2, 1, 0, g2));
    /* float values sum strips of 256 points in float (docs/language.md,
     * "Accuracy of values"), value_grad sums in double: they agree to the
     * strips' bound, 256/8 * 2^-24 = 1.9e-6; double values to 1e-12 */
    ck_assert_msg(reldiff(v1, v2, 1e-300) < (f32 ? 1.9e-6 : 1e-12), "%s %dD %s fused value %.17g vs %.17g", r->name, D,
                  mname(mode), v2, v1);
    double tol = f32 ? 1e-6 : 1e-14;
    double gmax = 0;
    for (size_t q = 0; q < G.N; ++q) gmax = fmax(gmax, fabs(g1[q]));
    for (size_t q = 0; q < G.N; ++q) {
        ck_assert_msg(!isnan(g1[q]) && !isnan(g2[q]), "%s: NaN left in the gradient (beta = 0 must overwrite)", r->name);
        ck_assert_msg(fabs(g1[q] - g2[q]) <= tol * fmax(gmax, 1e-3), "%s %dD %s fused grad differs at %zu", r->name, D, mname(mode), q);
    }
    /* G = beta*G + alpha*grad, from grad and from the fused entry (whose
     * interior loops have their own beta != 0 version) */
    for (int what = 1; what <= 2; ++what) {
        double v3 = v1;
        memcpy(g3, g0, G.N * sizeof *g0);
        CK_OK(call(r, f32, what, &G, mode, x, m, what == 2 ? &v3 : NULL, 2.0, 0.5, g3));
        ck_assert_msg(reldiff(v1, v3, 1e-300) < (f32 ? 1.9e-6 : 1e-12), "%s %dD %s fused value with beta %.17g vs %.17g",
                      r->name, D, mname(mode), v3, v1);
        for (size_t q = 0; q < G.N; ++q) {
            double want = 0.5 * g0[q] + 2.0 * g1[q];
            ck_assert_msg(fabs(g3[q] - want) <= (f32 ? 1e-5 : 1e-13) * fmax(fabs(want), 1), "%s alpha/beta (%s) at %zu: %g vs %g", r->name,
                          what == 2 ? "value_grad" : "grad", q, g3[q], want);
        }
    }
    free(x); free(m); free(g1); free(g2); free(g0); free(g3);
}

START_TEST(values_and_gradients)
{
    const Reg *r = &regs[_i / 6];
    int D = 2 + (_i % 6) / 3, mode = _i % 3;
    check_reg(r, D, mode);
}
END_TEST

START_TEST(fused_alpha_beta)
{
    const Reg *r = &regs[_i / 12];
    int D = 2 + (_i % 12) / 6, mode = (_i % 6) / 2, f32 = _i % 2;
    check_fused(r, D, mode, f32);
}
END_TEST

/* the smallest grids the stencils allow, and one below */
/* Float gradients of data with a large offset: the generated gradient keeps
 * the derived differences (x[i+1] - x[i]), so Tikhonov-gradient in float is
 * as accurate as the float data allow; a form that multiplies each tap by a
 * coefficient first (c*x[i] - a*x[i+1] ...) loses about |offset| * 1e-7 */
START_TEST(offset_data_accuracy)
{
    const Reg *r = NULL;
    for (size_t ri = 0; ri < NREG; ++ri)
        if (strcmp(regs[ri].name, "tikhonov_gradient") == 0) r = &regs[ri];
    ck_assert_ptr_nonnull(r);
    int D = 2 + _i / 3, mode = _i % 3;
    Grid G;
    setup(&G, D);
    rng_t rg = {9000 + (uint64_t)_i};
    double *x = dalloc(G.N), *m = dalloc(G.N), *g = dalloc(G.N), *gf = dalloc(G.N);
    dfill(x, G.N, &rg, 0, 1);
    for (size_t q = 0; q < G.N; ++q) x[q] = (double)(float)(1e4 + x[q]); /* exactly representable in float */
    dfill(m, G.N, &rg, 0.5, 2);
    CK_OK(call(r, 0, 1, &G, mode, x, m, NULL, 1, 0, g));
    CK_OK(call(r, 1, 1, &G, mode, x, m, NULL, 1, 0, gf));
    double gmax = 0, err = 0;
    for (size_t q = 0; q < G.N; ++q) {
        gmax = fmax(gmax, fabs(g[q]));
        err = fmax(err, fabs(gf[q] - g[q]));
    }
    ck_assert_msg(err <= 1e-5 * gmax, "tikhonov_gradient %dD %s: float gradient at offset 1e4 off by %.3g of its max", D, mname(mode),
                  err / gmax);
    free(x); free(m); free(g); free(gf);
}
END_TEST

START_TEST(smallest_grids)
{
    for (size_t ri = 0; ri < NREG; ++ri) {
        const Reg *r = &regs[ri];
        for (int D = 2; D <= 3; ++D) {
            for (int mode = 0; mode < 3; ++mode) {
                size_t mn = mode == STENC_VALID ? (size_t)(r->hi - r->lo + 1) : 1;
                Grid G = {{mn, mn, D == 3 ? mn : 1}, D, 0};
                G.N = G.n[0] * G.n[1] * G.n[2];
                rng_t rg = {77};
                double *x = dalloc(G.N), *m = dalloc(G.N), *g = dalloc(G.N), v;
                dfill(x, G.N, &rg, r->xlo, r->xhi);
                dfill(m, G.N, &rg, 0.5, 2);
                CK_OK(call(r, 0, 0, &G, mode, x, m, &v, 0, 0, NULL));
                double want = ref_value(r, &G, mode, x, m);
                ck_assert_msg(reldiff(v, want, 1e-300) < 1e-12, "%s %dD %s on %zu^D: %g vs %g", r->name, D, mname(mode), mn, v, want);
                dnan(g, G.N);
                CK_OK(call(r, 0, 2, &G, mode, x, m, &v, 1, 0, g));
                for (size_t q = 0; q < G.N; ++q) ck_assert(!isnan(g[q]));
                if (mn > 1) {
                    Grid S = G;
                    S.n[0] = mn - 1;
                    ck_assert_int_eq(call(r, 0, 0, &S, mode, x, m, &v, 0, 0, NULL), STENC_ERR_GRID);
                }
                free(x); free(m); free(g);
            }
        }
    }
}
END_TEST

/* The reference's sum over the points within 3 of q (wrapped for periodic):
 * every point whose value can depend on x[q] for these footprints */
static double ref_local(const Reg *r, const Grid *G, int mode, const double *x, const double *m, const long *q)
{
    Pt P = {x, m, {G->n[0], G->n[1], G->D == 3 ? G->n[2] : 1}, G->D, mode, {0, 0, 0}};
    double s = 0;
    long lo = mode == STENC_VALID ? -r->lo : 0;
    for (long dk = G->D == 3 ? -3 : 0; dk <= (G->D == 3 ? 3 : 0); ++dk)
        for (long dj = -3; dj <= 3; ++dj)
            for (long di = -3; di <= 3; ++di) {
                long p[3] = {q[0] + di, q[1] + dj, q[2] + dk}, ok = 1;
                for (int d = 0; d < G->D; ++d) {
                    long n = (long)G->n[d];
                    if (mode == STENC_PERIODIC) p[d] = (p[d] % n + n) % n;
                    else if (p[d] < 0 || p[d] >= n) ok = 0;
                    if (mode == STENC_VALID && (p[d] < lo || p[d] + r->hi >= n)) ok = 0;
                }
                if (!ok) continue;
                P.p[0] = p[0]; P.p[1] = p[1]; P.p[2] = p[2];
                s += r->ref(&P, W, r->c);
            }
    return s;
}

/* Grids with more rows than the kernels' 256 row chunks and rows wider than
 * one 256-point strip, so that chunks hold several rows (the gradients'
 * rolling rows of partials are reused from row to row, across planes in 3D)
 * and rows hold several strips: the value (of value and of value_grad)
 * against the reference, gradient
 * components (every row's ends and strip seams, a quarter of the rest)
 * against central differences of the reference, every component in f32
 * against f64. */
/* value, value_grad's value and gradient of regularizer r on grid G in
 * mode: against the reference, the gradient's components (every row's ends
 * and strip seams, one in EVERY of the rest) against central differences of
 * the reference, every component in f32 against f64 */
static void check_large(const Reg *r, const Grid *G, int mode, uint64_t seed, size_t every)
{
    const int D = G->D;
    rng_t rg = {seed};
    double *x = dalloc(G->N), *m = dalloc(G->N), *g = dalloc(G->N), *gf = dalloc(G->N), *xp = dalloc(G->N);
    dfill(x, G->N, &rg, r->xlo, r->xhi);
    dfill(m, G->N, &rg, 0.5, 2);
    /* the value too: on these grids every row's ends take the fast ends'
     * code (rows of at least end_min points), in 3D as well */
    double v = NAN, want = ref_value(r, G, mode, x, m);
    CK_OK(call(r, 0, 0, G, mode, x, m, &v, 0, 0, NULL));
    ck_assert_msg(reldiff(v, want, 1e-300) < 1e-12, "%s %dD %s value on %zux%zux%zu: %.17g vs reference %.17g", r->name, D,
                  mname(mode), G->n[0], G->n[1], G->n[2], v, want);
    /* value_grad's value: its own sums (the rolling rows count each row's
     * values where they compute it, strip by strip) */
    double vg = NAN;
    dnan(g, G->N);
    CK_OK(call(r, 0, 2, G, mode, x, m, &vg, 1, 0, g));
    ck_assert_msg(reldiff(vg, want, 1e-300) < 1e-12, "%s %dD %s value_grad value on %zux%zux%zu: %.17g vs reference %.17g",
                  r->name, D, mname(mode), G->n[0], G->n[1], G->n[2], vg, want);
    dnan(g, G->N);
    CK_OK(call(r, 0, 1, G, mode, x, m, NULL, 1, 0, g));
    double gmax = 0;
    for (size_t q = 0; q < G->N; ++q) gmax = fmax(gmax, fabs(g[q]));
    memcpy(xp, x, G->N * sizeof *x);
    const double h = 1e-6;
    for (size_t q = 0; q < G->N; ++q) {
        long c[3] = {(long)(q % G->n[0]), (long)(q / G->n[0] % G->n[1]), (long)(q / (G->n[0] * G->n[1]))};
        long nx = (long)G->n[0];
        if (q % every && c[0] >= 4 && c[0] < nx - 4 && (c[0] < 250 || c[0] > 262)) continue;
        xp[q] = x[q] + h;
        double fp = ref_local(r, G, mode, xp, m, c);
        xp[q] = x[q] - h;
        double fm = ref_local(r, G, mode, xp, m, c);
        xp[q] = x[q];
        double fd = (fp - fm) / (2 * h);
        ck_assert_msg(fabs(fd - g[q]) <= 1e-6 * fmax(gmax, 1e-3), "%s %dD %s grad at (%ld,%ld,%ld): %.12g vs FD %.12g", r->name, D,
                      mname(mode), c[0], c[1], c[2], g[q], fd);
    }
    dnan(gf, G->N);
    CK_OK(call(r, 1, 1, G, mode, x, m, NULL, 1, 0, gf));
    for (size_t q = 0; q < G->N; ++q)
        ck_assert_msg(fabs(gf[q] - g[q]) <= 1e-4 * fmax(gmax, 1e-3), "%s %dD %s grad f32 at %zu: %.8g vs %.8g", r->name, D,
                      mname(mode), q, gf[q], g[q]);
    free(x); free(m); free(g); free(gf); free(xp);
}

START_TEST(large_grids_gradient)
{
    const Reg *r = &regs[_i / 9];
    int shape = (_i / 3) % 3, D = shape ? 3 : 2, mode = _i % 3;
    Grid G;
    G.D = D;
    if (shape == 0) { G.n[0] = 300; G.n[1] = 300; G.n[2] = 1; }
    else if (shape == 1) { G.n[0] = 64; G.n[1] = 6; G.n[2] = 200; } /* ~5 rows per chunk, chunks across planes */
    else { G.n[0] = 2100; G.n[1] = 37; G.n[2] = 7; } /* 2.5D row order: the rolling gradients in y tiles of 15 (f64) and
                                                          31 (f32) rows, a short last tile (every kernel in tiles of 8 in
                                                          make check-sanitize); nz >= 7: the reference's 7-point window
                                                          must not wrap onto itself */
    G.N = G.n[0] * G.n[1] * G.n[2];
    check_large(r, &G, mode, 7000 + (uint64_t)_i, shape == 2 ? 64 : 4); /* a quarter (1/64 on the wide grid) */
}
END_TEST

/* A 3D grid of one plane (Neumann: no z differences), 2500 rows of 16
 * points: the jobs that keep rows a tile (rings, field rows) tile a single
 * plane too (runtime stenc_fit_tile_rows; 2 tiles of 1250 rows in f64 with
 * make's 1 MiB budget, 20 of 125 in make check-sanitize), the rest take it
 * whole */
START_TEST(one_plane_grids)
{
    const Reg *r = &regs[_i];
    Grid G = {{16, 2500, 1}, 3, 16 * 2500};
    check_large(r, &G, STENC_NEUMANN, 7500 + (uint64_t)_i, 16);
}
END_TEST

START_TEST(threads_bitwise)
{
#ifdef _OPENMP
    /* rows of several rolling strips (STENC_RSTRIP, 512) whose last strip
     * would be shorter than a vector: a row computed by its strips sums
     * its value as the row computed in one call (the catchup) does */
    Grid G = {{1041, 29, 1}, 2, 1041 * 29};
    rng_t rg = {5};
    double *x = dalloc(G.N), *m = dalloc(G.N), *g1 = dalloc(G.N), *g2 = dalloc(G.N);
    dfill(x, G.N, &rg, 0.1, 1);
    dfill(m, G.N, &rg, 0.5, 2);
    int saved = omp_get_max_threads();
    for (size_t ri = 0; ri < NREG; ++ri)
        for (int mode = 0; mode < 3; ++mode) {
            double v1, v2;
            omp_set_num_threads(1);
            CK_OK(call(&regs[ri], 1, 2, &G, mode, x, m, &v1, 1, 0, g1));
            omp_set_num_threads(2);
            CK_OK(call(&regs[ri], 1, 2, &G, mode, x, m, &v2, 1, 0, g2));
            ck_assert_msg(memcmp(&v1, &v2, sizeof v1) == 0, "%s %s: value differs with 1 and 2 threads", regs[ri].name, mname(mode));
            ck_assert_msg(memcmp(g1, g2, G.N * sizeof *g1) == 0, "%s: gradient differs with 1 and 2 threads", regs[ri].name);
        }
    omp_set_num_threads(saved);
    free(x); free(m); free(g1); free(g2);
#endif
}
END_TEST

START_TEST(bad_arguments)
{
    double x[64] = {0}, g[64], v;
    ck_assert_int_eq(stenc_tv_value_2d_f64(8, 8, 7, x, 1, 1, 1e-3, &v), STENC_ERR_MODE);
    ck_assert_int_eq(stenc_tv_value_2d_f64(8, 8, STENC_VALID, NULL, 1, 1, 1e-3, &v), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_tv_value_2d_f64(8, 8, STENC_VALID, x, 1, 1, 1e-3, NULL), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_tv_grad_2d_f64(8, 8, STENC_VALID, x, 1, 1, 1e-3, 1, 0, x), STENC_ERR_ALIAS);
    ck_assert_int_eq(stenc_tv_grad_2d_f64(8, 8, STENC_VALID, x, 1, 1, 1e-3, 1, 0, x + 10), STENC_ERR_ALIAS);
    ck_assert_int_eq(stenc_tv_grad_2d_f64(8, 8, STENC_VALID, x, 1, 1, 1e-3, 1, 0, NULL), STENC_ERR_NULL);
    ck_assert_int_eq(stenc_tv_value_2d_f64((size_t)1 << 62, 8, STENC_NEUMANN, x, 1, 1, 1e-3, &v), STENC_ERR_OVERFLOW);
    ck_assert_int_eq(stenc_tv_value_2d_f64((size_t)1 << 40, (size_t)1 << 40, STENC_NEUMANN, x, 1, 1, 1e-3, &v), STENC_ERR_OVERFLOW);
    ck_assert_int_eq(stenc_tv_value_2d_f64(0, 8, STENC_NEUMANN, x, 1, 1, 1e-3, &v), STENC_ERR_GRID);
    CK_OK(stenc_tv_grad_2d_f64(8, 8, STENC_VALID, x, 1, 1, 1e-3, 1, 0, g));
}
END_TEST

/* The float value's strip sums: against the double sum of the same float
 * point values (what double accumulation gives), within the stated bound
 * (STENC_VSTRIP/lanes * 2^-24 = 1.9e-6 relative, terms of one sign), and
 * against the exact sum of squares no worse than the points' own float
 * rounding allows (1e-6) */
START_TEST(float_value_accuracy)
{
    const size_t nx = 2003, ny = 1499, N = nx * ny;
    rng_t r = {4242};
    float *x = falloc(N);
    double sd = 0, se = 0;
    for (size_t q = 0; q < N; ++q) {
        x[q] = (float)rng_uniform(&r, 1, 2);
        float v = x[q] * x[q];
        sd += (double)v;
        se += (double)x[q] * (double)x[q];
    }
    double vb = 0;
    CK_OK(stenc_tikhonov_identity_value_2d_f32(nx, ny, STENC_NEUMANN, x, &vb));
    double eb = fabs(vb - sd) / sd, ee = fabs(vb - se) / se;
    ck_assert_msg(eb <= 1.9e-6, "float strip sums: %.3g from the double sum of the float values (bound 1.9e-6)", eb);
    ck_assert_msg(ee <= 1e-6, "float value: %.3g from the exact sum", ee);
    printf("float_value_accuracy: strip sums %.2e from double accumulation, %.2e from exact (double accumulation: %.2e)\n",
           eb, ee, fabs(sd - se) / se);
    /* value_grad sums its interior the same way (3D too: its own loops) */
    float *g = falloc(N);
    double vg = 0;
    CK_OK(stenc_tikhonov_identity_value_grad_2d_f32(nx, ny, STENC_NEUMANN, x, &vg, 1, 0, g));
    ck_assert_msg(fabs(vg - sd) / sd <= 1.9e-6, "value_grad float strips: %.3g", fabs(vg - sd) / sd);
    CK_OK(stenc_tikhonov_identity_value_grad_3d_f32(nx, 3, ny / 3, STENC_NEUMANN, x, &vg, 1, 0, g));
    double sd3 = 0;
    for (size_t q = 0; q < nx * 3 * (ny / 3); ++q) sd3 += (double)(x[q] * x[q]);
    ck_assert_msg(fabs(vg - sd3) / sd3 <= 1.9e-6, "3D value_grad float strips: %.3g", fabs(vg - sd3) / sd3);
    /* the rolling gradients sum their strips' values the same way: against
     * the f64 value of the same data, the strips' bound plus the point
     * values' own float rounding (a few ulps, 5e-7) */
    double *xd = malloc(N * sizeof *xd);
    ck_assert_ptr_nonnull(xd);
    for (size_t q = 0; q < N; ++q) xd[q] = (double)x[q];
    const size_t nz = ny / 7;
    double vl = 0, vt = 0, dl = 0, dt = 0;
    CK_OK(stenc_tikhonov_laplace_value_grad_3d_f32(nx, 7, nz, STENC_NEUMANN, x, 1.f, 1.f, 1.f, &vl, 1, 0, g));
    CK_OK(stenc_tikhonov_laplace_value_3d_f64(nx, 7, nz, STENC_NEUMANN, xd, 1., 1., 1., &dl));
    CK_OK(stenc_tv_value_grad_3d_f32(nx, 7, nz, STENC_NEUMANN, x, 1.f, 1.f, 1.f, 1e-3f, &vt, 1, 0, g));
    CK_OK(stenc_tv_value_3d_f64(nx, 7, nz, STENC_NEUMANN, xd, 1., 1., 1., 1e-3, &dt));
    ck_assert_msg(fabs(vl - dl) / dl <= 2.4e-6, "Laplacian value_grad f32: %.3g from f64", fabs(vl - dl) / dl);
    ck_assert_msg(fabs(vt - dt) / dt <= 2.4e-6, "TV value_grad f32: %.3g from f64", fabs(vt - dt) / dt);
    printf("float_value_accuracy: rolling value_grad f32 from f64: Laplacian %.2e, TV %.2e\n", fabs(vl - dl) / dl,
           fabs(vt - dt) / dt);
    free(xd);
    free(g);
    free(x);
}
END_TEST

int main(void)
{
    Shard sh;
    if (!test_shard(&sh)) return 1;
    Suite *s = suite_create("regularizers");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    shard_add_loop(tc, values_and_gradients, 0, (int)NREG * 6, sh);
    shard_add_loop(tc, fused_alpha_beta, 0, (int)NREG * 12, sh);
    shard_add_loop(tc, large_grids_gradient, 0, (int)NREG * 9, sh);
    shard_add_loop(tc, one_plane_grids, 0, (int)NREG, sh);
    shard_add_loop(tc, offset_data_accuracy, 0, 6, sh);
    shard_add_test(tc, float_value_accuracy, sh);
    shard_add_test(tc, smallest_grids, sh);
    shard_add_test(tc, threads_bitwise, sh);
    shard_add_test(tc, bad_arguments, sh);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
