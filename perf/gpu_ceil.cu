/* GPU ceilings for the perf suite: a plain read-only device reduction and a
 * device-to-device copy over the same bytes, plus a timer; behind a C API. */
#include <cuda_runtime.h>
#include <stddef.h>

static __global__ void sum_kernel(const float4 *__restrict__ a, size_t n4, double *out)
{
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = a[i];
        s += (double)v.x + (double)v.y + (double)v.z + (double)v.w;
    }
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

/* all return 0 on success, -1 on a CUDA error.  The sum's result goes
 * through one device double (ws, allocated once by the caller) and is copied
 * to the host, as a value kernel's must be: no allocation in the timed call. */
extern "C" int stenc_bench_gpu_sum(const float *a, size_t n, double *ws, double *result)
{
    if (cudaMemsetAsync(ws, 0, sizeof(double)) != cudaSuccess) return -1;
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    sum_kernel<<<sms * 8, 256>>>((const float4 *)a, n / 4, ws);
    cudaError_t e = cudaMemcpy(result, ws, sizeof(double), cudaMemcpyDeviceToHost);
    return e == cudaSuccess ? 0 : -1;
}

extern "C" int stenc_bench_gpu_copy(float *dst, const float *src, size_t n)
{
    return cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice) == cudaSuccess ? 0 : -1;
}

extern "C" int stenc_bench_gpu_sync(void) { return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1; }
