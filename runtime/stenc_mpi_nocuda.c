/* stenc distributed grids: the device halo updates in a build without CUDA. */
#include "stenc_dist.h"

int stenc_halo_update_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream)
{
    (void)g; (void)nfields; (void)f; (void)stream;
    return STENC_ERR_NO_DEVICE;
}

int stenc_halo_adjoint_cuda(stenc_grid *g, int nfields, const stenc_field *f, struct CUstream_st *stream)
{
    (void)g; (void)nfields; (void)f; (void)stream;
    return STENC_ERR_NO_DEVICE;
}
