/* stenc distributed grids over MPI: the grid, the halo update and its
 * adjoint, global sums, and the packing the generated distributed
 * reductions use.  See stenc_dist.h for the model (ImplicitGlobalGrid's
 * overlapping blocks) and docs/distributed.md for its use. */
#include "stenc_mpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stenc_mpi_impl.h"

int stenc_grid_fail(stenc_grid *g, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, sizeof g->err, fmt, ap);
    va_end(ap);
    return status;
}
#define fail stenc_grid_fail

const char *stenc_grid_error(const stenc_grid *g) { return g ? g->err : "no grid"; }

MPI_Comm stenc_grid_comm(const stenc_grid *g) { return g ? g->comm : MPI_COMM_NULL; }

int stenc_grid_get_info(const stenc_grid *g, stenc_grid_info *info)
{
    if (!g || !info) return STENC_ERR_NULL;
    *info = g->info;
    return STENC_OK;
}

void stenc_dist_local(const stenc_grid *g, size_t n[3])
{
    for (int d = 0; d < 3; ++d) n[d] = g->info.nlocal[d];
}

/* the global layout of one dimension: sizes, offset, owned range */
static void layout(stenc_grid_info *I, int d)
{
    size_t n = I->nlocal[d], h = (size_t)I->ghost, step = n - 2 * h;
    int P = I->pdims[d], c = I->coords[d];
    I->nglobal[d] = I->periodic[d] ? (size_t)P * step : (size_t)P * step + 2 * h;
    I->offset[d] = (long long)c * (long long)step - (I->periodic[d] ? (long long)h : 0);
    I->own_lo[d] = I->neighbour[d][0] >= 0 ? h : 0;
    I->own_hi[d] = I->neighbour[d][1] >= 0 ? n - h : n;
}

static int create_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* this process's arguments on their own: STENC_OK or why not (err) */
static int check_args(int size, int dims, const size_t *nlocal, int ghost, const int *pd, char *err, size_t errlen)
{
    if (!nlocal) return create_fail(err, errlen, STENC_ERR_NULL, "stenc_grid_create: NULL argument");
    if (dims != 2 && dims != 3) return create_fail(err, errlen, STENC_ERR_ARG, "dims must be 2 or 3");
    if (ghost < 1 || ghost > 64) return create_fail(err, errlen, STENC_ERR_ARG, "ghost width must be 1 to 64");
    long long fixed = 1;
    for (int d = 0; d < dims; ++d) {
        if (pd[d] < 0) return create_fail(err, errlen, STENC_ERR_ARG, "a process-grid entry is negative");
        if (pd[d] > 0) fixed *= pd[d];
        if (nlocal[d] < 2 * (size_t)ghost + 1 || nlocal[d] > ((size_t)1 << 40))
            return create_fail(err, errlen, STENC_ERR_ARG, "nlocal[%d] = %zu is outside 2*ghost+1 = %d .. 2^40", d,
                               nlocal[d], 2 * ghost + 1);
    }
    if (fixed > size || size % fixed)
        return create_fail(err, errlen, STENC_ERR_ARG, "the process grid's fixed entries (product %lld) do not divide "
                           "the %d processes", fixed, size);
    return STENC_OK;
}

/* the same arguments on every process, compared across comm (collective),
 * so that a mistake on one process is an error on all and no process is
 * left waiting in a collective call */
static int agree_args(MPI_Comm comm, int rc, int dims, const size_t *nlocal, int ghost, const int *pd, const int *per,
                      char *err, size_t errlen)
{
    enum { NV = 12 };
    static const char *what[NV] = {"status", "dims", "ghost", "nlocal[0]", "nlocal[1]", "nlocal[2]", "periodic[0]",
                                   "periodic[1]", "periodic[2]", "pdims[0]", "pdims[1]", "pdims[2]"};
    long long v[2 * NV], r[2 * NV];
    v[0] = rc; v[1] = dims; v[2] = ghost;
    for (int d = 0; d < 3; ++d) {
        v[3 + d] = nlocal && d < dims ? (long long)nlocal[d] : 0;
        v[6 + d] = per[d];
        v[9 + d] = pd[d];
    }
    for (int q = 0; q < NV; ++q) v[NV + q] = -v[q];
    if (MPI_Allreduce(v, r, 2 * NV, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS)
        return create_fail(err, errlen, STENC_ERR_MPI, "MPI_Allreduce failed");
    if (rc != STENC_OK) return rc;
    if (r[0] != STENC_OK)
        return create_fail(err, errlen, (int)r[0], "stenc_grid_create failed on another process: %s",
                           stenc_strerror((int)r[0]));
    for (int q = 1; q < NV; ++q)
        if (r[q] != -r[NV + q])
            return create_fail(err, errlen, STENC_ERR_ARG, "%s differs between processes (%lld to %lld): every "
                               "process must pass the same grid arguments", what[q], -r[NV + q], r[q]);
    return STENC_OK;
}

int stenc_grid_create(MPI_Comm comm, int dims, const size_t nlocal[3], int ghost, const int periodic[3],
                      const int pdims[3], stenc_grid **out, char *err, size_t errlen)
{
    if (!out) return create_fail(err, errlen, STENC_ERR_NULL, "stenc_grid_create: NULL argument");
    *out = NULL;
    int size = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return create_fail(err, errlen, STENC_ERR_MPI, "stenc_grid_create: not a valid communicator");
    int pd[3] = {0, 0, 0}, per[3] = {0, 0, 0};
    for (int d = 0; d < dims && d < 3; ++d) {
        pd[d] = pdims ? pdims[d] : 0;
        per[d] = periodic ? (periodic[d] != 0) : 0;
    }
    int rc = check_args(size, dims, nlocal, ghost, pd, err, errlen);
    rc = agree_args(comm, rc, dims, nlocal, ghost, pd, per, err, errlen);
    if (rc != STENC_OK) return rc;
    if (MPI_Dims_create(size, dims, pd) != MPI_SUCCESS)
        return create_fail(err, errlen, STENC_ERR_ARG, "the process grid does not divide the number of processes");
    stenc_grid *g = calloc(1, sizeof *g);
    if (!g) return create_fail(err, errlen, STENC_ERR_ALLOC, "out of memory");
    if (MPI_Cart_create(comm, dims, pd, per, 0, &g->comm) != MPI_SUCCESS) {
        free(g);
        return create_fail(err, errlen, STENC_ERR_MPI, "MPI_Cart_create failed");
    }
    stenc_grid_info *I = &g->info;
    I->dims = dims;
    I->ghost = ghost;
    MPI_Comm_rank(g->comm, &I->rank);
    I->nprocs = size;
    MPI_Cart_coords(g->comm, I->rank, dims, I->coords);
    for (int d = 0; d < 3; ++d) {
        I->pdims[d] = d < dims ? pd[d] : 1;
        I->periodic[d] = d < dims ? per[d] : 0;
        I->nlocal[d] = d < dims ? nlocal[d] : 1;
        I->neighbour[d][0] = I->neighbour[d][1] = -1;
        if (d < dims) {
            int lo, hi;
            MPI_Cart_shift(g->comm, d, 1, &lo, &hi);
            I->neighbour[d][0] = lo == MPI_PROC_NULL ? -1 : lo;
            I->neighbour[d][1] = hi == MPI_PROC_NULL ? -1 : hi;
            layout(I, d);
        } else {
            I->nglobal[d] = 1;
            I->own_hi[d] = 1;
        }
    }
    *out = g;
    return STENC_OK;
}

int stenc_grid_free(stenc_grid *g)
{
    if (!g) return STENC_OK;
    int rc = MPI_Comm_free(&g->comm) == MPI_SUCCESS ? STENC_OK : STENC_ERR_MPI;
    free(g);
    return rc;
}

/* ---- halo ---------------------------------------------------------------- */

/* row elements of es bytes: short rows (the x slabs: ghost-width pieces of
 * every row) element by element with fixed-size copies, which compile to
 * moves instead of a library call per piece (about 5% of an x exchange;
 * the rest of its cost against a z exchange of the same bytes is the one
 * cache line each row's piece costs, perf/NOTES.md section 9) */
static void copy_row(char *dst, const char *src, size_t row, size_t es)
{
    if (row * es >= 64) memcpy(dst, src, row * es);
    else if (es == 8)
        for (size_t i = 0; i < row; ++i) memcpy(dst + 8 * i, src + 8 * i, 8);
    else
        for (size_t i = 0; i < row; ++i) memcpy(dst + 4 * i, src + 4 * i, 4);
}

/* A slab of a field: the box [lo, lo+len) along dimension d, everything
 * along the others.  Copies between the field and a packed buffer (dir 0:
 * field -> buffer, 1: buffer -> field, 2: buffer added into field, 3: field
 * set to zero); returns the bytes the slab takes. */
static size_t slab(const stenc_grid_info *I, const stenc_field *f, int d, size_t lo, size_t len, char *buf, int dir)
{
    size_t m[3];
    for (int e = 0; e < 3; ++e) m[e] = I->nlocal[e] + (size_t)(e < I->dims ? f->stagger[e] : 0);
    size_t a[3] = {0, 0, 0}, b[3] = {m[0], m[1], m[2]};
    a[d] = lo;
    b[d] = lo + len;
    const size_t es = (size_t)f->elem;
    char *data = f->data;
    size_t off = 0;
    for (size_t k = a[2]; k < b[2]; ++k)
        for (size_t j = a[1]; j < b[1]; ++j) {
            size_t row = b[0] - a[0];
            char *p = data + es * (a[0] + m[0] * (j + m[1] * k));
            char *q = buf ? buf + off : NULL;
            if (dir == 3) memset(p, 0, row * es);
            else if (!q) { /* only counting bytes */ }
            else if (dir == 0) copy_row(q, p, row, es);
            else if (dir == 1) copy_row(p, q, row, es);
            else if (es == 8)
                for (size_t i = 0; i < row; ++i) { double x, y; memcpy(&x, p + 8 * i, 8); memcpy(&y, q + 8 * i, 8); x += y; memcpy(p + 8 * i, &x, 8); }
            else
                for (size_t i = 0; i < row; ++i) { float x, y; memcpy(&x, p + 4 * i, 4); memcpy(&y, q + 4 * i, 4); x += y; memcpy(p + 4 * i, &x, 4); }
            off += row * es;
        }
    return off;
}

/* The slabs along d.  A field of extent m = nlocal + s overlaps its
 * neighbour's copy by ol = 2*ghost + s points.  Of those, each side's outer
 * w points are ghosts (w = ghost for s >= 0; w = floor(ol/2) for s < 0,
 * where the overlap is narrower than two ghost layers) and the ol - 2w in
 * the middle (the face a staggered field shares) are computed by both.
 * What a process sends to its lower (side 0) / upper (side 1) neighbour in
 * the forward update, and where its ghosts are: */
size_t stenc_halo_width(const stenc_grid_info *I, const stenc_field *f, int d)
{
    const int h = I->ghost, s = f->stagger[d];
    return (size_t)(s >= 0 ? h : (2 * h + s) / 2);
}
size_t stenc_halo_send_lo(const stenc_grid_info *I, const stenc_field *f, int d)
{
    return (size_t)(2 * I->ghost + f->stagger[d]) - stenc_halo_width(I, f, d); /* [ol - w, ol) */
}
size_t stenc_halo_send_hi(const stenc_grid_info *I, const stenc_field *f, int d)
{
    (void)f;
    return I->nlocal[d] - 2 * (size_t)I->ghost; /* [n - 2h, n - 2h + w): the neighbour's first point is there */
}
size_t stenc_halo_ghost_at(const stenc_grid_info *I, const stenc_field *f, int d, int side)
{
    return side == 0 ? 0 : I->nlocal[d] + (size_t)f->stagger[d] - stenc_halo_width(I, f, d);
}

int stenc_halo_check_fields(stenc_grid *g, int nf, const stenc_field *f)
{
    if (nf < 0 || (nf > 0 && !f)) return fail(g, STENC_ERR_NULL, "no fields");
    for (int i = 0; i < nf; ++i) {
        if (!f[i].data) return fail(g, STENC_ERR_NULL, "field %d has no data", i);
        if (f[i].elem != 4 && f[i].elem != 8) return fail(g, STENC_ERR_ARG, "field %d: element size must be 4 or 8", i);
        for (int d = 0; d < g->info.dims; ++d)
            if (f[i].stagger[d] < -2 * g->info.ghost || f[i].stagger[d] > 2 * g->info.ghost)
                return fail(g, STENC_ERR_ARG,
                            "field %d: stagger %d along %c is out of range: extents nlocal-2*ghost .. nlocal+2*ghost "
                            "(ghost width %d; a field smaller than that leaves a gap between blocks: it needs a ghost "
                            "width of at least %d)", i, f[i].stagger[d], "xyz"[d], g->info.ghost,
                            (-f[i].stagger[d] + 1) / 2);
    }
    return STENC_OK;
}

/* One dimension of H (adjoint = 0) or of H^T (adjoint = 1) in two phases:
 * start packs the slabs of all fields for each neighbour into one buffer and
 * posts the messages; finish waits and unpacks.  Between the two a caller
 * may compute (hidden communication). */
struct stenc_halo_req {
    int nf, d, adjoint, nreq;
    const stenc_field *f;
    char *sbuf[2], *rbuf[2];
    MPI_Request req[4];
};

static int exchange_start(stenc_grid *g, int nf, const stenc_field *f, int d, int adjoint, stenc_halo_req *r)
{
    const stenc_grid_info *I = &g->info;
    memset(r, 0, sizeof *r);
    r->nf = nf; r->d = d; r->adjoint = adjoint; r->f = f;
    size_t bytes = 0;
    for (int i = 0; i < nf; ++i) bytes += slab(I, &f[i], d, 0, stenc_halo_width(I, &f[i], d), NULL, -1);
    int rc = STENC_OK;
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        if (I->neighbour[d][s] < 0) continue;
        r->sbuf[s] = malloc(bytes ? bytes : 1);
        r->rbuf[s] = malloc(bytes ? bytes : 1);
        if (!r->sbuf[s] || !r->rbuf[s]) rc = fail(g, STENC_ERR_ALLOC, "halo buffers: out of memory");
    }
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        int nb = I->neighbour[d][s];
        if (nb < 0) continue;
        size_t off = 0;
        for (int i = 0; i < nf; ++i) {
            size_t lo = adjoint ? stenc_halo_ghost_at(I, &f[i], d, s)
                                : (s == 0 ? stenc_halo_send_lo(I, &f[i], d) : stenc_halo_send_hi(I, &f[i], d));
            off += slab(I, &f[i], d, lo, stenc_halo_width(I, &f[i], d), r->sbuf[s] + off, 0);
        }
        /* tag: the direction of travel, so that two messages between the
         * same pair (two processes, periodic) are told apart */
        int tag_send = 2 * d + s, tag_recv = 2 * d + (1 - s);
        if (MPI_Irecv(r->rbuf[s], (int)bytes, MPI_BYTE, nb, tag_recv, g->comm, &r->req[r->nreq++]) != MPI_SUCCESS ||
            MPI_Isend(r->sbuf[s], (int)bytes, MPI_BYTE, nb, tag_send, g->comm, &r->req[r->nreq++]) != MPI_SUCCESS)
            rc = fail(g, STENC_ERR_MPI, "MPI_Isend/MPI_Irecv failed");
    }
    return rc;
}

static int exchange_finish(stenc_grid *g, stenc_halo_req *r, int rc)
{
    const stenc_grid_info *I = &g->info;
    const int d = r->d, nf = r->nf, adjoint = r->adjoint;
    const stenc_field *f = r->f;
    if (r->nreq && MPI_Waitall(r->nreq, r->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && rc == STENC_OK)
        rc = fail(g, STENC_ERR_MPI, "MPI_Waitall failed");
    if (rc == STENC_OK && adjoint) /* the ghosts were sent: they become 0 */
        for (int s = 0; s < 2; ++s)
            if (I->neighbour[d][s] >= 0)
                for (int i = 0; i < nf; ++i)
                    slab(I, &f[i], d, stenc_halo_ghost_at(I, &f[i], d, s), stenc_halo_width(I, &f[i], d), NULL, 3);
    for (int s = 0; s < 2 && rc == STENC_OK; ++s) {
        if (I->neighbour[d][s] < 0) continue;
        size_t off = 0;
        for (int i = 0; i < nf; ++i) {
            size_t lo = adjoint ? (s == 0 ? stenc_halo_send_lo(I, &f[i], d) : stenc_halo_send_hi(I, &f[i], d))
                                : stenc_halo_ghost_at(I, &f[i], d, s);
            off += slab(I, &f[i], d, lo, stenc_halo_width(I, &f[i], d), r->rbuf[s] + off, adjoint ? 2 : 1);
        }
    }
    for (int s = 0; s < 2; ++s) { free(r->sbuf[s]); free(r->rbuf[s]); }
    return rc;
}

static int exchange_dim(stenc_grid *g, int nf, const stenc_field *f, int d, int adjoint)
{
    stenc_halo_req r;
    return exchange_finish(g, &r, exchange_start(g, nf, f, d, adjoint, &r));
}

/* collective agreement on a status: the worst of all processes */
int stenc_grid_agree(stenc_grid *g, int rc)
{
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, g->comm) != MPI_SUCCESS) return STENC_ERR_MPI;
    if (worst != rc && !g->err[0]) snprintf(g->err, sizeof g->err, "failed on another process: %s", stenc_strerror(worst));
    return worst;
}

int stenc_halo_update(stenc_grid *g, int nfields, const stenc_field *f)
{
    if (!g) return STENC_ERR_NULL;
    g->err[0] = 0;
    int rc = stenc_grid_agree(g, stenc_halo_check_fields(g, nfields, f));
    for (int d = 0; d < g->info.dims && rc == STENC_OK; ++d) rc = exchange_dim(g, nfields, f, d, 0);
    return rc;
}

int stenc_halo_adjoint(stenc_grid *g, int nfields, const stenc_field *f)
{
    if (!g) return STENC_ERR_NULL;
    g->err[0] = 0;
    int rc = stenc_grid_agree(g, stenc_halo_check_fields(g, nfields, f));
    for (int d = g->info.dims - 1; d >= 0 && rc == STENC_OK; --d) rc = exchange_dim(g, nfields, f, d, 1);
    return rc;
}

int stenc_grid_sum(stenc_grid *g, int status, double local, double *global)
{
    if (!g || !global) return STENC_ERR_NULL;
    int rc = stenc_grid_agree(g, status);
    if (rc != STENC_OK) return rc;
    double *all = malloc(sizeof(double) * (size_t)g->info.nprocs);
    int ok = all != NULL;
    int allok = 0;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, g->comm);
    if (!allok) { free(all); return fail(g, STENC_ERR_ALLOC, "global sum: out of memory"); }
    if (MPI_Allgather(&local, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, g->comm) != MPI_SUCCESS) {
        free(all);
        return fail(g, STENC_ERR_MPI, "MPI_Allgather failed");
    }
    double s = 0;
    for (int r = 0; r < g->info.nprocs; ++r) s += all[r]; /* rank order: reproducible */
    free(all);
    *global = s;
    return STENC_OK;
}

/* ---- distributed reductions --------------------------------------------- */

int stenc_dist_check(stenc_grid *g, int dims, int need, const char *what)
{
    if (!g) return STENC_ERR_NULL;
    g->err[0] = 0;
    if (g->info.dims != dims)
        return fail(g, STENC_ERR_ARG, "%s is a %dD kernel but the grid is %dD", what, dims, g->info.dims);
    if (g->info.ghost < need)
        return fail(g, STENC_ERR_GHOST, "%s needs a ghost width of at least %d; the grid has %d", what, need,
                    g->info.ghost);
    return STENC_OK;
}

/* the box along d: [a, b) in local indices */
static int box_dim(stenc_grid *g, int mode, int grad, int d, int omin, int omax, ptrdiff_t *a, ptrdiff_t *b)
{
    const stenc_grid_info *I = &g->info;
    const ptrdiff_t n = (ptrdiff_t)I->nlocal[d], lo = (ptrdiff_t)I->own_lo[d], hi = (ptrdiff_t)I->own_hi[d];
    const ptrdiff_t reach = (ptrdiff_t)omax - omin;
    /* a side facing a neighbour reads its ghosts; a global side applies the mode */
    if (I->neighbour[d][0] >= 0) *a = grad ? lo - reach : lo + omin;
    else if (mode == STENC_NEUMANN) *a = omin;
    else if (mode == STENC_VALID) *a = 0;
    else return fail(g, STENC_ERR_MODE, "periodic reductions need a grid that is periodic along every dimension");
    if (I->neighbour[d][1] >= 0) *b = grad ? hi + reach : hi + omax;
    else if (mode == STENC_NEUMANN) *b = n + omax;
    else *b = n;
    if ((I->neighbour[d][0] >= 0 && *a < 0) || (I->neighbour[d][1] >= 0 && *b > n))
        return fail(g, STENC_ERR_GHOST, "this reduction's %s reaches %td points past the owned block along %c; the "
                    "ghost width is %d", grad ? "gradient" : "value", grad ? reach : (omax > -omin ? omax : -omin),
                    "xyz"[d], I->ghost);
    if (*b <= *a) *b = *a;
    return STENC_OK;
}

static ptrdiff_t clampi(ptrdiff_t v, ptrdiff_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

int stenc_dist_alloc(size_t count, size_t elem, int n, void **out)
{
    for (int i = 0; i < n; ++i) out[i] = NULL;
    for (int i = 0; i < n; ++i)
        if (!(out[i] = calloc(count ? count : 1, elem))) { stenc_dist_release(n, out); return STENC_ERR_ALLOC; }
    return STENC_OK;
}

void stenc_dist_release(int n, void **buf)
{
    for (int i = 0; i < n; ++i) { free(buf[i]); buf[i] = NULL; }
}

int stenc_dist_pack(stenc_grid *g, int mode, int grad, const int omin[3], const int omax[3], size_t elem, int n,
                    const void *const *in, void **out, stenc_dist_box *box)
{
    if (!g || !box || !omin || !omax || (n > 0 && (!in || !out))) return STENC_ERR_NULL;
    for (int i = 0; i < n; ++i) out[i] = NULL;
    if (mode != STENC_VALID && mode != STENC_NEUMANN && mode != STENC_PERIODIC) return STENC_ERR_MODE;
    const stenc_grid_info *I = &g->info;
    box->dims = I->dims;
    box->count = 1;
    for (int d = 0; d < 3; ++d) {
        ptrdiff_t a = 0, b = 1;
        if (d < I->dims) {
            int rc = box_dim(g, mode, grad, d, omin[d], omax[d], &a, &b);
            if (rc != STENC_OK) return rc;
        }
        box->lo[d] = a;
        box->m[d] = (size_t)(b - a);
        box->count *= box->m[d];
    }
    for (int i = 0; i < n; ++i)
        if (!in[i]) return STENC_ERR_NULL;
    int rc = stenc_dist_alloc(box->count, elem, n, out);
    if (rc != STENC_OK) return fail(g, rc, "reduction box: out of memory");
    const ptrdiff_t nx = (ptrdiff_t)I->nlocal[0], ny = (ptrdiff_t)I->nlocal[1], nz = (ptrdiff_t)I->nlocal[2];
    for (int i = 0; i < n; ++i) {
        const char *src = in[i];
        char *dst = out[i];
        size_t q = 0;
        for (size_t k = 0; k < box->m[2]; ++k)
            for (size_t j = 0; j < box->m[1]; ++j) {
                ptrdiff_t sk = clampi(box->lo[2] + (ptrdiff_t)k, nz), sj = clampi(box->lo[1] + (ptrdiff_t)j, ny);
                for (size_t ii = 0; ii < box->m[0]; ++ii, ++q) {
                    ptrdiff_t si = clampi(box->lo[0] + (ptrdiff_t)ii, nx);
                    memcpy(dst + q * elem, src + elem * (size_t)(si + nx * (sj + ny * sk)), elem);
                }
            }
    }
    return STENC_OK;
}

/* accumulate the box gradient onto the owned points (clamped copies fold
 * back onto the edge), then G = beta*G + alpha*acc there */
#define UNPACK_GRAD(T)                                                                                                \
    {                                                                                                                 \
        if (!g || !b || !tg || !G) return STENC_ERR_NULL;                                                             \
        const stenc_grid_info *I = &g->info;                                                                          \
        const ptrdiff_t nx = (ptrdiff_t)I->nlocal[0], ny = (ptrdiff_t)I->nlocal[1], nz = (ptrdiff_t)I->nlocal[2];     \
        const size_t N = (size_t)nx * (size_t)ny * (size_t)nz;                                                        \
        T *acc = calloc(N, sizeof *acc);                                                                              \
        if (!acc) return fail(g, STENC_ERR_ALLOC, "gradient: out of memory");                                       \
        size_t q = 0;                                                                                                 \
        for (size_t k = 0; k < b->m[2]; ++k)                                                                          \
            for (size_t j = 0; j < b->m[1]; ++j) {                                                                    \
                ptrdiff_t sk = clampi(b->lo[2] + (ptrdiff_t)k, nz), sj = clampi(b->lo[1] + (ptrdiff_t)j, ny);         \
                for (size_t ii = 0; ii < b->m[0]; ++ii, ++q) {                                                        \
                    ptrdiff_t si = clampi(b->lo[0] + (ptrdiff_t)ii, nx);                                              \
                    acc[si + nx * (sj + ny * sk)] += tg[q];                                                           \
                }                                                                                                     \
            }                                                                                                         \
        for (size_t k = I->own_lo[2]; k < I->own_hi[2]; ++k)                                                          \
            for (size_t j = I->own_lo[1]; j < I->own_hi[1]; ++j)                                                      \
                for (size_t i = I->own_lo[0]; i < I->own_hi[0]; ++i) {                                                \
                    size_t p = i + (size_t)nx * (j + (size_t)ny * k);                                                 \
                    G[p] = beta == 0 ? alpha * acc[p] : beta * G[p] + alpha * acc[p];                                 \
                }                                                                                                     \
        free(acc);                                                                                                    \
        return STENC_OK;                                                                                              \
    }

int stenc_dist_unpack_grad_f32(stenc_grid *g, const stenc_dist_box *b, const float *tg, float alpha, float beta, float *G)
    UNPACK_GRAD(float)
int stenc_dist_unpack_grad_f64(stenc_grid *g, const stenc_dist_box *b, const double *tg, double alpha, double beta,
                               double *G)
    UNPACK_GRAD(double)

/* ---- hidden communication ------------------------------------------------ */

int stenc_dist_hide_plan(stenc_grid *g, int c, int hi, int smax, stenc_dist_hide *p)
{
    if (!g || !p) return STENC_ERR_NULL;
    const stenc_grid_info *I = &g->info;
    const int d = I->dims - 1;
    const ptrdiff_t n = (ptrdiff_t)I->nlocal[d], h = I->ghost;
    /* the planes the kernel writes, the slabs the exchange sends */
    const ptrdiff_t wa = c, wb = n + hi + c, lo_end = 2 * h + smax, up_start = n - 2 * h;
    p->dim = d;
    p->ok = 0;
    if (I->pdims[d] < 2 && !I->periodic[d]) return STENC_OK; /* nothing to hide along d */
    const ptrdiff_t A[3] = {wa, up_start, lo_end}, B[3] = {lo_end, wb, up_start}; /* lower, upper, interior */
    for (int q = 0; q < 3; ++q) {
        ptrdiff_t a = A[q] > wa ? A[q] : wa, b = B[q] < wb ? B[q] : wb;
        if (b <= a) return STENC_OK;
        p->w0[q] = a - c;
        p->nw[q] = (size_t)(b - a - hi);
        if (p->w0[q] < 0 || p->w0[q] + (ptrdiff_t)p->nw[q] > n) return STENC_OK;
    }
    if (lo_end >= up_start) return STENC_OK; /* a block too thin to have an interior */
    p->ok = 1;
    return STENC_OK;
}

int stenc_dist_hide_start(stenc_grid *g, int nfields, const stenc_field *f, stenc_dist_hide *p)
{
    p->req = malloc(sizeof(stenc_halo_req));
    int rc = p->req ? exchange_start(g, nfields, f, p->dim, 0, p->req) : STENC_ERR_ALLOC;
    return stenc_grid_agree(g, rc);
}

int stenc_dist_hide_finish(stenc_grid *g, int nfields, const stenc_field *f, stenc_dist_hide *p, int status)
{
    int rc = p->req ? exchange_finish(g, p->req, status) : status;
    free(p->req);
    p->req = NULL;
    rc = stenc_grid_agree(g, rc);
    for (int d = 0; d < g->info.dims && rc == STENC_OK; ++d)
        if (d != p->dim) rc = exchange_dim(g, nfields, f, d, 0);
    return rc;
}
