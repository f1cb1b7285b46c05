/* The CUDA kernels' loop nests, run on the host: the template's z-marching
 * loop over tiles and chunks of planes and its row loops (tests/zmarch.m4
 * expands them from m4/backend_cuda.m4 with a visit for each body) are run
 * for every block and thread of a launch, one at a time, as the GPU would
 * run them.  Every point of the box must be visited exactly once, none
 * outside it, and each by the body its position calls for (interior, x end
 * of an interior row, border).  The launch size is the host launcher's
 * (stenc_cuda_blocks: one block per work item, at most
 * STENC_CUDA_MAX_BLOCKS) and a small one
 * (3 blocks: every block strides over many items).  The expected visits
 * come from the box alone.  Also here, as it sizes the C template's 3D
 * tiles the same way: stenc_fit_tile_rows against a search of its rule. */
#include "testutil.h"
#include "stenc_inline.h"

typedef struct { unsigned int x; } ZDim;
typedef struct { ptrdiff_t n[3], lo[3], hi[3], ilo[3], ihi[3]; } ZBox;
typedef struct { const ZBox *b; unsigned char *count; int D, xend, bad; } ZVisits;

#define ZLOOP_PARAMS const ZBox *bx, ZDim blockIdx, ZDim threadIdx, ZDim gridDim, ZDim blockDim, ZVisits *zv
#define ZLOOP_LOCALS                                                                                                   \
    const ptrdiff_t st_lo0 = bx->lo[0], st_hi0 = bx->hi[0], st_ilo0 = bx->ilo[0], st_ihi0 = bx->ihi[0];              \
    const ptrdiff_t st_lo1 = bx->lo[1], st_hi1 = bx->hi[1], st_ilo1 = bx->ilo[1], st_ihi1 = bx->ihi[1];              \
    const ptrdiff_t st_lo2 = bx->lo[2], st_hi2 = bx->hi[2], st_ilo2 = bx->ilo[2], st_ihi2 = bx->ihi[2];              \
    const ptrdiff_t st_n1r = st_hi1 > st_lo1 ? st_hi1 - st_lo1 : 0;                                                   \
    const ptrdiff_t st_n2r = st_hi2 > st_lo2 ? st_hi2 - st_lo2 : 0;                                                   \
    const ptrdiff_t st_rows = st_n1r * st_n2r;                                                                        \
    (void)blockDim; (void)st_lo2; (void)st_ilo2; (void)st_ihi2; (void)st_n2r; (void)st_rows;
#define ZVISIT(W) zvisit(zv, i, j, k, W);

/* the body that point (i, j, k) must run, from the box */
static int zexpect(const ZVisits *v, ptrdiff_t i, ptrdiff_t j, ptrdiff_t k)
{
    const ZBox *b = v->b;
    int row_in = j >= b->ilo[1] && j < b->ihi[1] && (v->D == 2 || (k >= b->ilo[2] && k < b->ihi[2]));
    if (row_in && i >= b->ilo[0] && i < b->ihi[0]) return 0;
    return row_in && v->xend ? 2 : 1;
}

static void zvisit(ZVisits *v, ptrdiff_t i, ptrdiff_t j, ptrdiff_t k, int which)
{
    const ZBox *b = v->b;
    const ptrdiff_t p[3] = {i, j, k};
    for (int d = 0; d < v->D; ++d)
        if (p[d] < b->lo[d] || p[d] >= b->hi[d]) { v->bad++; return; }
    if (which != zexpect(v, i, j, k)) v->bad++;
    unsigned char *c = &v->count[(size_t)i + (size_t)b->n[0] * ((size_t)j + (size_t)b->n[1] * (size_t)k)];
    if (*c < 255) ++*c;
}

/* a plane-cached interior point: the first of its run is the plane where
 * the registers were loaded, every other one follows the one below it */
#define ZCACHED                                                                                                       \
    {                                                                                                                 \
        if (st_zlast != k - 1) zv->bad++;                                                                             \
        st_zlast = k;                                                                                                 \
        zvisit(zv, i, j, k, 0);                                                                                       \
    }

/* a pipelined 2D interior point: the first of its run is where the
 * registers were loaded, every other one a block width after the one
 * before; the run ends inside the box's interior (the next point's loads
 * are clamped to it) */
#define ZPIPED                                                                                                        \
    {                                                                                                                 \
        if (st_xlast != i - (ptrdiff_t)blockDim.x || st_ie > st_ihi0 || st_ie > st_hi0) zv->bad++;                   \
        st_xlast = i;                                                                                                 \
        zvisit(zv, i, j, k, 0);                                                                                       \
    }

#include "zmarch_loop.h"

typedef void (*ZLoop)(ZLOOP_PARAMS);

/* run LOOP for every block and thread of a launch of NBLK blocks; the
 * number of points visited other than once, or visited by the wrong body */
static long zrun(ZLoop loop, const ZBox *b, int D, int xend, unsigned int nblk)
{
    const size_t N = (size_t)b->n[0] * (size_t)b->n[1] * (size_t)b->n[2];
    ZVisits v = {b, calloc(N, 1), D, xend, 0};
    ck_assert_ptr_nonnull(v.count);
    const ZDim g = {nblk}, bd = {STENC_CUDA_THREADS};
    for (unsigned int bi = 0; bi < nblk; ++bi)
        for (unsigned int t = 0; t < STENC_CUDA_THREADS; ++t) {
            const ZDim bb = {bi}, tt = {t};
            loop(b, bb, tt, g, bd, &v);
        }
    long wrong = v.bad;
    for (ptrdiff_t k = 0; k < b->n[2]; ++k)
        for (ptrdiff_t j = 0; j < b->n[1]; ++j)
            for (ptrdiff_t i = 0; i < b->n[0]; ++i) {
                const int in = i >= b->lo[0] && i < b->hi[0] && j >= b->lo[1] && j < b->hi[1] &&
                               (D == 2 || (k >= b->lo[2] && k < b->hi[2]));
                wrong += v.count[(size_t)i + (size_t)b->n[0] * ((size_t)j + (size_t)b->n[1] * (size_t)k)] != (in ? 1 : 0);
            }
    free(v.count);
    return wrong;
}

/* the host launcher's block count for a 3D z-marching or a row loop */
static unsigned int zblocks(const ZBox *b, int march)
{
    ptrdiff_t n[3];
    for (int d = 0; d < 3; ++d) n[d] = b->hi[d] > b->lo[d] ? b->hi[d] - b->lo[d] : 0;
    return stenc_cuda_blocks(march ? stenc_cuda_zitems(n[0], n[1], n[2]) : n[1] * n[2]);
}

/* grids: below and above a tile in x, rows not a multiple of a tile's,
 * planes not a multiple of a chunk, more items than a launch has blocks */
static const ptrdiff_t zgrids[][3] = {{61, 37, 23}, {300, 9, 7}, {17, 40, 70}, {40, 300, 301}, {1, 1, 1}, {33, 8, 130}};
#define NZGRID (sizeof zgrids / sizeof zgrids[0])

/* box variants: the whole grid (periodic), all but the last point (valid
 * of a forward difference), a halo of 2 (a radius-2 stencil's interior) */
static ZBox zbox(const ptrdiff_t *n, int variant, int D)
{
    ZBox b;
    for (int d = 0; d < 3; ++d) {
        const ptrdiff_t m = d < D ? n[d] : 1, lo = variant == 2 ? 1 : 0;
        b.n[d] = m;
        b.lo[d] = d < D ? lo : 0;
        b.hi[d] = d < D ? m - (variant == 0 ? 0 : 1) : 1;
        b.ilo[d] = d < D ? lo + (variant == 2 ? 1 : 0) : 0;
        b.ihi[d] = d < D ? m - (variant == 2 ? 2 : 1) : 1;
    }
    return b;
}

START_TEST(loops_cover_the_box_once)
{
    const ptrdiff_t *n = zgrids[_i / 3];
    const int variant = _i % 3;
    const ZBox b3 = zbox(n, variant, 3), b2 = zbox(n, variant, 2);
    const unsigned int few = 3;
    ck_assert_int_eq(zrun(zloop_march3, &b3, 3, 1, zblocks(&b3, 1)), 0);
    ck_assert_int_eq(zrun(zloop_march3, &b3, 3, 1, few), 0);
    ck_assert_int_eq(zrun(zloop_march3_noxend, &b3, 3, 0, zblocks(&b3, 1)), 0);
    ck_assert_int_eq(zrun(zloop_march3_zcache, &b3, 3, 1, zblocks(&b3, 1)), 0);
    ck_assert_int_eq(zrun(zloop_march3_zcache, &b3, 3, 1, few), 0);
    ck_assert_int_eq(zrun(zloop_rows3, &b3, 3, 1, zblocks(&b3, 0)), 0);
    ck_assert_int_eq(zrun(zloop_rows3, &b3, 3, 1, few), 0);
    ck_assert_int_eq(zrun(zloop_rows2, &b2, 2, 1, zblocks(&b2, 0)), 0);
    ck_assert_int_eq(zrun(zloop_rows2, &b2, 2, 1, few), 0);
    ck_assert_int_eq(zrun(zloop_rows2_pipe, &b2, 2, 1, zblocks(&b2, 0)), 0);
    ck_assert_int_eq(zrun(zloop_rows2_pipe, &b2, 2, 1, few), 0);
}
END_TEST

/* the chunking itself: a chunk of at least one and at most 64 planes, and
 * (below 64) at least two items per block of the largest launch whenever
 * the grid has that many tile columns (tiles x planes) */
START_TEST(chunks_fill_the_launch)
{
    for (ptrdiff_t tiles = 1; tiles <= 4096; tiles *= 4)
        for (ptrdiff_t planes = 1; planes <= 2048; planes *= 2) {
            const ptrdiff_t kc = stenc_cuda_kchunk(tiles, planes);
            ck_assert(kc >= 1 && kc <= 64);
            const ptrdiff_t items = tiles * ((planes + kc - 1) / kc);
            const ptrdiff_t two = 2 * STENC_CUDA_MAX_BLOCKS;
            if (kc < 64) ck_assert_int_ge(items, tiles * planes < two ? tiles * planes : two);
        }
    ck_assert_int_eq(stenc_cuda_zitems(0, 5, 5), 0);
    ck_assert_int_eq(stenc_cuda_zitems(5, 0, 5), 0);
    ck_assert_int_eq(stenc_cuda_zitems(5, 5, 0), 0);
    ck_assert_int_eq(stenc_cuda_zitems(512, 512, 512), 16 * 64 * 8);
    ck_assert_uint_eq(stenc_cuda_blocks(0), 1);
    ck_assert_uint_eq(stenc_cuda_blocks(5), 5);
    ck_assert_uint_eq(stenc_cuda_blocks(16 * 64 * 8), STENC_CUDA_MAX_BLOCKS);
}
END_TEST

/* a rolling job's tile: stenc_tile_rows's, or with a budget the most rows
 * (not below 8) whose ring (RING0 + (RING1 - RING0) * ty rows of nx + STENC_ROW_PAD)
 * and planes (PLANES * ty rows of nx) fit it, found here by a search; then,
 * with a ring (RING1 > 0), the rows shared evenly over as many tiles of that
 * height as the rows need (unless that makes a tile below 8 rows) */
static ptrdiff_t even_rows(ptrdiff_t nr, ptrdiff_t t)
{
    if (t >= nr) return t;
    ptrdiff_t k = 1, ht = 1; /* the fewest tiles of t, then the lowest height that k tiles cover nr with */
    while (k * t < nr) ++k;
    while (ht * k < nr) ++ht;
    return ht >= 8 ? ht : t;
}
START_TEST(ring_tiles_fit_the_budget)
{
    static const ptrdiff_t nxs[] = {1, 16, 100, 256, 512, 1000}, rows[] = {1, 8, 64, 512}, r0s[] = {0, 17, 281};
    static const ptrdiff_t slopes[] = {0, 2, 3, 18}, pls[] = {0, 1, 3};
    static const size_t budgets[] = {0, 4096, 65536, 1048576, 1310720}, tiles[] = {16384, 262144};
    int tried = 0, bounded = 0;
    for (size_t a = 0; a < sizeof nxs / sizeof *nxs; ++a)
        for (size_t b = 0; b < sizeof rows / sizeof *rows; ++b)
            for (size_t c = 0; c < 3; ++c)
                for (size_t d = 0; d < 4; ++d)
                    for (size_t e = 0; e < 3; ++e)
                        for (size_t f = 0; f < 5; ++f)
                            for (size_t h = 0; h < 2; ++h)
                                for (int np = 1; np <= 2; ++np)
                                    for (size_t el = 4; el <= 8; el += 4) {
                                        const ptrdiff_t nx = nxs[a], nr = rows[b], r0 = r0s[c], r1 = r0 + slopes[d];
                                        const ptrdiff_t nplanes = np == 1 ? 1 : 300;
                                        /* a single plane tiles like many where the job keeps rows */
                                        const int tiled = nplanes > 1 || r1 > r0;
                                        const ptrdiff_t t0 = stenc_tile_rows(nx, nr, tiled ? 300 : 1, el, tiles[h]);
                                        ptrdiff_t want = t0;
                                        if (budgets[f] && tiled && t0 > 8) {
                                            want = 8;
                                            for (ptrdiff_t ty = t0; ty > 8; --ty) {
                                                const size_t bytes = ((size_t)(r0 + (r1 - r0) * ty) * (size_t)(nx + STENC_ROW_PAD) +
                                                                      (size_t)(pls[e] * ty * nx)) * el;
                                                if (bytes <= budgets[f]) { want = ty; break; }
                                            }
                                        }
                                        if (budgets[f] && tiled && t0 > 8 && r1 > 0) want = even_rows(nr, want);
                                        const ptrdiff_t got = stenc_fit_tile_rows(nx, nr, nplanes, el, tiles[h], budgets[f],
                                                                                   r0, r1, pls[e]);
                                        ck_assert_msg(got == want, "nx %td rows %td ring %td+%td planes %td budget %zu: %td, not %td",
                                                      nx, nr, r0, r1 - r0, pls[e], budgets[f], got, want);
                                        ck_assert(got >= 1 && got <= t0);
                                        ++tried;
                                        bounded += got < t0;
                                    }
    ck_assert_int_gt(bounded, tried / 20); /* the budget binds in a share of the cases */
    /* the Hessian's 3D gradient at 512^3 f32 (ring 18 (ty + 2) + 97 rows of
     * 512 + 32, 3 planes) in 5/8 of 2 MiB: (327680 - 133 * 544) / (18 * 544 +
     * 3 * 512) = 22.5 rows; without a budget the 128 rows of 256 KiB */
    ck_assert_int_eq(STENC_ROW_PAD, 32);
    ck_assert_int_eq(stenc_fit_tile_rows(512, 512, 512, 4, 262144, 1310720, 133, 151, 3), 22);
    ck_assert_int_eq(stenc_fit_tile_rows(512, 512, 512, 4, 262144, 0, 133, 151, 3), 128);
    /* the TV gradient at 256^3 f32 (ring 2 (ty + 1) + 32 rows, 2 planes) in
     * 1 MiB: (262144 - 34 * 288) / (2 * 288 + 2 * 256) = 231.9 rows, two
     * tiles of 128 rather than 231 + 25 */
    ck_assert_int_eq(stenc_fit_tile_rows(256, 256, 256, 4, 262144, 1048576, 34, 36, 2), 128);
    ck_assert_int_eq(stenc_even_tile_rows(256, 239), 128);
    /* one plane: Good's 3D value on 2048 x 2048 x 1 (field rows 2 (ty + 1),
     * one plane) tiles as with many planes (256 KiB: 32 rows), with or
     * without a budget; a job that keeps no rows takes the plane whole */
    ck_assert_int_eq(stenc_fit_tile_rows(2048, 2048, 1, 4, 262144, 1048576, 2, 4, 1), 32);
    ck_assert_int_eq(stenc_fit_tile_rows(2048, 2048, 1, 4, 262144, 0, 2, 4, 1), 32);
    ck_assert_int_eq(stenc_fit_tile_rows(2048, 2048, 1, 4, 1048576, 1048576, 0, 0, 3), 2048);
    ck_assert_int_eq(stenc_even_tile_rows(512, 117), 103);
    ck_assert_int_eq(stenc_even_tile_rows(17, 8), 8); /* three tiles of 6 would be below 8 */
    ck_assert_int_eq(stenc_even_tile_rows(100, 100), 100);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("zmarch");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, loops_cover_the_box_once, 0, (int)NZGRID * 3);
    tcase_add_test(tc, chunks_fill_the_launch);
    tcase_add_test(tc, ring_tiles_fit_the_budget);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
