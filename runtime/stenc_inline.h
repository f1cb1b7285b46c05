/* stenc runtime: inline index helpers used inside generated kernels, on the
 * host and (compiled by nvcc) on the device. */
#ifndef STENC_INLINE_H
#define STENC_INLINE_H

#include <stddef.h>
#include "stenc.h"

#if defined(__CUDACC__)
#define STENC_HD static __host__ __device__ __forceinline__
#elif defined(__GNUC__)
/* always inlined: in a large generated unit GCC stops inlining once the unit
 * has grown past its limits (inline-unit-growth), and a call to an index
 * map inside a row loop cost a 3D value_grad 30% (perf/NOTES.md section 11) */
#define STENC_HD static inline __attribute__((always_inline))
#else
#define STENC_HD static inline
#endif

/* The elements a thread's ring row or field row has past the grid's row
 * (st_rw = st_n0 + STENC_ROW_PAD): room for a row's value sum or tag, and
 * a stagger, so that the rows of a ring do not fall on the addresses of
 * the input rows that the same loops read, modulo the caches' 4 KiB.  16
 * until session 47; 32 took the 3D TV gradient to 0.95-0.96 of its time
 * at 256^3 and 512^3 (rows of 1 and 2 KiB), Huber's 0.97-0.99, the
 * Hessian's 0.97-0.99, the Laplacian's 0.98 (48 and 80: TV the same,
 * central TV and the Laplacian slower; perf/NOTES.md section 55 item 4).
 * -DSTENC_ROW_PAD=... for another (at least 16) */
#ifndef STENC_ROW_PAD
#define STENC_ROW_PAD 32
#endif
#if STENC_ROW_PAD < 24
#error "STENC_ROW_PAD must be at least 24 (a row's sum or tag and a field row's end copies live in its padding)"
#endif
/* A 3D field row (gen/fields_print.c) whose kernel runs the whole row
 * through its interior (gen/emit.c field_rule_bounds) holds up to
 * STENC_FIELD_XPAD copies of its end points' fields past each end: the
 * high ones in its padding, its tag after them (at st_n0 +
 * STENC_FIELD_XPAD: 16 elements with an f32 tag), the low ones in the last
 * elements of the row before (past its tag: STENC_ROW_PAD >= 24), or, for a
 * thread's first row, in the last 64 bytes of the STENC_FIELD_LEAD bytes
 * its rows start after; the lead's first 16 bytes hold the thread's march
 * (stenc_fmarch) */
#define STENC_FIELD_XPAD 8
#define STENC_FIELD_LEAD 128

#if !defined(__CUDACC__)
/* Host threads for per-thread scratch buffers of the C kernels: the most a
 * parallel region can use, and the calling thread's number in it. */
#ifdef _OPENMP
#include <omp.h>
static inline int stenc_omp_threads(void) { return omp_get_max_threads(); }
static inline int stenc_omp_thread(void) { return omp_get_thread_num(); }
#else
static inline int stenc_omp_threads(void) { return 1; }
static inline int stenc_omp_thread(void) { return 0; }
#endif
#include <stdint.h>
/* A rolling value_grad's value sum of one ring row, kept in the row's
 * padding (the ring's rows are STENC_ROW_PAD elements longer than the grid's): P
 * points just past the row's points.  memcpy: the padding is float or
 * double, the sum a double (perf/NOTES.md section 22). */
#include <string.h>
static inline double stenc_vrow_get(const void *p)
{
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void stenc_vrow_set(void *p, double v) { memcpy(p, &v, sizeof v); }

/* The tag of a ring row of point fields (gen/emit.c roll_fields), kept in
 * the row's padding: the grid row (j, k) it holds and the x range [a, b)
 * of it filled.  A row function fills a field row only when its tag does
 * not cover the range it reads; a fill that extends the tagged range (the
 * next strip of the same row) extends the tag. */
static inline int stenc_ftag_has(const void *p, ptrdiff_t j, ptrdiff_t k, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t t[4];
    memcpy(t, p, sizeof t);
    return t[0] == j && t[1] == k && t[2] <= a && t[3] >= b;
}
static inline void stenc_ftag_put(void *p, ptrdiff_t j, ptrdiff_t k, ptrdiff_t a, ptrdiff_t b)
{
    ptrdiff_t t[4];
    memcpy(t, p, sizeof t);
    if (t[0] == j && t[1] == k && a <= t[3] && b >= t[2]) {
        a = t[2] < a ? t[2] : a;
        b = t[3] > b ? t[3] : b;
    }
    /* four stores: one store of the four built on the stack waited for
     * its forwarding (a wide load of four narrow stores) in every fill */
    char *q = (char *)p;
    memcpy(q, &j, sizeof j);
    memcpy(q + sizeof j, &k, sizeof k);
    memcpy(q + 2 * sizeof j, &a, sizeof a);
    memcpy(q + 3 * sizeof j, &b, sizeof b);
}
/* A thread's march over a 3D job's field rows, kept in its buffer's lead
 * (STENC_FIELD_LEAD): the chunk after the last one it ran and the first
 * row of its run of chunks.  stenc_fmarch at the start of chunk C (first
 * row R0) returns that first row: the rows the thread ran since (in order:
 * OpenMP's static schedule) left their field rows in its buffer, so that a
 * row whose plane below ran in the same tile and run finds the rows of the
 * planes below the newest filled (gen/fields_print.c print_plane_fill) */
static inline void stenc_fmarch_clear(void *lead)
{
    const ptrdiff_t m[2] = {PTRDIFF_MIN, 0};
    memcpy(lead, m, sizeof m);
}
static inline ptrdiff_t stenc_fmarch(void *lead, ptrdiff_t c, ptrdiff_t r0)
{
    ptrdiff_t m[2];
    memcpy(m, lead, sizeof m);
    if (m[0] != c) m[1] = r0;
    m[0] = c + 1;
    memcpy(lead, m, sizeof m);
    return m[1];
}
/* a tag that covers nothing (a thread's ring rows start so) */
static inline void stenc_ftag_clear(void *p)
{
    const ptrdiff_t t[4] = {PTRDIFF_MIN, PTRDIFF_MIN, 0, -1};
    memcpy(p, t, sizeof t);
}
/* The stencil language's select(c, a, b): a where c holds, else b, with
 * both evaluated (as arguments) and picked by a bit mask.  Printed as
 * `c ? a : b`, GCC computed b only where c fails, and where b holds a square
 * root or a division (Huber's) it could then vectorise the loop only with
 * AVX-512 masks: with AVX2 the loop ran scalar (perf/NOTES.md section 28).
 * A branch not taken may produce inf or NaN; its bits are dropped. */
static inline float stenc_select_f32(int c, float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    const uint32_t m = (uint32_t)0 - (uint32_t)(c != 0);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, sizeof a);
    return a;
}
static inline double stenc_select_f64(int c, double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    const uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, sizeof a);
    return a;
}
/* v where keep is nonzero, +0 where it is 0: the lanes a vector loop's
 * value sum leaves out (a range's last vector again, a counted range).  A
 * bit mask, not `keep ? v : 0`: under GCC's default -ftrapping-math a
 * select lets the compiler compute v (a square root, a division) only for
 * the lanes it keeps, which needs masked vector operations; without them
 * (AVX2) the whole loop ran scalar (perf/NOTES.md section 28). */
static inline float stenc_keep_f32(float v, int keep) { return stenc_select_f32(keep, v, 0.0f); }
static inline double stenc_keep_f64(double v, int keep) { return stenc_select_f64(keep, v, 0.0); }

/* Streaming (non-temporal) stores of a gradient with beta == 0, which its
 * kernel writes and never reads (and of an update's array that it writes
 * and does not read, perf/NOTES.md section 65): a plain store first reads its cache line
 * from memory (a read for ownership), a streaming store of a whole line
 * does not, and it leaves the caches to the arrays the kernel reads.  Used
 * where the gradient array is at least STENC_NT_BYTES (the arrays then no
 * longer fit the last-level cache with their input, and the line would be
 * gone before anyone read it); in cache a streaming store is slower, as the
 * caller's next read then comes from memory.  Only whole 64-byte lines
 * stream: a line that a plain store also writes costs more than it saves
 * (up to 2.7x the hand Laplacian's time, measured).  perf/NOTES.md section 37.
 * -DSTENC_NT_BYTES=0 streams every gradient (the tests' second build),
 * -DSTENC_NT_BYTES=SIZE_MAX none. */
#ifndef STENC_NT_BYTES
#define STENC_NT_BYTES ((size_t)32 << 20)
#endif
#if defined(__SSE2__) || defined(__AVX__)
#include <immintrin.h>
#endif
/* Software prefetch in 3D interiors: each block of a row's points first
 * asks for the input row that the walk up in z reads first (the newest
 * plane's), STENC_PF_BYTES past the block's first point; 0 turns it off.
 * 2D interiors of reductions (gen/emit.c prefetch_text) ask for the row's
 * newest input row STENC_PF2D_BYTES further still (2 KiB ahead in all:
 * the 2D gradients took 0.63-0.89 of their time without it, 512 bytes
 * ahead 0.85-0.97 of it, 4 KiB as 2 KiB; perf/NOTES.md section 52).  A hint: no
 * access happens, so an address past an array's end is harmless (computed
 * as an integer, not as a pointer).  perf/NOTES.md section 42. */
#ifndef STENC_PF_BYTES
#define STENC_PF_BYTES 512
#endif
#ifndef STENC_PF2D_BYTES
#define STENC_PF2D_BYTES 1536
#endif
static inline void stenc_prefetch(const void *base, size_t es, ptrdiff_t at)
{
#if defined(__GNUC__)
    if (STENC_PF_BYTES > 0)
        __builtin_prefetch((const void *)((uintptr_t)base + es * (size_t)at + (size_t)(STENC_PF_BYTES)));
#else
    (void)base; (void)es; (void)at;
#endif
}
/* whether a gradient of BYTES bytes streams */
static inline int stenc_nt_on(size_t bytes)
{
    const size_t t = (size_t)(STENC_NT_BYTES); /* a variable: no always-true warning for 0 */
    return bytes >= t;
}
/* the elements of [P, P + N) (elements of ES bytes) before its first whole
 * 64-byte line: *A; and *B, the end of its last whole line (A <= B <= N;
 * A = B = N when P is not ES-aligned or no line fits) */
static inline void stenc_nt_span(const void *p, ptrdiff_t n, size_t es, ptrdiff_t *a, ptrdiff_t *b)
{
    const uintptr_t u = (uintptr_t)p;
    const ptrdiff_t head = (ptrdiff_t)(((64 - u % 64) % 64) / es), line = (ptrdiff_t)(64 / es);
    *a = *b = n;
    if (u % es != 0 || n - head < line) return;
    *a = head;
    *b = head + (n - head) / line * line;
}
/* the lines of [P, P + N) that stenc_nt_span leaves partial (before
 * element A; from B on), asked for writing AHEAD elements further on (the
 * same span two rows on).  Those lines are stored plainly, with the row's
 * end points, and each store to a line not in cache waits for the line's
 * read from memory; asked for ahead, the reads overlap the rows before
 * (TV's 3D gradient at 512^3 f32: 72.9 -> 60.5 ms, perf/NOTES.md section
 * 46 item 6).  An address, not a pointer: prefetches do not
 * fault, and a row ahead may be past the array. */
static inline void stenc_nt_partial_pf(const void *p, ptrdiff_t n, size_t es, ptrdiff_t a, ptrdiff_t b, ptrdiff_t ahead)
{
#if defined(__GNUC__)
    const uintptr_t u = (uintptr_t)p + (uintptr_t)ahead * (uintptr_t)es;
    if (a > 0) __builtin_prefetch((const void *)u, 1);
    if (b < n) __builtin_prefetch((const void *)(u + (uintptr_t)(n - 1) * (uintptr_t)es), 1);
#else
    (void)p; (void)n; (void)es; (void)a; (void)b; (void)ahead;
#endif
}
/* one 64-byte line L (64-byte aligned, in registers or L1) to D (64-byte
 * aligned), streamed where the target has the instructions.  Two 32-byte
 * halves even with AVX-512: where the compiler computed the line in 32-byte
 * vectors (GCC's choice for Intel's AVX-512 cores) and spilled them to L,
 * one 64-byte load of two 32-byte stores cannot be forwarded and stalls
 * (perf/NOTES.md section 41: the Tikhonov gradient 2D took 1.2x the hand
 * loop's time so); a 32-byte load of a 64-byte store forwards. */
static inline void stenc_nt_line_f32(float *d, const float *l)
{
#if defined(__AVX__)
    _mm256_stream_ps(d, _mm256_load_ps(l));
    _mm256_stream_ps(d + 8, _mm256_load_ps(l + 8));
#elif defined(__SSE2__)
    for (int q = 0; q < 16; q += 4) _mm_stream_ps(d + q, _mm_load_ps(l + q));
#else
    memcpy(d, l, 64);
#endif
}
static inline void stenc_nt_line_f64(double *d, const double *l)
{
#if defined(__AVX__)
    _mm256_stream_pd(d, _mm256_load_pd(l));
    _mm256_stream_pd(d + 4, _mm256_load_pd(l + 4));
#elif defined(__SSE2__)
    for (int q = 0; q < 8; q += 2) _mm_stream_pd(d + q, _mm_load_pd(l + q));
#else
    memcpy(d, l, 64);
#endif
}
/* N elements (N < a line: 16 floats, 8 doubles) from S to D in at most
 * four copies of fixed sizes: a streamed row's partial line (m4
 * stn_nt_edge).  As a loop, GCC compiled the copy to a call of memcpy or
 * a rep movs, 3-4% of Good's 3D gradient's samples at 256^3 (perf/NOTES.md
 * section 50); a masked vector store took 3x the kernel's time on Zen 4 */
static inline void stenc_few_f32(float *d, const float *s, ptrdiff_t n)
{
    if (n & 8) { memcpy(d, s, 8 * sizeof *d); d += 8; s += 8; }
    if (n & 4) { memcpy(d, s, 4 * sizeof *d); d += 4; s += 4; }
    if (n & 2) { memcpy(d, s, 2 * sizeof *d); d += 2; s += 2; }
    if (n & 1) *d = *s;
}
static inline void stenc_few_f64(double *d, const double *s, ptrdiff_t n)
{
    if (n & 4) { memcpy(d, s, 4 * sizeof *d); d += 4; s += 4; }
    if (n & 2) { memcpy(d, s, 2 * sizeof *d); d += 2; s += 2; }
    if (n & 1) *d = *s;
}
/* A value's partial sums over a streamed row's lines (m4 stn_vstrips_nt,
 * stn_vrow_nt): lane u adds point u of each 64-byte line L (64-byte
 * aligned), the lanes a value kept in registers.  An array of lanes added
 * in the line's omp simd loop was stored and reloaded at every line: GCC
 * does not keep it in registers across the streaming stores, and the chain
 * through memory took the Tikhonov identity's 3D value_grad to 1.25-1.33x
 * its gradient's time at 512^3 (1.13-1.14 in registers; perf/NOTES.md
 * section 48).  The same sums in the same order either way. */
#if defined(__AVX__)
typedef struct { __m256 a, b; } stenc_lanes_f32;
typedef struct { __m256d a, b; } stenc_lanes_f64;
static inline stenc_lanes_f32 stenc_lanes0_f32(void) { stenc_lanes_f32 s = {_mm256_setzero_ps(), _mm256_setzero_ps()}; return s; }
static inline stenc_lanes_f64 stenc_lanes0_f64(void) { stenc_lanes_f64 s = {_mm256_setzero_pd(), _mm256_setzero_pd()}; return s; }
static inline stenc_lanes_f32 stenc_lanes_add_f32(stenc_lanes_f32 s, const float *l)
{
    s.a = _mm256_add_ps(s.a, _mm256_load_ps(l));
    s.b = _mm256_add_ps(s.b, _mm256_load_ps(l + 8));
    return s;
}
static inline stenc_lanes_f64 stenc_lanes_add_f64(stenc_lanes_f64 s, const double *l)
{
    s.a = _mm256_add_pd(s.a, _mm256_load_pd(l));
    s.b = _mm256_add_pd(s.b, _mm256_load_pd(l + 4));
    return s;
}
static inline void stenc_lanes_get_f32(float *o, stenc_lanes_f32 s) { _mm256_storeu_ps(o, s.a); _mm256_storeu_ps(o + 8, s.b); }
static inline void stenc_lanes_get_f64(double *o, stenc_lanes_f64 s) { _mm256_storeu_pd(o, s.a); _mm256_storeu_pd(o + 4, s.b); }
#else
typedef struct { float v[16]; } stenc_lanes_f32;
typedef struct { double v[8]; } stenc_lanes_f64;
static inline stenc_lanes_f32 stenc_lanes0_f32(void) { stenc_lanes_f32 s; memset(&s, 0, sizeof s); return s; }
static inline stenc_lanes_f64 stenc_lanes0_f64(void) { stenc_lanes_f64 s; memset(&s, 0, sizeof s); return s; }
static inline stenc_lanes_f32 stenc_lanes_add_f32(stenc_lanes_f32 s, const float *l)
{
    for (int u = 0; u < 16; ++u) s.v[u] += l[u];
    return s;
}
static inline stenc_lanes_f64 stenc_lanes_add_f64(stenc_lanes_f64 s, const double *l)
{
    for (int u = 0; u < 8; ++u) s.v[u] += l[u];
    return s;
}
static inline void stenc_lanes_get_f32(float *o, stenc_lanes_f32 s) { memcpy(o, s.v, sizeof s.v); }
static inline void stenc_lanes_get_f64(double *o, stenc_lanes_f64 s) { memcpy(o, s.v, sizeof s.v); }
#endif
/* streaming stores are weakly ordered: each thread fences its own before
 * the loop's closing barrier hands the array to other threads and the
 * caller */
static inline void stenc_nt_fence(void)
{
#if defined(__SSE2__) || defined(__AVX__)
    _mm_sfence();
#endif
}
#ifndef __cplusplus
#include <stdlib.h>
/* BYTES of memory (NULL when none), zeroed with ZERO, for the threads'
 * rings of partial rows and buffers of field rows; stenc_free_lines frees
 * it.  Its start is on a 64-byte line, 2 KiB into a 4 KiB page: its rows
 * (st_n0 + STENC_ROW_PAD elements apart) then start lines where st_n0 is a multiple
 * of a line's elements, and a row's stores do not share their addresses'
 * low 12 bits with the loads of the input rows (a page-aligned array's or
 * malloc's) that the same loop reads, which the core takes for a
 * dependence.  From malloc the start moved with the process's heap, and
 * Good's 2D value took 1.04x or 1.13-1.21x its hand loop's time; hand
 * loops whose buffers were given the page offset of their input (aligned
 * as the arrays were) took up to 1.4x theirs (perf/NOTES.md section 50) */
#define STENC_PAGE_BYTES 4096 /* the page whose offsets the buffers' rows keep (4K aliasing) */
static inline void *stenc_alloc_lines(size_t bytes, int zero)
{
    const size_t page = STENC_PAGE_BYTES, half = page / 2;
    if (bytes > SIZE_MAX - 2 * page) return NULL;
    char *const raw = (char *)malloc(bytes + 2 * page);
    if (!raw) return NULL;
    /* the first address half a page past a page boundary with room for raw before it */
    const uintptr_t u = (uintptr_t)raw + sizeof(void *), start = (u + half - 1) / page * page + half;
    char *const p = raw + (start - (uintptr_t)raw);
    memcpy(p - sizeof(void *), &raw, sizeof raw);
    if (zero) memset(p, 0, bytes);
#ifdef STENC_POISON
    /* the sanitizer build: a buffer's elements NaN until written, so that a
     * kernel that reads a ring or field row it believes filled fails its
     * tests instead of finding the same values left by the call before */
    else memset(p, 0xff, bytes);
#endif
    return p;
}
/* A thread's share of such a buffer: N elements of ES bytes rounded up to
 * whole 4 KiB pages, so that every thread's share starts at the offset in
 * its page that thread 0's has (2 KiB).  Shares of any size put thread 1's
 * rows at another offset, which for some grids is the input rows' offset
 * give or take a line: the 2D Hessian's value_grad at 4096^2, whose
 * per-thread ring was 29 rows of 4112 floats, ran its second thread's row
 * function 1.5x as long as the first's (perf/NOTES.md section 53).  The
 * caller checks that N + STENC_PAGE_BYTES elements a thread fit a size_t
 * (more than the rounding adds). */
static inline size_t stenc_thread_span(size_t n, size_t es)
{
    const size_t page = STENC_PAGE_BYTES / es;
    return (n + page - 1) / page * page;
}
static inline void stenc_free_lines(void *p)
{
    if (!p) return;
    void *raw;
    memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
    free(raw);
}
/* the type of c ? a : b (generated operands are float or double) */
#define stenc_select(c, a, b) _Generic((a) + (b), float: stenc_select_f32, default: stenc_select_f64)(c, a, b)
#endif
#endif
#if defined(__CUDACC__) || defined(__cplusplus)
/* CUDA (the GPU predicates it) and the CUDA code's host emulation (C++) */
#define stenc_select(c, a, b) ((c) ? (a) : (b))
#endif

/* v mod m in [0, m) for any sign of v (m > 0) */
STENC_HD ptrdiff_t stenc_imod(ptrdiff_t v, ptrdiff_t m)
{
    ptrdiff_t r = v % m;
    return r < 0 ? r + m : r;
}

/* v mod m for v in [-m, 3m) (m > 0), without a division: a ring's slot
 * of a row a few rows from one whose slot is known (gen/fields_print.c) */
STENC_HD ptrdiff_t stenc_iwrap(ptrdiff_t v, ptrdiff_t m)
{
    v += v < 0 ? m : 0;
    v -= v >= m ? m : 0;
    return v >= m ? v - m : v;
}

STENC_HD ptrdiff_t stenc_imax(ptrdiff_t a, ptrdiff_t b) { return a > b ? a : b; }
STENC_HD ptrdiff_t stenc_imin(ptrdiff_t a, ptrdiff_t b) { return a < b ? a : b; }

/* Clamp lo <= v <= hi (returns lo if hi < lo). */
STENC_HD ptrdiff_t stenc_iclamp(ptrdiff_t v, ptrdiff_t lo, ptrdiff_t hi)
{
    return v > hi ? (hi < lo ? lo : hi) : (v < lo ? lo : v);
}

/* Index of grid coordinate p + o along a dimension of n points under the
 * boundary mode: identity (valid), clamped (neumann) or wrapped (periodic). */
STENC_HD size_t stenc_map(ptrdiff_t p, ptrdiff_t o, ptrdiff_t n, int mode)
{
    ptrdiff_t v = p + o;
    if (mode == STENC_PERIODIC) {
        ptrdiff_t m = v % n;
        return (size_t)(m < 0 ? m + n : m);
    }
    if (mode == STENC_NEUMANN)
        return (size_t)(v < 0 ? 0 : (v >= n ? n - 1 : v));
    return (size_t)v;
}

/* The points p in [lo, hi) whose tap p + o lands on q under the mode, as the
 * interval [*a, *b) (empty when *a >= *b).  For valid mode the domain
 * [lo, hi) already guarantees in-bounds reads, so the map is the identity. */
STENC_HD void stenc_preimage(ptrdiff_t q, ptrdiff_t o, ptrdiff_t n,
                             ptrdiff_t lo, ptrdiff_t hi, int mode,
                             ptrdiff_t *a, ptrdiff_t *b)
{
    if (mode == STENC_NEUMANN) {
        ptrdiff_t s = (q == 0) ? lo : q - o;           /* first p */
        ptrdiff_t e = (q == n - 1) ? hi : q - o + 1;    /* one past last p */
        if (q == 0 && q != n - 1) e = stenc_imin(e, -o + 1);
        if (q == n - 1 && q != 0) s = stenc_imax(s, n - 1 - o);
        *a = stenc_imax(s, lo);
        *b = stenc_imin(e, hi);
        return;
    }
    if (mode == STENC_PERIODIC) {
        ptrdiff_t m = (q - o) % n;
        if (m < 0) m += n;
        *a = m; *b = m + 1;
        if (m < lo || m >= hi) *b = *a;
        return;
    }
    *a = q - o; *b = q - o + 1;
    if (*a < lo || *a >= hi) *b = *a;
}

/* Rows per y tile of the 3D C kernels' 2.5D row order: a tile's slab of one
 * plane (rows of nx elements of ELEM bytes) holds about BYTES, and the tile
 * is walked plane by plane.  No tiling (one tile of all rows) when a plane's
 * rows fit anyway or there is a single plane.  Two sizes (perf/NOTES.md
 * section 12): kernels that keep rows of partials per tile (the rolling
 * gradients: their ring grows with the tile) use STENC_RING_TILE_BYTES, so
 * that the ring and the planes it reads stay in a core's L2; every other
 * kernel STENC_TILE_BYTES, large enough that the planes are read in long
 * runs (small tiles cost a third of a value's time at 512^3) yet bounded, so
 * that planes much larger than a cache are still read once.  Build with
 * -DSTENC_TILE_BYTES=... / -DSTENC_RING_TILE_BYTES=... for other caches. */
#ifndef STENC_TILE_BYTES
#define STENC_TILE_BYTES (1024 * 1024)
#endif
#ifndef STENC_RING_TILE_BYTES
#define STENC_RING_TILE_BYTES (256 * 1024)
#endif
/* Tiles of at most T rows for NROWS rows, all of one height: the fewest
 * tiles of T, their rows shared out evenly (T where that would take a tile
 * below 8 rows).  The 3D TV gradient at 256^3, tiles of 239 + 17 rows
 * under a 1 MiB budget, took 0.93 of its time with two of 128 (perf/NOTES.md
 * section 54). */
STENC_HD ptrdiff_t stenc_even_tile_rows(ptrdiff_t nrows, ptrdiff_t t)
{
    if (t < 1 || nrows <= t) return t;
    const ptrdiff_t ntile = (nrows + t - 1) / t, even = (nrows + ntile - 1) / ntile;
    return even < 8 ? t : even;
}
STENC_HD ptrdiff_t stenc_tile_rows(ptrdiff_t nx, ptrdiff_t nrows, ptrdiff_t nplanes, size_t elem, size_t bytes)
{
    ptrdiff_t t = (ptrdiff_t)(bytes / (elem > 0 ? elem : 1)) / (nx > 0 ? nx : 1);
    if (t < 8) t = 8;
    return (nplanes <= 1 || t >= nrows || nrows < 1) ? (nrows > 0 ? nrows : 1) : t;
}

/* The y tile of a 3D job whose rows read PLANES planes of the tile's input
 * rows and that keeps rows a thread (a ring of partial rows, planes of
 * field rows; none: RING0 = RING1 = 0): RING0 rows of nx + STENC_ROW_PAD elements
 * for a tile of no rows, RING1 for one, so RING0 + (RING1 - RING0) * ty
 * for a tile of ty rows.  stenc_tile_rows's tile of BYTES (for a job that
 * keeps rows, a single plane's too), made smaller
 * (not below 8 rows) where the rows and the planes would take more than
 * BUDGET bytes (0: no bound), and then, for a job that keeps rows, made
 * even (stenc_even_tile_rows; the jobs that keep none, values and linear
 * gradients, ran 1.02-1.04x slower at 512^3 with even tiles, perf/NOTES.md
 * section 54).  The GNUmakefile sets STENC_TILE_BUDGET_BYTES to 5/8 of a
 * core's L2 where the 3D gradients run in row order (STENC_ROLL_PLANES 0):
 * a ring or planes past it are read from L3 each plane (section 47: the
 * Hessian's 3D gradient took 0.70 of its time, central TV's 0.74, with
 * rings that fit). */
#ifndef STENC_TILE_BUDGET_BYTES
#define STENC_TILE_BUDGET_BYTES 0
#endif
STENC_HD ptrdiff_t stenc_fit_tile_rows(ptrdiff_t nx, ptrdiff_t nrows, ptrdiff_t nplanes, size_t elem, size_t bytes,
                                       size_t budget, ptrdiff_t ring0, ptrdiff_t ring1, ptrdiff_t planes)
{
    /* a job that keeps rows a tile row (RING1 > RING0) tiles a single plane
     * too: its rows grow with the tile, and a whole plane's (Good's value
     * on 2048 x 2048 x 1: 33 MiB of field rows a thread, allocated and
     * tagged every call) took it 8-16x its time at two planes (perf/NOTES.md
     * section 55) */
    const int keeps = ring1 > ring0 && ring0 >= 0;
    const ptrdiff_t t = stenc_tile_rows(nx, nrows, keeps && nplanes == 1 ? 2 : nplanes, elem, bytes);
    if (budget == 0 || (nplanes <= 1 && !keeps) || t <= 8 || nx < 1 || ring0 < 0 || ring1 < ring0 || planes < 0) return t;
    const size_t row = (size_t)nx + STENC_ROW_PAD, cap = budget / (elem > 0 ? elem : 1);
    /* elements: RING0 * row fixed, ((RING1 - RING0) * row + PLANES * nx) a tile row */
    if ((size_t)ring0 > cap / row) return 8;
    const size_t per = (size_t)(ring1 - ring0) * row + (size_t)planes * (size_t)nx, left = cap - (size_t)ring0 * row;
    const size_t fit = per > 0 ? left / per : (size_t)t;
    const ptrdiff_t ty = fit < 8 ? 8 : fit < (size_t)t ? (ptrdiff_t)fit : t;
    return ring1 > 0 ? stenc_even_tile_rows(nrows, ty) : ty;
}

/* The 3D C rolling gradients' order (gen/emit.c roll_body prints both): 1
 * computes the newest plane's partial rows a tile's plane at a time before
 * its gathers (the rows a gather reads come from L2), 0 each row's just
 * before its gather (the newest plane's rows from two rows in L1).  Which
 * is faster depends on the caches (perf/NOTES.md section 41: plane order
 * took 0.84-0.93 of row order's time on a Zen 3 core with 512 KiB of L2,
 * row order 0.74-0.92 of plane order's, the Hessian's even, on a Xeon
 * core with 2 MiB); the GNUmakefile picks 1 where the L2 is 512 KiB or
 * less.  The value_grads whose newest rows count their values (central TV,
 * the Hessian) run in plane order either way, and so do the gradients with
 * six partial rows a point or more (the Hessian's; gen/emit.c
 * ROLL_PLANE_SLOTS, perf/NOTES.md section 51). */
#ifndef STENC_ROLL_PLANES
#define STENC_ROLL_PLANES 0
#endif

/* Whole rows (gen/emit.c roll_xrule): where a rolling 3D gradient's border
 * rule holds at the x faces too, 1 runs its interior rows in Neumann mode
 * whole, [0, st_n0) gathered as the interior, the ring rows padded past
 * their ends by the rule, no x ends point by point.  By default on in plane
 * order and off in row order (the GNUmakefile's WHOLE_ROWS follows
 * ROLL_PLANES).  In row order, on a Xeon and a Zen 4 core, the Laplacian's
 * gradient took 0.85-0.89 of its time at 128^3 (in cache) with them, 0.92-0.99
 * at 256^3-512^3 when timed alone, but 1.05-1.09x there in the full
 * benchmark's process (perf/NOTES.md section 59).  In plane order, on a Zen 3
 * core, two full 3D benchmarks each way put the Laplacian's gradient at
 * 0.98-1.02 of its hand loop's time at 256^3-512^3 with them (1.01-1.16
 * without), TV's and Huber's at 0.87-0.99 (0.96-1.08; section 63). */
#ifndef STENC_WHOLE_ROWS
#define STENC_WHOLE_ROWS STENC_ROLL_PLANES
#endif

/* The 3D C loops' step to the next row of the 2.5D order: row JJ of tile T
 * (TH rows high: TY, or fewer in the last tile) in its plane KK, as
 * st_r -> (T, KK, JJ) would give it by division (three divisions a row
 * before: perf/NOTES.md section 24) */
STENC_HD void stenc_row_next(ptrdiff_t *jj, ptrdiff_t *kk, ptrdiff_t *t, ptrdiff_t *th, ptrdiff_t ty, ptrdiff_t n1r,
                             ptrdiff_t n2r)
{
    if (++*jj < *th) return;
    *jj = 0;
    if (++*kk < n2r) return;
    *kk = 0;
    ++*t;
    *th = stenc_imin(ty, n1r - *t * ty);
}

/* The CUDA kernels' launches: STENC_CUDA_THREADS threads a block, at most
 * STENC_CUDA_MAX_BLOCKS blocks that stride over the work.  3D loops march
 * along z (STENC_CUDA_ZMARCH 1, the default; m4/backend_cuda.m4 stn_zmarch):
 * a block owns a tile of STENC_CUDA_TX x STENC_CUDA_TY points of a plane,
 * each thread one point of it, and walks a chunk of planes upwards, so that
 * the planes a point reads below and above it were read by the same thread
 * one and two steps before (L1 hits instead of L2 traffic).  Build with
 * -DSTENC_CUDA_ZMARCH=0 for one block per row (j, k), as in 2D.  While
 * marching, an interior point keeps the planes its columns read below and
 * above in registers, loading only the newest (STENC_CUDA_ZCACHE 1, the
 * default; gen/zcache.c); -DSTENC_CUDA_ZCACHE=0 reads every tap from L1.
 * Pipelined (STENC_CUDA_ZPIPE 1, the default), every column is cached and
 * the next point's newest planes are loaded before a point computes. */
#define STENC_CUDA_THREADS 256
#define STENC_CUDA_MAX_BLOCKS 1024
/* The blocks each kernel asks to fit on one multiprocessor at once
 * (__launch_bounds__' second argument): 1 lets ptxas give a thread up to
 * 255 registers, and the largest kernels take them (the Hessian's 3D
 * gradient 200: one block, 8 warps, a multiprocessor); 2 caps a thread at
 * 128 registers, spilling what does not fit (perf/NOTES.md section 40;
 * a variant of the next GPU run) */
#ifndef STENC_CUDA_MINBLOCKS
#define STENC_CUDA_MINBLOCKS 1
#endif
#ifndef STENC_CUDA_ZMARCH
#define STENC_CUDA_ZMARCH 1
#endif
#ifndef STENC_CUDA_ZCACHE
#define STENC_CUDA_ZCACHE 1
#endif
#define STENC_CUDA_TX 32
#define STENC_CUDA_TY (STENC_CUDA_THREADS / STENC_CUDA_TX)
/* Interior runs (a z-marching column's interior planes, a 2D row's interior
 * points) are branch-free loops unrolled STENC_CUDA_UNROLL times, so that a
 * thread can have several points' loads in flight: one point at a time
 * leaves the memory latency-bound, far under its bandwidth.  A body whose
 * division or square root has a slow-path branch keeps the compiler from
 * moving the next point's loads up; STENC_CUDA_ZPIPE 1 (the default) loads
 * them a point ahead in the source (gen/zcache.c; perf/NOTES.md
 * section 39). */
#ifndef STENC_CUDA_ZPIPE
#define STENC_CUDA_ZPIPE 1
#endif
/* Pipelined 3D interiors also carry costly subexpressions (square roots,
 * divisions) up from the point below when the body reads them shifted one
 * plane (TV's gradient: 3 of its 4 square roots a point instead of 4;
 * gen/zcache.c); -DSTENC_CUDA_ZNODES=0 computes them all at every point. */
#ifndef STENC_CUDA_ZNODES
#define STENC_CUDA_ZNODES 1
#endif
#ifndef STENC_CUDA_UNROLL
#define STENC_CUDA_UNROLL 4
#endif
#define STENC_STR_(x) #x
#define STENC_STR(x) STENC_STR_(x)
#if defined(__CUDACC__)
#define STENC_CUDA_UNROLLED _Pragma(STENC_STR(unroll STENC_CUDA_UNROLL))
#else
#define STENC_CUDA_UNROLLED
#endif

/* The blocks of a launch over WORK items (rows, or z-marching items): one
 * per item, at least 1, at most STENC_CUDA_MAX_BLOCKS (they stride) */
STENC_HD unsigned int stenc_cuda_blocks(ptrdiff_t work)
{
    return (unsigned int)(work < 1 ? 1 : (work > STENC_CUDA_MAX_BLOCKS ? STENC_CUDA_MAX_BLOCKS : work));
}

/* Planes per work item of a z-marching loop over TILES tiles of a plane and
 * PLANES planes: the smallest chunk that leaves at most four items per
 * block of the largest launch (so at least two while the grid is large
 * enough), at most 64 planes (the longer a chunk, the fewer planes are read
 * twice at the chunks' edges). */
STENC_HD ptrdiff_t stenc_cuda_kchunk(ptrdiff_t tiles, ptrdiff_t planes)
{
    const ptrdiff_t want = 4 * STENC_CUDA_MAX_BLOCKS;
    ptrdiff_t kc = (tiles * planes + want - 1) / want;
    if (kc > 64) kc = 64;
    return kc < 1 ? 1 : kc;
}

/* The tiles of an n0 x n1 plane: STENC_CUDA_TX x STENC_CUDA_TY points
 * each, n0 / STENC_CUDA_TX (rounded up) of them along x */
STENC_HD ptrdiff_t stenc_cuda_ztiles(ptrdiff_t n0, ptrdiff_t n1)
{
    return ((n0 + STENC_CUDA_TX - 1) / STENC_CUDA_TX) * ((n1 + STENC_CUDA_TY - 1) / STENC_CUDA_TY);
}

/* The work items of a z-marching loop over n0 x n1 x n2 points: the tiles of
 * a plane times the chunks of planes; 0 for an empty box */
STENC_HD ptrdiff_t stenc_cuda_zitems(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2)
{
    if (n0 <= 0 || n1 <= 0 || n2 <= 0) return 0;
    const ptrdiff_t tiles = stenc_cuda_ztiles(n0, n1);
    const ptrdiff_t kc = stenc_cuda_kchunk(tiles, n2);
    return tiles * ((n2 + kc - 1) / kc);
}

#endif /* STENC_INLINE_H */
