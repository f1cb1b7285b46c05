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

int stenc_dist_hide_cuda_exchange(stenc_grid *g, int nfields, const stenc_field *f, const stenc_dist_hide *p,
                                  int status, struct CUstream_st *stream)
{
    (void)g; (void)nfields; (void)f; (void)p; (void)status; (void)stream;
    return STENC_ERR_NO_DEVICE;
}

int stenc_dist_hide_cuda_finish(stenc_grid *g, int nfields, const stenc_field *f, const stenc_dist_hide *p,
                                int status, struct CUstream_st *stream, struct CUstream_st *inner)
{
    (void)g; (void)nfields; (void)f; (void)p; (void)status; (void)stream; (void)inner;
    return STENC_ERR_NO_DEVICE;
}
