/* The GPU yardstick's C API (perf/gpu_hand.cu): the hand-written total
 * variation (neumann), 3D and 2D, value and gradient, float and double, on device
 * arrays.  0 on success, -1 on a CUDA error or a grid the kernels do not
 * take (an empty one, or planes of 2^32 points or more).  ws: one device
 * double for the value's sum. */
#ifndef STENC_GPU_HAND_H
#define STENC_GPU_HAND_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
int stenc_bench_hand_tv3_value_f32(size_t nx, size_t ny, size_t nz, const float *x, float wx, float wy, float wz, float eps,
                                   double *ws, double *value);
int stenc_bench_hand_tv3_value_f64(size_t nx, size_t ny, size_t nz, const double *x, double wx, double wy, double wz,
                                   double eps, double *ws, double *value);
int stenc_bench_hand_tv3_grad_f32(size_t nx, size_t ny, size_t nz, const float *x, float wx, float wy, float wz, float eps,
                                  float *g);
int stenc_bench_hand_tv3_grad_f64(size_t nx, size_t ny, size_t nz, const double *x, double wx, double wy, double wz,
                                  double eps, double *g);
/* 2D: the same on an nx x ny grid */
int stenc_bench_hand_tv2_value_f32(size_t nx, size_t ny, const float *x, float wx, float wy, float eps, double *ws,
                                   double *value);
int stenc_bench_hand_tv2_value_f64(size_t nx, size_t ny, const double *x, double wx, double wy, double eps, double *ws,
                                   double *value);
int stenc_bench_hand_tv2_grad_f32(size_t nx, size_t ny, const float *x, float wx, float wy, float eps, float *g);
int stenc_bench_hand_tv2_grad_f64(size_t nx, size_t ny, const double *x, double wx, double wy, double eps, double *g);
#ifdef __cplusplus
}
#endif
#endif
