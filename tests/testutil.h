/* Shared helpers of the stenc test suites. */
#ifndef STENC_TESTUTIL_H
#define STENC_TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc.h"

/* splitmix64: deterministic random numbers, independent of libc */
typedef struct { uint64_t s; } rng_t;
static inline uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* uniform in [lo, hi) */
static inline double rng_uniform(rng_t *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline double *dalloc(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}
static inline float *falloc(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}
static inline void dfill(double *a, size_t n, rng_t *r, double lo, double hi)
{
    for (size_t i = 0; i < n; ++i) a[i] = rng_uniform(r, lo, hi);
}
static inline void dnan(double *a, size_t n)
{
    for (size_t i = 0; i < n; ++i) a[i] = NAN;
}
static inline double ddot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}
static inline void to_float(float *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; ++i) dst[i] = (float)src[i];
}

/* TEST_REF marks the independent reference evaluators' innermost functions
 * (boundary maps, point reads, the per-point terms).  The finite-difference
 * checks call them millions of times; under make check-sanitize they run
 * uninstrumented, as they made up half of the sanitized suites' time, while
 * the library's kernels, the code under test, stay instrumented. */
#if defined(__GNUC__) || defined(__clang__)
#define TEST_REF __attribute__((no_sanitize("address", "undefined")))
#else
#define TEST_REF
#endif

#define CK_OK(expr) ck_assert_msg((expr) == STENC_OK, "%s returned: %s", #expr, stenc_strerror(expr))

/* relative difference |a-b| / max(|a|,|b|,floor) */
static inline double reldiff(double a, double b, double floor)
{
    double m = fmax(fmax(fabs(a), fabs(b)), floor);
    return fabs(a - b) / m;
}

/* Shards: tests/run.sh may run a suite as N processes side by side, the
 * K-th with STENC_TEST_SHARD=K/N (0 <= K < N).  test_shard reads it (0/1
 * when unset; returns 0 and says why when malformed); shard_add_loop adds
 * the K-th of N contiguous parts of a loop test's range [S, E), and
 * shard_add_test a plain test to shard 0 only, so that the N processes
 * together run every test once. */
typedef struct { int k, n; } Shard;
static inline int test_shard(Shard *sh)
{
    const char *e = getenv("STENC_TEST_SHARD");
    sh->k = 0; sh->n = 1;
    if (!e) return 1;
    char tail;
    if (sscanf(e, "%d/%d%c", &sh->k, &sh->n, &tail) != 2 || sh->n < 1 || sh->k < 0 || sh->k >= sh->n) {
        fprintf(stderr, "STENC_TEST_SHARD=%s: want K/N with 0 <= K < N\n", e);
        return 0;
    }
    return 1;
}
#define shard_add_loop(tc, tf, s, e, sh)                                                             \
    do {                                                                                             \
        const int sh_lo_ = (s) + ((e) - (s)) * (sh).k / (sh).n, sh_hi_ = (s) + ((e) - (s)) * ((sh).k + 1) / (sh).n; \
        if (sh_lo_ < sh_hi_) tcase_add_loop_test(tc, tf, sh_lo_, sh_hi_);                          \
    } while (0)
#define shard_add_test(tc, tf, sh)                  \
    do {                                            \
        if ((sh).k == 0) tcase_add_test(tc, tf);    \
    } while (0)

/* run a suite, print Check's summary; returns number failed */
static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf;
}

/* the same without fork: for suites that use CUDA, whose context does not
 * survive a fork (a failed check still ends only its own test) */
static inline int run_suite_nofork(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf;
}

#endif
