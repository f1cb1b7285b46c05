/* stenc distributed grids: the halo update H and its adjoint on device
 * arrays.  The same slabs and messages as stenc_mpi.c (one message per
 * neighbour and direction for all fields, dimension after dimension); the
 * slabs are packed and unpacked by kernels on the caller's stream, and
 * travel from device memory when the MPI library is CUDA-aware, otherwise
 * through pinned host buffers. */
#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <string.h>

#include "stenc_mpi_impl.h"

/* 1 when MPI can send from device memory (known at run time) */
static int cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

/* box [a, b) of a field of extent m <-> a packed buffer; op 0: pack,
 * 1: unpack (copy), 2: unpack (add), 3: zero the box */
template <typename T>
static __global__ void slab_kernel(T *field, T *buf, size_t m0, size_t m1, size_t a0, size_t a1, size_t a2, size_t l0,
                                   size_t l1, size_t l2, int op)
{
    size_t n = l0 * l1 * l2;
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < n; q += (size_t)gridDim.x * blockDim.x) {
        size_t i = q % l0, j = (q / l0) % l1, k = q / (l0 * l1);
        size_t p = (a0 + i) + m0 * ((a1 + j) + m1 * (a2 + k));
        if (op == 0) buf[q] = field[p];
        else if (op == 1) field[p] = buf[q];
        else if (op == 2) field[p] += buf[q];
        else field[p] = 0;
    }
}

/* the slab [lo, lo+len) along d of field f, launched on s; returns its bytes */
static size_t slab_cuda(const stenc_grid_info *I, const stenc_field *f, int d, size_t lo, size_t len, char *buf,
                        int op, cudaStream_t s)
{
    size_t m[3], a[3] = {0, 0, 0}, l[3];
    for (int e = 0; e < 3; ++e) m[e] = I->nlocal[e] + (size_t)(e < I->dims ? f->stagger[e] : 0);
    for (int e = 0; e < 3; ++e) l[e] = m[e];
    a[d] = lo;
    l[d] = len;
    size_t n = l[0] * l[1] * l[2];
    if (buf || op == 3) {
        unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
        if (blocks == 0) blocks = 1;
        if (f->elem == 8)
            slab_kernel<double><<<blocks, 256, 0, s>>>((double *)f->data, (double *)buf, m[0], m[1], a[0], a[1], a[2],
                                                       l[0], l[1], l[2], op);
        else
            slab_kernel<float><<<blocks, 256, 0, s>>>((float *)f->data, (float *)buf, m[0], m[1], a[0], a[1], a[2], l[0],
                                                      l[1], l[2], op);
    }
    return n * (size_t)f->elem;
}

static int exchange_dim_cuda(stenc_grid *g, int nf, const stenc_field *f, int d, int adjoint, cudaStream_t st)
{
    const stenc_grid_info *I = &g->info;
    size_t bytes = 0;
    for (int i = 0; i < nf; ++i) bytes += slab_cuda(I, &f[i], d, 0, stenc_halo_width(I, &f[i], d), NULL, -1, st);
    const int direct = cuda_aware();
    char *dsend[2] = {NULL, NULL}, *drecv[2] = {NULL, NULL}, *hsend[2] = {NULL, NULL}, *hrecv[2] = {NULL, NULL};
    int rc = STENC_OK;
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        if (I->neighbour[d][s] < 0) continue;
        if (cudaMalloc((void **)&dsend[s], bytes ? bytes : 1) != cudaSuccess ||
            cudaMalloc((void **)&drecv[s], bytes ? bytes : 1) != cudaSuccess ||
            (!direct && (cudaMallocHost((void **)&hsend[s], bytes ? bytes : 1) != cudaSuccess ||
                         cudaMallocHost((void **)&hrecv[s], bytes ? bytes : 1) != cudaSuccess)))
            rc = stenc_grid_fail(g, STENC_ERR_ALLOC, "halo buffers on the device: out of memory");
    }
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        if (I->neighbour[d][s] < 0) continue;
        size_t off = 0;
        for (int i = 0; i < nf; ++i) {
            size_t lo = adjoint ? stenc_halo_ghost_at(I, &f[i], d, s)
                                : (s == 0 ? stenc_halo_send_lo(I, &f[i], d) : stenc_halo_send_hi(I, &f[i], d));
            off += slab_cuda(I, &f[i], d, lo, stenc_halo_width(I, &f[i], d), dsend[s] + off, 0, st);
        }
        if (!direct) cudaMemcpyAsync(hsend[s], dsend[s], bytes, cudaMemcpyDeviceToHost, st);
    }
    if (rc == STENC_OK && cudaStreamSynchronize(st) != cudaSuccess)
        rc = stenc_grid_fail(g, STENC_ERR_CUDA, "packing the halo slabs failed");
    MPI_Request req[4];
    int nreq = 0;
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        int nb = I->neighbour[d][s];
        if (nb < 0) continue;
        char *rb = direct ? drecv[s] : hrecv[s], *sb = direct ? dsend[s] : hsend[s];
        if (MPI_Irecv(rb, (int)bytes, MPI_BYTE, nb, 2 * d + (1 - s), g->comm, &req[nreq++]) != MPI_SUCCESS ||
            MPI_Isend(sb, (int)bytes, MPI_BYTE, nb, 2 * d + s, g->comm, &req[nreq++]) != MPI_SUCCESS)
            rc = stenc_grid_fail(g, STENC_ERR_MPI, "MPI_Isend/MPI_Irecv failed");
    }
    if (nreq && MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == STENC_OK)
        rc = stenc_grid_fail(g, STENC_ERR_MPI, "MPI_Waitall failed");
    if (rc == STENC_OK && adjoint)
        for (int s = 0; s < 2; ++s)
            if (I->neighbour[d][s] >= 0)
                for (int i = 0; i < nf; ++i) slab_cuda(I, &f[i], d, stenc_halo_ghost_at(I, &f[i], d, s), stenc_halo_width(I, &f[i], d), NULL, 3, st);
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        if (I->neighbour[d][s] < 0) continue;
        if (!direct) cudaMemcpyAsync(drecv[s], hrecv[s], bytes, cudaMemcpyHostToDevice, st);
        size_t off = 0;
        for (int i = 0; i < nf; ++i) {
            size_t lo = adjoint ? (s == 0 ? stenc_halo_send_lo(I, &f[i], d) : stenc_halo_send_hi(I, &f[i], d))
                                : stenc_halo_ghost_at(I, &f[i], d, s);
            off += slab_cuda(I, &f[i], d, lo, stenc_halo_width(I, &f[i], d), drecv[s] + off, adjoint ? 2 : 1, st);
        }
    }
    if (cudaStreamSynchronize(st) != cudaSuccess || cudaGetLastError() != cudaSuccess)
        if (rc == STENC_OK) rc = stenc_grid_fail(g, STENC_ERR_CUDA, "unpacking the halo slabs failed");
    for (int s = 0; s < 2; ++s) {
        cudaFree(dsend[s]);
        cudaFree(drecv[s]);
        cudaFreeHost(hsend[s]);
        cudaFreeHost(hrecv[s]);
    }
    return rc;
}

static int halo_cuda(stenc_grid *g, int nf, const stenc_field *f, cudaStream_t st, int adjoint)
{
    if (!g) return STENC_ERR_NULL;
    g->err[0] = 0;
    int rc = stenc_grid_agree(g, stenc_halo_check_fields(g, nf, f));
    const int D = g->info.dims;
    for (int q = 0; q < D && rc == STENC_OK; ++q) rc = stenc_grid_agree(g, exchange_dim_cuda(g, nf, f, adjoint ? D - 1 - q : q, adjoint, st));
    return rc;
}

extern "C" int stenc_halo_update_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream)
{
    return halo_cuda(g, nfields, f, stream, 0);
}

extern "C" int stenc_halo_adjoint_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream)
{
    return halo_cuda(g, nfields, f, stream, 1);
}

extern "C" int stenc_dist_hide_cuda_exchange(stenc_grid *g, int nf, const stenc_field *f, const stenc_dist_hide *p,
                                             int status, struct CUstream_st *stream)
{
    if (!g || !p) return STENC_ERR_NULL;
    int rc = stenc_grid_agree(g, status != STENC_OK ? status : stenc_halo_check_fields(g, nf, f));
    if (rc != STENC_OK) return rc;
    return stenc_grid_agree(g, exchange_dim_cuda(g, nf, f, p->dim, 0, stream));
}

extern "C" int stenc_dist_hide_cuda_finish(stenc_grid *g, int nf, const stenc_field *f, const stenc_dist_hide *p,
                                           int status, struct CUstream_st *stream, struct CUstream_st *inner)
{
    if (!g || !p) return STENC_ERR_NULL;
    int rc = status;
    if (cudaStreamSynchronize(inner) != cudaSuccess && rc == STENC_OK)
        rc = stenc_grid_fail(g, STENC_ERR_CUDA, "the interior window failed");
    rc = stenc_grid_agree(g, rc);
    for (int d = 0; d < g->info.dims && rc == STENC_OK; ++d)
        if (d != p->dim) rc = stenc_grid_agree(g, exchange_dim_cuda(g, nf, f, d, 0, stream));
    return rc;
}
