/* stenc runtime: status codes, boundary modes, argument checks.
 * Every generated kernel links against this small library.  It holds no
 * global mutable state. */
#ifndef STENC_H
#define STENC_H

#include <stddef.h>
#include <stdint.h>

/* The stenc release (the generator, the runtime and the m4 library). */
#define STENC_VERSION "0.4.0"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by every generated entry point and runtime call. */
typedef enum stenc_status {
    STENC_OK = 0,
    STENC_ERR_NULL = 1,       /* a required pointer argument is NULL */
    STENC_ERR_GRID = 2,       /* grid smaller than the stencil's footprint */
    STENC_ERR_OVERFLOW = 3,   /* element count or byte size overflows size_t */
    STENC_ERR_ALIAS = 4,      /* an output overlaps an input where that would race */
    STENC_ERR_MODE = 5,       /* unknown boundary mode */
    STENC_ERR_ALLOC = 6,      /* host or device allocation failed */
    STENC_ERR_NO_DEVICE = 7,  /* no CUDA device is present */
    STENC_ERR_CUDA = 8,       /* a CUDA runtime call failed */
    STENC_ERR_ARG = 9,        /* another invalid argument (e.g. non-finite alpha) */
    STENC_ERR_GHOST = 10,     /* a distributed grid's ghost width is below a stencil's reach */
    STENC_ERR_MPI = 11        /* an MPI call failed (distributed grids) */
} stenc_status;

/* Boundary modes of reductions (see docs/language.md). */
typedef enum stenc_mode {
    STENC_VALID = 0,    /* sum only points whose taps are all in bounds */
    STENC_NEUMANN = 1,  /* every point; reads clamped to the edge (replicate) */
    STENC_PERIODIC = 2  /* every point; reads wrapped */
} stenc_mode;

/* A short, static, human-readable message for a status code. */
const char *stenc_strerror(int status);

/* Name of a boundary mode ("valid", "neumann", "periodic") or NULL. */
const char *stenc_mode_name(int mode);

/* Parses a mode name; returns 0 and sets *mode, or STENC_ERR_MODE. */
int stenc_mode_parse(const char *name, int *mode);

/* Number of elements of an array of extent n[0] x ... x n[dims-1]; returns
 * STENC_ERR_OVERFLOW if the element count times elem_size overflows. */
int stenc_checked_count(int dims, const size_t *n, size_t elem_size, size_t *count);

/* 1 if the byte ranges [a, a+na) and [b, b+nb) overlap. */
int stenc_overlap(const void *a, size_t na, const void *b, size_t nb);

/* OpenMP thread count the library would use (1 without OpenMP). */
int stenc_max_threads(void);

/* 1 if this library was built with CUDA (nvcc), 0 if not: tells "built
 * without CUDA" apart from "no device" (stenc_cuda_device_count). */
int stenc_has_cuda(void);

/* CUDA helpers (implemented in stenc_cuda.cu; when the library is built
 * without CUDA they return STENC_ERR_NO_DEVICE). */
int stenc_cuda_device_count(int *count);
int stenc_cuda_malloc(void **ptr, size_t bytes);
int stenc_cuda_free(void *ptr);
int stenc_cuda_to_device(void *dst, const void *src, size_t bytes);
int stenc_cuda_to_host(void *dst, const void *src, size_t bytes);
int stenc_cuda_memset(void *dst, int value, size_t bytes);
int stenc_cuda_synchronize(void);
/* A CUDA stream of this process (cudaStream_t is struct CUstream_st *), for
 * the stream argument of the generated stenc_cuda_* entry points. */
struct CUstream_st;
int stenc_cuda_stream_create(struct CUstream_st **stream);
int stenc_cuda_stream_destroy(struct CUstream_st *stream);
int stenc_cuda_stream_synchronize(struct CUstream_st *stream);
/* Name of the first device, written into buf (NUL-terminated). */
int stenc_cuda_device_name(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* STENC_H */
