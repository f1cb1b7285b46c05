/* stenc demo: the CUDA solver's entry points in a build without CUDA. */
#include <math.h>
#include <stdio.h>

#include "deconv_gpu.h"

dcg_problem *dcg_create(int dims, size_t nx, size_t ny, size_t nz, const double *y, const double *psf, int noise, int reg,
                        double lambda, const double *truth, char *err, size_t errlen)
{
    (void)dims; (void)nx; (void)ny; (void)nz; (void)y; (void)psf; (void)noise; (void)reg; (void)lambda; (void)truth;
    snprintf(err, errlen, "this stenc-deconv was built without CUDA (no nvcc at build time)");
    return NULL;
}
void dcg_free(dcg_problem *P) { (void)P; }
double dcg_eval(dcg_problem *P, const double *p, double *grad) { (void)P; (void)p; (void)grad; return NAN; }
int dcg_solve(dcg_problem *P, double *p, int iters, void (*log)(int, double, double, double, void *), void *ctx, char *err,
              size_t errlen)
{
    (void)P; (void)p; (void)iters; (void)log; (void)ctx;
    snprintf(err, errlen, "built without CUDA");
    return -1;
}
const dc_stats *dcg_get_stats(const dcg_problem *P) { (void)P; return NULL; }
