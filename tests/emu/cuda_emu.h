/* Host emulation of the CUDA subset that stenc's generated kernels and
 * runtime/stenc_cuda.cu use, for tests/emu (see cuda_emu.sh): a launch runs
 * its blocks and threads one after another on the calling host thread, each
 * with its own blockIdx/threadIdx; device memory is host memory.  What this
 * checks: everything a kernel computes for its points (the bodies, the index
 * maps, the loops' assignment of points to threads, beta handling, the
 * launchers' arguments and status codes).  What it cannot check: anything
 * between threads (the grid sum's warp shuffles and shared memory are
 * replaced by emu_grid_sum, which adds the threads' partials in the same
 * block order), timing, and the memory model.  C++ (g++), never linked into
 * the library.
 * Built with -DEMU_WARPS (and -fopenmp) a launch runs each warp of a block as
 * a team of 32 OpenMP threads instead, so that warp shuffles exchange real
 * values (a kernel must not use __syncthreads or shared memory across its
 * warps then, and its shuffles must be warp-uniform, as CUDA requires). */
#ifndef STENC_CUDA_EMU_H
#define STENC_CUDA_EMU_H
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <cstdlib>

struct emu_dim { unsigned int x, y, z; };
/* the running thread's indices (tests run one launch at a time) */
static thread_local emu_dim threadIdx, blockIdx;
static emu_dim gridDim, blockDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
static inline void __syncthreads() {}
static inline void __threadfence() {}
#ifdef EMU_WARPS
#include <omp.h>
/* lane SRC's V, every lane of the team calling (a lane out of range: its own) */
static double emu_lanes[32];
template <class T> static inline T emu_shfl(T v, int src)
{
    const int lane = (int)(threadIdx.x & 31);
#pragma omp barrier
    emu_lanes[lane] = (double)v;
#pragma omp barrier
    return (T)emu_lanes[src >= 0 && src < 32 ? src : lane];
}
template <class T> static inline T __shfl_down_sync(unsigned, T v, int d) { return emu_shfl(v, (int)(threadIdx.x & 31) + d); }
template <class T> static inline T __shfl_up_sync(unsigned, T v, int d) { return emu_shfl(v, (int)(threadIdx.x & 31) - d); }
static inline double atomicAdd(double *p, double v)
{
    double o;
#pragma omp critical(emu_atomic)
    { o = *p; *p += v; }
    return o;
}
#else
static inline double __shfl_down_sync(unsigned, double v, int) { return v; }
#endif
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p += v; return o; }

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInsufficientDriver = 35, cudaErrorNoDevice = 100 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum { cudaStreamNonBlocking = 1 };
struct CUstream_st { int unused; };
typedef CUstream_st *cudaStream_t;
struct cudaDeviceProp { char name[256]; };

static inline cudaError_t cudaGetLastError() { return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int *c) { *c = 1; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) { strcpy(p->name, "host emulation"); return cudaSuccess; }
static inline cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
static inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
static inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
static inline cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
static inline cudaError_t cudaMemset(void *p, int v, size_t n) { memset(p, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { return cudaMemset(p, v, n); }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { memcpy(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, int) { *s = new CUstream_st(); return cudaSuccess; }
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { delete s; return cudaSuccess; }

/* a reduction kernel's end: threads run in (block, thread) order, so each
 * block's partial is its threads' values added in thread order, and the
 * last thread of the last block adds the partials in block order into
 * ws[gridDim.x], where the launcher reads the value */
static inline void emu_grid_sum(double v, double *ws, unsigned int *)
{
    if (threadIdx.x == 0) ws[blockIdx.x] = 0;
    ws[blockIdx.x] += v;
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == blockDim.x - 1) {
        double s = 0;
        for (unsigned b = 0; b < gridDim.x; ++b) s += ws[b];
        ws[gridDim.x] = s;
    }
}

/* kernel<<<NB, NT, 0, stream>>>(args) becomes EMU_LAUNCH(NB, NT, kernel(args)) */
#ifdef EMU_WARPS
#define EMU_LAUNCH(nb, nt, call)                                                                                    \
    do {                                                                                                           \
        gridDim.x = (nb);                                                                                          \
        blockDim.x = (nt);                                                                                         \
        omp_set_dynamic(0);                                                                                        \
        for (unsigned emu_b = 0; emu_b < gridDim.x; ++emu_b)                                                       \
            for (unsigned emu_w = 0; emu_w < (blockDim.x + 31) / 32; ++emu_w) {                                    \
                _Pragma("omp parallel num_threads(32)")                                                            \
                {                                                                                                  \
                    if (omp_get_num_threads() != 32) abort();                                                      \
                    blockIdx.x = emu_b;                                                                            \
                    threadIdx.x = emu_w * 32 + (unsigned)omp_get_thread_num();                                     \
                    call;                                                                                          \
                }                                                                                                  \
            }                                                                                                      \
    } while (0)
#else
#define EMU_LAUNCH(nb, nt, call)                                                                                    \
    do {                                                                                                           \
        gridDim.x = (nb);                                                                                          \
        blockDim.x = (nt);                                                                                         \
        for (unsigned emu_b = 0; emu_b < gridDim.x; ++emu_b)                                                       \
            for (unsigned emu_t = 0; emu_t < blockDim.x; ++emu_t) {                                                \
                blockIdx.x = emu_b;                                                                                \
                threadIdx.x = emu_t;                                                                               \
                call;                                                                                              \
            }                                                                                                      \
    } while (0)
#endif
#endif
