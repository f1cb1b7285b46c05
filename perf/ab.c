/* perf/ab.sh's driver: an old and a new build of the regularizer entries,
 * and a second copy of the new one (the control: identical code, so its
 * ratio to the new shows what position and code placement alone do), timed
 * in one process on the same data.  Each round calls the three in an order
 * of its own (all six orders in turn), medians over the rounds.
 *   ab DIMS N [REG...]   (REG: registry names, default all)
 * Environment: AB_REPS rounds (default 18), AB_WHAT 0/1/2 for value, grad
 * or value_grad only, AB_PREC f64 for the double entries (default f32),
 * AB_MODE valid / periodic for that boundary mode (default Neumann).
 * Prints, per entry: new/old, and control/new. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "bench_kernels.h"

int ab_run_old(RegCall *c);
int ab_run_new(RegCall *c);
int ab_run_ctl(RegCall *c);

static double med(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmpd);
    return t[n / 2];
}

static int selected(const char *name, int argc, char **argv)
{
    if (argc <= 3) return 1;
    for (int a = 3; a < argc; ++a)
        if (strcmp(argv[a], name) == 0) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: ab DIMS N [REG...]\n"); return 2; }
    const int dims = atoi(argv[1]);
    const size_t n = (size_t)atol(argv[2]), N = dims == 2 ? n * n : n * n * n;
    const int reps = getenv("AB_REPS") ? atoi(getenv("AB_REPS")) : 18;
    const int only = getenv("AB_WHAT") ? atoi(getenv("AB_WHAT")) : -1;
    const int dbl = getenv("AB_PREC") && strcmp(getenv("AB_PREC"), "f64") == 0;
    const char *ms = getenv("AB_MODE") ? getenv("AB_MODE") : "neumann";
    const int mode = !strcmp(ms, "valid") ? STENC_VALID : !strcmp(ms, "periodic") ? STENC_PERIODIC : STENC_NEUMANN;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    if ((dims != 2 && dims != 3) || n < 8 || reps < 1 || reps > 600) { fprintf(stderr, "ab: bad arguments\n"); return 2; }
    void *x = malloc(N * es), *m = malloc(N * es), *g = calloc(N, es);
    double *t = malloc(3 * (size_t)reps * sizeof *t);
    if (!x || !m || !g || !t) { fprintf(stderr, "ab: out of memory\n"); return 1; }
    for (size_t q = 0; q < N; ++q) {
        if (dbl) ((double *)x)[q] = bench_x(q), ((double *)m)[q] = 1.0;
        else ((float *)x)[q] = (float)bench_x(q), ((float *)m)[q] = 1.0f;
    }
    int (*const run[3])(RegCall *) = {ab_run_old, ab_run_new, ab_run_ctl};
    static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    for (int reg = 0; reg < NREG; ++reg) {
        if (!selected(reg_names[reg], argc, argv)) continue;
        for (int what = 0; what < 3; ++what) {
            if (only >= 0 && what != only) continue;
            RegCall c = {n, n, dims == 3 ? n : 1, dims, dbl, what, mode, reg, x, m, g, 0};
            double v[3] = {0, 0, 0};
            for (int r = -1; r < reps; ++r) /* round -1: warm-up */
                for (int s = 0; s < 3; ++s) {
                    const int k = perm[(r + 6) % 6][s];
                    const double t0 = bench_now();
                    if (run[k](&c) != STENC_OK) { fprintf(stderr, "ab: %s failed\n", reg_names[reg]); return 1; }
                    if (r >= 0) t[k * reps + r] = bench_now() - t0;
                    v[k] = c.v;
                }
            const double to = med(t, reps), tn = med(t + reps, reps), tc = med(t + 2 * reps, reps);
            printf("%-18s %-10s %s %dD n=%zu  old %8.3f ms  new %8.3f ms  new/old %.3f  control/new %.3f  value new-old %.1e\n",
                   reg_names[reg], what == 0 ? "value" : what == 1 ? "grad" : "value_grad", dbl ? "f64" : "f32", dims, n, 1e3 * to, 1e3 * tn, tn / to,
                   tc / tn, what != 1 && v[0] != 0 ? fabs(v[1] - v[0]) / fabs(v[0]) : 0.);
        }
    }
    free(x), free(m), free(g), free(t);
    return 0;
}
