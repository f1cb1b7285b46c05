/* stenc distributed grids: the part of the MPI layer that needs no <mpi.h>.
 *
 * A distributed grid splits a global grid over a Cartesian grid of
 * processes, ImplicitGlobalGrid style: every process holds a local block of
 * extent nlocal (the same on every process), and neighbouring blocks overlap
 * by 2*ghost points along each dimension (2*ghost + s for an array whose
 * extent is nlocal + s there, a staggered array).  The outer `ghost` layers
 * of a block that face a neighbour are that neighbour's points (ghosts); the
 * layers that face the global boundary are real points.  So
 *     nglobal = pdims * (nlocal - 2*ghost) + 2*ghost     (not periodic)
 *     nglobal = pdims * (nlocal - 2*ghost)               (periodic)
 * and a generated kernel run on the whole local block, followed by a halo
 * update, computes exactly what it computes on the global grid in one
 * process.  Create a grid with stenc_grid_create (stenc_mpi.h).
 *
 * Every call returns a stenc_status; collective calls return the same
 * status on every process (no process is left waiting in a collective).
 * The grid holds no global state; its last error message is per grid
 * (stenc_grid_error). */
#ifndef STENC_DIST_H
#define STENC_DIST_H

#include <stddef.h>

#include "stenc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stenc_grid stenc_grid;

/* Where this process sits in the global grid. */
typedef struct {
    int dims, ghost;           /* 2 or 3; ghost width */
    int rank, nprocs;          /* in the grid's communicator */
    int pdims[3], coords[3];   /* process grid and this process's place */
    int periodic[3];
    size_t nlocal[3];          /* local block extent (ghost layers included) */
    size_t nglobal[3];         /* global grid extent */
    long long offset[3];       /* global index of local index 0 (negative only when periodic) */
    size_t own_lo[3], own_hi[3]; /* the points this process owns: local [own_lo, own_hi) */
    int neighbour[3][2];       /* rank below / above along each dimension, -1 at a global boundary */
} stenc_grid_info;

int stenc_grid_get_info(const stenc_grid *g, stenc_grid_info *info);

/* The message of the grid's last failed call ("" if none). */
const char *stenc_grid_error(const stenc_grid *g);

/* An array in a halo update: its data, its element size (4: float, 8:
 * double) and its stagger: extent nlocal[d] + stagger[d] along d. */
typedef struct {
    void *data;
    int elem;
    int stagger[3];
} stenc_field;

/* The halo update H: every ghost layer gets the value of the point it
 * stands for on its owner, for all fields at once: one message per
 * neighbour and direction, dimension after dimension (edges and corners
 * included).  Collective over the grid. */
int stenc_halo_update(stenc_grid *g, int nfields, const stenc_field *f);

/* Its exact adjoint H^T: every ghost value is added into the point it
 * stands for on its owner, and the ghosts are set to 0.  Collective.
 * <H x, y> = <x, H^T y> over all local points of all processes. */
int stenc_halo_adjoint(stenc_grid *g, int nfields, const stenc_field *f);

/* The same on device arrays (fields' data are device pointers), queued on
 * stream and finished before return.  With a CUDA-aware MPI (Open MPI:
 * MPIX_Query_cuda_support) the slabs travel from device buffers; otherwise
 * through pinned host buffers.  STENC_ERR_NO_DEVICE in a build without CUDA.
 * Compiled here, not yet run on a GPU (docs/distributed.md). */
struct CUstream_st;
int stenc_halo_update_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream);
int stenc_halo_adjoint_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream);

/* The global sum of one double per process, in rank order (so bitwise the
 * same run to run for a fixed process count), and agreement on a status:
 * every process gets the worst (largest) status of all.  Collective. */
int stenc_grid_sum(stenc_grid *g, int status, double local, double *global);

/* ---- used by the generated distributed entry points (NAME.dist.c) ---- */

/* Refuses (STENC_ERR_GHOST, naming what) a grid whose ghost width is below
 * need, or whose dimension count is not dims. */
int stenc_dist_check(stenc_grid *g, int dims, int need, const char *what);

/* The box a distributed reduction evaluates in valid mode: the owned points
 * (value) or every point whose partials reach an owned point (grad), with
 * their reads; at a global boundary in neumann mode it reaches past the
 * block, where reads are clamped (replicated edges). */
typedef struct {
    int dims;
    size_t m[3];        /* extent of the box */
    ptrdiff_t lo[3];    /* local index of the box's first point (may be < 0) */
    size_t count;       /* m[0]*m[1]*m[2] */
} stenc_dist_box;

/* Copies the box of each of the n arrays in[] (grid extent, element size
 * elem) into new buffers out[] (free with stenc_dist_release).  grad: 0 for
 * a value's box, 1 for a gradient's.  omin/omax: the reduction's smallest
 * and largest read offset per dimension.  Local (not collective). */
int stenc_dist_pack(stenc_grid *g, int mode, int grad, const int omin[3], const int omax[3], size_t elem, int n,
                    const void *const *in, void **out, stenc_dist_box *box);
/* count zeroed elements of elem bytes per buffer, for n buffers */
int stenc_dist_alloc(size_t count, size_t elem, int n, void **out);
void stenc_dist_release(int n, void **buf);

/* G[q] = beta*G[q] + alpha*dR/dx[q] on the owned points from a gradient
 * over the box (edge points also receive the box's clamped copies);
 * beta == 0 never reads G.  Ghost points of G are left as they are. */
int stenc_dist_unpack_grad_f32(stenc_grid *g, const stenc_dist_box *b, const float *tg, float alpha, float beta,
                               float *G);
int stenc_dist_unpack_grad_f64(stenc_grid *g, const stenc_dist_box *b, const double *tg, double alpha, double beta,
                               double *G);

/* Hidden communication (the generated stenc_dist_K_hide_* entry points):
 * the kernel runs on windows of planes along the outermost dimension, the
 * two boundary slabs first, then the halo exchange along that dimension is
 * started, the interior runs while the messages fly, the exchange finishes,
 * and the other dimensions' exchanges follow.  A window q (0: lower slab, 1:
 * upper slab, 2: interior) is the kernel on planes [w0, w0 + nw) of the
 * block.  plan: from the kernel's write offset c and loop end hi along that
 * dimension (it writes planes [c, n + hi + c)) and the largest stagger of
 * the written arrays there; ok = 0 when nothing can be hidden (one process
 * along the dimension, a block too thin): then run the kernel and
 * stenc_halo_update instead.  start and finish are collective. */
typedef struct stenc_halo_req stenc_halo_req;
typedef struct {
    int ok, dim;
    ptrdiff_t w0[3];
    size_t nw[3];
    stenc_halo_req *req;
} stenc_dist_hide;
int stenc_dist_hide_plan(stenc_grid *g, int c, int hi, int smax, stenc_dist_hide *p);
int stenc_dist_hide_start(stenc_grid *g, int nfields, const stenc_field *f, stenc_dist_hide *p);
int stenc_dist_hide_finish(stenc_grid *g, int nfields, const stenc_field *f, stenc_dist_hide *p, int status);

/* The same on the device (the generated stenc_dist_cuda_K_hide_* entry
 * points, builds with CUDA): the boundary windows run on stream and the
 * interior on inner; stenc_dist_hide_cuda_exchange exchanges along the
 * plan's dimension once stream is done (the interior keeps running on the
 * device meanwhile), and stenc_dist_hide_cuda_finish waits for inner and
 * exchanges along the other dimensions.  Both collective; each first agrees
 * on status across the processes (a failed launch anywhere: no exchange,
 * that status everywhere).  STENC_ERR_NO_DEVICE in a build without CUDA.
 * Compiled here, not yet run on a GPU. */
int stenc_dist_hide_cuda_exchange(stenc_grid *g, int nfields, const stenc_field *f, const stenc_dist_hide *p,
                                  int status, struct CUstream_st *stream);
int stenc_dist_hide_cuda_finish(stenc_grid *g, int nfields, const stenc_field *f, const stenc_dist_hide *p,
                                int status, struct CUstream_st *stream, struct CUstream_st *inner);

/* The grid's local extent (for the distributed array-kernel entry points). */
void stenc_dist_local(const stenc_grid *g, size_t n[3]);

#ifdef __cplusplus
}
#endif

#endif /* STENC_DIST_H */
