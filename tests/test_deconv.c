/* The deconvolution demo: the solver's full gradient (data term through the
 * FFT convolution + regularizer through the generated kernel, in the x = p^2
 * parametrisation) against central finite differences, for both data terms
 * in 2D and 3D; the objective decreases under L-BFGS; command-line errors
 * give their documented exit codes. */
#define _GNU_SOURCE
#include "testproc.h"

#include <png.h>
#include "deconv.h"

static dc_problem *small(int dims, int noise, int reg, double lambda, size_t *N, rng_t *r)
{
    size_t nx = 12, ny = 10, nz = dims == 3 ? 6 : 1;
    *N = nx * ny * nz;
    double *y = dalloc(*N), *psf = dalloc(*N);
    dfill(y, *N, r, 1, 5);
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                double a = (double)i - 6, b = (double)j - 5, c = dims == 3 ? (double)k - 3 : 0;
                psf[i + nx * (j + ny * k)] = exp(-(a * a + b * b + c * c) / 3.0);
            }
    char err[256];
    dc_problem *P = dc_create(dims, nx, ny, nz, y, psf, noise, reg, lambda, err, sizeof err);
    ck_assert_msg(P != NULL, "%s", err);
    free(y); free(psf);
    return P;
}

START_TEST(gradient_vs_finite_differences)
{
    int dims = 2 + _i / 4, noise = (_i / 2) % 2, reg = (_i % 2) ? DC_HUBER : DC_TV;
    rng_t r = {900 + (uint64_t)_i};
    size_t N;
    dc_problem *P = small(dims, noise, reg, 0.3, &N, &r);
    double *p = dalloc(N), *g = dalloc(N), *g2 = dalloc(N), *pp = dalloc(N);
    dfill(p, N, &r, 0.8, 2.0);
    dc_eval(P, p, g);
    double gmax = 0;
    for (size_t q = 0; q < N; ++q) gmax = fmax(gmax, fabs(g[q]));
    const double h = 1e-5;
    for (size_t q = 0; q < N; q += 3) {
        memcpy(pp, p, N * sizeof *p);
        pp[q] = p[q] + h;
        double fp = dc_eval(P, pp, g2);
        pp[q] = p[q] - h;
        double fm = dc_eval(P, pp, g2);
        double fd = (fp - fm) / (2 * h);
        ck_assert_msg(fabs(fd - g[q]) <= 1e-6 * fmax(gmax, 1), "%dD noise %d reg %d: grad[%zu] %.10g vs FD %.10g", dims, noise, reg, q,
                      g[q], fd);
    }
    free(p); free(g); free(g2); free(pp);
    dc_free(P);
}
END_TEST

static double last_f;
static int decreasing;
static void track(int it, double f, double gnorm, const double *p, void *ctx)
{
    (void)gnorm; (void)p; (void)ctx;
    if (it > 1 && f > last_f * (1 + 1e-12)) decreasing = 0;
    last_f = f;
}

START_TEST(objective_decreases)
{
    rng_t r = {77};
    size_t N;
    dc_problem *P = small(2, DC_POISSON, DC_TV, 0.1, &N, &r);
    double *p = dalloc(N), *g = dalloc(N);
    dfill(p, N, &r, 1, 2);
    double f0 = dc_eval(P, p, g);
    decreasing = 1;
    last_f = f0;
    dc_solve(P, p, 30, track, NULL);
    double f1 = dc_eval(P, p, g);
    ck_assert_msg(decreasing, "objective increased between L-BFGS iterations");
    ck_assert_msg(f1 < f0, "objective did not decrease: %g -> %g", f0, f1);
    free(p); free(g);
    dc_free(P);
}
END_TEST

static int run_cli(const char *const *args)
{
    const char *argv[16];
    int n = 0;
    argv[n++] = STENC_DECONV_BIN;
    for (int i = 1; args[i] && n < 15; ++i) argv[n++] = args[i];
    argv[n] = NULL;
    return run_program(argv, NULL, 0);
}

START_TEST(cli_errors)
{
    const char *a1[] = {"stenc-deconv", "--dim", "4", NULL};
    const char *a2[] = {"stenc-deconv", "--lambda", "-1", NULL};
    const char *a3[] = {"stenc-deconv", "--frobnicate", NULL};
    const char *a4[] = {"stenc-deconv", "--image", "/nonexistent.png", NULL};
    const char *a5[] = {"stenc-deconv", "--image", "README.md", NULL};
    const char *a6[] = {"stenc-deconv", "--gpu", NULL};
    const char *a7[] = {"stenc-deconv", "--help", NULL};
    const char *a8[] = {"stenc-deconv", "--iters", NULL};
    ck_assert_int_eq(run_cli(a1), 2);
    ck_assert_int_eq(run_cli(a2), 2);
    ck_assert_int_eq(run_cli(a3), 2);
    ck_assert_int_eq(run_cli(a4), 3);
    ck_assert_int_eq(run_cli(a5), 3);
    int ndev = 0;
    if (stenc_cuda_device_count(&ndev) != STENC_OK || ndev == 0)
        ck_assert_int_eq(run_cli(a6), 5); /* --gpu without a device (with one: test_deconv_gpu) */
    ck_assert_int_eq(run_cli(a7), 0);
    ck_assert_int_eq(run_cli(a8), 2);
}
END_TEST

static int run_cli_err(const char *const *args, char *err, size_t len)
{
    const char *argv[24];
    int n = 0;
    argv[n++] = STENC_DECONV_BIN;
    for (int i = 1; args[i] && n < 23; ++i) argv[n++] = args[i];
    argv[n] = NULL;
    return run_program(argv, err, len);
}

/* a w x h 8-bit grayscale PNG */
static void write_gray_png(const char *path, int w, int h, const unsigned char *px)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop pi = png_create_info_struct(ps);
    png_init_io(ps, f);
    png_set_IHDR(ps, pi, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(ps, pi);
    for (int j = 0; j < h; ++j) png_write_row(ps, (png_bytep)(px + j * w));
    png_write_end(ps, NULL);
    png_destroy_write_struct(&ps, &pi);
    fclose(f);
}

/* what a user reads: ranges, names, reasons, and plain progress lines in a log */
START_TEST(cli_messages)
{
    char err[16384];
    const char *v[] = {"", "--version", NULL};
    ck_assert_int_eq(run_cli_err(v, err, sizeof err), 0);
    const char *l[] = {"", "--lambda", "-1", NULL};
    ck_assert_int_eq(run_cli_err(l, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "0 to 1e6"), "no valid range in: %s", err);
    const char *u[] = {"", "--quiet", "--frobnicate", NULL};
    ck_assert_int_eq(run_cli_err(u, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "unknown option --frobnicate"), "%s", err);
    const char *g[] = {"", "--gpu", "--out", "/tmp/stenc-test-never", NULL};
    if (!stenc_has_cuda()) {
        ck_assert_int_eq(run_cli_err(g, err, sizeof err), 5);
        ck_assert_msg(strstr(err, "built without CUDA"), "%s", err);
    }
    char dir[] = "/tmp/stenc-test-cli-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char psf[4200], zero[4200], out[4200];
    snprintf(psf, sizeof psf, "%s/psf3.png", dir);
    snprintf(zero, sizeof zero, "%s/zero.png", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    const unsigned char p3[9] = {10, 50, 10, 50, 255, 50, 10, 50, 10}, z3[9] = {0};
    write_gray_png(psf, 3, 3, p3);
    write_gray_png(zero, 3, 3, z3);
    /* a 3x3 PSF is the common case; progress goes to a file here: no \r */
    const char *ok[] = {"", "--psf", psf, "--size", "64", "--iters", "20", "--no-compare", "--out", out, NULL};
    ck_assert_msg(run_cli_err(ok, err, sizeof err) == 0, "3x3 PSF: %s", err);
    ck_assert_msg(strchr(err, '\r') == NULL, "progress uses \\r in a log: %s", err);
    ck_assert_msg(strstr(err, "iteration   10"), "no progress line: %s", err);
    const char *zz[] = {"", "--psf", zero, "--size", "64", "--out", out, NULL};
    ck_assert_int_eq(run_cli_err(zz, err, sizeof err), 3);
    ck_assert_msg(strstr(err, zero) && strstr(err, "sums to zero"), "%s", err);
    char sum[4300];
    snprintf(sum, sizeof sum, "%s/summary.txt", out);
    FILE *f = fopen(sum, "r");
    ck_assert_ptr_nonnull(f);
    char text[4096] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    ck_assert_msg(strstr(text, "L-BFGS: ") && !strstr(text, "status -"), "summary: %s", text);
    static const char *files[] = {"montage.png", "recon.png", "convergence.csv", "summary.txt", "convergence.png"};
    for (int i = 0; i < 5; ++i) {
        snprintf(sum, sizeof sum, "%s/%s", out, files[i]);
        unlink(sum);
    }
    rmdir(out);
    unlink(psf);
    unlink(zero);
    rmdir(dir);
}
END_TEST

START_TEST(small_run_improves)
{
    char dir[] = "/tmp/stenc-deconv-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *a[] = {"stenc-deconv", "--size", "64", "--iters", "25", "--quiet", "--out", dir, NULL};
    ck_assert_int_eq(run_cli(a), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    double eb = -1, er = -1, e0 = -1;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "  relative error to the ground truth: blurred data %lf, reconstruction %lf", &eb, &er);
        sscanf(line, "  same solver with lambda = 0: relative error %lf", &e0);
    }
    fclose(f);
    ck_assert_msg(eb > 0 && er > 0 && e0 > 0, "summary incomplete");
    ck_assert_msg(er < eb, "reconstruction (%g) not better than the blurred data (%g)", er, eb);
    ck_assert_msg(er < e0, "reconstruction (%g) not better than lambda = 0 (%g)", er, e0);
    static const char *files[] = {"montage.png", "recon.png", "convergence.csv", "summary.txt"};
    for (int i = 0; i < 4; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ck_assert_msg(access(path, R_OK) == 0, "missing %s", files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/convergence.png", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("deconv");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, gradient_vs_finite_differences, 0, 8);
    tcase_add_test(tc, objective_decreases);
    tcase_add_test(tc, cli_errors);
    tcase_add_test(tc, cli_messages);
    tcase_add_test(tc, small_run_improves);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
