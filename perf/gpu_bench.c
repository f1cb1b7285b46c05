/* stenc GPU performance suite: every regularizer (value, grad, value_grad)
 * and every mini-app array kernel (forward, adjoint) on CUDA, float and
 * double, 2D and 3D, against a read-only device reduction and a
 * device-to-device copy over the same bytes, measured in the same run.
 *   stenc-gpu-bench [--quick] [--3d] [--only NAME,...] [--csv FILE]
 * (exit 77 without a device).  --3d: the 3D grids only; --only: those
 * regularizers (tv includes the hand-written TV) and mini-app stencils,
 * for a profiler run (perf/gpu.sh).
 * Same CSV columns as stenc-bench (backend "cuda"; "handcuda" for the
 * hand-written TV value and gradient of perf/gpu_hand.cu, 2D and 3D,
 * checked against stenc's in the same run). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels.h"
#include "gpu_hand.h"

int stenc_bench_gpu_sum(const float *a, size_t n, double *ws, double *result);
int stenc_bench_gpu_copy(float *dst, const float *src, size_t n);
int stenc_bench_gpu_sync(void);
int stenc_bench_gpu_timer(int stop, double *seconds);

DEFINE_RUN_REG(call_reg, stenc_cuda_, BENCH_CUDA_CALL)
DEFINE_RUN_MINI(call_mini_f32, float, f32, stenc_cuda_, BENCH_CUDA_CALL)
DEFINE_RUN_MINI(call_mini_f64, double, f64, stenc_cuda_, BENCH_CUDA_CALL)

static void must(int rc, const char *what)
{
    if (rc != STENC_OK) { fprintf(stderr, "stenc-gpu-bench: %s: %s\n", what, stenc_strerror(rc)); exit(1); }
}

/* the hand-written TV value (what 0) or gradient (1) on the regularizer
 * call's grid (2D or 3D), precision and arrays, with the bench's TV
 * weights (1, 1, 1, eps 1e-3); ws: one device double */
static int call_hand(RegCall *c, int what, double *ws)
{
    if (c->dims == 2 && c->dbl)
        return what == 0 ? stenc_bench_hand_tv2_value_f64(c->nx, c->ny, c->x, 1., 1., 1e-3, ws, &c->v)
                         : stenc_bench_hand_tv2_grad_f64(c->nx, c->ny, c->x, 1., 1., 1e-3, c->g);
    if (c->dims == 2)
        return what == 0 ? stenc_bench_hand_tv2_value_f32(c->nx, c->ny, c->x, 1.f, 1.f, 1e-3f, ws, &c->v)
                         : stenc_bench_hand_tv2_grad_f32(c->nx, c->ny, c->x, 1.f, 1.f, 1e-3f, c->g);
    if (c->dbl)
        return what == 0 ? stenc_bench_hand_tv3_value_f64(c->nx, c->ny, c->nz, c->x, 1., 1., 1., 1e-3, ws, &c->v)
                         : stenc_bench_hand_tv3_grad_f64(c->nx, c->ny, c->nz, c->x, 1., 1., 1., 1e-3, c->g);
    return what == 0 ? stenc_bench_hand_tv3_value_f32(c->nx, c->ny, c->nz, c->x, 1.f, 1.f, 1.f, 1e-3f, ws, &c->v)
                     : stenc_bench_hand_tv3_grad_f32(c->nx, c->ny, c->nz, c->x, 1.f, 1.f, 1.f, 1e-3f, c->g);
}

/* one measured call: a ceiling (kind 0 sum, 1 copy over nf floats), a
 * regularizer entry, a mini-app kernel (3) or the hand-written TV (4 value,
 * 5 gradient, on reg's grid) */
typedef struct { int kind; size_t nf; float *a, *b; double v, *ws; RegCall *reg; MCtx *mini; } Job;
static void run(Job *j)
{
    switch (j->kind) {
    case 0: if (stenc_bench_gpu_sum(j->a, j->nf, j->ws, &j->v)) must(STENC_ERR_CUDA, "sum"); return;
    case 1: if (stenc_bench_gpu_copy(j->b, j->a, j->nf)) must(STENC_ERR_CUDA, "copy"); return;
    case 2: must(call_reg(j->reg), reg_names[j->reg->reg]); return;
    case 3: must(j->mini->dbl ? call_mini_f64(j->mini) : call_mini_f32(j->mini), minis[j->mini->which].kernel); return;
    default: if (call_hand(j->reg, j->kind - 4, j->ws)) must(STENC_ERR_CUDA, "hand-written tv"); return;
    }
}

/* median of 9 timings of 5 calls each, after a warm-up call; timed with
 * CUDA events on the launches' stream (device time; a value's 8-byte result
 * copy is inside, as a caller would pay it) */
static double timeit(Job *j)
{
    double t[9];
    run(j);
    stenc_bench_gpu_sync();
    for (int r = 0; r < 9; ++r) {
        double s = 0;
        if (stenc_bench_gpu_timer(0, NULL)) must(STENC_ERR_CUDA, "event timer");
        for (int k = 0; k < 5; ++k) run(j);
        if (stenc_bench_gpu_timer(1, &s)) must(STENC_ERR_CUDA, "event timer");
        t[r] = s / 5;
    }
    qsort(t, 9, sizeof *t, bench_cmpd);
    return t[4];
}

/* --only's list (NULL: everything) */
static const char *only;
static int selected(const char *name)
{
    if (!only) return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

static FILE *csv;
static void row(const char *k, const char *e, int D, const size_t *n, const char *prec, double t, double bytes, const char *cn, double cg)
{
    bench_row(csv, k, e, "cuda", D, n[0], n[1], n[2], prec, t, bytes, cn, cg);
}

/* the largest |a - b| over n elements (float or double), relative to the
 * largest |a|; both arrays on the device */
static double dev_maxrel(const void *a, const void *b, size_t n, int dbl)
{
    size_t es = dbl ? 8 : 4;
    char *ha = malloc(n * es), *hb = malloc(n * es);
    if (!ha || !hb) { fprintf(stderr, "stenc-gpu-bench: out of host memory\n"); exit(1); }
    must(stenc_cuda_to_host(ha, a, n * es), "copy");
    must(stenc_cuda_to_host(hb, b, n * es), "copy");
    double m = 0, d = 0;
    for (size_t q = 0; q < n; ++q) {
        double u = dbl ? ((double *)ha)[q] : ((float *)ha)[q], v = dbl ? ((double *)hb)[q] : ((float *)hb)[q];
        m = fmax(m, fabs(u));
        d = fmax(d, fabs(u - v));
        if (u != u || v != v) d = INFINITY;
    }
    free(ha); free(hb);
    return m > 0 ? d / m : d;
}

/* the hand-written TV (perf/gpu_hand.cu), value and gradient, D
 * dimensions: timed, and checked against stenc's (its result in g, the
 * hand's in h); a disagreement is reported, not fatal (the rest of the run
 * still counts) */
static void hand_tv(int D, const size_t *n, int dbl, void *x, void *g, void *h, double *ws, double sum_gbs, double copy_gbs)
{
    const size_t N = n[0] * n[1] * n[2];
    const double B = (double)N * (dbl ? 8 : 4);
    const char *prec = dbl ? "f64" : "f32";
    RegCall rs = {n[0], n[1], n[2], D, dbl, 0, STENC_NEUMANN, 0, x, NULL, g, 0};
    RegCall rh = rs;
    rh.g = h;
    for (int w = 0; w < 2; ++w) {
        Job j = {4 + w, 0, NULL, NULL, 0, ws, &rh, NULL};
        double t = timeit(&j);
        bench_row(csv, "tv", w ? "grad" : "value", "handcuda", D, n[0], n[1], n[2], prec, t, w ? 2 * B : B,
                  w ? "copy" : "sum", w ? copy_gbs : sum_gbs);
    }
    rs.what = 0; must(call_reg(&rs), "tv");
    rh.what = 0; if (call_hand(&rh, 0, ws)) must(STENC_ERR_CUDA, "hand-written tv");
    rs.what = 1; must(call_reg(&rs), "tv");
    if (call_hand(&rh, 1, ws)) must(STENC_ERR_CUDA, "hand-written tv");
    must(stenc_cuda_synchronize(), "sync");
    double ev = fabs(rh.v - rs.v) / fmax(fabs(rs.v), 1e-300), eg = dev_maxrel(g, h, N, dbl), tol = dbl ? 1e-10 : 1e-4;
    fprintf(stderr, "stenc-gpu-bench: hand-written tv %dD %s agrees with stenc to %.1e (value), %.1e (gradient)%s\n", D, prec,
            ev, eg, ev <= tol && eg <= tol ? "" : "  DISAGREES");
}

static void *dev_fill(size_t bytes, const float *h, size_t hn)
{
    void *d = NULL;
    must(stenc_cuda_malloc(&d, bytes), "malloc");
    for (size_t off = 0; off < bytes; off += hn * sizeof(float)) {
        size_t b = bytes - off < hn * sizeof(float) ? bytes - off : hn * sizeof(float);
        must(stenc_cuda_to_device((char *)d + off, h, b), "copy");
    }
    return d;
}

int main(int argc, char **argv)
{
    int quick = 0, only3d = 0;
    const char *csvpath = "build/perf/gpu_results.csv";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--3d")) only3d = 1;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csvpath = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else { fprintf(stderr, "usage: stenc-gpu-bench [--quick] [--3d] [--only NAME,...] [--csv FILE]\n"); return 2; }
    }
    int nd = 0;
    if (stenc_cuda_device_count(&nd) != STENC_OK || nd == 0) { printf("stenc-gpu-bench: SKIP: no CUDA device\n"); return 77; }
    char name[256];
    stenc_cuda_device_name(name, sizeof name);
    csv = fopen(csvpath, "w");
    if (!csv) { perror(csvpath); return 1; }
    fprintf(csv, "kernel,entry,backend,dims,nx,ny,nz,precision,median_s,bytes,teff_gbs,ceiling,ceiling_gbs,ratio\n");
    fprintf(stderr, "stenc-gpu-bench on %s\n", name);
    /* out of the 60 MB L2 by far, and long enough (>= 0.1 ms per call in
     * f32) that launch latency and a value's result copy stay a few % */
    size_t S[4][3] = {{8192, 8192, 1}, {16384, 16384, 1}, {384, 384, 384}, {640, 640, 640}};
    if (quick) { S[0][0] = S[0][1] = 1024; S[1][0] = S[1][1] = 2048; S[2][0] = S[2][1] = S[2][2] = 128; S[3][0] = S[3][1] = S[3][2] = 192; }
    static const char *ent[] = {"value", "grad", "value_grad"};
    /* host pattern for filling device arrays: values in [1, 2) */
    enum { HN = 1 << 20 };
    float *h = malloc(HN * sizeof *h);
    if (!h) return 1;
    for (size_t q = 0; q < HN; ++q) h[q] = 1.0f + (float)((q * 2654435761u) % 1000) * 1e-3f;
    double *ws = NULL; /* the sum ceiling's device result */
    must(stenc_cuda_malloc((void **)&ws, sizeof(double)), "malloc");
    for (int si = 0; si < 4; ++si)
        for (int dbl = 0; dbl <= 1; ++dbl) {
            const size_t *n = S[si];
            int D = n[2] > 1 ? 3 : 2;
            if (only3d && D != 3) continue;
            size_t N = n[0] * n[1] * n[2], es = dbl ? 8 : 4, B = N * es;
            const char *prec = dbl ? "f64" : "f32";
            /* a double array is filled with float bit patterns reinterpreted: finite, positive values */
            void *x = dev_fill(B, h, HN), *m = dev_fill(B, h, HN), *g = dev_fill(B, h, HN);
            Job jc = {0, B / 4, x, g, 0, ws, NULL, NULL};
            double ts = timeit(&jc), sum_gbs = (double)B / ts / 1e9;
            jc.kind = 1;
            double tc = timeit(&jc), copy_gbs = 2.0 * (double)B / tc / 1e9;
            row("ceiling_sum", "read", D, n, prec, ts, (double)B, "sum", sum_gbs);
            row("ceiling_copy", "copy", D, n, prec, tc, 2.0 * (double)B, "copy", copy_gbs);
            for (int r = 0; r < NREG; ++r)
                for (int w = 0; w < 3 && selected(reg_names[r]); ++w) {
                    RegCall rc = {n[0], n[1], n[2], D, dbl, w, STENC_NEUMANN, r, x, m, g, 0};
                    Job j = {2, 0, NULL, NULL, 0, NULL, &rc, NULL};
                    double t = timeit(&j), inb = (double)B * reg_inputs(r);
                    row(reg_names[r], ent[w], D, n, prec, t, w == 0 ? inb : inb + (double)B, w == 0 ? "sum" : "copy",
                        w == 0 ? sum_gbs : copy_gbs);
                }
            if (selected("tv")) {
                void *hg = dev_fill(B, h, HN);
                hand_tv(D, n, dbl, x, g, hg, ws, sum_gbs, copy_gbs);
                stenc_cuda_free(hg);
            }
            stenc_cuda_free(x); stenc_cuda_free(m); stenc_cuda_free(g);
            /* mini-apps: 8 arrays with room for the staggered extents */
            size_t M = (n[0] + 1) * (n[1] + 1) * (D == 3 ? n[2] + 1 : 1);
            for (size_t w = 0; w < NMINI; ++w) {
                if (minis[w].dims != D || !selected(minis[w].stencil)) continue;
                MCtx mc = {n[0], n[1], n[2], (int)w, 0, dbl, {0}};
                for (int q = 0; q < 8; ++q) mc.a[q] = dev_fill(M * es, h, HN);
                char kname[64];
                snprintf(kname, sizeof kname, "%s.%s", minis[w].stencil, minis[w].kernel);
                Job j = {3, 0, NULL, NULL, 0, NULL, NULL, &mc};
                double t = timeit(&j);
                row(kname, "forward", D, n, prec, t, minis[w].fwd_bytes * (double)B, "copy", copy_gbs);
                mc.adj = 1;
                t = timeit(&j);
                row(kname, "adjoint", D, n, prec, t, minis[w].adj_bytes * (double)B, "copy", copy_gbs);
                for (int q = 0; q < 8; ++q) stenc_cuda_free(mc.a[q]);
            }
        }
    free(h);
    stenc_cuda_free(ws);
    fclose(csv);
    return 0;
}
