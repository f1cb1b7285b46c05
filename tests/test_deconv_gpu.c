/* The deconvolution demo on CUDA against the CPU solver: objective and
 * gradient at the same points (both data terms, 2D and 3D, four
 * regularizers), the device L-BFGS (the objective decreases, and the CPU and
 * GPU solves reach the same objective decrease and reconstruction quality),
 * and the command line with --gpu.  Without a CUDA device the suite is
 * skipped (exit status 77) with a message saying so. */
#define _GNU_SOURCE
#include "testproc.h"
#include "deconv.h"
#include "deconv_gpu.h"

typedef struct { dc_problem *c; dcg_problem *g; size_t N; double *truth, *y; } Pair;

/* a small problem on both backends: smooth blobs blurred by a Gaussian */
static Pair make_pair(int dims, size_t nx, size_t ny, size_t nz, int noise, int reg, double lambda, rng_t *r)
{
    Pair P = {0};
    P.N = nx * ny * nz;
    double *psf = dalloc(P.N), *b = dalloc(P.N);
    P.truth = dalloc(P.N);
    P.y = dalloc(P.N);
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                double a = (double)i - (double)(nx / 2), c = (double)j - (double)(ny / 2), e = dims == 3 ? (double)k - (double)(nz / 2) : 0;
                size_t q = i + nx * (j + ny * k);
                psf[q] = exp(-(a * a + c * c + e * e) / 4.0);
                double u = (double)i / (double)nx, v = (double)j / (double)ny;
                P.truth[q] = 2 + 10 * (u > 0.3 && u < 0.6 && v > 0.25 && v < 0.7) + 5 * ((u - 0.7) * (u - 0.7) + (v - 0.3) * (v - 0.3) < 0.02);
            }
    char err[256];
    P.c = dc_create(dims, nx, ny, nz, P.truth, psf, noise, reg, lambda, err, sizeof err);
    ck_assert_msg(P.c != NULL, "%s", err);
    dc_blur(P.c, P.truth, b);
    for (size_t q = 0; q < P.N; ++q) P.y[q] = b[q] * (1 + 0.02 * rng_uniform(r, -1, 1));
    dc_set_data(P.c, P.y);
    P.g = dcg_create(dims, nx, ny, nz, P.y, psf, noise, reg, lambda, P.truth, err, sizeof err);
    ck_assert_msg(P.g != NULL, "%s", err);
    free(psf); free(b);
    return P;
}
static void free_pair(Pair *P)
{
    dc_free(P->c);
    dcg_free(P->g);
    free(P->truth); free(P->y);
}

START_TEST(eval_cpu_vs_gpu)
{
    static const int regs[] = {DC_TV, DC_HUBER, DC_HESSIAN, DC_TIKHONOV};
    int dims = 2 + _i / 8, noise = (_i / 4) % 2, reg = regs[_i % 4];
    rng_t r = {4100 + (uint64_t)_i};
    Pair P = dims == 2 ? make_pair(2, 40, 34, 1, noise, reg, 0.2, &r) : make_pair(3, 18, 14, 10, noise, reg, 0.2, &r);
    double *p = dalloc(P.N), *gc = dalloc(P.N), *gg = dalloc(P.N);
    for (int trial = 0; trial < 2; ++trial) {
        dfill(p, P.N, &r, 0.8, 3.0);
        double fc = dc_eval(P.c, p, gc), fg = dcg_eval(P.g, p, gg);
        ck_assert_msg(reldiff(fc, fg, 1e-300) < 1e-10, "%dD noise %d reg %d: objective CPU %.17g GPU %.17g", dims, noise, reg, fc, fg);
        double gmax = 0;
        for (size_t q = 0; q < P.N; ++q) gmax = fmax(gmax, fabs(gc[q]));
        for (size_t q = 0; q < P.N; ++q)
            ck_assert_msg(fabs(gc[q] - gg[q]) <= 1e-9 * gmax, "%dD noise %d reg %d: grad[%zu] CPU %.17g GPU %.17g", dims, noise, reg, q,
                          gc[q], gg[q]);
    }
    free(p); free(gc); free(gg);
    free_pair(&P);
}
END_TEST

typedef struct { double first, last; int decreasing, n; double err; } Track;
static void track_cpu(int it, double f, double gnorm, const double *p, void *ctx)
{
    (void)gnorm; (void)p;
    Track *t = ctx;
    if (it > 1 && f > t->last * (1 + 1e-12)) t->decreasing = 0;
    if (t->n++ == 0) t->first = f;
    t->last = f;
}
static void track_gpu(int it, double f, double gnorm, double relerr, void *ctx)
{
    (void)gnorm;
    Track *t = ctx;
    if (it > 1 && f > t->last * (1 + 1e-12)) t->decreasing = 0;
    if (t->n++ == 0) t->first = f;
    t->last = f;
    t->err = relerr;
}

START_TEST(solve_cpu_vs_gpu)
{
    int noise = _i;
    rng_t r = {4200 + (uint64_t)_i};
    Pair P = make_pair(2, 64, 64, 1, noise, DC_TV, noise == DC_POISSON ? 0.01 : 0.05, &r);
    double *pc = dalloc(P.N), *pg = dalloc(P.N), *g = dalloc(P.N);
    for (size_t q = 0; q < P.N; ++q) pc[q] = pg[q] = sqrt(P.y[q] > 0.5 ? P.y[q] : 0.5);
    double f0 = dc_eval(P.c, pc, g);
    Track tc = {0, 0, 1, 0, 0}, tg = {0, 0, 1, 0, 0};
    dc_solve(P.c, pc, 60, track_cpu, &tc);
    char err[256];
    int rc = dcg_solve(P.g, pg, 60, track_gpu, &tg, err, sizeof err);
    ck_assert_msg(rc >= 0, "GPU solve failed: %s", err);
    ck_assert_msg(tg.decreasing, "GPU objective increased between iterations");
    double fc = dc_eval(P.c, pc, g), fg = dc_eval(P.c, pg, g); /* both judged by the CPU objective */
    ck_assert_msg(fc < f0 && fg < f0, "no decrease: start %g, CPU %g, GPU %g", f0, fc, fg);
    ck_assert_msg(fabs(fc - fg) <= 0.05 * (f0 - fmin(fc, fg)), "objective decrease differs: start %.10g, CPU %.10g, GPU %.10g", f0, fc, fg);
    double ey = 0, ec = 0, eg = 0, nt = 0;
    for (size_t q = 0; q < P.N; ++q) {
        double t = P.truth[q];
        ey += (P.y[q] - t) * (P.y[q] - t);
        ec += (pc[q] * pc[q] - t) * (pc[q] * pc[q] - t);
        eg += (pg[q] * pg[q] - t) * (pg[q] * pg[q] - t);
        nt += t * t;
    }
    ey = sqrt(ey / nt); ec = sqrt(ec / nt); eg = sqrt(eg / nt);
    ck_assert_msg(eg < ey && ec < ey, "reconstructions not better than the data: data %g, CPU %g, GPU %g", ey, ec, eg);
    ck_assert_msg(fabs(ec - eg) <= 0.1 * ec + 0.005, "reconstruction errors differ: CPU %g, GPU %g", ec, eg);
    ck_assert_msg(fabs(tg.err - eg) <= 1e-9 * eg + 1e-12, "device error log %g vs host %g", tg.err, eg);
    free(pc); free(pg); free(g);
    free_pair(&P);
}
END_TEST

START_TEST(cli_gpu_run)
{
    char dir[] = "/tmp/stenc-deconv-gpu-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *bin = getenv("STENC_DECONV_BIN") ? getenv("STENC_DECONV_BIN") : STENC_DECONV_BIN; /* a carried build */
    const char *argv[] = {bin, "--gpu", "--size", "64", "--iters", "25", "--quiet", "--out", dir, NULL};
    ck_assert_int_eq(run_program(argv, NULL, 0), 0);
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int cuda = 0;
    double eb = -1, er = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "  backend: CUDA", 15) == 0) cuda = 1;
        sscanf(line, "  relative error to the ground truth: blurred data %lf, reconstruction %lf", &eb, &er);
    }
    fclose(f);
    ck_assert_msg(cuda, "summary does not name the CUDA backend");
    ck_assert_msg(er > 0 && er < eb, "GPU reconstruction (%g) not better than the blurred data (%g)", er, eb);
    static const char *files[] = {"montage.png", "recon.png", "convergence.csv", "summary.txt", "convergence.png"};
    for (int i = 0; i < 5; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

int main(void)
{
    char err[256];
    double one = 1;
    dcg_problem *G = dcg_create(2, 4, 4, 1, (double[16]){0}, (double[16]){[5] = one}, DC_GAUSS, DC_TV, 0.1, NULL, err, sizeof err);
    if (!G) {
        printf("test_deconv_gpu: SKIP: %s; the CUDA solver was not run\n", err);
        return 77;
    }
    dcg_free(G);
    Suite *s = suite_create("deconv_gpu");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, eval_cpu_vs_gpu, 0, 16);
    tcase_add_loop_test(tc, solve_cpu_vs_gpu, 0, 2);
    tcase_add_test(tc, cli_gpu_run);
    suite_add_tcase(s, tc);
    return run_suite_nofork(s) ? 1 : 0;
}
