/* stenc runtime: status messages, mode names, argument checks. */
#include "stenc.h"

#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

const char *stenc_strerror(int status)
{
    switch (status) {
    case STENC_OK: return "success";
    case STENC_ERR_NULL: return "a required pointer argument is NULL";
    case STENC_ERR_GRID: return "grid is smaller than the stencil's footprint (see the header for the minimum size)";
    case STENC_ERR_OVERFLOW: return "array element count or byte size overflows size_t";
    case STENC_ERR_ALIAS: return "an output array overlaps an input array";
    case STENC_ERR_MODE: return "unknown boundary mode (expected valid, neumann or periodic)";
    case STENC_ERR_ALLOC: return "memory allocation failed";
    case STENC_ERR_NO_DEVICE: return "no CUDA device is available";
    case STENC_ERR_CUDA: return "a CUDA runtime call failed";
    case STENC_ERR_ARG: return "invalid argument";
    case STENC_ERR_GHOST: return "the distributed grid's ghost width is below the stencil's reach (stenc_grid_error names both)";
    case STENC_ERR_MPI: return "an MPI call failed";
    default: return "unknown stenc status code";
    }
}

const char *stenc_mode_name(int mode)
{
    switch (mode) {
    case STENC_VALID: return "valid";
    case STENC_NEUMANN: return "neumann";
    case STENC_PERIODIC: return "periodic";
    default: return NULL;
    }
}

int stenc_mode_parse(const char *name, int *mode)
{
    if (!name || !mode) return STENC_ERR_NULL;
    for (int m = STENC_VALID; m <= STENC_PERIODIC; ++m)
        if (strcmp(name, stenc_mode_name(m)) == 0) { *mode = m; return STENC_OK; }
    return STENC_ERR_MODE;
}

int stenc_checked_count(int dims, const size_t *n, size_t elem_size, size_t *count)
{
    if (!n || !count) return STENC_ERR_NULL;
    size_t c = 1;
    for (int d = 0; d < dims; ++d) {
        if (n[d] != 0 && c > SIZE_MAX / n[d]) return STENC_ERR_OVERFLOW;
        c *= n[d];
    }
    if (elem_size != 0 && c > SIZE_MAX / elem_size) return STENC_ERR_OVERFLOW;
    /* indices are also formed as ptrdiff_t inside kernels */
    if (c * (elem_size ? elem_size : 1) > (size_t)PTRDIFF_MAX) return STENC_ERR_OVERFLOW;
    *count = c;
    return STENC_OK;
}

int stenc_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    if (na == 0 || nb == 0) return 0;
    return pa < pb + nb && pb < pa + na;
}

int stenc_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
