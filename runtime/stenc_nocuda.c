/* stenc runtime: CUDA helpers for a build without nvcc.  They report that no
 * device exists, so callers and tests take their no-GPU path. */
#include "stenc.h"

int stenc_has_cuda(void) { return 0; }
int stenc_cuda_device_count(int *count) { if (count) *count = 0; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_malloc(void **ptr, size_t bytes) { (void)bytes; if (ptr) *ptr = 0; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_free(void *ptr) { (void)ptr; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_to_device(void *d, const void *s, size_t b) { (void)d; (void)s; (void)b; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_to_host(void *d, const void *s, size_t b) { (void)d; (void)s; (void)b; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_memset(void *d, int v, size_t b) { (void)d; (void)v; (void)b; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_synchronize(void) { return STENC_ERR_NO_DEVICE; }
int stenc_cuda_device_name(char *buf, size_t len) { if (buf && len) buf[0] = 0; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_stream_create(struct CUstream_st **s) { if (s) *s = 0; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_stream_destroy(struct CUstream_st *s) { (void)s; return STENC_ERR_NO_DEVICE; }
int stenc_cuda_stream_synchronize(struct CUstream_st *s) { (void)s; return STENC_ERR_NO_DEVICE; }
