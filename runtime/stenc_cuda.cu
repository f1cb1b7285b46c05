/* stenc runtime: CUDA helpers behind the C API of stenc.h.  Every call
 * returns a status code; none aborts. */
#include <cuda_runtime.h>
#include <string.h>
#include "stenc.h"

static int stenc_cuda_status(cudaError_t e)
{
    if (e == cudaSuccess) return STENC_OK;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return STENC_ERR_NO_DEVICE;
    if (e == cudaErrorMemoryAllocation) return STENC_ERR_ALLOC;
    return STENC_ERR_CUDA;
}

extern "C" int stenc_has_cuda(void) { return 1; }

extern "C" int stenc_cuda_device_count(int *count)
{
    if (!count) return STENC_ERR_NULL;
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    if (e != cudaSuccess) { (void)cudaGetLastError(); *count = 0; return STENC_ERR_NO_DEVICE; }
    *count = c;
    return c > 0 ? STENC_OK : STENC_ERR_NO_DEVICE;
}

extern "C" int stenc_cuda_malloc(void **ptr, size_t bytes)
{
    if (!ptr) return STENC_ERR_NULL;
    *ptr = NULL;
    return stenc_cuda_status(cudaMalloc(ptr, bytes ? bytes : 1));
}

extern "C" int stenc_cuda_free(void *ptr) { return stenc_cuda_status(cudaFree(ptr)); }

extern "C" int stenc_cuda_to_device(void *dst, const void *src, size_t bytes)
{
    if (!dst || !src) return STENC_ERR_NULL;
    return stenc_cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

extern "C" int stenc_cuda_to_host(void *dst, const void *src, size_t bytes)
{
    if (!dst || !src) return STENC_ERR_NULL;
    return stenc_cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

extern "C" int stenc_cuda_memset(void *dst, int value, size_t bytes)
{
    if (!dst) return STENC_ERR_NULL;
    return stenc_cuda_status(cudaMemset(dst, value, bytes));
}

extern "C" int stenc_cuda_synchronize(void) { return stenc_cuda_status(cudaDeviceSynchronize()); }

extern "C" int stenc_cuda_device_name(char *buf, size_t len)
{
    if (!buf || len == 0) return STENC_ERR_NULL;
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess) { (void)cudaGetLastError(); buf[0] = 0; return stenc_cuda_status(e); }
    strncpy(buf, p.name, len - 1);
    buf[len - 1] = 0;
    return STENC_OK;
}

extern "C" int stenc_cuda_stream_create(struct CUstream_st **stream)
{
    if (!stream) return STENC_ERR_NULL;
    *stream = NULL;
    cudaStream_t s = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) { (void)cudaGetLastError(); return stenc_cuda_status(e); }
    *stream = s;
    return STENC_OK;
}

extern "C" int stenc_cuda_stream_destroy(struct CUstream_st *stream)
{
    if (!stream) return STENC_ERR_NULL;
    return stenc_cuda_status(cudaStreamDestroy(stream));
}

extern "C" int stenc_cuda_stream_synchronize(struct CUstream_st *stream)
{
    return stenc_cuda_status(cudaStreamSynchronize(stream));
}
