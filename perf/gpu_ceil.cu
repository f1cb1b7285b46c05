/* GPU ceilings for the perf suite: a plain read-only device reduction and a
 * device-to-device copy over the same bytes, plus an event timer on the
 * default stream (the stream the bench's launches use); behind a C API. */
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

/* seconds between two events recorded on the default stream around a batch
 * of calls: device time, no host clock.  stenc_bench_gpu_timer(0, NULL)
 * records the start, stenc_bench_gpu_timer(1, &s) the stop and waits. */
extern "C" int stenc_bench_gpu_timer(int stop, double *seconds)
{
    static cudaEvent_t ev[2]; /* the bench program's own timer (not library code) */
    static int made;
    if (!made) {
        if (cudaEventCreate(&ev[0]) != cudaSuccess) return -1;
        if (cudaEventCreate(&ev[1]) != cudaSuccess) { cudaEventDestroy(ev[0]); return -1; }
        made = 1;
    }
    if (cudaEventRecord(ev[stop ? 1 : 0], 0) != cudaSuccess) return -1;
    if (!stop) return 0;
    float ms = 0;
    if (cudaEventSynchronize(ev[1]) != cudaSuccess || cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess) return -1;
    *seconds = ms * 1e-3;
    return 0;
}
