/* The yardstick of make perf: hand-written C loops for the same stencils,
 * boundary mode (neumann: differences across the edge are 0) and
 * precision (float) as the stenc kernels they are compared with, written as
 * an HPC engineer would write them for this one stencil:
 *   - values: rows split over threads (static), float partial sums kept in
 *     vector registers along a row (omp simd reduction), each row's sum
 *     added in double; the last column and row peeled, no branches inside;
 *   - TV gradients: each point's partials (u = w_x a / s, v = w_y b / s,
 *     w = w_z c / s, s = sqrt(eps + sum w d^2)) computed once, then gathered:
 *     g = u(i-1) - u(i) + v(j-1) - v(j) [+ w(k-1) - w(k)]; 2D in strips of 512
 *     points (u in L1), v of the row below kept per thread; 3D row by row with
 *     w of the plane below kept per thread (not tiled: a plane of w is 1 MB at
 *     512^2, so it is read back from L2/L3, where stenc tiles planes);
 *     Huber's gradients the same loops with 1/max(r, delta) for 1/s;
 *   - the linear Tikhonov gradient: a direct 5-point (7-point) loop; fused
 *     with its value (value_grad), the same loop with the value's forward
 *     differences shared with the gradient, summed like the values; TV's
 *     and Good's 3D value_grads and Huber's 2D and 3D likewise, their
 *     gradients' loops with the value summed in the same pass;
 *   - the Tikhonov-Laplacian gradient 2 L (L x): fused, t = w L x in a
 *     ring of three rows (2D) or of three planes of a y tile (3D), L applied
 *     to it as each gradient row is written; its 3D value_grad sums t^2 as
 *     each ring row is written;
 *   - the total Hessian's gradient, 3D: each point's six factors computed
 *     once into a ring of three planes per tile of rows, then the 21-term
 *     gather, row by row as the tile marches up in z.
 * Every row of the gradient loops goes through HAND_ROW (the fused
 * value_grad rows through HAND_VG_LINES and HAND_VG_EDGE): where the
 * gradient array is large (32 MiB or more, stenc's default
 * STENC_NT_BYTES), its whole 64-byte lines are streamed (non-temporal stores, no read for ownership), the rest stored
 * plainly, as stenc's kernels do (perf/NOTES.md sections 37 and 42).
 * The 3D loops that read x ask for row (j + 1, k + 1) of x, the row the
 * next row reads first, HAND_PF_BYTES ahead, a line of 16 points at a
 * time: software prefetch, as stenc's 3D kernels do (section 42; the row
 * (j, k + 1) instead left the TV value at 1.4x stenc's time).
 * The 2D TV values ask for row j + 1's line 2 KiB ahead (HAND_PF2D_BYTES
 * past hand_pf's), as stenc's 2D values do (section 65).
 * They are checked against the stenc kernels in the same run (bench.c). */
#ifndef STENC_PERF_HAND_H
#define STENC_PERF_HAND_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif

/* ---- streamed gradient rows ---- */
/* whether a gradient of N floats streams its lines */
static inline int hand_nt(size_t n) { return n * sizeof(float) >= ((size_t)32 << 20); }
/* [*s, *e): the whole 64-byte lines of g[a, b) */
static inline void hand_span(const float *g, size_t a, size_t b, size_t *s, size_t *e)
{
    size_t h = a + ((64 - (uintptr_t)(g + a) % 64) % 64) / sizeof(float);
    *s = *e = b;
    if (h + 16 > b) return;
    *s = h;
    *e = h + (b - h) / 16 * 16;
}
/* the 16 floats of l (registers, after inlining) to the line at d */
static inline void hand_line(float *d, const float *l)
{
#if defined(__AVX__)
    _mm256_stream_ps(d, _mm256_load_ps(l));
    _mm256_stream_ps(d + 8, _mm256_load_ps(l + 8));
#else
    memcpy(d, l, 64);
#endif
}
/* each thread after its streamed rows, before the loop's barrier */
static inline void hand_fence(void)
{
#if defined(__AVX__)
    _mm_sfence();
#endif
}
/* Software prefetch (3D): the line HAND_PF_BYTES past point AT of row P,
 * the newest plane's row that a 3D loop reads, as stenc's kernels
 * ask for it (STENC_PF_BYTES, perf/NOTES.md section 42); none for NULL */
#define HAND_PF_BYTES 512
static inline void hand_pf_bytes(const void *p, size_t bytes)
{
    if (p) __builtin_prefetch((const void *)((uintptr_t)p + bytes + HAND_PF_BYTES));
}
static inline void hand_pf(const float *p, size_t at) { hand_pf_bytes(p, sizeof(float) * at); }
/* 2D: the newest input row's line 2 KiB ahead of the point in use (P,
 * made HAND_PF2D_BYTES further than hand_pf's; as an integer, so a row
 * near the array's end is no pointer past it), as stenc's 2D gradients
 * ask for it (STENC_PF2D_BYTES, perf/NOTES.md section 52: these loops
 * took 0.70-0.85 of their time without it) */
#define HAND_PF2D_BYTES 1536
static inline const float *hand_ahead2d(const float *p)
{
    return (const float *)((uintptr_t)p + HAND_PF2D_BYTES);
}
/* The lines of [A, B) of row G that its streamed lines [S, E) leave
 * partial, AHEAD elements on (the same span two rows on), asked for
 * writing: a plain store to a line not in cache waits for its read, asked
 * for ahead the reads overlap (as stenc's kernels do, stenc_nt_partial_pf,
 * perf/NOTES.md section 46) */
static inline void hand_partial_pf(const float *g, size_t a, size_t b, size_t s, size_t e, size_t ahead)
{
    const uintptr_t u = (uintptr_t)g + sizeof(float) * ahead;
    if (s > a) __builtin_prefetch((const void *)(u + sizeof(float) * a), 1);
    if (e < b) __builtin_prefetch((const void *)(u + sizeof(float) * (b - 1)), 1);
}
/* g[i] = EXPR for i in [FROM, TO), fewer than 16 points inside a span
 * [AT, AT + 16) of points that EXPR may be evaluated at: the 16 computed as
 * one vector, [FROM, TO) copied out (a loop over the few points alone runs
 * as GCC's epilogue, a 256-bit, a 128-bit vector and scalars, each with
 * the whole arithmetic: on 256-point rows the two partial lines of a
 * streamed row took the Tikhonov gradient's value_grad to 1.4x its
 * gradient's time, perf/NOTES.md section 50) */
#define HAND_EDGE(g, FROM, TO, AT, i, EXPR)                                             \
    do {                                                                                \
        const size_t he_a = (FROM), he_b = (TO), he_at = (AT);                          \
        if (he_a >= he_b) break;                                                        \
        _Alignas(64) float he_v[16];                                                    \
        _Pragma("omp simd") for (size_t he_u = 0; he_u < 16; ++he_u) {                  \
            const size_t i = he_at + he_u;                                              \
            he_v[he_u] = (EXPR);                                                        \
        }                                                                               \
        for (size_t he_i = he_a; he_i < he_b; ++he_i) (g)[he_i] = he_v[he_i - he_at];   \
    } while (0)
/* g[i] = EXPR (an expression of i) for i in [A, B); with NT the whole lines
 * computed 16 points at a time and streamed (and the partial lines of the
 * row PITCH elements on, two rows ahead, asked for: hand_partial_pf); with
 * PF (a row, or NULL) the whole lines (streamed or not) each after
 * hand_pf(PF, line) (HAND_ROW_PF2: and hand_pf(PF2, line)); the points
 * before the first line and after the last (with lines) by HAND_EDGE */
#define HAND_ROW_PF(NT, g, A, B, i, PF, PITCH, EXPR) HAND_ROW_PF2(NT, g, A, B, i, PF, NULL, PITCH, EXPR)
#define HAND_ROW_PF2(NT, g, A, B, i, PF, PF2, PITCH, EXPR)                              \
    do {                                                                                \
        const size_t hr_a = (A), hr_b = (B);                                            \
        const float *hr_pf = (PF), *hr_pf2 = (PF2);                                     \
        size_t hr_s = hr_b, hr_e = hr_b;                                                \
        if (NT) {                                                                       \
            hand_span(g, hr_a, hr_b, &hr_s, &hr_e);                                     \
            hand_partial_pf(g, hr_a, hr_b, hr_s, hr_e, 2 * (PITCH));                   \
        }                                                                               \
        else if (hr_pf) hr_s = hr_a, hr_e = hr_a + (hr_b - hr_a) / 16 * 16;             \
        if (hr_s >= hr_e) {                                                             \
            _Pragma("omp simd") for (size_t i = hr_a; i < hr_b; ++i)(g)[i] = (EXPR);    \
            break;                                                                      \
        }                                                                               \
        HAND_EDGE(g, hr_a, hr_s, hr_a, i, EXPR);                                        \
        for (size_t hr_l = hr_s; hr_l < hr_e; hr_l += 16) {                             \
            hand_pf(hr_pf, hr_l);                                                       \
            hand_pf(hr_pf2, hr_l);                                                      \
            if (!(NT)) {                                                                \
                _Pragma("omp simd") for (size_t i = hr_l; i < hr_l + 16; ++i)(g)[i] = (EXPR); \
                continue;                                                               \
            }                                                                           \
            _Alignas(64) float hr_v[16];                                                \
            _Pragma("omp simd") for (size_t hr_u = 0; hr_u < 16; ++hr_u) {              \
                const size_t i = hr_l + hr_u;                                           \
                hr_v[hr_u] = (EXPR);                                                    \
            }                                                                           \
            hand_line((g) + hr_l, hr_v);                                                \
        }                                                                               \
        HAND_EDGE(g, hr_e, hr_b, hr_b - 16, i, EXPR);                                   \
    } while (0)
#define HAND_ROW(NT, g, A, B, i, PITCH, EXPR) HAND_ROW_PF(NT, g, A, B, i, NULL, PITCH, EXPR)
/* The fused value_grad rows (hand_tikg_value_grad, hand_goods_vg_row):
 * POINT(i, ACC, G) adds point i's value to ACC and sets its gradient G; a
 * row's gradient is gr, nt says whether it streams, acc and lane[16] sum
 * its value.  HAND_VG_EDGE: the points [A, B) before the first whole line
 * or after the last, as the 16 points from AT (one vector), the gradients
 * copied out and the values summed (a loop over the few points alone ran
 * as GCC's epilogue: HAND_EDGE).  HAND_VG_LINES: the whole lines [LS, LE),
 * each after hand_pf(PF, line), point u of each line's value in lane u
 * (registers), its gradient streamed with nt */
#define HAND_VG_EDGE(POINT, A, B, AT)                                                             \
    do {                                                                                          \
        _Alignas(64) float ev[16], eg[16];                                                        \
        const size_t at = (AT);                                                                   \
        if ((A) >= (B)) break;                                                                    \
        _Pragma("omp simd") for (size_t u = 0; u < 16; ++u) {                                     \
            ev[u] = 0;                                                                            \
            POINT(at + u, ev[u], eg[u]);                                                          \
        }                                                                                         \
        for (size_t i = (A); i < (B); ++i) gr[i] = eg[i - at], acc += ev[i - at];                 \
    } while (0)
#define HAND_VG_LINES(POINT, LS, LE, PF)                                                          \
    for (size_t l = (LS); l < (LE); l += 16) {                                                    \
        hand_pf(PF, l);                                                                           \
        if (!nt) {                                                                                \
            _Pragma("omp simd") for (size_t u = 0; u < 16; ++u) POINT(l + u, lane[u], gr[l + u]); \
            continue;                                                                             \
        }                                                                                         \
        _Alignas(64) float hv[16];                                                                \
        _Pragma("omp simd") for (size_t u = 0; u < 16; ++u) POINT(l + u, lane[u], hv[u]);         \
        hand_line(gr + l, hv);                                                                    \
    }

/* ---- TV value, 2D and 3D, float and double ----
 * HAND_TV_VALUES(SFX, T, SQRT): hand_tv2_value_SFX, hand_tv3_value_SFX for
 * element type T.  A row's partial sums are T in vector registers (lane u
 * of a line of 64 bytes takes point u of each line), each row's sum added
 * in double.  In double every sum is double,
 * as stenc's f64 values are (perf/NOTES.md section 55) */
#define HAND_TV_VALUES(SFX, T, SQRT)                                                                               \
    static double hand_tv2_value_##SFX(size_t nx, size_t ny, const T *restrict x, T wx, T wy, T eps)            \
    {                                                                                                           \
        enum { L = 64 / sizeof(T) }; /* points a line */                                                        \
        double s = 0;                                                                                           \
        _Pragma("omp parallel for reduction(+ : s) schedule(static)")                                          \
        for (size_t j = 0; j < ny; ++j) {                                                                       \
            const T *r = x + nx * j, *u = j + 1 < ny ? r + nx : r; /* the last row's y differences are 0 */   \
            /* lines, each after the prefetch of row j + 1's line 2 KiB on (as stenc's 2D values; 0.78-0.84 of \
             * the time without it on the Zen 3 VM, perf/NOTES.md section 65), point q of each line in lane q  \
             * (registers), the lanes summed at the row's end */                                                \
            T acc = 0, lane[L] = {0};                                                                           \
            size_t i0 = 0;                                                                                      \
            for (; i0 + L <= nx - 1; i0 += L) {                                                                 \
                hand_pf_bytes(u, sizeof(T) * i0 + HAND_PF2D_BYTES);                                             \
                _Pragma("omp simd")                                                                             \
                for (size_t q = 0; q < L; ++q) lane[q] += HAND_TV2_TERM(SQRT, i0 + q);                         \
            }                                                                                                   \
            _Pragma("omp simd reduction(+ : acc)")                                                              \
            for (size_t i = i0; i < nx - 1; ++i) acc += HAND_TV2_TERM(SQRT, i);                                 \
            for (size_t q = 0; q < L; ++q) acc += lane[q];                                                      \
            T b = u[nx - 1] - r[nx - 1];                                                                        \
            s += (double)acc + (double)SQRT(eps + wy * b * b);                                                  \
        }                                                                                                       \
        return s;                                                                                               \
    }                                                                                                           \
    static double hand_tv3_value_##SFX(size_t nx, size_t ny, size_t nz, const T *restrict x, T wx, T wy, T wz,   \
                                       T eps)                                                                   \
    {                                                                                                           \
        enum { L = 64 / sizeof(T) }; /* points a line */                                                        \
        double s = 0;                                                                                           \
        const size_t P = nx * ny;                                                                               \
        _Pragma("omp parallel for collapse(2) reduction(+ : s) schedule(static)")                              \
        for (size_t k = 0; k < nz; ++k)                                                                         \
            for (size_t j = 0; j < ny; ++j) {                                                                   \
                const T *r = x + nx * j + P * k, *u = j + 1 < ny ? r + nx : r, *t = k + 1 < nz ? r + P : r;     \
                /* lines, each after the prefetch of row (j + 1, k + 1)'s (the next row's t: a row ahead, as    \
                 * stenc's), point q of each line into lane q (registers), the lanes summed at the row's end */ \
                T acc = 0, lane[L] = {0};                                                                       \
                size_t i0 = 0;                                                                                  \
                for (; i0 + L <= nx - 1; i0 += L) {                                                             \
                    hand_pf_bytes(t, sizeof(T) * (nx + i0));                                                     \
                    _Pragma("omp simd")                                                                         \
                    for (size_t q = 0; q < L; ++q) lane[q] += HAND_TV3_TERM(SQRT, i0 + q);                     \
                }                                                                                               \
                _Pragma("omp simd reduction(+ : acc)")                                                          \
                for (size_t i = i0; i < nx - 1; ++i) acc += HAND_TV3_TERM(SQRT, i);                            \
                for (size_t q = 0; q < L; ++q) acc += lane[q];                                                  \
                T b = u[nx - 1] - r[nx - 1], c = t[nx - 1] - r[nx - 1];                                         \
                s += (double)acc + (double)SQRT(eps + wy * b * b + wz * c * c);                                 \
            }                                                                                                   \
        return s;                                                                                               \
    }
#define HAND_TV2_TERM(SQRT, i) SQRT(eps + wx * (r[i + 1] - r[i]) * (r[i + 1] - r[i]) + wy * (u[i] - r[i]) * (u[i] - r[i]))
#define HAND_TV3_TERM(SQRT, i)                                                                                     \
    SQRT(eps + wx * (r[i + 1] - r[i]) * (r[i + 1] - r[i]) + wy * (u[i] - r[i]) * (u[i] - r[i]) +                  \
         wz * (t[i] - r[i]) * (t[i] - r[i]))
HAND_TV_VALUES(f32, float, sqrtf)
HAND_TV_VALUES(f64, double, sqrt)
#undef HAND_TV2_TERM
#undef HAND_TV3_TERM
#undef HAND_TV_VALUES

/* ---- Good's roughness value, 2D and 3D (nz = 1: 2D, wz unused) ----
 * sum_p wx (s[p+ex] - s[p])^2 + wy (s[p+ey] - s[p])^2 [+ wz (s[p+ez] -
 * s[p])^2], s = sqrt(x + eps), the differences 0 past the last point
 * (Neumann).  Each square root once a row of a strip: strips of
 * HAND_GSTRIP points outermost, a block of rows inside (a plane in 3D),
 * the row above's s kept for the next row (two square roots a point in 3D,
 * one in 2D, instead of four and three).  A row up to HAND_GSTRIP points
 * is one strip, read in one stream (strips of 2048 ran 1.25x the time at
 * 4096^2 on a Zen 4 core: perf/NOTES.md section 49).  The bench's 3D duel
 * runs hand_goods_value3 (one a point, planes kept) */
#ifndef HAND_GSTRIP
#define HAND_GSTRIP 16384
#endif
static inline void hand_sqrt_row(float *restrict o, const float *restrict r, size_t n, float eps)
{
#pragma omp simd
    for (size_t i = 0; i < n; ++i) o[i] = sqrtf(r[i] + eps);
}
/* a row's terms over [0, N) in float lanes of 16 (PF, or NULL: prefetched
 * from PFAT on, a line ahead of each 16), the lanes and the rest added */
static inline float hand_goods_terms(const float *s0, const float *s1, const float *zr, size_t n, float wx, float wy,
                                     float wz, const float *pf, size_t pfat)
{
    float acc = 0, lane[16] = {0};
    size_t i0 = 0;
#define HAND_GOODS_TERM(i) (wx * (s0[i + 1] - s0[i]) * (s0[i + 1] - s0[i]) + wy * (s1[i] - s0[i]) * (s1[i] - s0[i]) + wz * (zr[i] - s0[i]) * (zr[i] - s0[i]))
    for (; i0 + 16 <= n; i0 += 16) {
        hand_pf(pf, pfat + i0);
#pragma omp simd
        for (size_t q = 0; q < 16; ++q) lane[q] += HAND_GOODS_TERM(i0 + q);
    }
#pragma omp simd reduction(+ : acc)
    for (size_t i = i0; i < n; ++i) acc += HAND_GOODS_TERM(i);
#undef HAND_GOODS_TERM
    for (size_t q = 0; q < 16; ++q) acc += lane[q];
    return acc;
}
static double hand_goods_value(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                               float eps)
{
    const size_t P = nx * ny, nb = nz > 1 ? 1 : 64, items = nz * nb;
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (size_t it = 0; it < items; ++it) {
        const size_t k = it / nb, j0 = ny * (it % nb) / nb, j1 = ny * (it % nb + 1) / nb;
        _Alignas(64) float sr[2][HAND_GSTRIP + 16], sz[HAND_GSTRIP + 16];
        for (size_t a = 0; a < nx; a += HAND_GSTRIP) {
            const size_t e = a + HAND_GSTRIP < nx ? a + HAND_GSTRIP : nx;
            const size_t w = e - a + (e < nx), nf = e < nx ? e - a : e - a - 1; /* s with the point after; full terms */
            for (size_t j = j0; j < j1; ++j) {
                const float *r = x + nx * j + P * k, *u = j + 1 < ny ? r + nx : r, *t = k + 1 < nz ? r + P : r;
                float *s0 = sr[(j - j0) & 1], *s1 = sr[(j - j0 + 1) & 1];
                if (j == j0) hand_sqrt_row(s0, r + a, w, eps);
                hand_sqrt_row(s1, u + a, w, eps);
                if (nz > 1) hand_sqrt_row(sz, t + a, e - a, eps);
                const float *zr = nz > 1 ? sz : s0; /* 2D: no z term */
                float acc = hand_goods_terms(s0, s1, zr, nf, wx, wy, wz, nz > 1 ? t : NULL, nx + a);
                if (nf < e - a) { /* the row's last point: no x term */
                    const size_t i = nf;
                    acc += wy * (s1[i] - s0[i]) * (s1[i] - s0[i]) + wz * (zr[i] - s0[i]) * (zr[i] - s0[i]);
                }
                s += (double)acc;
            }
        }
    }
    return s;
}

/* ---- TV and Huber gradients, 2D and 3D: one loop for both ----
 * A point's partials are w_d d_d q with sq = sum_d w_d d_d^2 and, for TV
 * (HUBER 0, P = eps), q = 1 / sqrt(eps + sq), the point's value
 * sqrt(eps + sq); for Huber (HUBER 1, P = delta), with r = sqrt(sq),
 * q = 1 / max(r, delta), the value r^2 / (2 delta) for r <= delta and
 * r - delta / 2 above (the derivative of either piece over r, times r's
 * w_d d_d / r; the value written without a branch, which GCC 12 leaves
 * scalar in a summing loop).  Each loop takes HUBER and WANT_V as
 * constants, so it is the one a person would write for its stencil: the
 * parallel regions pick the form per strip or row (HAND_SEL), because
 * OpenMP outlines a region before GCC inlines the flags' constants into it
 * (perf/NOTES.md section 62). */
/* CALL(H, V) with the flags HUBER and WANT_V as constants */
#define HAND_SEL(HUBER, WANT_V, CALL) \
    ((HUBER) ? ((WANT_V) ? CALL(1, 1) : CALL(1, 0)) : ((WANT_V) ? CALL(0, 1) : CALL(0, 0)))
typedef struct { float q, v; } HandTvq; /* a point's factor q and value v */
static inline HandTvq hand_tvq(const int huber, float sq, float p)
{
    if (!huber) {
        const float s = sqrtf(p + sq);
        return (HandTvq){1.0f / s, s};
    }
    /* the value without a branch: min(r, delta)^2 / (2 delta) + max(r - delta, 0), the
     * minimum and maximum as selects (vminps, vmaxps; fminf and fmaxf are calls) */
    const float r = sqrtf(sq), lo = r < p ? r : p, hi = r > p ? r : p;
    return (HandTvq){1.0f / hi, lo * lo * (0.5f / p) + (hi - p)};
}

/* v of row j (partials along y) into v[0..nx): the row below's, recomputed
 * at the first row of a thread's block */
static inline void hand_tv2_vrow(size_t nx, size_t ny, size_t j, const float *restrict x, float wx, float wy,
                                 float p, float *restrict v, const int huber)
{
    const float *r = x + nx * j, *up = j + 1 < ny ? r + nx : r;
#pragma omp simd
    for (size_t i = 0; i < nx - 1; ++i) {
        float a = r[i + 1] - r[i], b = up[i] - r[i];
        v[i] = wy * b * hand_tvq(huber, wx * a * a + wy * b * b, p).q;
    }
    float b = up[nx - 1] - r[nx - 1];
    v[nx - 1] = wy * b * hand_tvq(huber, wy * b * b, p).q;
}

/* one strip's partials u (from u[1]) and v for points [I0, I0 + LIN) of
 * row r (up: the row above), its values' sum with WANT_V.  Called with
 * constant HUBER and WANT_V, each form its own vector loop (OpenMP's
 * outlined body gets the caller's flags as variables) */
static inline float hand_tv2_strip(const float *restrict r, const float *restrict up, size_t i0, size_t lin, float wx,
                                   float wy, float p, float *restrict u, float *restrict v, const int huber,
                                   const int want_v)
{
    float acc = 0;
#pragma omp simd reduction(+ : acc)
    for (size_t ii = 0; ii < lin; ++ii) {
        size_t i = i0 + ii;
        float a = r[i + 1] - r[i], b = up[i] - r[i];
        const HandTvq t = hand_tvq(huber, wx * a * a + wy * b * b, p);
        u[ii + 1] = wx * a * t.q;
        v[i] = wy * b * t.q;
        if (want_v) acc += t.v;
    }
    return acc;
}

/* 2D: rows in strips of 512 points: the strip's u (with the point before
 * it) stays in L1, v of this row and the row below in two row buffers;
 * each point's square root once; with WANT_V the value summed in the same
 * pass (float lanes over a strip, each strip's sum added in double) */
#define HAND_STRIP 512
static inline double hand_tv2_gv(size_t nx, size_t ny, const float *restrict x, float wx, float wy, float p,
                                 float *restrict g, const int huber, const int want_v)
{
    const int nt = hand_nt(nx * ny);
    double val = 0;
#pragma omp parallel reduction(+ : val)
    {
        float *vbuf = malloc(sizeof(float) * 2 * nx), *v = vbuf, *vp = vbuf + nx;
        float u[HAND_STRIP + 1];
        size_t jlast = (size_t)-1; /* a thread's rows are contiguous: v carries to the next row */
#pragma omp for schedule(static)
        for (size_t j = 0; j < ny; ++j) {
            if (j == 0) memset(vp, 0, sizeof(float) * nx);
            else if (j - 1 != jlast) {
                if (huber) hand_tv2_vrow(nx, ny, j - 1, x, wx, wy, p, vp, 1);
                else hand_tv2_vrow(nx, ny, j - 1, x, wx, wy, p, vp, 0);
            }
            const float *r = x + nx * j, *up = j + 1 < ny ? r + nx : r;
            float *gr = g + nx * j, carry = 0;
            for (size_t i0 = 0; i0 < nx; i0 += HAND_STRIP) {
                size_t len = nx - i0 < HAND_STRIP ? nx - i0 : HAND_STRIP;
                size_t lin = i0 + len == nx ? len - 1 : len; /* the last column has no x difference */
                u[0] = carry;
#define HAND_TV2_STRIP(H, V) hand_tv2_strip(r, up, i0, lin, wx, wy, p, u, v, H, V)
                float acc = HAND_SEL(huber, want_v, HAND_TV2_STRIP);
#undef HAND_TV2_STRIP
                if (lin < len) {
                    float b = up[nx - 1] - r[nx - 1];
                    const HandTvq t = hand_tvq(huber, wy * b * b, p);
                    u[len] = 0;
                    v[nx - 1] = wy * b * t.q;
                    if (want_v) acc += t.v;
                }
                HAND_ROW_PF(nt, gr, i0, i0 + len, i, hand_ahead2d(up), nx, u[i - i0] - u[i - i0 + 1] + vp[i] - v[i]);
                carry = u[len];
                if (want_v) val += (double)acc;
            }
            float *t = vp; vp = v; v = t;
            jlast = j;
        }
        hand_fence();
        free(vbuf);
    }
    return val;
}
static void hand_tv2_grad(size_t nx, size_t ny, const float *restrict x, float wx, float wy, float eps, float *restrict g)
{
    (void)hand_tv2_gv(nx, ny, x, wx, wy, eps, g, 0, 0);
}

/* ---- TV and Huber gradients, 3D: rows of a plane, the plane below's w kept ----
 * hand_tv3_row_v: row (j, k)'s partials u, v, w; with WANT_V (a constant
 * after inlining) also its value (hand_tvq's) in float lanes (a line's
 * point u in lane u), the row's sum in double: the fused value_grad's row
 * (hand_tv3_value_grad) */
static inline double hand_tv3_row_v(size_t nx, size_t ny, size_t nz, size_t j, size_t k, const float *restrict x,
                                    float wx, float wy, float wz, float p, float *restrict u, float *restrict v,
                                    float *restrict w, const int huber, const int want_v)
{
    const size_t P = nx * ny;
    const float *r = x + nx * j + P * k, *up = j + 1 < ny ? r + nx : r, *t = k + 1 < nz ? r + P : r;
#define HAND_TV3_PART(i, ACC)                                                                   \
    do {                                                                                        \
        float a = r[i + 1] - r[i], b = up[i] - r[i], c = t[i] - r[i];                           \
        const HandTvq h = hand_tvq(huber, wx * a * a + wy * b * b + wz * c * c, p);             \
        u[i] = wx * a * h.q;                                                                    \
        v[i] = wy * b * h.q;                                                                    \
        w[i] = wz * c * h.q;                                                                    \
        if (want_v) ACC += h.v;                                                                 \
    } while (0)
    float lane[16] = {0}, acc = 0;
    size_t i0 = 0; /* lines of 16 points, each after the prefetch of row (j + 1, k + 1)'s */
    for (; i0 + 16 <= nx - 1; i0 += 16) {
        hand_pf(t, nx + i0);
#pragma omp simd
        for (size_t l = 0; l < 16; ++l) HAND_TV3_PART(i0 + l, lane[l]);
    }
#pragma omp simd reduction(+ : acc)
    for (size_t i = i0; i < nx - 1; ++i) HAND_TV3_PART(i, acc);
#undef HAND_TV3_PART
    float b = up[nx - 1] - r[nx - 1], c = t[nx - 1] - r[nx - 1];
    const HandTvq h = hand_tvq(huber, wy * b * b + wz * c * c, p);
    u[nx - 1] = 0;
    v[nx - 1] = wy * b * h.q;
    w[nx - 1] = wz * c * h.q;
    if (!want_v) return 0;
    for (size_t l = 0; l < 16; ++l) acc += lane[l];
    return (double)acc + (double)h.v;
}
/* the gradient, and with WANT_V the value (the value_grad): returns it */
static inline double hand_tv3_gv(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                                 float p, float *restrict g, const int huber, const int want_v)
{
    const size_t P = nx * ny;
    const int nt = hand_nt(P * nz);
    double val = 0;
/* row (j, k)'s partials (and value), row (j, k - 1)'s w: forms with constant flags */
#define HAND_TV3_ROW(H, V) hand_tv3_row_v(nx, ny, nz, j, k, x, wx, wy, wz, p, u, v, wr, H, V)
#define HAND_TV3_LOW(H, V) hand_tv3_row_v(nx, ny, nz, j, k - 1, x, wx, wy, wz, p, u, scratch, wlo + nx * j, H, V)
#pragma omp parallel reduction(+ : val)
    {
        /* per thread: u, v of two rows, w of this plane and of the plane below */
        float *buf = malloc(sizeof(float) * (3 * (nx + 1) + 2 * P + nx));
        float *u = buf + 1, *v = buf + nx + 1, *vp = buf + 2 * (nx + 1), *wpl = buf + 3 * (nx + 1), *wlo = wpl + P;
        float *scratch = wlo + P;
        buf[0] = 0;
        size_t klast = (size_t)-1; /* a thread's planes are contiguous: w carries to the next plane */
#pragma omp for schedule(static)
        for (size_t k = 0; k < nz; ++k) {
            if (k == 0) memset(wlo, 0, sizeof(float) * P);
            else if (k - 1 == klast) { float *t = wlo; wlo = wpl; wpl = t; }
            else /* a block's first plane: w of the plane below */
                for (size_t j = 0; j < ny; ++j) (void)HAND_SEL(huber, 0, HAND_TV3_LOW);
            klast = k;
            memset(vp, 0, sizeof(float) * nx);
            for (size_t j = 0; j < ny; ++j) {
                float *wr = wpl + nx * j;
                val += HAND_SEL(huber, want_v, HAND_TV3_ROW);
                const float *wb = wlo + nx * j;
                float *gr = g + nx * j + P * k;
                HAND_ROW(nt, gr, 0, nx, i, nx, u[i - 1] - u[i] + vp[i] - v[i] + wb[i] - wr[i]);
                float *t = vp; vp = v; v = t;
            }
        }
        hand_fence();
        free(buf);
    }
#undef HAND_TV3_ROW
#undef HAND_TV3_LOW
    return val;
}
static void hand_tv3_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                          float eps, float *restrict g)
{
    (void)hand_tv3_gv(nx, ny, nz, x, wx, wy, wz, eps, g, 0, 0);
}
static double hand_tv3_value_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                                  float eps, float *restrict g)
{
    return hand_tv3_gv(nx, ny, nz, x, wx, wy, wz, eps, g, 0, 1);
}
/* Huber's gradient and value_grad, 2D (nz = 1) and 3D */
static double hand_huber_gv(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                            float delta, float *restrict g, const int want_v)
{
    if (nz == 1)
        return want_v ? hand_tv2_gv(nx, ny, x, wx, wy, delta, g, 1, 1) : hand_tv2_gv(nx, ny, x, wx, wy, delta, g, 1, 0);
    return want_v ? hand_tv3_gv(nx, ny, nz, x, wx, wy, wz, delta, g, 1, 1)
                  : hand_tv3_gv(nx, ny, nz, x, wx, wy, wz, delta, g, 1, 0);
}

/* ---- the linear Tikhonov gradient (R = sum wx a^2 + wy b^2), 2D ---- */
static void hand_tikg2_grad(size_t nx, size_t ny, const float *restrict x, float wx, float wy, float *restrict g)
{
    const float cx = 2 * wx, cy = 2 * wy;
    const int nt = hand_nt(nx * ny);
#pragma omp parallel
    {
#pragma omp for schedule(static)
    for (size_t j = 0; j < ny; ++j) {
        const float *r = x + nx * j, *dn = j > 0 ? r - nx : r, *up = j + 1 < ny ? r + nx : r;
        float *gr = g + nx * j;
        /* d/dx[q] of wx*(x[q+1]-x[q])^2 and of the point before; edges have no difference across */
        gr[0] = cx * (r[0] - r[1]) + cy * ((r[0] - dn[0]) - (up[0] - r[0]));
        HAND_ROW_PF(nt, gr, 1, nx - 1, i, hand_ahead2d(up), nx,
                    cx * ((r[i] - r[i - 1]) - (r[i + 1] - r[i])) + cy * ((r[i] - dn[i]) - (up[i] - r[i])));
        gr[nx - 1] = cx * (r[nx - 1] - r[nx - 2]) + cy * ((r[nx - 1] - dn[nx - 1]) - (up[nx - 1] - r[nx - 1]));
    }
    hand_fence();
    }
}

/* row (j, k) of x and its four y/z neighbour rows, clamped at the edges
 * (replicated edges: a neighbour past the grid is the row itself) */
typedef struct { const float *r, *ym, *yp, *zm, *zp; } HandRows;
static inline HandRows hand_rows(const float *x, size_t nx, size_t ny, size_t nz, size_t j, size_t k)
{
    const size_t P = nx * ny;
    const float *r = x + nx * j + P * k;
    HandRows R = {r, j ? r - nx : r, j + 1 < ny ? r + nx : r, k ? r - P : r, k + 1 < nz ? r + P : r};
    return R;
}

/* y tiles of about TY rows for NY rows: a multiple of the threads, at most NY */
static size_t hand_tiles(size_t ny, size_t ty)
{
    size_t nthr = 1;
#ifdef _OPENMP
    nthr = (size_t)omp_get_max_threads();
#endif
    const size_t ntile = ((ny + ty - 1) / ty + nthr - 1) / nthr * nthr;
    return ntile > ny ? ny : ntile;
}

/* y tiles of a 3D loop whose rows read planes k - 1 to k + 1: three
 * planes of a tile's rows in about HAND_PLANES_BYTES, so that they stay in
 * a core's L2 until the plane above needs them (with whole 512^3 planes,
 * 3 MiB a thread, the Tikhonov gradient took 1.08-1.14x the time:
 * perf/NOTES.md section 47); one tile a thread in 2D (nz = 1) */
#ifndef HAND_PLANES_BYTES
#define HAND_PLANES_BYTES ((size_t)1 << 20)
#endif
static size_t hand_plane_tiles(size_t nx, size_t ny, size_t nz)
{
    const size_t ty = HAND_PLANES_BYTES / (3 * sizeof(float) * nx);
    return hand_tiles(ny, nz > 1 ? (ty < 8 ? 8 : ty) : ny);
}

/* ---- the Tikhonov gradient in 3D: the same, one row at a time, the
 * neighbouring rows and planes by clamped row pointers ---- */
/* the y and z part of the gradient at point i of row r (rows ym, yp, zm, zp
 * around it; cy = 2 wy, cz = 2 wz) */
#define HAND_TIKG_YZ(i) (cy * ((r[i] - ym[i]) - (yp[i] - r[i])) + cz * ((r[i] - zm[i]) - (zp[i] - r[i])))
static void hand_tikg3_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                            float *restrict g)
{
    const size_t P = nx * ny;
    const float cx = 2 * wx, cy = 2 * wy, cz = 2 * wz;
    const int nt = hand_nt(P * nz);
    const size_t ntile = hand_plane_tiles(nx, ny, nz);
#pragma omp parallel
    {
#pragma omp for schedule(static)
    for (size_t tl = 0; tl < ntile; ++tl)
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = ny * tl / ntile; j < ny * (tl + 1) / ntile; ++j) {
            const HandRows R = hand_rows(x, nx, ny, nz, j, k);
            const float *r = R.r, *ym = R.ym, *yp = R.yp, *zm = R.zm, *zp = R.zp;
            float *gr = g + nx * j + P * k;
            gr[0] = cx * (r[0] - r[1]) + HAND_TIKG_YZ(0);
            HAND_ROW_PF(nt, gr, 1, nx - 1, i, zp + nx, nx, cx * ((r[i] - r[i - 1]) - (r[i + 1] - r[i])) + HAND_TIKG_YZ(i));
            gr[nx - 1] = cx * (r[nx - 1] - r[nx - 2]) + HAND_TIKG_YZ(nx - 1);
        }
    hand_fence();
    }
}

/* ---- the Tikhonov gradient fused with its value (value_grad): the value's
 * forward differences are the gradient's, summed in float along the row in
 * vector registers, each row's sum added in double; 3D (nz = 1: 2D, whose
 * z neighbours are the row itself and add 0) ---- */
static double hand_tikg_value_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                                   float *restrict g)
{
    const size_t P = nx * ny;
    const float cx = 2 * wx, cy = 2 * wy, cz = 2 * wz;
    const int nt = hand_nt(P * nz);
    double v = 0;
    const size_t ntile = hand_plane_tiles(nx, ny, nz);
#pragma omp parallel reduction(+:v)
    {
#pragma omp for schedule(static)
    for (size_t tl = 0; tl < ntile; ++tl)
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = ny * tl / ntile; j < ny * (tl + 1) / ntile; ++j) {
            const HandRows R = hand_rows(x, nx, ny, nz, j, k);
            const float *r = R.r, *ym = R.ym, *yp = R.yp, *zm = R.zm, *zp = R.zp, *pf = nz > 1 ? zp + nx : hand_ahead2d(yp);
            float *gr = g + nx * j + P * k;
#define HAND_TIKG_VYZ(i) (wy * (yp[i] - r[i]) * (yp[i] - r[i]) + wz * (zp[i] - r[i]) * (zp[i] - r[i]))
#define HAND_TIKG_VG(i, ACC, G)                                                  \
    do {                                                                         \
        const float a = r[i + 1] - r[i];                                         \
        ACC += wx * a * a + HAND_TIKG_VYZ(i);                                    \
        G = cx * ((r[i] - r[i - 1]) - a) + HAND_TIKG_YZ(i);                      \
    } while (0)
            float acc = wx * (r[1] - r[0]) * (r[1] - r[0]) + HAND_TIKG_VYZ(0) + HAND_TIKG_VYZ(nx - 1);
            gr[0] = cx * (r[0] - r[1]) + HAND_TIKG_YZ(0);
            /* lines of 16 points (streamed where large), each after the
             * prefetch of row (j + 1, k + 1)'s; the points before and after
             * one vector each (HAND_VG_EDGE) */
            size_t ls = 1, le = 1 + (nx - 2) / 16 * 16;
            if (nt) {
                hand_span(gr, 1, nx - 1, &ls, &le);
                hand_partial_pf(gr, 1, nx - 1, ls, le, 2 * nx);
            }
            float lane[16] = {0}; /* point u of each line: lane u (registers) */
            if (ls < le) HAND_VG_EDGE(HAND_TIKG_VG, 1, ls, 1);
            else { /* no whole line */
#pragma omp simd reduction(+:acc)
                for (size_t i = 1; i < nx - 1; ++i) HAND_TIKG_VG(i, acc, gr[i]);
            }
            HAND_VG_LINES(HAND_TIKG_VG, ls, le, pf)
            if (ls < le) HAND_VG_EDGE(HAND_TIKG_VG, le, nx - 1, nx - 17);
            for (size_t u = 0; u < 16; ++u) acc += lane[u];
#undef HAND_TIKG_VG
            gr[nx - 1] = cx * (r[nx - 1] - r[nx - 2]) + HAND_TIKG_YZ(nx - 1);
            v += acc;
#undef HAND_TIKG_VYZ
        }
    hand_fence();
    }
    return v;
}
#undef HAND_TIKG_YZ

/* ---- the Tikhonov-Laplacian gradient, 2D and 3D: with replicated edges
 * the Laplacian L is symmetric, so dR/dx = 2 L (L x), fused: t = w L x is
 * kept in a ring of the rows (2D) or planes of a y tile (3D) it is needed
 * for, and L applied to it as the gradient's row is written, so the arrays
 * are read and written once, as by a copy ---- */

/* one row of s L r (rows R around it, neighbours clamped at the edges)
 * into o; NT: o is the gradient, streamed where large (HAND_ROW) */
/* s L r at point i of row r, its x neighbours at XM and XP (the point
 * itself past an end) */
#define HAND_LAP_PT(i, XM, XP) (s * (r[XP] + r[XM] + (ym[i] + yp[i] + zm[i] + zp[i] - 6 * r[i])))
static inline void hand_lap_row(size_t nx, const HandRows *R, float s, float *restrict o, int nt, const float *pf)
{
    const float *r = R->r, *ym = R->ym, *yp = R->yp, *zm = R->zm, *zp = R->zp;
    o[0] = HAND_LAP_PT(0, 0, 1);
    HAND_ROW_PF(nt, o, 1, nx - 1, i, pf, nx, HAND_LAP_PT(i, i - 1, i + 1));
    o[nx - 1] = HAND_LAP_PT(nx - 1, nx - 2, nx - 1);
}

/* hand_lap_row's row of s L r with its value's share, the sum of the
 * row's squares (t = s L r is the value's point term: value_grad), in
 * float lanes (a line's point u in lane u), each line after hand_pf(PF) */
static inline double hand_lap_row_v(size_t nx, const HandRows *R, float s, float *restrict o, const float *pf)
{
    const float *r = R->r, *ym = R->ym, *yp = R->yp, *zm = R->zm, *zp = R->zp;
    float lane[16] = {0}, acc = 0;
    o[0] = HAND_LAP_PT(0, 0, 1);
    o[nx - 1] = HAND_LAP_PT(nx - 1, nx - 2, nx - 1);
    size_t i0 = 1;
    for (; i0 + 16 <= nx - 1; i0 += 16) {
        hand_pf(pf, i0);
#pragma omp simd
        for (size_t u = 0; u < 16; ++u) {
            const float t = HAND_LAP_PT(i0 + u, i0 + u - 1, i0 + u + 1);
            o[i0 + u] = t;
            lane[u] += t * t;
        }
    }
#pragma omp simd reduction(+ : acc)
    for (size_t i = i0; i < nx - 1; ++i) {
        const float t = HAND_LAP_PT(i, i - 1, i + 1);
        o[i] = t;
        acc += t * t;
    }
    for (size_t u = 0; u < 16; ++u) acc += lane[u];
    return (double)acc + (double)(o[0] * o[0]) + (double)(o[nx - 1] * o[nx - 1]);
}
#undef HAND_LAP_PT

/* 2D: a thread's rows in order, t of rows j-1, j, j+1 in a ring of three */
static void hand_lap2_grad(size_t nx, size_t ny, const float *restrict x, float w, float *restrict g)
{
    const int nt = hand_nt(nx * ny);
#pragma omp parallel
    {
        float *rg = malloc(sizeof(float) * 3 * nx);
        size_t jnext = 0; /* a thread's rows are contiguous: the ring carries to the next row */
#define HAND_LAP_T(j) (rg + (j) % 3 * nx)
#pragma omp for schedule(static)
        for (size_t j = 0; j < ny; ++j) {
            for (size_t jj = j == jnext && j ? j + 1 : (j ? j - 1 : 0); jj <= j + 1 && jj < ny; ++jj) {
                const HandRows R = hand_rows(x, nx, ny, 1, jj, 0);
                hand_lap_row(nx, &R, w, HAND_LAP_T(jj), 0, hand_ahead2d(R.yp));
            }
            const float *t = HAND_LAP_T(j);
            const HandRows T = {t, j ? HAND_LAP_T(j - 1) : t, j + 1 < ny ? HAND_LAP_T(j + 1) : t, t, t};
            hand_lap_row(nx, &T, 2 * w, g + nx * j, nt, NULL);
            jnext = j + 1;
        }
#undef HAND_LAP_T
        hand_fence();
        free(rg);
    }
}

/* 3D: y tiles (a multiple of the threads), each marching up in z with t of
 * three planes of its rows and a halo row each side in a ring of about
 * HAND_LAP_RING bytes (256 KiB to 1 MiB ran the same, 512^3 and 256^3 on
 * the Xeon VM: perf/NOTES.md section 47) */
#ifndef HAND_LAP_RING
#define HAND_LAP_RING ((size_t)1 << 20)
#endif
static inline double hand_lap3_gv(size_t nx, size_t ny, size_t nz, const float *restrict x, float w, float *restrict g,
                                  const int want_v)
{
    const size_t P = nx * ny, ty = HAND_LAP_RING / (3 * sizeof(float) * nx);
    const size_t ntile = hand_tiles(ny, ty < 4 ? 2 : ty - 2);
    const int nt = hand_nt(P * nz);
    double val = 0;
#pragma omp parallel reduction(+ : val)
    {
        const size_t rows = (ny + ntile - 1) / ntile + 2;
        float *rg = malloc(sizeof(float) * 3 * rows * nx);
#pragma omp for schedule(static)
        for (size_t tl = 0; tl < ntile; ++tl) {
            const size_t j0 = ny * tl / ntile, j1 = ny * (tl + 1) / ntile;
            const size_t jl = j0 ? j0 - 1 : 0, jh = j1 < ny ? j1 : ny - 1;
#define HAND_LAP_RP(kk, j) (rg + ((kk) % 3 * rows + ((j) - jl)) * nx)
            for (size_t k = 0; k <= nz; ++k) {
                for (size_t j = jl; j <= jh && k < nz; ++j) {
                    const HandRows R = hand_rows(x, nx, ny, nz, j, k);
                    /* the value: each point's term once, from its own tile (the halo rows are the neighbours') */
                    if (want_v && j >= j0 && j < j1) val += hand_lap_row_v(nx, &R, w, HAND_LAP_RP(k, j), R.zp + nx);
                    else hand_lap_row(nx, &R, w, HAND_LAP_RP(k, j), 0, R.zp + nx);
                }
                if (k == 0) continue;
                const size_t q = k - 1; /* the gradient's plane: t of planes q-1, q, q+1 are in the ring */
                for (size_t j = j0; j < j1; ++j) {
                    const float *t = HAND_LAP_RP(q, j);
                    const HandRows T = {t, j ? HAND_LAP_RP(q, j - 1) : t, j + 1 < ny ? HAND_LAP_RP(q, j + 1) : t,
                                        q ? HAND_LAP_RP(q - 1, j) : t, k < nz ? HAND_LAP_RP(k, j) : t};
                    hand_lap_row(nx, &T, 2 * w, g + nx * j + P * q, nt, NULL);
                }
            }
#undef HAND_LAP_RP
        }
        hand_fence();
        free(rg);
    }
    return val;
}
static void hand_lap3_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float w, float *restrict g)
{
    (void)hand_lap3_gv(nx, ny, nz, x, w, g, 0);
}
/* the value_grad: the gradient's loop, each ring row's squares summed as it is written */
static double hand_lap3_value_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float w, float *restrict g)
{
    return hand_lap3_gv(nx, ny, nz, x, w, g, 1);
}

/* ---- Good's roughness gradient, 2D and 3D (nz = 1: 2D) ----
 * g(p) = sum_d w_d (2 s(p) - s(p - e_d) - s(p + e_d)) / s(p), s = sqrt(x +
 * eps), a neighbour past the grid s(p) itself (Neumann: its difference 0).
 * Each square root once a point (and its tile's halo rows), one division a
 * point: y tiles (a multiple of the threads) march up in z with s of three
 * planes of their rows and a halo row each side (one plane in 2D) in a ring
 * of about HAND_LAP_RING bytes, rows padded by a replicated point each
 * side.  Row by row: s of row j of plane k (2D: of row j + 1), then row
 * j's gradient of plane k - 1 (2D: of its plane), so that the roots
 * overlap the prefetched loads of the next row (filling a tile's plane
 * ahead of its gradients ran 1.0-1.1x stenc's time; perf/NOTES.md section
 * 45). */
static inline void hand_sqrt_row_pad(float *restrict o, const float *restrict r, size_t nx, float eps)
{
    size_t i0 = 0;
    for (; i0 + 16 <= nx; i0 += 16) {
        hand_pf(r, nx + i0); /* the next row's */
#pragma omp simd
        for (size_t i = i0; i < i0 + 16; ++i) o[i] = sqrtf(r[i] + eps);
    }
    for (size_t i = i0; i < nx; ++i) o[i] = sqrtf(r[i] + eps);
    o[-1] = o[0];
    o[nx] = o[nx - 1];
}
/* a row's gradient into GR and its value terms' sum (the fused
 * value_grad): s of the row and its y, z neighbours (padded rows), the
 * forward differences shared by both; lines of 16 points (streamed with
 * NT), the points before the first and after the last one vector each
 * (HAND_VG_EDGE, HAND_VG_LINES), float lanes summed at the row's end */
static inline float hand_goods_vg_row(float *restrict gr, const float *s, const float *ym, const float *yp,
                                      const float *zm, const float *zp, size_t nx, float wx, float wy, float wz, int nt)
{
#define HAND_GOODS_VG(i, ACC, G)                                                                  \
    do {                                                                                          \
        const float c = s[i], a = s[i + 1] - c, b = yp[i] - c, e = zp[i] - c;                     \
        ACC += wx * a * a + wy * b * b + wz * e * e;                                              \
        G = (wx * ((c - s[i - 1]) - a) + wy * ((c - ym[i]) - b) + wz * ((c - zm[i]) - e)) / c;    \
    } while (0)
    float acc = 0, lane[16] = {0}; /* point u of each line: lane u (registers) */
    size_t ls = 0, le = nx / 16 * 16;
    if (nt) {
        hand_span(gr, 0, nx, &ls, &le);
        hand_partial_pf(gr, 0, nx, ls, le, 2 * nx);
    }
    if (ls >= le) { /* no whole line */
#pragma omp simd reduction(+ : acc)
        for (size_t i = 0; i < nx; ++i) HAND_GOODS_VG(i, acc, gr[i]);
        return acc;
    }
    HAND_VG_EDGE(HAND_GOODS_VG, 0, ls, 0);
    HAND_VG_LINES(HAND_GOODS_VG, ls, le, (const float *)NULL)
    HAND_VG_EDGE(HAND_GOODS_VG, le, nx, nx - 16);
#undef HAND_GOODS_VG
    for (size_t u = 0; u < 16; ++u) acc += lane[u];
    return acc;
}
/* the gradient, and with WANT_V (a constant after inlining) the value
 * too, each row's through hand_goods_vg_row: returns it */
static inline double hand_goods_gv(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy,
                                   float wz, float eps, float *restrict g, const int want_v)
{
    const size_t P = nx * ny, np = nz > 1 ? 3 : 1, rs = nx + 2, ty = HAND_LAP_RING / (np * sizeof(float) * rs);
    const size_t ntile = hand_tiles(ny, ty < 4 ? 2 : ty - 2);
    const int nt = hand_nt(P * nz);
    double val = 0;
#pragma omp parallel reduction(+ : val)
    {
        const size_t rows = (ny + ntile - 1) / ntile + 2;
        float *rg = malloc(sizeof(float) * np * rows * rs);
#pragma omp for schedule(static)
        for (size_t tl = 0; tl < ntile; ++tl) {
            const size_t j0 = ny * tl / ntile, j1 = ny * (tl + 1) / ntile;
            const size_t jl = j0 ? j0 - 1 : 0, jh = j1 < ny ? j1 : ny - 1;
#define HAND_GOODS_RP(kk, j) (rg + ((kk) % np * rows + ((j) - jl)) * rs + 1)
            /* the first plane's rows (2D: the rows up to the tile's first) */
            for (size_t j = jl; j <= (nz > 1 ? jh : j0); ++j) hand_sqrt_row_pad(HAND_GOODS_RP(0, j), x + nx * j, nx, eps);
            for (size_t k = nz > 1 ? 1 : 0; k <= nz - (nz == 1); ++k) {
                const size_t q = nz > 1 ? k - 1 : 0; /* the gradient's plane: s of planes q-1, q, q+1 in the ring */
                for (size_t j = j0; j < j1; ++j) {
                    /* row by row: the rows of s row j's gradient needs first (3D: of plane k; 2D: row j + 1) */
                    const size_t fa = nz > 1 ? (j == j0 ? jl : j) : j + 1, fb = j + 1 == j1 ? jh : nz > 1 ? j : j + 1;
                    for (size_t f = fa; f <= fb && (nz == 1 || k < nz); ++f)
                        hand_sqrt_row_pad(HAND_GOODS_RP(nz > 1 ? k : 0, f), x + nx * f + P * (nz > 1 ? k : 0), nx, eps);
                    const float *s = HAND_GOODS_RP(q, j), *ym = j ? HAND_GOODS_RP(q, j - 1) : s;
                    const float *yp = j + 1 < ny ? HAND_GOODS_RP(q, j + 1) : s, *zm = q ? HAND_GOODS_RP(q - 1, j) : s;
                    const float *zp = k < nz ? HAND_GOODS_RP(k, j) : s;
                    float *gr = g + nx * j + P * q;
                    if (want_v) val += (double)hand_goods_vg_row(gr, s, ym, yp, zm, zp, nx, wx, wy, wz, nt);
                    else
                        HAND_ROW(nt, gr, 0, nx, i, nx,
                                 (wx * (2 * s[i] - s[i - 1] - s[i + 1]) + wy * (2 * s[i] - ym[i] - yp[i]) +
                                  wz * (2 * s[i] - zm[i] - zp[i])) / s[i]);
                }
            }
#undef HAND_GOODS_RP
        }
        hand_fence();
        free(rg);
    }
    return val;
}
static void hand_goods_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                            float eps, float *restrict g)
{
    (void)hand_goods_gv(nx, ny, nz, x, wx, wy, wz, eps, g, 0);
}
static double hand_goods_value_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy,
                                    float wz, float eps, float *restrict g)
{
    return hand_goods_gv(nx, ny, nz, x, wx, wy, wz, eps, g, 1);
}

/* ---- Good's roughness value, 3D, roots once a point ----
 * hand_goods_value's sum with s = sqrt(x + eps) evaluated once a point
 * (and its tile's halo row): y tiles march up in z with s of two planes of
 * their rows and the row above in a ring of about HAND_LAP_RING / 2 bytes
 * (rows padded by a replicated point: the x difference past the last
 * point is then 0).  Row by row, s of row j of plane k + 1 (its root
 * evaluations overlap the prefetched next row's loads), then row j's terms
 * of plane k, float lanes a row added in double.  Filling a tile's whole
 * plane before its terms ran 1.27x stenc's time at 512^3 (the loads then
 * wait in the fill, the terms run from cache; perf/NOTES.md section 45) */
static double hand_goods_value3(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                                float eps)
{
    const size_t P = nx * ny, rs = nx + 2, ty = HAND_LAP_RING / 2 / (2 * sizeof(float) * rs);
    const size_t ntile = hand_tiles(ny, ty < 4 ? 2 : ty - 1);
    double s = 0;
#pragma omp parallel reduction(+ : s)
    {
        const size_t rows = (ny + ntile - 1) / ntile + 1;
        float *rg = malloc(sizeof(float) * 2 * rows * rs);
#pragma omp for schedule(static)
        for (size_t tl = 0; tl < ntile; ++tl) {
            const size_t j0 = ny * tl / ntile, j1 = ny * (tl + 1) / ntile, jh = j1 < ny ? j1 : ny - 1;
#define HAND_GOODS_VP(kk, j) (rg + ((kk) % 2 * rows + ((j) - j0)) * rs + 1)
            for (size_t j = j0; j <= jh; ++j) hand_sqrt_row_pad(HAND_GOODS_VP(0, j), x + nx * j, nx, eps);
            for (size_t k = 0; k < nz; ++k)
                for (size_t j = j0; j < j1; ++j) {
                    for (size_t f = j; k + 1 < nz && f <= (j + 1 == j1 ? jh : j); ++f)
                        hand_sqrt_row_pad(HAND_GOODS_VP(k + 1, f), x + nx * f + P * (k + 1), nx, eps);
                    const float *s0 = HAND_GOODS_VP(k, j), *s1 = j + 1 < ny ? HAND_GOODS_VP(k, j + 1) : s0;
                    const float *zr = k + 1 < nz ? HAND_GOODS_VP(k + 1, j) : s0;
                    s += (double)hand_goods_terms(s0, s1, zr, nx, wx, wy, wz, NULL, 0);
                }
#undef HAND_GOODS_VP
        }
        free(rg);
    }
    return s;
}

/* ---- the total Hessian's gradient, 3D ----
 * R = sqrt(eps + sum_t c_t d_t^2) over the six second differences (xx, yy,
 * zz central; xy, xz, yz forward mixed), c_xx = wx^2, c_xy = 2 wx wy, ...
 * Each point's factors f_t = c_t d_t / R are computed once, into a ring of
 * three planes; the gradient g = sum_t D_t^T f_t gathers 21 terms:
 *   g(q) = sum_{d = x, y, z} (fdd(q - ed) - 2 fdd(q) + fdd(q + ed))
 *        + sum_{d < e} (fde(q - ed - ee) - fde(q - ed) - fde(q - ee) + fde(q)).
 * Neumann taps are clamped; their transposes are these sums with fxx, fyy,
 * fzz replicated one point past the edges and the mixed factors 0 there (a
 * mixed difference is 0 on the last row, column and plane): rows padded by
 * a point in x, row pointers swapped at the y and z edges.  Tiles of rows
 * in y (a halo row each side: the factors of the rows next to the tile)
 * march up in z; after the factors of row (j, k), row (j, k - 1) is
 * gathered.  The ring: six factors, three planes, about 1 MiB a thread,
 * in a core's L2 with the planes of x the factors read (on the Xeon VM a
 * ring of 4 MiB took 1.49x the time at 512^3 and 1.24x at 256^3, 2 MiB
 * 1.15x and 1.00x, 512 KiB 1.07x and 1.02x, perf/NOTES.md section 47; on
 * a Zen VM 1-9 MiB measured the same within its spread, section 28).  A form that
 * regroups the 21 terms into five reads a point (a pass over each row
 * summing the factors into plane-below, row-below and own-row terms) ran
 * 0.92-1.00 of this one's time at 128^3-256^3 and 1.09-1.33 at 512^3. */
typedef struct { float *xx, *yy, *zz, *xy, *xz, *yz; } HandHessRow;
#ifndef HAND_HESS_RING
#define HAND_HESS_RING ((size_t)1 << 20)
#endif

/* the six factors of row (j, k), padded: fxx replicated at -1 and nx, fxy
 * and fxz 0 at -1 */
static inline void hand_hess_factors(size_t nx, size_t ny, size_t nz, size_t j, size_t k, const float *restrict x,
                                     const float w[3], float eps, const HandHessRow *f)
{
    const HandRows R = hand_rows(x, nx, ny, nz, j, k);
    const float *r = R.r, *ym = R.ym, *yp = R.yp, *zm = R.zm, *zp = R.zp;
    const float *yz = hand_rows(x, nx, ny, nz, j + 1 < ny ? j + 1 : j, k).zp; /* row (j+1, k+1), clamped */
    const float cxx = w[0] * w[0], cyy = w[1] * w[1], czz = w[2] * w[2];
    const float cxy = 2 * w[0] * w[1], cxz = 2 * w[0] * w[2], cyz = 2 * w[1] * w[2];
    float *restrict fxx = f->xx, *restrict fyy = f->yy, *restrict fzz = f->zz;
    float *restrict fxy = f->xy, *restrict fxz = f->xz, *restrict fyz = f->yz;
#define HAND_HESS_POINT(i, xm, xp, xpyp, xpzp)                                                                     \
    do {                                                                                                           \
        const float c = r[i], dxx = (xp) - 2 * c + (xm), dyy = yp[i] - 2 * c + ym[i], dzz = zp[i] - 2 * c + zm[i]; \
        const float dxy = (xpyp) - (xp) - yp[i] + c, dxz = (xpzp) - (xp) - zp[i] + c, dyz = yz[i] - yp[i] - zp[i] + c; \
        const float s = 1.0f / sqrtf(eps + cxx * dxx * dxx + cyy * dyy * dyy + czz * dzz * dzz + cxy * dxy * dxy +    \
                                     cxz * dxz * dxz + cyz * dyz * dyz);                                            \
        fxx[i] = cxx * dxx * s; fyy[i] = cyy * dyy * s; fzz[i] = czz * dzz * s;                                     \
        fxy[i] = cxy * dxy * s; fxz[i] = cxz * dxz * s; fyz[i] = cyz * dyz * s;                                     \
    } while (0)
    HAND_HESS_POINT(0, r[0], r[1], yp[1], zp[1]);
    size_t i0 = 1; /* lines of 16 points, each after the prefetch of row (j + 1, k + 1)'s */
    for (; i0 + 16 <= nx - 1; i0 += 16) {
        hand_pf(yz, i0);
#pragma omp simd
        for (size_t i = i0; i < i0 + 16; ++i) HAND_HESS_POINT(i, r[i - 1], r[i + 1], yp[i + 1], zp[i + 1]);
    }
#pragma omp simd
    for (size_t i = i0; i < nx - 1; ++i) HAND_HESS_POINT(i, r[i - 1], r[i + 1], yp[i + 1], zp[i + 1]);
    HAND_HESS_POINT(nx - 1, r[nx - 2], r[nx - 1], yp[nx - 1], zp[nx - 1]);
#undef HAND_HESS_POINT
    fxx[-1] = fxx[0];
    fxx[nx] = fxx[nx - 1];
    fxy[-1] = fxz[-1] = 0;
}

/* ---- the total Hessian's value, 3D ----
 * sum_p R(p), R as above (Neumann taps clamped).  Rows in z-major order,
 * lines of 16 points in lanes (registers) after the prefetch of row
 * (j + 1, k + 1), the shared 2 x[p] computed once a point; the row's ends
 * (clamped x taps) in scalar code. */
/* R at a point from its ten taps (c the point, xpyp = x[p + ex + ey], ...),
 * C the six coefficients (xx yy zz xy xz yz) */
static inline float hand_hess_r(float c, float xm, float xp, float ym, float yp, float zm, float zp, float xpyp,
                                float xpzp, float ypzp, const float C[6], float eps)
{
    const float c2 = 2 * c, dxx = xp - c2 + xm, dyy = yp - c2 + ym, dzz = zp - c2 + zm;
    const float dxy = xpyp - xp - yp + c, dxz = xpzp - xp - zp + c, dyz = ypzp - yp - zp + c;
    return sqrtf(eps + C[0] * dxx * dxx + C[1] * dyy * dyy + C[2] * dzz * dzz + C[3] * dxy * dxy + C[4] * dxz * dxz +
                 C[5] * dyz * dyz);
}
static double hand_hess3_value(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                               float eps)
{
    const float C[6] = {wx * wx, wy * wy, wz * wz, 2 * wx * wy, 2 * wx * wz, 2 * wy * wz};
    double s = 0;
#pragma omp parallel for collapse(2) reduction(+ : s) schedule(static)
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j) {
            const HandRows R = hand_rows(x, nx, ny, nz, j, k);
            const float *r = R.r, *ym = R.ym, *yp = R.yp, *zm = R.zm, *zp = R.zp;
            const float *yz = hand_rows(x, nx, ny, nz, j + 1 < ny ? j + 1 : j, k).zp;
#define HAND_HESS_R(i, xm, xp, xpyp, xpzp) \
    hand_hess_r(r[i], xm, xp, ym[i], yp[i], zm[i], zp[i], xpyp, xpzp, yz[i], C, eps)
            float acc = HAND_HESS_R(0, r[0], r[1], yp[1], zp[1]) + HAND_HESS_R(nx - 1, r[nx - 2], r[nx - 1], yp[nx - 1], zp[nx - 1]);
            float lane[16] = {0};
            size_t i0 = 1;
            for (; i0 + 16 <= nx - 1; i0 += 16) {
                hand_pf(yz, nx + i0);
#pragma omp simd
                for (size_t q = 0; q < 16; ++q) lane[q] += HAND_HESS_R(i0 + q, r[i0 + q - 1], r[i0 + q + 1], yp[i0 + q + 1], zp[i0 + q + 1]);
            }
#pragma omp simd reduction(+ : acc)
            for (size_t i = i0; i < nx - 1; ++i) acc += HAND_HESS_R(i, r[i - 1], r[i + 1], yp[i + 1], zp[i + 1]);
#undef HAND_HESS_R
            for (size_t q = 0; q < 16; ++q) acc += lane[q];
            s += (double)acc;
        }
    return s;
}

/* the 21-term gather of one row: f the row's factors; yym, xym, yzm those
 * of the row below (fyy, fxy, fyz); yyp the row above's fyy; zzm, xzm,
 * yzzm the plane below's (fzz, fxz, fyz), yzmm its row below's fyz; zzp
 * the plane above's fzz */
typedef struct { const float *yym, *xym, *yzm, *yyp, *zzm, *xzm, *yzzm, *yzmm, *zzp; } HandHessNb;
static inline void hand_hess_gather(size_t nx, const HandHessRow *f, const HandHessNb *n, float *restrict g, int nt)
{
    const float *restrict fxx = f->xx, *restrict fyy = f->yy, *restrict fzz = f->zz;
    const float *restrict fxy = f->xy, *restrict fxz = f->xz, *restrict fyz = f->yz;
    const float *restrict yym = n->yym, *restrict xym = n->xym, *restrict yzm = n->yzm, *restrict yyp = n->yyp;
    const float *restrict zzm = n->zzm, *restrict xzm = n->xzm, *restrict yzzm = n->yzzm, *restrict yzmm = n->yzmm;
    const float *restrict zzp = n->zzp;
    HAND_ROW(nt, g, 0, nx, i, nx,
             (fxx[i - 1] - 2 * fxx[i] + fxx[i + 1]) + (yym[i] - 2 * fyy[i] + yyp[i]) + (zzm[i] - 2 * fzz[i] + zzp[i]) +
                 (xym[i - 1] - fxy[i - 1] - xym[i] + fxy[i]) + (xzm[i - 1] - fxz[i - 1] - xzm[i] + fxz[i]) +
                 (yzmm[i] - yzm[i] - yzzm[i] + fyz[i]));
}

static void hand_hess3_grad(size_t nx, size_t ny, size_t nz, const float *restrict x, float wx, float wy, float wz,
                            float eps, float *restrict g)
{
    const size_t P = nx * ny, rs = nx + 2; /* a ring row: nx points and a pad each side */
    const float w[3] = {wx, wy, wz};
    /* rows a tile: a ring of about HAND_HESS_RING bytes (18 rows a tile
     * row), less the halo rows; the tiles' number a multiple of the
     * threads' */
    const size_t ty = HAND_HESS_RING / (18 * sizeof(float) * rs);
    const size_t ntile = hand_tiles(ny, ty < 6 ? 4 : ty - 2);
    const int nt = hand_nt(P * nz);
#pragma omp parallel
    {
        const size_t rows = (ny + ntile - 1) / ntile + 2;
        float *rg = malloc(sizeof(float) * (18 * rows + 1) * rs), *zero = rg + 18 * rows * rs + 1;
        memset(zero - 1, 0, sizeof(float) * rs);
#pragma omp for schedule(static)
        for (size_t t = 0; t < ntile; ++t) {
            const size_t j0 = ny * t / ntile, j1 = ny * (t + 1) / ntile;
            const size_t jl = j0 ? j0 - 1 : 0, jh = j1 < ny ? j1 : ny - 1;
            /* factor m (0-5: xx yy zz xy xz yz) of row j, plane kk */
#define HAND_HESS_RP(kk, m, j) (rg + (((kk) % 3 * 6 + (m)) * rows + ((j) - jl)) * rs + 1)
#define HAND_HESS_ROW(kk, j)                                                                                      \
    {HAND_HESS_RP(kk, 0, j), HAND_HESS_RP(kk, 1, j), HAND_HESS_RP(kk, 2, j),                                      \
     HAND_HESS_RP(kk, 3, j), HAND_HESS_RP(kk, 4, j), HAND_HESS_RP(kk, 5, j)}
            for (size_t k = 0; k <= nz; ++k)
                for (size_t j = jl; j <= jh; ++j) {
                    if (k < nz) {
                        const HandHessRow f = HAND_HESS_ROW(k, j);
                        hand_hess_factors(nx, ny, nz, j, k, x, w, eps, &f);
                    }
                    if (k == 0 || j < j0 || j >= j1) continue;
                    const size_t q = k - 1; /* gather row (j, q) */
                    const HandHessRow f = HAND_HESS_ROW(q, j);
                    const HandHessNb n = {j ? HAND_HESS_RP(q, 1, j - 1) : f.yy,
                                          j ? HAND_HESS_RP(q, 3, j - 1) : zero,
                                          j ? HAND_HESS_RP(q, 5, j - 1) : zero,
                                          j + 1 < ny ? HAND_HESS_RP(q, 1, j + 1) : f.yy,
                                          q ? HAND_HESS_RP(q - 1, 2, j) : f.zz,
                                          q ? HAND_HESS_RP(q - 1, 4, j) : zero,
                                          q ? HAND_HESS_RP(q - 1, 5, j) : zero,
                                          q && j ? HAND_HESS_RP(q - 1, 5, j - 1) : zero,
                                          k < nz ? HAND_HESS_RP(k, 2, j) : f.zz};
                    hand_hess_gather(nx, &f, &n, g + nx * j + P * q, nt);
                }
#undef HAND_HESS_ROW
#undef HAND_HESS_RP
        }
        hand_fence();
        free(rg);
    }
}

/* ---- the diffusion step (stencils/diffusion.stn), 2D (nz = 1) and 3D ----
 * T2 = T + dt lam Ci (Laplacian of T with 1/dx^2 ...) on the interior
 * points: each row through HAND_ROW_PF2, so T2's whole lines stream where
 * it is large, each after a prefetch of the rows the next row reads first
 * (3D: T's row j + 1 of plane k + 1 and Ci's row j + 1; 2D: both rows
 * j + 1, 2 KiB on); the
 * reciprocals of dx^2, dy^2, dz^2 once (so does stenc since session 59:
 * the same bits, perf/NOTES.md section 67).  perf/NOTES.md section 65 */
static void hand_diffusion_step(size_t nx, size_t ny, size_t nz, float *restrict T2, const float *restrict T,
                                const float *restrict Ci, float dt, float lam, float dx, float dy, float dz)
{
    const int nt = hand_nt(nx * ny * nz);
    const size_t P = nx * ny, sz = nz > 1 ? P : 0, kl = nz > 1 ? 1 : 0, kh = nz > 1 ? nz - 1 : 1;
    const float rx = 1 / (dx * dx), ry = 1 / (dy * dy), rz = nz > 1 ? 1 / (dz * dz) : 0;
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(static)
        for (size_t k = kl; k < kh; ++k)
            for (size_t j = 1; j < ny - 1; ++j) {
                const float *t = T + nx * j + P * k, *c = Ci + nx * j + P * k;
                const float *pf = nz > 1 ? t + nx + P : hand_ahead2d(t + nx), *pfc = nz > 1 ? c + nx : hand_ahead2d(c + nx);
                float *o = T2 + nx * j + P * k;
#define HAND_DIFF_XY(i) (((t[i + 1] - 2 * t[i]) + t[i - 1]) * rx + ((t[i + nx] - 2 * t[i]) + t[i - nx]) * ry)
                if (sz)
                    HAND_ROW_PF2(nt, o, 1, nx - 1, i, pf, pfc, nx,
                                 t[i] + dt * (lam * c[i] * (HAND_DIFF_XY(i) + ((t[i + sz] - 2 * t[i]) + t[i - sz]) * rz)));
                else
                    HAND_ROW_PF2(nt, o, 1, nx - 1, i, pf, pfc, nx, t[i] + dt * (lam * c[i] * HAND_DIFF_XY(i)));
#undef HAND_DIFF_XY
            }
        hand_fence();
    }
}

/* ---- the Stokes viscosity adjoint (stencils/stokes3d.stn kernel viscosity) ----
 * EtaC = harm(Eta) over the (n-1)^3 cells of an n^3 grid; its adjoint adds to each point
 * Eta_bar[p] += (1/Eta_p^2) * sum over the cells c around p of
 * EtaC_bar[c] * 8 / S_c^2 (S_c the sum of 1/Eta over c's corners) and zeroes
 * EtaC_bar.  Each thread marches its own run of z planes with two rings of
 * planes: R = 1/Eta (a division a point) and G = EtaC_bar * 8 / S^2 (a
 * division a cell), so a point costs two divisions; it gathers plane k
 * from G's planes k - 1 and k, then zeroes EtaC_bar's plane k while it is
 * in cache.  The plane before a thread's first, which its neighbour
 * zeroes, is read before a barrier.  perf/NOTES.md section 66 */
static void hand_visc_rplane(size_t n, const float *restrict e, float *restrict R)
{
#pragma omp simd
    for (size_t q = 0; q < n * n; ++q) R[q] = 1.0f / e[q];
}
static void hand_visc_gplane(size_t n, const float *restrict R0, const float *restrict R1, const float *restrict cb,
                             float *restrict G)
{
    const size_t m = n - 1;
    for (size_t j = 0; j < m; ++j) {
        const float *a = R0 + n * j, *b = a + n, *c = R1 + n * j, *d = c + n, *w = cb + m * j;
        float *g = G + m * j;
#pragma omp simd
        for (size_t i = 0; i < m; ++i) {
            const float s = (a[i] + a[i + 1]) + (b[i] + b[i + 1]) + (c[i] + c[i + 1]) + (d[i] + d[i + 1]);
            g[i] = w[i] * 8.0f / (s * s);
        }
    }
}
/* plane k's points from G's planes k - 1 (Gm) and k (G0), NULL past the cells */
static void hand_visc_gather(size_t n, const float *restrict R, const float *Gm, const float *G0, float *restrict eb)
{
    const size_t m = n - 1;
    for (size_t j = 0; j < n; ++j) {
        const float *g[4] = {0}, *pl[2] = {Gm, G0}, *r = R + n * j;
        float *o = eb + n * j;
        int ng = 0;
        for (int z = 0; z < 2; ++z)
            if (pl[z]) {
                if (j >= 1) g[ng++] = pl[z] + m * (j - 1);
                if (j < m) g[ng++] = pl[z] + m * j;
            }
        if (ng == 4) {
            const float *g0 = g[0], *g1 = g[1], *g2 = g[2], *g3 = g[3];
#pragma omp simd
            for (size_t i = 1; i < m; ++i) {
                const float s = (g0[i - 1] + g0[i]) + (g1[i - 1] + g1[i]) + (g2[i - 1] + g2[i]) + (g3[i - 1] + g3[i]);
                o[i] += r[i] * r[i] * s;
            }
        } else
            for (size_t i = 1; i < m; ++i) {
                float s = 0;
                for (int q = 0; q < ng; ++q) s += g[q][i - 1] + g[q][i];
                o[i] += r[i] * r[i] * s;
            }
        float s0 = 0, s1 = 0;
        for (int q = 0; q < ng; ++q) s0 += g[q][0], s1 += g[q][m - 1];
        o[0] += r[0] * r[0] * s0, o[m] += r[m] * r[m] * s1;
    }
}
static void hand_visc_adjoint(size_t n, const float *restrict Eta, float *restrict Eta_bar, float *restrict EtaC_bar)
{
    const size_t m = n - 1, P = n * n, C = m * m;
#pragma omp parallel
    {
        const size_t t = (size_t)omp_get_thread_num(), nth = (size_t)omp_get_num_threads();
        const size_t k0 = n * t / nth, k1 = n * (t + 1) / nth;
        float *R[2] = {malloc(P * sizeof(float)), malloc(P * sizeof(float))};
        float *G[2] = {malloc(C * sizeof(float)), malloc(C * sizeof(float))};
        if (!R[0] || !R[1] || !G[0] || !G[1]) abort();
        hand_visc_rplane(n, Eta + P * k0, R[k0 & 1]);
        if (k0 >= 1) {
            hand_visc_rplane(n, Eta + P * (k0 - 1), R[(k0 - 1) & 1]);
            hand_visc_gplane(n, R[(k0 - 1) & 1], R[k0 & 1], EtaC_bar + C * (k0 - 1), G[(k0 - 1) & 1]);
        }
#pragma omp barrier
        for (size_t k = k0; k < k1; ++k) {
            if (k < m) {
                hand_visc_rplane(n, Eta + P * (k + 1), R[(k + 1) & 1]);
                hand_visc_gplane(n, R[k & 1], R[(k + 1) & 1], EtaC_bar + C * k, G[k & 1]);
            }
            hand_visc_gather(n, R[k & 1], k >= 1 ? G[(k - 1) & 1] : NULL, k < m ? G[k & 1] : NULL, Eta_bar + P * k);
            if (k < m) memset(EtaC_bar + C * k, 0, C * sizeof(float));
        }
        free(R[0]); free(R[1]); free(G[0]); free(G[1]);
    }
}

#endif
