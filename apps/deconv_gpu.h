/* stenc demo: the same regularized deconvolution as deconv.h, on CUDA.
 *
 * Everything of the solve stays on the device: the iterate, the L-BFGS
 * memory, the FFTs (cuFFT), the data term, the regularizer (the generated
 * stenc_cuda_*_value_grad launchers) and the vector algebra (cuBLAS).  Per
 * iteration only scalars cross to the host (objective, gradient norm, error
 * to the ground truth).  The optimiser is a plain L-BFGS (two-loop recursion,
 * memory 8, backtracking Armijo line search): liblbfgs has no device
 * version, so the CPU and GPU iterates differ; they agree on the objective
 * and gradient at any point and on the quality of the result (tests). */
#ifndef STENC_DECONV_GPU_H
#define STENC_DECONV_GPU_H

#include <stddef.h>

#include "deconv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dcg_problem dcg_problem;

/* As dc_create; truth (may be NULL) is copied to the device for the error
 * log.  Returns NULL with a message in err when no CUDA device is usable (or
 * the program was built without CUDA) or on failure. */
dcg_problem *dcg_create(int dims, size_t nx, size_t ny, size_t nz, const double *y, const double *psf, int noise, int reg,
                        double lambda, const double *truth, char *err, size_t errlen);
void dcg_free(dcg_problem *P);

/* Objective and gradient at p (host arrays, copied in and out); NAN on a
 * device error. */
double dcg_eval(dcg_problem *P, const double *p, double *grad);

/* L-BFGS from p (host, in/out) for at most iters iterations, on the device.
 * log(it, L, |g|, relative error to the truth or NAN, ctx) per iteration.
 * Returns 0 (iterations done), 1 (stopped: no descent step found) or a
 * negative value on a device error (message in err). */
int dcg_solve(dcg_problem *P, double *p, int iters, void (*log)(int it, double f, double gnorm, double relerr, void *ctx),
              void *ctx, char *err, size_t errlen);

const dc_stats *dcg_get_stats(const dcg_problem *P);

#ifdef __cplusplus
}
#endif

#endif
