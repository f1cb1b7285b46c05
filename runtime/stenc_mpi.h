/* stenc distributed grids over MPI: creating and freeing a grid.  The rest
 * of the API (halo updates, information, reductions) is in stenc_dist.h,
 * which this header includes.  Three calls turn a one-process solver into
 * a many-process one (docs/distributed.md):
 *
 *     stenc_grid *g;
 *     stenc_grid_create(MPI_COMM_WORLD, 3, n, 1, NULL, NULL, &g);  // 1: init
 *     ... kernels on the local blocks ...
 *     stenc_halo_update(g, 2, fields);                             // 2: update halos
 *     stenc_grid_free(g);                                          // 3: finalize
 */
#ifndef STENC_MPI_H
#define STENC_MPI_H

#include <mpi.h>

#include "stenc_dist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a grid of dims (2 or 3) dimensions over the processes of comm:
 * nlocal is every process's block extent (ghost layers included), ghost the
 * ghost width (>= 1), periodic[d] (NULL: none) whether dimension d wraps,
 * pdims[d] (NULL or 0 entries: chosen by MPI_Dims_create) the process grid.
 * Collective over comm.  Errors: STENC_ERR_ARG (sizes: nlocal[d] must be at
 * least 2*ghost+1, and above 2*ghost along a periodic or split dimension;
 * a process grid that does not match the communicator's size), STENC_ERR_MPI,
 * STENC_ERR_ALLOC; *out is then NULL and err (errlen bytes, may be NULL)
 * says why. */
int stenc_grid_create(MPI_Comm comm, int dims, const size_t nlocal[3], int ghost, const int periodic[3],
                      const int pdims[3], stenc_grid **out, char *err, size_t errlen);

/* Frees the grid and its communicator (collective). NULL is a no-op. */
int stenc_grid_free(stenc_grid *g);

/* The grid's Cartesian communicator (for the user's own messages). */
MPI_Comm stenc_grid_comm(const stenc_grid *g);

#ifdef __cplusplus
}
#endif

#endif /* STENC_MPI_H */
