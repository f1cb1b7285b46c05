/* stenc performance suite (CPU, and CUDA when a device is present).
 *
 * For every kernel: median time over repetitions after a warm-up (the
 * ceilings, the regularizers and the hand-written peers of one size in
 * rounds that call each of them once, round_robin), the bytes
 * that must move (each input read once, each output written once), T_eff, and
 * the ratio to a ceiling measured in the same run over the same bytes: a
 * read-only sum (for values) or a copy (for gradients and updates).  Peers:
 * expert hand-written C loops for TV 2D/3D (value, gradient), the
 * Tikhonov gradient (gradient, value_grad), the Laplacian (gradient),
 * Good's roughness (value) and the 3D Hessian (gradient) (perf/hand.h,
 * same flags), checked against stenc in the same run.
 *
 * The two ratios issue 14 sets targets for (stenc / hand loop, value_grad /
 * grad) are also measured as duels: the two calls alternated, the median
 * of the pairs' ratios (duel(), written to a second CSV).
 *
 *   stenc-bench [--quick] [--csv FILE] [--duels FILE] [--only NAME,NAME...] [--dims 2|3]
 * --only and --dims select kernels and sizes for a focused measurement (the
 * ceilings are always measured).
 * Rows: kernel,entry,backend,dims,nx,ny,nz,precision,median_s,bytes,teff_gbs,ceiling,ceiling_gbs,ratio
 * Duel rows: pair,kernel,dims,nx,ny,nz,precision,median,q1,q3,pairs */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_kernels.h"

static FILE *csv, *duels;
static int quick;
static const char *only; /* comma-separated kernel names, or NULL for all */

static int selected(const char *name)
{
    if (!only) return 1;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* median seconds of fn(ctx) over repetitions after one warm-up call */
typedef void (*run_f)(void *ctx);
static double median_time(run_f fn, void *ctx)
{
    double t[25];
    fn(ctx);
    double t0 = bench_now();
    fn(ctx);
    double one = bench_now() - t0;
    int reps = one > 0.5 ? 3 : one > 0.05 ? 7 : quick ? 9 : 15;
    for (int r = 0; r < reps; ++r) {
        double s = bench_now();
        fn(ctx);
        t[r] = bench_now() - s;
    }
    qsort(t, (size_t)reps, sizeof *t, bench_cmpd);
    return t[reps / 2];
}

/* Medians of several functions timed in rounds: each round calls every
 * function once, so a slow phase of the machine (this VM's speed drifts by
 * up to 1.4x within one process, perf/NOTES.md section 13) falls on all of
 * them alike and the ratios between them (value_grad / grad, stenc / hand,
 * kernel / ceiling) come from the same minutes.  Each round in an order of
 * its own (a fixed pseudo-random permutation), so that no function always
 * runs right after the same one: the same object timed twice in a row
 * read 0.95-1.03 of its time the second time, value_grad 0.95-0.97 in five
 * runs of eight (section 20).  One warm-up round first; its length chooses
 * the number of rounds. */
enum { RR_MAX = 64 };
typedef struct { run_f fn; void *ctx; double t[25]; } RoundItem;
static void round_robin(RoundItem *it, int n)
{
    double t0 = bench_now();
    for (int k = 0; k < n; ++k) it[k].fn(it[k].ctx);
    double one = bench_now() - t0;
    int reps = one > 20 ? 3 : one > 4 ? 5 : one > 0.5 ? 7 : quick ? 9 : 11;
    int order[RR_MAX];
    unsigned lcg = 12345u;
    for (int r = 0; r < reps; ++r) {
        for (int k = 0; k < n; ++k) order[k] = k;
        for (int k = n - 1; k > 0; --k) { /* Fisher-Yates */
            lcg = lcg * 1103515245u + 12345u;
            const int q = (int)((lcg >> 16) % (unsigned)(k + 1)), t = order[k];
            order[k] = order[q];
            order[q] = t;
        }
        for (int m = 0; m < n; ++m) {
            const int k = order[m];
            double s = bench_now();
            it[k].fn(it[k].ctx);
            it[k].t[r] = bench_now() - s;
        }
    }
    for (int k = 0; k < n; ++k) {
        qsort(it[k].t, (size_t)reps, sizeof(double), bench_cmpd);
        it[k].t[0] = it[k].t[reps / 2];
    }
}

/* A duel: A and B called alternately (AB, BA, AB, ...) and the ratio tA / tB
 * of each pair; its median and quartiles go to the duels CSV.  round_robin's
 * ratios (a median over a median) take A and B up to a round apart, seconds
 * at 512^3 with 37 items a round, and its cells moved between runs by more
 * than the 1.05 the targets ask to resolve (perf/NOTES.md section 22); a
 * pair is two calls apart, so a drift of the VM's speed falls on both.
 * Called after round_robin: both are warm and their medians there (t[0])
 * choose the number of pairs. */
typedef struct { const char *pair, *kernel, *prec; int dims; size_t nx, ny, nz; } DuelKey;
static void duel(const DuelKey *k, const RoundItem *a, const RoundItem *b)
{
    enum { DMAX = 21 };
    const double one = a->t[0] + b->t[0];
    const int n = quick ? 7 : one > 0.2 ? 11 : one > 0.02 ? 15 : DMAX;
    double r[DMAX];
    for (int p = 0; p < n; ++p) {
        double t[2];
        for (int h = 0; h < 2; ++h) {
            const int w = h ^ (p & 1); /* 0: A, 1: B */
            const RoundItem *it = w ? b : a;
            const double s = bench_now();
            it->fn(it->ctx);
            t[w] = bench_now() - s;
        }
        r[p] = t[0] / t[1];
    }
    qsort(r, (size_t)n, sizeof(double), bench_cmpd);
    fprintf(duels, "%s,%s,%d,%zu,%zu,%zu,%s,%.4f,%.4f,%.4f,%d\n", k->pair, k->kernel, k->dims, k->nx, k->ny, k->nz, k->prec,
            r[n / 2], r[n / 4], r[(3 * n) / 4], n);
}

/* ---------------- ceilings ---------------- */
typedef struct { size_t n; float *a, *b; double *da, *db; int dbl; double sink; } Ceil;
/* read-only sum over blocks of 2048 elements summed in the data's precision
 * T, a line of 64 bytes at a time into vector lanes (short dependency
 * chains), each line after a software prefetch of the line 512 bytes on,
 * blocks added in double.  The prefetch made this sum 0.88-0.94 of the
 * plain vector loop's time on the Zen 3 VM (256 and 1024 bytes ahead alike
 * or worse; a copy gained nothing from it: perf/NOTES.md section 65), so the
 * read ceiling is the prefetched loop */
#define DEFINE_BLOCK_SUM(NAME, T)                                                                                       \
    static double NAME(const T *restrict a, size_t n)                                                                  \
    {                                                                                                                  \
        enum { L = 64 / sizeof(T) };                                                                                   \
        const size_t B = 2048, nb = n / B;                                                                             \
        double s = 0;                                                                                                  \
        _Pragma("omp parallel for reduction(+:s) schedule(static)")                                                    \
        for (size_t b = 0; b < nb; ++b) {                                                                              \
            T lane[L] = {0}, acc = 0;                                                                                  \
            for (size_t l = b * B; l < b * B + B; l += L) {                                                            \
                __builtin_prefetch((const void *)((uintptr_t)(a + l) + 512));                                          \
                _Pragma("omp simd") for (size_t q = 0; q < L; ++q) lane[q] += a[l + q];                                \
            }                                                                                                          \
            for (size_t q = 0; q < L; ++q) acc += lane[q];                                                             \
            s += acc;                                                                                                  \
        }                                                                                                              \
        for (size_t i = nb * B; i < n; ++i) s += a[i];                                                                 \
        return s;                                                                                                      \
    }
DEFINE_BLOCK_SUM(sum_f32, float)
DEFINE_BLOCK_SUM(sum_f64, double)
static void run_sum(void *p)
{
    Ceil *c = p;
    c->sink += c->dbl ? sum_f64(c->da, c->n) : sum_f32(c->a, c->n);
}
static void run_copy(void *p)
{
    Ceil *c = p;
    if (c->dbl) {
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < c->n; ++i) c->db[i] = c->da[i];
    } else {
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < c->n; ++i) c->b[i] = c->a[i];
    }
}

static void row(const char *kernel, const char *entry, const char *backend, int dims, size_t nx, size_t ny, size_t nz,
                const char *prec, double t, double bytes, const char *ceil, double ceil_gbs)
{
    bench_row(csv, kernel, entry, backend, dims, nx, ny, nz, prec, t, bytes, ceil, ceil_gbs);
}

/* ---------------- regularizers and mini-apps: perf/bench_kernels.h ---------------- */
DEFINE_RUN_REG(call_reg, stenc_, BENCH_CPU_CALL)
DEFINE_RUN_MINI(run_mini_f32, float, f32, stenc_, BENCH_CPU_CALL)
DEFINE_RUN_MINI(run_mini_f64, double, f64, stenc_, BENCH_CPU_CALL)

static void run_reg(void *p)
{
    RegCall *c = p;
    int rc = call_reg(c);
    if (rc != STENC_OK) { fprintf(stderr, "stenc-bench: %s failed: %s\n", reg_names[c->reg], stenc_strerror(rc)); exit(1); }
}

/* ---------------- peer: expert hand-written loops (perf/hand.h), float (the TV value also double), neumann ---------------- */
#include "hand.h"

/* the copy with streamed stores of its whole 64-byte lines (a plain
 * intrinsic loop; HAND_ROW's line buffer ran a copy 0.75-0.93x as fast as
 * the plain copy, so it is only the fallback without AVX): the write
 * ceiling of the kernels that stream their gradient, reported next to the
 * plain copy (perf/NOTES.md section 37); f64 as twice the floats */
static void run_copy_nt(void *p)
{
    Ceil *c = p;
    const float *a = c->dbl ? (const float *)c->da : c->a;
    float *b = c->dbl ? (float *)c->db : c->b;
    const size_t n = c->n * (c->dbl ? 2 : 1);
#pragma omp parallel
    {
        const size_t nth = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        const size_t lo = n * t / nth, hi = n * (t + 1) / nth;
#if defined(__AVX__)
        size_t s, e; /* the lines, a vector load and a streamed store at a time */
        hand_span(b, lo, hi, &s, &e);
        for (size_t i = lo; i < s; ++i) b[i] = a[i];
        for (size_t i = s; i < e; i += 8) _mm256_stream_ps(b + i, _mm256_loadu_ps(a + i));
        for (size_t i = e; i < hi; ++i) b[i] = a[i];
#else
        HAND_ROW(1, b, lo, hi, i, 0, a[i]);
#endif
        hand_fence();
    }
}
typedef struct { size_t nx, ny, nz; int dims, dbl; const void *x; void *g; double v; int what; } Peer;
enum { HAND_TV_VALUE, HAND_TV_GRAD, HAND_TIKG_GRAD, HAND_LAP_GRAD, HAND_TIKG_VG, HAND_HESS_GRAD, HAND_GOODS_VALUE, HAND_HESS_VALUE, HAND_GOODS_GRAD,
       HAND_TV_VG, HAND_GOODS_VG, HAND_HUBER_GRAD, HAND_HUBER_VG, HAND_LAP_VG, NHAND };
/* tv, tv, tikhonov_gradient, tikhonov_laplace, tikhonov_gradient, hessian, goods, hessian, goods, tv, goods, huber,
 * huber, tikhonov_laplace */
static const int hand_reg[NHAND] = {0, 0, 5, 4, 5, 8, 7, 8, 7, 0, 7, 3, 3, 4};
/* whether hand loop w is written for D dimensions (the Hessian's two and
 * the fused TV, Good's and Laplacian value_grads for 3D only) and double
 * (dbl 1: the TV value only; the others are float) */
static int hand_has(int w, int D, int dbl)
{
    return ((w != HAND_HESS_GRAD && w != HAND_HESS_VALUE && w != HAND_TV_VG && w != HAND_GOODS_VG && w != HAND_LAP_VG) ||
            D == 3) &&
           (!dbl || w == HAND_TV_VALUE);
}
/* a hand loop's entry: 0 value, 1 grad, 2 value_grad */
static int hand_what(int w)
{
    return w == HAND_TV_VALUE || w == HAND_GOODS_VALUE || w == HAND_HESS_VALUE ? 0
           : w == HAND_TIKG_VG || w == HAND_TV_VG || w == HAND_GOODS_VG || w == HAND_HUBER_VG || w == HAND_LAP_VG ? 2
                                                                                                               : 1;
}
static const char *const entry_names[3] = {"value", "grad", "value_grad"};
/* one size's round: the three ceilings, three entries per regularizer, the hand loops */
_Static_assert(3 + 3 * NREG + NHAND <= RR_MAX, "round_robin's items: raise RR_MAX");
static void run_peer(void *p)
{
    Peer *c = p;
    if (c->dbl) /* hand_has: the TV value */
        c->v = c->dims == 2 ? hand_tv2_value_f64(c->nx, c->ny, c->x, 1, 1, 1e-3) : hand_tv3_value_f64(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3);
    else if (c->what == HAND_GOODS_VALUE && c->dims == 3) c->v = hand_goods_value3(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f);
    else if (c->what == HAND_GOODS_VALUE) c->v = hand_goods_value(c->nx, c->ny, 1, c->x, 1, 1, 1, 1e-3f);
    else if (c->what == HAND_GOODS_VG) c->v = hand_goods_value_grad(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f, c->g);
    else if (c->what == HAND_TV_VG) c->v = hand_tv3_value_grad(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f, c->g);
    else if (c->what == HAND_HUBER_GRAD || c->what == HAND_HUBER_VG)
        c->v = hand_huber_gv(c->nx, c->ny, c->dims == 3 ? c->nz : 1, c->x, 1, 1, 1, .1f, c->g, c->what == HAND_HUBER_VG);
    else if (c->what == HAND_LAP_VG) c->v = hand_lap3_value_grad(c->nx, c->ny, c->nz, c->x, 1, c->g);
    else if (c->what == HAND_GOODS_GRAD) hand_goods_grad(c->nx, c->ny, c->dims == 3 ? c->nz : 1, c->x, 1, 1, 1, 1e-3f, c->g);
    else if (c->what == HAND_HESS_VALUE) c->v = hand_hess3_value(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f);
    else if (c->what == HAND_HESS_GRAD) hand_hess3_grad(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f, c->g);
    else if (c->what == HAND_LAP_GRAD && c->dims == 2) hand_lap2_grad(c->nx, c->ny, c->x, 1, c->g);
    else if (c->what == HAND_LAP_GRAD) hand_lap3_grad(c->nx, c->ny, c->nz, c->x, 1, c->g);
    else if (c->what == HAND_TIKG_VG) c->v = hand_tikg_value_grad(c->nx, c->ny, c->dims == 3 ? c->nz : 1, c->x, 1, 1, 1, c->g);
    else if (c->dims == 2) {
        if (c->what == HAND_TV_VALUE) c->v = hand_tv2_value_f32(c->nx, c->ny, c->x, 1, 1, 1e-3f);
        else if (c->what == HAND_TV_GRAD) hand_tv2_grad(c->nx, c->ny, c->x, 1, 1, 1e-3f, c->g);
        else hand_tikg2_grad(c->nx, c->ny, c->x, 1, 1, c->g);
    } else {
        if (c->what == HAND_TV_VALUE) c->v = hand_tv3_value_f32(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f);
        else if (c->what == HAND_TV_GRAD) hand_tv3_grad(c->nx, c->ny, c->nz, c->x, 1, 1, 1, 1e-3f, c->g);
        else hand_tikg3_grad(c->nx, c->ny, c->nz, c->x, 1, 1, 1, c->g);
    }
}

/* the yardstick must compute what stenc computes: value to 1e-5 relative
 * (1e-12 in double), gradient to 1e-4 of its largest component (float),
 * both for value_grad; else the run stops */
static void check_peer(Peer *pe, RegCall *rc, size_t N)
{
    float *gs = malloc(N * (pe->dbl ? sizeof(double) : sizeof(float))), *gh = pe->g;
    rc->g = gs;
    if (call_reg(rc) != STENC_OK) { fprintf(stderr, "stenc-bench: reference call failed\n"); exit(1); }
    run_peer(pe);
    const int what = hand_what(pe->what);
    double verr = what != 1 ? fabs(pe->v - rc->v) / fabs(rc->v) : 0, gerr = 0, gmax = 0;
    if (what != 0) {
        for (size_t q = 0; q < N; ++q) { gmax = fmax(gmax, fabs(gs[q])); gerr = fmax(gerr, fabs((double)gs[q] - gh[q])); }
        gerr /= gmax;
    }
    char agree[96];
    if (what == 2) snprintf(agree, sizeof agree, "%.1e (value), %.1e (gradient)", verr, gerr);
    else snprintf(agree, sizeof agree, "%.1e", what == 0 ? verr : gerr);
    fprintf(stderr, "stenc-bench: hand-written %s %s %dD agrees with stenc to %s\n", reg_names[rc->reg], entry_names[what],
            pe->dims, agree);
    if (!(verr < (pe->dbl ? 1e-12 : 1e-5) && gerr < 1e-4)) { fprintf(stderr, "stenc-bench: the hand-written loop is wrong\n"); exit(1); }
    free(gs);
}

static void run_mini(void *p)
{
    MCtx *c = p;
    int rc = c->dbl ? run_mini_f64(c) : run_mini_f32(c);
    if (rc != STENC_OK) {
        fprintf(stderr, "stenc-bench: %s.%s%s failed: %s\n", minis[c->which].stencil, minis[c->which].kernel,
                c->adj ? " (adjoint)" : "", stenc_strerror(rc));
        exit(1);
    }
}

/* The diffusion step's yardstick (perf/hand.h hand_diffusion_step), f32,
 * on the mini-app's arrays (a[1] T, a[2] Ci; its own output) and
 * parameters (dt 0.1, the rest 1) */
typedef struct { MCtx *mc; float *out; } HandDiff;
static void run_hand_diff(void *p)
{
    HandDiff *h = p;
    const MCtx *c = h->mc;
    hand_diffusion_step(c->nx, c->ny, minis[c->which].dims == 3 ? c->nz : 1, h->out, c->a[1], c->a[2], 0.1f, 1, 1, 1, 1);
}
/* the hand step must write what stenc's wrote (a[0]) on the interior, to
 * 1e-5 of the largest value; else the run stops */
static void check_hand_diff(HandDiff *h)
{
    const MCtx *c = h->mc;
    const size_t nz = minis[c->which].dims == 3 ? c->nz : 1, P = c->nx * c->ny;
    run_mini((void *)c);
    run_hand_diff(h);
    const float *s = c->a[0];
    double err = 0, big = 0;
    for (size_t k = nz > 1; k < (nz > 1 ? nz - 1 : 1); ++k)
        for (size_t j = 1; j + 1 < c->ny; ++j)
            for (size_t i = 1; i + 1 < c->nx; ++i) {
                const size_t q = i + c->nx * j + P * k;
                err = fmax(err, fabs((double)s[q] - h->out[q]));
                big = fmax(big, fabs((double)s[q]));
            }
    fprintf(stderr, "stenc-bench: hand-written diffusion step %dD agrees with stenc to %.1e\n", nz > 1 ? 3 : 2, err / big);
    if (!(err <= 1e-5 * big)) { fprintf(stderr, "stenc-bench: the hand-written loop is wrong\n"); exit(1); }
}

static void *xmalloc(size_t bytes);
/* The Stokes viscosity adjoint's yardstick (perf/hand.h
 * hand_visc_adjoint), f32, on the mini-app's arrays (a[0] Eta, a[4]
 * Eta_bar, a[5] EtaC_bar: bench_kernels.h) */
static void run_hand_visc(void *p)
{
    const MCtx *c = p;
    hand_visc_adjoint(c->nx, c->a[0], c->a[4], c->a[5]);
}
/* the hand adjoint must add what stenc's adds, from the same EtaC_bar, to
 * 1e-5 of the largest sum; else the run stops */
static void check_hand_visc(MCtx *c)
{
    const size_t N = c->nx * c->ny * c->nz, M = (c->nx - 1) * (c->ny - 1) * (c->nz - 1);
    float *eb = c->a[4], *cb = c->a[5], *e0 = xmalloc(N * sizeof(float)), *c0 = xmalloc(M * sizeof(float));
    for (size_t q = 0; q < M; ++q) cb[q] = 1.0f + 1e-3f * (float)(q % 13);
    memcpy(e0, eb, N * sizeof(float)), memcpy(c0, cb, M * sizeof(float));
    run_mini(c);
    float *es = xmalloc(N * sizeof(float));
    memcpy(es, eb, N * sizeof(float)), memcpy(eb, e0, N * sizeof(float)), memcpy(cb, c0, M * sizeof(float));
    run_hand_visc(c);
    double err = 0, big = 0;
    for (size_t q = 0; q < N; ++q) {
        err = fmax(err, fabs((double)es[q] - eb[q]));
        big = fmax(big, fabs((double)es[q] - e0[q]));
    }
    for (size_t q = 0; q < M; ++q) err += cb[q] != 0 ? big : 0;
    fprintf(stderr, "stenc-bench: hand-written Stokes viscosity adjoint agrees with stenc to %.1e\n", err / big);
    if (!(err <= 1e-5 * big)) { fprintf(stderr, "stenc-bench: the hand-written loop is wrong\n"); exit(1); }
    free(e0); free(c0); free(es);
}

/* a mini-app kernel's ENTRY ("forward", "adjoint") against its hand loop
 * FN(CTX), checked before: the hand loop's row (BYTES moved, the copy
 * ceiling COPY_GBS) and the stenc/hand duel, T stenc's median */
static void mini_hand_duel(MCtx *mc, const char *name, const char *entry, double t, run_f fn, void *ctx, double bytes,
                           const char *prec, double copy_gbs)
{
    const int D = minis[mc->which].dims;
    RoundItem a = {run_mini, mc, {t}}, b = {fn, ctx, {median_time(fn, ctx)}};
    row(name, entry, "handc", D, mc->nx, mc->ny, mc->nz, prec, b.t[0], bytes, "copy", copy_gbs);
    char pair[48];
    snprintf(pair, sizeof pair, "stenc/hand %s", entry);
    const DuelKey dk = {pair, name, prec, D, mc->nx, mc->ny, mc->nz};
    duel(&dk, &a, &b);
}

/* the arrays; with STENC_BENCH_THP=1 aligned to 2 MiB and advised to be
 * backed by transparent huge pages (the same for every peer) */
static void *xmalloc(size_t bytes)
{
    const char *thp = getenv("STENC_BENCH_THP");
    const size_t huge = (size_t)2 << 20;
    void *p;
    if (thp && *thp == '1' && bytes >= huge) {
        const size_t whole = (bytes + huge - 1) / huge * huge;
        p = aligned_alloc(huge, whole);
        if (p) (void)madvise(p, whole, MADV_HUGEPAGE);
    } else
        p = malloc(bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "stenc-bench: out of memory (%zu bytes)\n", bytes); exit(1); }
    return p;
}

int main(int argc, char **argv)
{
    const char *csvpath = "build/perf/results.csv", *duelpath = "build/perf/duels.csv";
    int only_dims = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csvpath = argv[++i];
        else if (strcmp(argv[i], "--duels") == 0 && i + 1 < argc) duelpath = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--dims") == 0 && i + 1 < argc) only_dims = atoi(argv[++i]);
        else { fprintf(stderr, "usage: stenc-bench [--quick] [--csv FILE] [--duels FILE] [--only NAME,...] [--dims 2|3]\n"); return 2; }
    }
    csv = fopen(csvpath, "w");
    if (!csv) { perror(csvpath); return 1; }
    fprintf(csv, "kernel,entry,backend,dims,nx,ny,nz,precision,median_s,bytes,teff_gbs,ceiling,ceiling_gbs,ratio\n");
    duels = fopen(duelpath, "w");
    if (!duels) { perror(duelpath); return 1; }
    fprintf(duels, "pair,kernel,dims,nx,ny,nz,precision,median,q1,q3,pairs\n");
    fprintf(stderr, "stenc-bench: %d OpenMP thread(s)%s\n", stenc_max_threads(), quick ? ", quick sizes" : "");
    struct { int dims; size_t n[3]; } sizes[5];
    int ns;
    if (quick) { sizes[0].dims = 2; sizes[0].n[0] = sizes[0].n[1] = 1024; sizes[0].n[2] = 1;
                 sizes[1].dims = 3; sizes[1].n[0] = sizes[1].n[1] = sizes[1].n[2] = 128; ns = 2; }
    else {
        sizes[0].dims = 2; sizes[0].n[0] = sizes[0].n[1] = 4096; sizes[0].n[2] = 1;
        sizes[1].dims = 2; sizes[1].n[0] = sizes[1].n[1] = 10000; sizes[1].n[2] = 1;
        /* 128^3 (8 MiB a float array): in this class of machine's L3, where
         * the kernels' per-row and border costs show that memory hides at
         * the larger sizes (perf/NOTES.md section 56); not a size issue 14
         * sets targets for */
        sizes[2].dims = 3; sizes[2].n[0] = sizes[2].n[1] = sizes[2].n[2] = 128;
        sizes[3].dims = 3; sizes[3].n[0] = sizes[3].n[1] = sizes[3].n[2] = 256;
        sizes[4].dims = 3; sizes[4].n[0] = sizes[4].n[1] = sizes[4].n[2] = 512;
        ns = 5;
    }
    for (int si = 0; si < ns; ++si) {
        size_t nx = sizes[si].n[0], ny = sizes[si].n[1], nz = sizes[si].n[2], N = nx * ny * nz;
        int D = sizes[si].dims;
        if (only_dims && D != only_dims) continue;
        for (int dbl = 0; dbl <= 1; ++dbl) {
            /* 512^3 in double needs 3 GiB per array set: float only */
            if (!quick && D == 3 && nx == 512 && dbl) continue;
            size_t es = dbl ? 8 : 4;
            const char *prec = dbl ? "f64" : "f32";
            void *x = xmalloc(N * es), *m = xmalloc(N * es), *g = xmalloc(N * es);
            for (size_t q = 0; q < N; ++q) {
                if (dbl) { ((double *)x)[q] = bench_x(q); ((double *)m)[q] = 1.0; ((double *)g)[q] = 0; }
                else { ((float *)x)[q] = (float)bench_x(q); ((float *)m)[q] = 1.0f; ((float *)g)[q] = 0; }
            }
            /* the ceilings, every selected regularizer entry and the hand
             * loops, timed together in rounds (round_robin) */
            Ceil c = {N, dbl ? NULL : x, dbl ? NULL : g, dbl ? x : NULL, dbl ? g : NULL, dbl, 0};
            static RoundItem items[RR_MAX];
            static RegCall rcs[RR_MAX];
            static Peer pes[NHAND];
            int ni = 0, nrc = 0;
            items[ni++] = (RoundItem){run_sum, &c, {0}};
            items[ni++] = (RoundItem){run_copy, &c, {0}};
            for (int reg = 0; reg < NREG; ++reg)
                for (int what = 0; what < 3 && selected(reg_names[reg]); ++what) {
                    rcs[nrc] = (RegCall){nx, ny, nz, D, dbl, what, STENC_NEUMANN, reg, x, m, g, 0};
                    items[ni++] = (RoundItem){run_reg, &rcs[nrc++], {0}};
                }
            const int hand = selected("handc");
            int hitem[NHAND] = {0}; /* each hand loop's item */
            for (int w = 0; w < NHAND && hand; ++w) {
                if (!hand_has(w, D, dbl)) continue;
                hitem[w] = ni;
                pes[w] = (Peer){nx, ny, nz, D, dbl, x, g, 0, w};
                RegCall rc = {nx, ny, nz, D, dbl, hand_what(w), STENC_NEUMANN, hand_reg[w], x, m, g, 0};
                check_peer(&pes[w], &rc, N);
                items[ni++] = (RoundItem){run_peer, &pes[w], {0}};
            }
            items[ni++] = (RoundItem){run_copy_nt, &c, {0}};
            round_robin(items, ni);
            const double tsum = items[0].t[0], tcopy = items[1].t[0], tcopynt = items[ni - 1].t[0];
            double sum_gbs = (double)(N * es) / tsum / 1e9, copy_gbs = 2.0 * (double)(N * es) / tcopy / 1e9;
            row("ceiling_sum", "read", "c", D, nx, ny, nz, prec, tsum, (double)(N * es), "sum", sum_gbs);
            row("ceiling_copy", "copy", "c", D, nx, ny, nz, prec, tcopy, 2.0 * (double)(N * es), "copy", copy_gbs);
            row("ceiling_copy_nt", "copy", "c", D, nx, ny, nz, prec, tcopynt, 2.0 * (double)(N * es), "copy", copy_gbs);
            for (int k = 0; k < nrc; ++k) {
                const RegCall *rc = &rcs[k];
                double inb = (double)(N * es) * reg_inputs(rc->reg);
                double bytes = rc->what == 0 ? inb : inb + (double)(N * es);
                row(reg_names[rc->reg], rc->what == 0 ? "value" : rc->what == 1 ? "grad" : "value_grad", "stenc", D, nx, ny, nz,
                    prec, items[2 + k].t[0], bytes, rc->what == 0 ? "sum" : "copy", rc->what == 0 ? sum_gbs : copy_gbs);
            }
            for (int w = 0; w < NHAND && hand; ++w)
                if (hand_has(w, D, dbl))
                    row(reg_names[hand_reg[w]], entry_names[hand_what(w)], "handc", D, nx, ny, nz, prec,
                        items[hitem[w]].t[0], (hand_what(w) == 0 ? 1.0 : 2.0) * (double)(N * es),
                        hand_what(w) == 0 ? "sum" : "copy", hand_what(w) == 0 ? sum_gbs : copy_gbs);
            /* the duels: value_grad against grad for every regularizer, stenc
             * against each hand loop */
            for (int k = 0; k < nrc; ++k) {
                if (rcs[k].what != 2) continue;
                for (int q = 0; q < nrc; ++q)
                    if (rcs[q].reg == rcs[k].reg && rcs[q].what == 1) {
                        const DuelKey dk = {"value_grad/grad", reg_names[rcs[k].reg], prec, D, nx, ny, nz};
                        duel(&dk, &items[2 + k], &items[2 + q]);
                    }
            }
            for (int w = 0; w < NHAND && hand; ++w)
                for (int k = 0; k < nrc && hand_has(w, D, dbl); ++k)
                    if (rcs[k].reg == hand_reg[w] && rcs[k].what == hand_what(w)) {
                        char pair[48];
                        snprintf(pair, sizeof pair, "stenc/hand %s", entry_names[hand_what(w)]);
                        const DuelKey dk = {pair, reg_names[hand_reg[w]], prec, D, nx, ny, nz};
                        duel(&dk, &items[2 + k], &items[hitem[w]]);
                    }
            for (size_t w = 0; w < NMINI; ++w) {
                if (minis[w].dims != D || !selected(minis[w].stencil)) continue;
                /* 8 arrays with room for the staggered extents (+1 per dimension), small values */
                size_t M = (nx + 1) * (ny + 1) * (D == 3 ? nz + 1 : 1);
                MCtx mc = {nx, ny, nz, (int)w, 0, dbl, {0}};
                for (int q = 0; q < 8; ++q) {
                    mc.a[q] = xmalloc(M * es);
                    for (size_t e = 0; e < M; ++e) {
                        double v = 1.0 + 1e-3 * (double)((e + 7 * (size_t)q) % 11);
                        if (dbl) ((double *)mc.a[q])[e] = v;
                        else ((float *)mc.a[q])[e] = (float)v;
                    }
                }
                char name[64];
                snprintf(name, sizeof name, "%s.%s", minis[w].stencil, minis[w].kernel);
                double t = median_time(run_mini, &mc);
                row(name, "forward", "stenc", D, nx, ny, nz, prec, t, minis[w].fwd_bytes * (double)(N * es), "copy", copy_gbs);
                if (hand && !dbl && strcmp(minis[w].stencil, "diffusion") == 0) {
                    HandDiff hd = {&mc, xmalloc(M * es)};
                    check_hand_diff(&hd);
                    mini_hand_duel(&mc, name, "forward", t, run_hand_diff, &hd, minis[w].fwd_bytes * (double)(N * es), prec,
                                   copy_gbs);
                    free(hd.out);
                }
                mc.adj = 1;
                t = median_time(run_mini, &mc);
                row(name, "adjoint", "stenc", D, nx, ny, nz, prec, t, minis[w].adj_bytes * (double)(N * es), "copy", copy_gbs);
                if (hand && !dbl && strcmp(name, "stokes3d.viscosity") == 0) {
                    check_hand_visc(&mc);
                    mini_hand_duel(&mc, name, "adjoint", t, run_hand_visc, &mc, minis[w].adj_bytes * (double)(N * es), prec,
                                   copy_gbs);
                }
                for (int q = 0; q < 8; ++q) free(mc.a[q]);
            }
            free(x); free(m); free(g);
        }
    }
    fclose(csv);
    fclose(duels);
    return 0;
}
