/* stenc-deconv: regularized deconvolution demo (make demo).
 *
 *   stenc-deconv [--dim 2|3] [--size N] [--image FILE.png] [--psf FILE.png]
 *                [--noise poisson|gaussian] [--reg tv|tv_aniso|huber|hessian|tikhonov]
 *                [--lambda L] [--iters K] [--sigma S] [--photons C] [--out DIR] [--gpu]
 *
 * Default: a Shepp-Logan phantom (2D, 256^2) blurred by a Gaussian PSF and
 * corrupted by Poisson noise with a fixed seed; reconstructs it with
 * TV-regularized Poisson deconvolution, and for comparison with lambda = 0.
 * Exit codes: 0 success, 2 bad arguments, 3 unreadable or unsuitable input
 * file, 4 solver or output failure, 5 --gpu requested but no usable CUDA device
 * (or a build without CUDA). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deconv.h"
#include "deconv_gpu.h"
#include "stenc.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------- deterministic random numbers ---------------- */
static uint64_t rs = 0x1234abcdu;
static double urand(void)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}
static double nrand(void) { return sqrt(-2 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }
static double poisson(double lam)
{
    if (lam > 60) { double v = lam + sqrt(lam) * nrand(); return v < 0 ? 0 : floor(v + 0.5); }
    double L = exp(-lam), p = 1;
    int k = 0;
    do { ++k; p *= urand(); } while (p > L);
    return k - 1;
}

/* ---------------- phantoms ---------------- */
/* Shepp-Logan (modified, Toft) in 2D; a 3D variant of ellipsoids */
static void phantom(int dims, size_t n, double *x)
{
    static const double E[10][6] = {
        {1.0, .69, .92, 0, 0, 0},         {-.8, .6624, .874, 0, -.0184, 0}, {-.2, .11, .31, .22, 0, -18},
        {-.2, .16, .41, -.22, 0, 18},      {.1, .21, .25, 0, .35, 0},        {.1, .046, .046, 0, .1, 0},
        {.1, .046, .046, 0, -.1, 0},       {.1, .046, .023, -.08, -.605, 0}, {.1, .023, .023, 0, -.606, 0},
        {.1, .023, .046, .06, -.605, 0}};
    size_t nz = dims == 3 ? n : 1;
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < n; ++j)
            for (size_t i = 0; i < n; ++i) {
                double X = 2.0 * ((double)i + 0.5) / (double)n - 1, Y = 1 - 2.0 * ((double)j + 0.5) / (double)n;
                double Z = dims == 3 ? 2.0 * ((double)k + 0.5) / (double)n - 1 : 0;
                double v = 0;
                for (int e = 0; e < 10; ++e) {
                    double th = E[e][5] * 3.141592653589793 / 180, c = cos(th), s = sin(th);
                    double u = (X - E[e][3]) * c + (Y - E[e][4]) * s, w = -(X - E[e][3]) * s + (Y - E[e][4]) * c;
                    double cz = dims == 3 ? E[e][2] * 0.8 : 1; /* ellipsoid half-depth */
                    double r = u * u / (E[e][1] * E[e][1]) + w * w / (E[e][2] * E[e][2]) + (dims == 3 ? Z * Z / (cz * cz) : 0);
                    if (r <= 1) v += E[e][0];
                }
                x[i + n * (j + n * k)] = v < 0 ? 0 : v;
            }
}

static void gaussian_psf(int dims, size_t nx, size_t ny, size_t nz, double sigma, double *h)
{
    for (size_t k = 0; k < nz; ++k)
        for (size_t j = 0; j < ny; ++j)
            for (size_t i = 0; i < nx; ++i) {
                double a = (double)i - (double)(nx / 2), b = (double)j - (double)(ny / 2);
                double c = dims == 3 ? (double)k - (double)(nz / 2) : 0;
                h[i + nx * (j + ny * k)] = exp(-(a * a + b * b + c * c) / (2 * sigma * sigma));
            }
}

/* ---------------- PNG ---------------- */
/* Reads a grayscale (or RGB, converted) PNG into a double image in [0, 1]. */
static int png_read_gray(const char *path, size_t minside, size_t *w, size_t *h, double **out, char *err, size_t el)
{
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, el, "cannot open %s: %s", path, strerror(errno)); return -1; }
    unsigned char sig[8];
    if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8)) { fclose(f); snprintf(err, el, "%s is not a PNG file", path); return -1; }
    png_structp ps = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop pi = ps ? png_create_info_struct(ps) : NULL;
    if (!ps || !pi) { fclose(f); snprintf(err, el, "libpng: out of memory"); return -1; }
    png_bytep *rows = NULL;
    if (setjmp(png_jmpbuf(ps))) {
        png_destroy_read_struct(&ps, &pi, NULL);
        fclose(f);
        free(rows);
        snprintf(err, el, "%s: corrupt or unsupported PNG", path);
        return -1;
    }
    png_init_io(ps, f);
    png_set_sig_bytes(ps, 8);
    png_read_info(ps, pi);
    png_set_expand(ps);
    png_set_strip_16(ps);
    png_set_strip_alpha(ps);
    int ct = png_get_color_type(ps, pi);
    if (ct == PNG_COLOR_TYPE_RGB || ct == PNG_COLOR_TYPE_RGB_ALPHA || ct == PNG_COLOR_TYPE_PALETTE)
        png_set_rgb_to_gray_fixed(ps, 1, -1, -1);
    png_read_update_info(ps, pi);
    size_t W = png_get_image_width(ps, pi), H = png_get_image_height(ps, pi);
    if (W < minside || H < minside || W > 16384 || H > 16384) {
        png_destroy_read_struct(&ps, &pi, NULL);
        fclose(f);
        snprintf(err, el, "%s: image is %zux%zu; %zu to 16384 pixels per side are supported", path, W, H, minside);
        return -1;
    }
    size_t rb = png_get_rowbytes(ps, pi);
    if (rb != W) {
        png_destroy_read_struct(&ps, &pi, NULL);
        fclose(f);
        snprintf(err, el, "%s: unexpected pixel format after conversion", path);
        return -1;
    }
    unsigned char *buf = malloc(W * H);
    rows = malloc(H * sizeof *rows);
    double *img = malloc(W * H * sizeof *img);
    if (!buf || !rows || !img) { free(buf); free(rows); free(img); png_destroy_read_struct(&ps, &pi, NULL); fclose(f); snprintf(err, el, "out of memory"); return -1; }
    for (size_t r = 0; r < H; ++r) rows[r] = buf + r * W;
    png_read_image(ps, rows);
    png_destroy_read_struct(&ps, &pi, NULL);
    fclose(f);
    for (size_t q = 0; q < W * H; ++q) img[q] = buf[q] / 255.0;
    free(buf); free(rows);
    *w = W; *h = H; *out = img;
    return 0;
}

/* Writes images side by side (each scaled to [0, vmax]) as 8-bit grayscale. */
static int write_png_row(const char *path, int count, const double *const *imgs, size_t w, size_t h, double vmax)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop pi = ps ? png_create_info_struct(ps) : NULL;
    size_t W = w * (size_t)count + 4 * (size_t)(count - 1);
    unsigned char *row = malloc(W);
    if (!ps || !pi || !row || setjmp(png_jmpbuf(ps))) {
        if (ps) png_destroy_write_struct(&ps, &pi);
        fclose(f);
        free(row);
        return -1;
    }
    png_init_io(ps, f);
    png_set_IHDR(ps, pi, (png_uint_32)W, (png_uint_32)h, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(ps, pi);
    for (size_t j = 0; j < h; ++j) {
        memset(row, 255, W);
        for (int c = 0; c < count; ++c)
            for (size_t i = 0; i < w; ++i) {
                double v = imgs[c][i + w * j] / vmax;
                row[(size_t)c * (w + 4) + i] = (unsigned char)(v <= 0 ? 0 : v >= 1 ? 255 : v * 255 + 0.5);
            }
        png_write_row(ps, row);
    }
    png_write_end(ps, NULL);
    png_destroy_write_struct(&ps, &pi);
    free(row);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---------------- metrics ---------------- */
static double rel_err(const double *a, const double *ref, size_t n)
{
    double e = 0, r = 0;
    for (size_t q = 0; q < n; ++q) { e += (a[q] - ref[q]) * (a[q] - ref[q]); r += ref[q] * ref[q]; }
    return sqrt(e / r);
}
static double psnr(const double *a, const double *ref, size_t n)
{
    double mse = 0, peak = 0;
    for (size_t q = 0; q < n; ++q) { mse += (a[q] - ref[q]) * (a[q] - ref[q]); if (ref[q] > peak) peak = ref[q]; }
    mse /= (double)n;
    return 10 * log10(peak * peak / mse);
}

/* ---------------- driver ---------------- */
typedef struct {
    FILE *log;
    const double *truth;
    size_t N;
    double t0;
    int quiet, tty;
    double *xbuf;
} LogCtx;

/* one iteration's line in the log and on the terminal (CPU and GPU solves) */
static void report(LogCtx *L, int it, double f, double gnorm, double e)
{
    if (L->log) fprintf(L->log, "%d,%.10e,%.6e,%.6e,%.4f\n", it, f, gnorm, e, now() - L->t0);
    if (L->quiet) return;
    if (L->tty) { /* one line rewritten in place */
        fprintf(stderr, "\r  iteration %4d  objective %.6e  |grad| %.3e  rel. error %.4f", it, f, gnorm, e);
        fflush(stderr);
    } else if (it % 10 == 0) { /* a log file: plain lines, every 10th iteration */
        fprintf(stderr, "  iteration %4d  objective %.6e  |grad| %.3e  rel. error %.4f\n", it, f, gnorm, e);
    }
}
static void on_iter(int it, double f, double gnorm, const double *p, void *ctx)
{
    LogCtx *L = ctx;
    for (size_t q = 0; q < L->N; ++q) L->xbuf[q] = p[q] * p[q];
    report(L, it, f, gnorm, L->truth ? rel_err(L->xbuf, L->truth, L->N) : NAN);
}
/* the GPU solve computes the error on the device: only scalars arrive here */
static void on_iter_gpu(int it, double f, double gnorm, double relerr, void *ctx) { report(ctx, it, f, gnorm, relerr); }

static void usage(FILE *f)
{
    fprintf(f,
            "usage: stenc-deconv [options]\n"
            "  --dim 2|3            2D image (default) or 3D volume\n"
            "  --size N             phantom size (default 256 in 2D, 64 in 3D)\n"
            "  --image FILE.png     deconvolve your own blurred image (2D) instead of the phantom\n"
            "  --psf FILE.png       PSF image (default: Gaussian of --sigma), centred, any size up to the image\n"
            "  --noise poisson|gaussian   data term (default poisson)\n"
            "  --reg tv|tv_aniso|huber|hessian|tikhonov   regularizer (default tv)\n"
            "  --lambda L           regularization weight (default 0.01 for poisson, 0.1 for gaussian)\n"
            "  --iters K            L-BFGS iterations (default 100)\n"
            "  --sigma S            Gaussian PSF width in pixels (default 2)\n"
            "  --photons C          peak photon count of the simulated data (default 200)\n"
            "  --out DIR            output folder (default build/demo)\n"
            "  --no-compare         skip the lambda = 0 comparison solve\n"
            "  --quiet              no progress line\n"
            "  --gpu                solve on CUDA (cuFFT, cuBLAS, generated CUDA kernels; exits with 5\n"
            "                       when no CUDA device is usable)\n"
            "Outputs in DIR: montage.png (truth | blurred | reconstruction | lambda=0), recon.png,\n"
            "convergence.csv, convergence.png (when gnuplot is installed), summary.txt.\n");
}

static int parse_pos(const char *s, double lo, double hi, double *v)
{
    char *e;
    errno = 0;
    double d = strtod(s, &e);
    if (errno || e == s || *e || !(d >= lo && d <= hi)) return -1;
    *v = d;
    return 0;
}

int main(int argc, char **argv)
{
    int dims = 2, noise = DC_POISSON, reg = DC_TV, iters = 100, compare = 1, quiet = 0, gpu = 0;
    double lambda = -1, sigma = 2, photons = 200, size = 0;
    const char *image = NULL, *psfpath = NULL, *out = "build/demo";
    /* options with a value, and the range of the numeric ones */
    static const struct { const char *name, *range; double lo, hi; } opt[] = {
        {"--dim", "2 or 3", 2, 3}, {"--size", "16 to 4096", 16, 4096}, {"--image", NULL, 0, 0}, {"--psf", NULL, 0, 0},
        {"--out", NULL, 0, 0}, {"--noise", "poisson or gaussian", 0, 0},
        {"--reg", "tv, tv_aniso, huber, hessian or tikhonov", 0, 0}, {"--lambda", "0 to 1e6", 0, 1e6},
        {"--iters", "1 to 100000", 1, 100000}, {"--sigma", "0.3 to 100", 0.3, 100}, {"--photons", "1 to 1e9", 1, 1e9}};
    for (int a = 1; a < argc; ++a) {
        const char *o = argv[a];
        double d = 0;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { usage(stdout); return 0; }
        if (!strcmp(o, "--version")) { printf("stenc-deconv %s\n", STENC_VERSION); return 0; }
        if (!strcmp(o, "--no-compare")) { compare = 0; continue; }
        if (!strcmp(o, "--quiet")) { quiet = 1; continue; }
        if (!strcmp(o, "--gpu")) { gpu = 1; continue; }
        size_t k = 0, nopt = sizeof opt / sizeof *opt;
        while (k < nopt && strcmp(o, opt[k].name)) ++k;
        if (k == nopt) { fprintf(stderr, "stenc-deconv: unknown option %s (try --help)\n", o); return 2; }
        if (a + 1 >= argc) { fprintf(stderr, "stenc-deconv: %s needs a value (try --help)\n", o); return 2; }
        const char *v = argv[++a];
        int ok = 1;
        if (opt[k].hi > 0 && strcmp(o, "--dim")) ok = parse_pos(v, opt[k].lo, opt[k].hi, &d) == 0;
        if (!strcmp(o, "--dim")) { ok = !strcmp(v, "2") || !strcmp(v, "3"); dims = v[0] - '0'; }
        else if (!strcmp(o, "--size")) size = d;
        else if (!strcmp(o, "--image")) image = v;
        else if (!strcmp(o, "--psf")) psfpath = v;
        else if (!strcmp(o, "--out")) out = v;
        else if (!strcmp(o, "--noise")) { ok = !strcmp(v, "poisson") || !strcmp(v, "gaussian"); noise = strcmp(v, "poisson") ? DC_GAUSS : DC_POISSON; }
        else if (!strcmp(o, "--reg")) { reg = dc_reg_parse(v); ok = reg >= 0; }
        else if (!strcmp(o, "--lambda")) lambda = d;
        else if (!strcmp(o, "--iters")) iters = (int)d;
        else if (!strcmp(o, "--sigma")) sigma = d;
        else if (!strcmp(o, "--photons")) photons = d;
        if (!ok) {
            fprintf(stderr, "stenc-deconv: invalid value '%s' for %s (valid: %s)\n", v, o, opt[k].range);
            return 2;
        }
    }
    if (gpu) { /* before any output is written */
        int ndev = 0;
        int drc = stenc_cuda_device_count(&ndev);
        if (!stenc_has_cuda()) {
            fprintf(stderr, "stenc-deconv: --gpu: this binary was built without CUDA (no nvcc at build time, or the CPU-only\n"
                            "  build/bin/stenc-deconv-cpu of make demo; make builds build/bin/stenc-deconv)\n");
            return 5;
        }
        if (drc != STENC_OK || ndev < 1) {
            fprintf(stderr, "stenc-deconv: --gpu: no usable CUDA device (%s)\n", stenc_strerror(drc != STENC_OK ? drc : STENC_ERR_NO_DEVICE));
            return 5;
        }
    }
    if (image && dims == 3) { fprintf(stderr, "stenc-deconv: --image reads a 2D PNG; use it with --dim 2\n"); return 2; }
    if (lambda < 0) lambda = noise == DC_POISSON ? 0.01 : 0.1;
    size_t n = size > 0 ? (size_t)size : (dims == 2 ? 256 : 64);
    size_t nx = n, ny = n, nz = dims == 3 ? n : 1;
    double *truth = NULL, *y = NULL, *psf = NULL;
    char err[512];
    if (image) {
        size_t w, h;
        if (png_read_gray(image, 8, &w, &h, &y, err, sizeof err)) { fprintf(stderr, "stenc-deconv: %s\n", err); return 3; }
        nx = w; ny = h; nz = 1;
        for (size_t q = 0; q < nx * ny; ++q) y[q] *= photons;
    }
    size_t N = nx * ny * nz;
    psf = calloc(N, sizeof *psf);
    if (!psf) { fprintf(stderr, "stenc-deconv: out of memory\n"); return 4; }
    if (psfpath) {
        size_t w, h;
        double *p0;
        if (dims == 3) { fprintf(stderr, "stenc-deconv: --psf reads a 2D PNG; use it with --dim 2\n"); return 2; }
        if (png_read_gray(psfpath, 1, &w, &h, &p0, err, sizeof err)) { fprintf(stderr, "stenc-deconv: %s\n", err); return 3; }
        if (w > nx || h > ny) { fprintf(stderr, "stenc-deconv: %s: the PSF (%zux%zu) is larger than the image (%zux%zu)\n", psfpath, w, h, nx, ny); return 3; }
        double psum = 0;
        for (size_t j = 0; j < h; ++j)
            for (size_t i = 0; i < w; ++i) psum += psf[(i + nx / 2 - w / 2) + nx * (j + ny / 2 - h / 2)] = p0[i + w * j];
        free(p0);
        if (!(psum > 0)) {
            fprintf(stderr, "stenc-deconv: %s: the PSF sums to zero (an all-black image?); a PSF needs a positive sum\n", psfpath);
            free(psf);
            free(y);
            return 3;
        }
    } else {
        gaussian_psf(dims, nx, ny, nz, sigma, psf);
    }
    if (!image) {
        truth = malloc(N * sizeof *truth);
        y = malloc(N * sizeof *y);
        if (!truth || !y) { fprintf(stderr, "stenc-deconv: out of memory\n"); return 4; }
        phantom(dims, n, truth);
        for (size_t q = 0; q < N; ++q) truth[q] *= photons;
    }
    if (mkdir(out, 0777) != 0 && errno != EEXIST) { fprintf(stderr, "stenc-deconv: cannot create %s: %s\n", out, strerror(errno)); return 4; }
    dc_problem *P = dc_create(dims, nx, ny, nz, image ? y : truth, psf, noise, reg, lambda, err, sizeof err);
    if (!P) { fprintf(stderr, "stenc-deconv: %s\n", err); return 4; }
    if (!image) {
        /* simulate with the problem's own forward model: blur, then noise
         * with a fixed seed; the noisy data then replace the placeholder */
        double *b = malloc(N * sizeof *b);
        dc_blur(P, truth, b);
        for (size_t q = 0; q < N; ++q) y[q] = noise == DC_POISSON ? poisson(b[q] > 0 ? b[q] : 0) : b[q] + 0.02 * photons * nrand();
        free(b);
        dc_set_data(P, y);
    }
    /* start from the measured data (p = sqrt(max(y, small))) */
    double *p = malloc(N * sizeof *p), *x = malloc(N * sizeof *x), *x0 = NULL, *xb = malloc(N * sizeof *xb);
    double mean = 0;
    for (size_t q = 0; q < N; ++q) mean += y[q];
    mean /= (double)N;
    for (size_t q = 0; q < N; ++q) p[q] = sqrt(y[q] > 0.1 * mean ? y[q] : 0.1 * mean);
    char path[4096];
    snprintf(path, sizeof path, "%s/convergence.csv", out);
    FILE *lg = fopen(path, "w");
    if (!lg) { fprintf(stderr, "stenc-deconv: cannot write %s\n", path); return 4; }
    fprintf(lg, "iteration,objective,grad_norm,rel_error,seconds\n");
    dcg_problem *G = NULL;
    char backend[300];
    if (gpu) {
        G = dcg_create(dims, nx, ny, nz, y, psf, noise, reg, lambda, truth, err, sizeof err);
        if (!G) { fprintf(stderr, "stenc-deconv: --gpu: %s\n", err); fclose(lg); return 5; }
        char dev[256] = "CUDA device";
        stenc_cuda_device_name(dev, sizeof dev);
        snprintf(backend, sizeof backend, "CUDA (%s)", dev);
    } else {
        snprintf(backend, sizeof backend, "CPU, %d OpenMP thread(s)", stenc_max_threads());
    }
    fprintf(stderr, "stenc-deconv: %dD %zux%zux%zu, %s noise, %s regularizer, lambda %g, %d iterations, %s\n",
            dims, nx, ny, nz, noise ? "Poisson" : "Gaussian", dc_reg_name(reg), lambda, iters, backend);
    LogCtx L = {lg, truth, N, now(), quiet, isatty(2), xb};
    double t0 = now();
    int rc = G ? dcg_solve(G, p, iters, on_iter_gpu, &L, err, sizeof err) : dc_solve(P, p, iters, on_iter, &L);
    double t_solve = now() - t0;
    if (!quiet && L.tty) fprintf(stderr, "\n");
    fclose(lg);
    if (G && rc < 0) { fprintf(stderr, "stenc-deconv: GPU solve failed: %s\n", err); dcg_free(G); return 4; }
    for (size_t q = 0; q < N; ++q) x[q] = p[q] * p[q];
    const dc_stats *S = G ? dcg_get_stats(G) : dc_get_stats(P);
    const char *why = G ? (rc == 1 ? "the line search found no descent step" : "reached the iteration limit")
                        : dc_status_text(rc);
    if (G ? rc == 1 : dc_status_unusual(rc)) fprintf(stderr, "stenc-deconv: note: L-BFGS stopped early: %s\n", why);
    double e_rec = truth ? rel_err(x, truth, N) : NAN, e_blur = truth ? rel_err(y, truth, N) : NAN, e0 = NAN;
    if (compare && truth) {
        /* the same solve with lambda = 0, on the same backend */
        x0 = malloc(N * sizeof *x0);
        double *p0 = malloc(N * sizeof *p0);
        for (size_t q = 0; q < N; ++q) p0[q] = sqrt(y[q] > 0.1 * mean ? y[q] : 0.1 * mean);
        LogCtx L0 = {NULL, truth, N, now(), 1, 0, xb};
        if (G) {
            dcg_problem *G0 = dcg_create(dims, nx, ny, nz, y, psf, noise, reg, 0.0, truth, err, sizeof err);
            if (G0 && dcg_solve(G0, p0, iters, on_iter_gpu, &L0, err, sizeof err) < 0)
                fprintf(stderr, "stenc-deconv: lambda = 0 comparison failed on the GPU: %s\n", err);
            dcg_free(G0);
        } else {
            dc_problem *P0 = dc_create(dims, nx, ny, nz, y, psf, noise, reg, 0.0, err, sizeof err);
            dc_solve(P0, p0, iters, on_iter, &L0);
            dc_free(P0);
        }
        for (size_t q = 0; q < N; ++q) x0[q] = p0[q] * p0[q];
        e0 = rel_err(x0, truth, N);
        free(p0);
    }
    /* images: central slice in 3D */
    size_t off = dims == 3 ? nx * ny * (nz / 2) : 0;
    double vmax = 0;
    for (size_t q = 0; q < nx * ny; ++q) {
        const double *src = truth ? truth : y;
        if (src[off + q] > vmax) vmax = src[off + q];
    }
    vmax = vmax > 0 ? vmax * 1.05 : 1;
    const double *mont[4];
    int nm = 0;
    if (truth) mont[nm++] = truth + off;
    mont[nm++] = y + off;
    mont[nm++] = x + off;
    if (x0) mont[nm++] = x0 + off;
    snprintf(path, sizeof path, "%s/montage.png", out);
    int wok = write_png_row(path, nm, mont, nx, ny, vmax);
    snprintf(path, sizeof path, "%s/recon.png", out);
    wok |= write_png_row(path, 1, (const double *const[]){x + off}, nx, ny, vmax);
    if (wok) { fprintf(stderr, "stenc-deconv: cannot write PNG files in %s\n", out); return 4; }
    snprintf(path, sizeof path, "command -v gnuplot >/dev/null 2>&1 && gnuplot -e \"set terminal pngcairo size 800,500; set output '%s/convergence.png'; "
             "set datafile separator ','; set logscale y; set xlabel 'iteration'; set ylabel 'gradient norm'; set y2label 'relative error to truth'; set y2tics; set key top right; "
             "plot '%s/convergence.csv' using 1:3 skip 1 with lines title 'gradient norm', '' using 1:4 skip 1 axes x1y2 with lines title 'relative error'; \" 2>/dev/null",
             out, out);
    int have_plot = system(path) == 0;
    /* summary */
    double iters_done = (double)S->n_eval;
    char summary[2048];
    int sl = snprintf(summary, sizeof summary,
                      "stenc-deconv summary\n"
                      "  backend: %s\n"
                      "  problem: %dD %zux%zux%zu, %s data term, %s regularizer, lambda %g\n"
                      "  evaluations: %ld (L-BFGS: %s), %.3f s total, %.2f ms per evaluation\n"
                      "  time: FFT %.3f s, regularizer (generated value_grad) %.3f s, rest (data term, optimizer) %.3f s\n"
                      "  regularizer effective bandwidth: %.2f GB/s (read x, read+write gradient per call)\n",
                      backend, dims, nx, ny, nz, noise ? "Poisson" : "Gaussian", dc_reg_name(reg), lambda, S->n_eval, why, t_solve,
                      1e3 * t_solve / (iters_done > 0 ? iters_done : 1), S->t_fft, S->t_reg, t_solve - S->t_fft - S->t_reg,
                      S->t_reg > 0 ? S->reg_bytes / S->t_reg / 1e9 : 0.0);
    if (truth)
        sl += snprintf(summary + sl, sizeof summary - (size_t)sl,
                       "  relative error to the ground truth: blurred data %.4f, reconstruction %.4f\n"
                       "  PSNR: blurred data %.2f dB, reconstruction %.2f dB\n",
                       e_blur, e_rec, psnr(y, truth, N), psnr(x, truth, N));
    if (x0)
        sl += snprintf(summary + sl, sizeof summary - (size_t)sl,
                       "  same solver with lambda = 0: relative error %.4f, PSNR %.2f dB\n", e0, psnr(x0, truth, N));
    snprintf(summary + sl, sizeof summary - (size_t)sl, "  outputs: %s/montage.png (%s), recon.png, convergence.csv%s\n", out,
             truth ? (x0 ? "truth | blurred+noisy | reconstruction | lambda=0" : "truth | blurred+noisy | reconstruction")
                   : "data | reconstruction",
             have_plot ? ", convergence.png" : "");
    fputs(summary, stdout);
    snprintf(path, sizeof path, "%s/summary.txt", out);
    FILE *sf = fopen(path, "w");
    if (sf) { fputs(summary, sf); fclose(sf); }
    dc_free(P);
    dcg_free(G);
    free(truth); free(y); free(psf); free(p); free(x); free(x0); free(xb);
    return 0;
}
