/* stenc distributed grids: what the MPI layer's C and CUDA halves share
 * (not installed; the public API is stenc_mpi.h / stenc_dist.h). */
#ifndef STENC_MPI_IMPL_H
#define STENC_MPI_IMPL_H

#include "stenc_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct stenc_grid {
    MPI_Comm comm;
    stenc_grid_info info;
    char err[256];
};

/* sets the grid's message; returns status */
int stenc_grid_fail(stenc_grid *g, int status, const char *fmt, ...);
/* the worst status of all processes (collective) */
int stenc_grid_agree(stenc_grid *g, int rc);
int stenc_halo_check_fields(stenc_grid *g, int nf, const stenc_field *f);
/* along d: a field's ghost-layer width (stenc_mpi.c explains), the first index of the slab a process sends to its lower
 * neighbour, to its upper neighbour, and of its ghost slab on a side */
size_t stenc_halo_width(const stenc_grid_info *I, const stenc_field *f, int d);
size_t stenc_halo_send_lo(const stenc_grid_info *I, const stenc_field *f, int d);
size_t stenc_halo_send_hi(const stenc_grid_info *I, const stenc_field *f, int d);
size_t stenc_halo_ghost_at(const stenc_grid_info *I, const stenc_field *f, int d, int side);

#ifdef __cplusplus
}
#endif

#endif
