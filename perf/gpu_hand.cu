/* The GPU yardstick of the perf suite: the total variation (isotropic,
 * forward differences, neumann: differences across the edge are 0), 3D and
 * 2D, value and gradient, written by hand as a CUDA engineer would write
 * them for this one stencil on a large grid; behind a C API
 * (perf/gpu_hand.h) for perf/gpu_bench.c, which checks them against
 * stenc's kernels in the same run.  Float and double.
 *
 * Both march along z, every load clamped to the grid (a neighbour past the
 * edge is the point itself, so its difference is 0: the boundary mode costs
 * no branch), with 32-bit offsets inside a plane and a plane pointer that
 * advances (the planes must have fewer than 2^32 points; the launchers
 * check).
 *   - value: a thread per column (i, j) of a 32 x 8 tile, a chunk of HK
 *     planes; x(i, j, k+1) carried to the next plane, the x and y neighbours
 *     from L1; the chunk summed in T, added in double, warp shuffles, one
 *     double atomic a warp.
 *   - gradient: each point's square root once.  A warp owns an x band of
 *     30 points (lanes 1..30; lane 0 the point before the band, lane 31 the
 *     point after it), a y band of HC rows and a chunk of HK planes.  Each
 *     lane computes the partials u = wx a / s, v = wy b / s, w = wz c / s
 *     (s = sqrt(eps + wx a^2 + wy b^2 + wz c^2)) of its points: the x
 *     neighbour's x and u come by warp shuffle, v of the row below stays in a
 *     register, w of the plane below in an array of HC registers; the x
 *     values of the band's HC + 2 rows in two register arrays (this plane
 *     and the next).  g = u(i-1) - u + v(j-1) - v + w(k-1) - w.  Square roots
 *     per point: (HC + 1)/HC * 32/30 * (HK + 1)/HK, about 1.24 in float.
 * 2D is the same with rows for planes (hand_tv2_*): the gradient's warp a
 * band of 30 points marching up a chunk of rows.
 * Block and warp assignment, chunk sizes: HT, HK, HK2, hand_hc below. */
#include <cuda_runtime.h>
#include <stddef.h>

#include "gpu_hand.h"

#define HT 256 /* threads a block */
#define HK 32  /* planes a chunk */
#define HX 30  /* gradient points a warp along x */

/* rows a warp's y band, gradient: fewer in double (registers) */
template <typename T> struct hand_hc { static const int n = 8; };
template <> struct hand_hc<double> { static const int n = 4; };

static __device__ __forceinline__ int hclamp(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

template <typename T>
__global__ void __launch_bounds__(HT) hand_tv3_value(int nx, int ny, int nz, const T *__restrict__ x, T wx, T wy, T wz,
                                                      T eps, int nbx, int nby, double *out)
{
    const int bx = (int)(blockIdx.x % (unsigned)nbx), t = (int)(blockIdx.x / (unsigned)nbx);
    const int by = t % nby, bz = t / nby;
    const int i = bx * 32 + (int)(threadIdx.x & 31), j = by * (HT / 32) + (int)(threadIdx.x >> 5);
    const int k0 = bz * HK, k1 = k0 + HK < nz ? k0 + HK : nz;
    T acc = 0;
    if (i < nx && j < ny) {
        const size_t P = (size_t)nx * (size_t)ny;
        const unsigned o = (unsigned)j * (unsigned)nx + (unsigned)i;
        const unsigned di = i + 1 < nx ? 1u : 0u, dj = j + 1 < ny ? (unsigned)nx : 0u;
        const T *pk = x + (size_t)k0 * P;
        T xc = pk[o];
        for (int k = k0; k < k1; ++k) {
            const T *pn = k + 1 < nz ? pk + P : pk;
            const T xz = pn[o];
            const T a = pk[o + di] - xc, b = pk[o + dj] - xc, c = xz - xc;
            acc += sqrt(eps + wx * a * a + wy * b * b + wz * c * c);
            xc = xz;
            pk = pn;
        }
    }
    double s = (double)acc;
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

template <typename T>
__global__ void __launch_bounds__(HT) hand_tv3_grad(int nx, int ny, int nz, const T *__restrict__ x, T wx, T wy, T wz, T eps,
                                                     T *__restrict__ g, int nbx, int nby, long long items)
{
    const int HC = hand_hc<T>::n;
    const long long item = (long long)blockIdx.x * (HT / 32) + (long long)(threadIdx.x >> 5);
    if (item >= items) return; /* the whole warp */
    const int lane = (int)(threadIdx.x & 31);
    const int bx = (int)(item % nbx), t = (int)(item / nbx), by = t % nby, bz = t / nby;
    const int i = bx * HX - 1 + lane, jb = by * HC, k0 = bz * HK, k1 = k0 + HK < nz ? k0 + HK : nz;
    const int store = lane >= 1 && lane <= HX && i < nx;
    const size_t P = (size_t)nx * (size_t)ny;
    unsigned off[HC + 2]; /* rows jb-1 .. jb+HC, clamped */
#pragma unroll
    for (int r = 0; r < HC + 2; ++r) off[r] = (unsigned)hclamp(jb - 1 + r, ny) * (unsigned)nx + (unsigned)hclamp(i, nx);
    T xa[HC + 2], xn[HC + 2], wb[HC + 1];
    const T *pk = x + (size_t)k0 * P, *pl = k0 > 0 ? pk - P : pk;
#pragma unroll
    for (int r = 0; r < HC + 2; ++r) { xa[r] = pl[off[r]]; xn[r] = pk[off[r]]; }
    /* w of the plane below the chunk, rows jb .. jb+HC-1 */
#pragma unroll
    for (int r = 1; r <= HC; ++r) {
        const T a = __shfl_down_sync(0xffffffffu, xa[r], 1) - xa[r], b = xa[r + 1] - xa[r], c = xn[r] - xa[r];
        wb[r] = wz * c * (T(1) / sqrt(eps + wx * a * a + wy * b * b + wz * c * c));
    }
    T *gk = g + (size_t)k0 * P;
    for (int k = k0; k < k1; ++k) {
#pragma unroll
        for (int r = 0; r < HC + 2; ++r) xa[r] = xn[r];
        const T *pn = k + 1 < nz ? pk + P : pk;
#pragma unroll
        for (int r = 0; r < HC + 2; ++r) xn[r] = pn[off[r]];
        T vb = 0;
#pragma unroll
        for (int r = 0; r <= HC; ++r) {
            const T a = __shfl_down_sync(0xffffffffu, xa[r], 1) - xa[r], b = xa[r + 1] - xa[r], c = xn[r] - xa[r];
            const T q = T(1) / sqrt(eps + wx * a * a + wy * b * b + wz * c * c);
            const T u = wx * a * q, v = wy * b * q, w = wz * c * q;
            const T ub = __shfl_up_sync(0xffffffffu, u, 1);
            if (r > 0) {
                if (store && jb - 1 + r < ny) gk[off[r]] = ub - u + vb - v + wb[r] - w;
                wb[r] = w;
            }
            vb = v;
        }
        pk = pn;
        gk += P;
    }
}

/* 2D, value: a thread per column i of a block's 256, a chunk of HK rows;
 * x(i, j+1) carried to the next row, x(i+1, j) from L1 */
template <typename T>
__global__ void __launch_bounds__(HT) hand_tv2_value(int nx, int ny, const T *__restrict__ x, T wx, T wy, T eps, int nbx,
                                                      double *out)
{
    const int i = (int)(blockIdx.x % (unsigned)nbx) * HT + (int)threadIdx.x, j0 = (int)(blockIdx.x / (unsigned)nbx) * HK;
    const int j1 = j0 + HK < ny ? j0 + HK : ny;
    T acc = 0;
    if (i < nx) {
        const unsigned di = i + 1 < nx ? 1u : 0u;
        const T *r = x + (size_t)j0 * (size_t)nx + (size_t)i;
        T xc = r[0];
        for (int j = j0; j < j1; ++j) {
            const T *u = j + 1 < ny ? r + nx : r;
            const T xu = u[0], a = r[di] - xc, b = xu - xc;
            acc += sqrt(eps + wx * a * a + wy * b * b);
            xc = xu;
            r = u;
        }
    }
    double s = (double)acc;
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

/* 2D, gradient: a warp owns an x band of HX points (lanes 1..HX) and a
 * chunk of HK2 rows, marching up in y: each point's square root once (the
 * x neighbour's u by shuffle, v of the row below in a register), the row
 * above's x carried */
#define HK2 64 /* rows a chunk, 2D gradient */
template <typename T>
__global__ void __launch_bounds__(HT) hand_tv2_grad(int nx, int ny, const T *__restrict__ x, T wx, T wy, T eps,
                                                     T *__restrict__ g, int nbx, long long items)
{
    const long long item = (long long)blockIdx.x * (HT / 32) + (long long)(threadIdx.x >> 5);
    if (item >= items) return; /* the whole warp */
    const int lane = (int)(threadIdx.x & 31);
    const int bx = (int)(item % nbx), by = (int)(item / nbx);
    const int i = bx * HX - 1 + lane, j0 = by * HK2, j1 = j0 + HK2 < ny ? j0 + HK2 : ny;
    const int store = lane >= 1 && lane <= HX && i < nx;
    const T *r = x + (size_t)hclamp(j0 - 1, ny) * (size_t)nx + (size_t)hclamp(i, nx);
    T xa = r[0], vb;
    { /* v of the row below the chunk */
        const T *u = j0 > 0 ? r + nx : r;
        const T xu = u[0], a = __shfl_down_sync(0xffffffffu, xa, 1) - xa, b = xu - xa;
        vb = wy * b * (T(1) / sqrt(eps + wx * a * a + wy * b * b));
        xa = xu;
        r = u;
    }
    T *gr = g + (size_t)j0 * (size_t)nx + (size_t)hclamp(i, nx);
    for (int j = j0; j < j1; ++j) {
        const T *u = j + 1 < ny ? r + nx : r;
        const T xu = u[0], a = __shfl_down_sync(0xffffffffu, xa, 1) - xa, b = xu - xa;
        const T q = T(1) / sqrt(eps + wx * a * a + wy * b * b);
        const T uq = wx * a * q, v = wy * b * q, ub = __shfl_up_sync(0xffffffffu, uq, 1);
        if (store) gr[0] = ub - uq + vb - v;
        vb = v;
        xa = xu;
        r = u;
        gr += nx;
    }
}

static int hand_dims_ok(size_t nx, size_t ny, size_t nz)
{
    return nx >= 1 && ny >= 1 && nz >= 1 && nx < (1u << 31) && ny < (1u << 31) && nz < (1u << 31) &&
           nx * ny < ((size_t)1 << 32);
}

/* value: ws is one device double (allocated by the caller, as the sum
 * ceiling's), the result copied to *value */
template <typename T>
static int hand_value(size_t nx, size_t ny, size_t nz, const T *x, T wx, T wy, T wz, T eps, double *ws, double *value)
{
    if (!hand_dims_ok(nx, ny, nz)) return -1;
    const int nbx = (int)((nx + 31) / 32), nby = (int)((ny + HT / 32 - 1) / (HT / 32)), nbz = (int)((nz + HK - 1) / HK);
    if (cudaMemsetAsync(ws, 0, sizeof(double), 0) != cudaSuccess) return -1;
    hand_tv3_value<T><<<(unsigned)nbx * (unsigned)nby * (unsigned)nbz, HT, 0, 0>>>((int)nx, (int)ny, (int)nz, x, wx, wy, wz,
                                                                                  eps, nbx, nby, ws);
    return cudaMemcpy(value, ws, sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

template <typename T>
static int hand_grad(size_t nx, size_t ny, size_t nz, const T *x, T wx, T wy, T wz, T eps, T *g)
{
    if (!hand_dims_ok(nx, ny, nz)) return -1;
    const int HC = hand_hc<T>::n;
    const int nbx = (int)((nx + HX - 1) / HX), nby = (int)((ny + HC - 1) / HC), nbz = (int)((nz + HK - 1) / HK);
    const long long items = (long long)nbx * nby * nbz;
    const unsigned nb = (unsigned)((items + HT / 32 - 1) / (HT / 32));
    hand_tv3_grad<T><<<nb, HT, 0, 0>>>((int)nx, (int)ny, (int)nz, x, wx, wy, wz, eps, g, nbx, nby, items);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

template <typename T>
static int hand_value2(size_t nx, size_t ny, const T *x, T wx, T wy, T eps, double *ws, double *value)
{
    if (!hand_dims_ok(nx, ny, 1)) return -1;
    const int nbx = (int)((nx + HT - 1) / HT), nby = (int)((ny + HK - 1) / HK);
    if (cudaMemsetAsync(ws, 0, sizeof(double), 0) != cudaSuccess) return -1;
    hand_tv2_value<T><<<(unsigned)nbx * (unsigned)nby, HT, 0, 0>>>((int)nx, (int)ny, x, wx, wy, eps, nbx, ws);
    return cudaMemcpy(value, ws, sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

template <typename T>
static int hand_grad2(size_t nx, size_t ny, const T *x, T wx, T wy, T eps, T *g)
{
    if (!hand_dims_ok(nx, ny, 1)) return -1;
    const int nbx = (int)((nx + HX - 1) / HX), nby = (int)((ny + HK2 - 1) / HK2);
    const long long items = (long long)nbx * nby;
    const unsigned nb = (unsigned)((items + HT / 32 - 1) / (HT / 32));
    hand_tv2_grad<T><<<nb, HT, 0, 0>>>((int)nx, (int)ny, x, wx, wy, eps, g, nbx, items);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

/* 0 on success, -1 on a CUDA error or grid the kernels do not take */
extern "C" int stenc_bench_hand_tv3_value_f32(size_t nx, size_t ny, size_t nz, const float *x, float wx, float wy, float wz,
                                              float eps, double *ws, double *value)
{
    return hand_value<float>(nx, ny, nz, x, wx, wy, wz, eps, ws, value);
}
extern "C" int stenc_bench_hand_tv3_value_f64(size_t nx, size_t ny, size_t nz, const double *x, double wx, double wy,
                                              double wz, double eps, double *ws, double *value)
{
    return hand_value<double>(nx, ny, nz, x, wx, wy, wz, eps, ws, value);
}
extern "C" int stenc_bench_hand_tv3_grad_f32(size_t nx, size_t ny, size_t nz, const float *x, float wx, float wy, float wz,
                                             float eps, float *g)
{
    return hand_grad<float>(nx, ny, nz, x, wx, wy, wz, eps, g);
}
extern "C" int stenc_bench_hand_tv3_grad_f64(size_t nx, size_t ny, size_t nz, const double *x, double wx, double wy,
                                             double wz, double eps, double *g)
{
    return hand_grad<double>(nx, ny, nz, x, wx, wy, wz, eps, g);
}
extern "C" int stenc_bench_hand_tv2_value_f32(size_t nx, size_t ny, const float *x, float wx, float wy, float eps, double *ws,
                                              double *value)
{
    return hand_value2<float>(nx, ny, x, wx, wy, eps, ws, value);
}
extern "C" int stenc_bench_hand_tv2_value_f64(size_t nx, size_t ny, const double *x, double wx, double wy, double eps,
                                              double *ws, double *value)
{
    return hand_value2<double>(nx, ny, x, wx, wy, eps, ws, value);
}
extern "C" int stenc_bench_hand_tv2_grad_f32(size_t nx, size_t ny, const float *x, float wx, float wy, float eps, float *g)
{
    return hand_grad2<float>(nx, ny, x, wx, wy, eps, g);
}
extern "C" int stenc_bench_hand_tv2_grad_f64(size_t nx, size_t ny, const double *x, double wx, double wy, double eps,
                                             double *g)
{
    return hand_grad2<double>(nx, ny, x, wx, wy, eps, g);
}
