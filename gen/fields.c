/* stenc-gen: the point fields of a reduction's value or gradient gather,
 * an update kernel's statement, an update adjoint's gather, or the rolling
 * rows' newest row (a plan: data only; fields_print.c and gen/emit.c
 * roll_fields print from it).
 *
 * A point field is a costly subexpression of one tap, such as
 * sqrt(x[p] + eps) in Good's roughness, that the value reads at several
 * offsets: sqrt(x[p+e_d] + eps) for every d and sqrt(x[p] + eps).  Evaluated
 * per point of the value it costs one square root per offset (four in 3D);
 * evaluated once per point of x into rows kept while the rows walk up in
 * y (2D) and, in 3D, over a tile's planes, it costs one.  The interior then
 * reads each occurrence from its row array: a tap of the pseudo-array of
 * its field and y/z offset at its x offset (perf/NOTES.md sections 43-45).
 *
 * A cell field (fields_plan_cells, an update adjoint's gather) is a costly
 * subexpression of several taps that the gather reads at two offsets or
 * more, such as the harmonic mean's cell factor EtaC_bar[c]*8/S_c^2 at the
 * eight cells c around a point: its offset is its taps' least along each
 * dimension (section 66). */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

enum { ONE_NONE = 0, ONE_TAP = 1, ONE_MANY = 2 };

typedef struct {
    const Stencil *s;
    unsigned char *state; /* by node id: 0 unseen, else 1 + ONE_* */
    Node **tap;           /* by node id: the one tap (ONE_TAP) */
    unsigned char *seen;  /* by node id: visited by the occurrence walk */
    const long *pinx;     /* an end point's reads, x indices pinned: the
                           * rows' interior [L, n - R) and least n (L, R,
                           * NMIN), or NULL */
    int cells;            /* cell fields too (fields_plan_cells) */
    int nocc;
    Node *occ[MAXTAP], *occg[MAXTAP]; /* occurrences and their fields at offset 0 */
    Index occx[MAXTAP];   /* each occurrence's x index (pinned or i + c) */
    long occo[MAXTAP][3]; /* and its offsets */
} Walk;

/* how many distinct taps n reads: none, one (*t), or more */
static int one_tap(Walk *w, Node *n, Node **t)
{
    if (w->state[n->id]) { *t = w->tap[n->id]; return w->state[n->id] - 1; }
    int r = ONE_NONE;
    Node *mine = NULL;
    if (n->kind == E_TAP) r = ONE_TAP, mine = n;
    for (int i = 0; i < n->nargs && r != ONE_MANY; ++i) {
        Node *c = NULL;
        const int k = one_tap(w, n->a[i], &c);
        if (k == ONE_MANY || (k == ONE_TAP && mine && c != mine)) r = ONE_MANY;
        else if (k == ONE_TAP) r = ONE_TAP, mine = c;
    }
    w->state[n->id] = (unsigned char)(r + 1);
    w->tap[n->id] = r == ONE_TAP ? mine : NULL;
    *t = w->tap[n->id];
    return r;
}

/* a tap relative to the point along every dimension (an end point's: x
 * may be pinned, its field read at that place of the whole row) */
static int relative(const Walk *w, const Node *t)
{
    for (int d = 0; d < w->s->dims; ++d)
        if (t->idx[d].kind != IK_VAR && !(d == 0 && w->pinx)) return 0;
    return 1;
}

/* the field an occurrence N of tap T is: N moved to offset 0 */
static Node *occ_field(Node *n, const Node *t)
{
    long back[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d) back[d] = -t->idx[d].c;
    if (t->idx[0].kind == IK_VAR) return ex_shift(n, back);
    back[0] = 0;
    return ex_shift(ex_unpin(n, 0), back);
}

/* occurrence O: N, its field G at tap T's (or, T NULL, offsets OFF) */
static void add_occurrence(Walk *w, Node *n, Node *g, const Node *t, const long *off)
{
    const int o = w->nocc++;
    w->occ[o] = n, w->occg[o] = g;
    for (int d = 0; d < 3; ++d) w->occo[o][d] = t ? (d < w->s->dims ? t->idx[d].c : 0) : off[d];
    w->occx[o] = t ? t->idx[0] : (Index){IK_VAR, off[0]};
}

/* a cell field's occurrence N (w->cells): costly, of several taps, all
 * relative; its offsets OFF (the taps' least) and its field *G there */
static int cell_occurrence(Walk *w, Node *n, long *off, Node **g)
{
    Node *taps[MAXTAP], *t = NULL;
    if (!w->cells || n->kind == E_TAP || one_tap(w, n, &t) != ONE_MANY || !ex_costly(n)) return 0;
    const int nt = ex_taps(n, -1, taps, MAXTAP);
    if (nt > MAXTAP || w->pinx) return 0;
    long back[3] = {0, 0, 0};
    for (int d = 0; d < w->s->dims; ++d)
        for (int u = 0; u < nt; ++u) {
            if (taps[u]->idx[d].kind != IK_VAR) return 0;
            if (u == 0 || taps[u]->idx[d].c < off[d]) off[d] = taps[u]->idx[d].c;
        }
    for (int d = w->s->dims; d < 3; ++d) off[d] = 0;
    for (int d = 0; d < 3; ++d) back[d] = -off[d];
    *g = ex_shift(n, back);
    return 1;
}

/* the cell fields' candidates: every cell occurrence of the roots */
static void find_cells(Walk *w, Node *n, unsigned char *seen)
{
    if (seen[n->id]) return;
    seen[n->id] = 1;
    long off[3];
    Node *g = NULL;
    if (cell_occurrence(w, n, off, &g) && w->nocc < MAXTAP) add_occurrence(w, n, g, NULL, off);
    for (int i = 0; i < n->nargs; ++i) find_cells(w, n->a[i], seen);
}

/* whether field G has occurrences at two offsets or more */
static int read_twice(const Walk *w, const Node *g)
{
    int first = -1;
    for (int o = 0; o < w->nocc; ++o) {
        if (w->occg[o] != g) continue;
        if (first < 0) first = o;
        else if (memcmp(w->occo[o], w->occo[first], sizeof w->occo[o])) return 1;
    }
    return 0;
}

/* the largest costly subexpressions of one relative tap, top down (after
 * the cell fields' occurrences, whose insides are theirs) */
static void find_occurrences(Walk *w, Node *n)
{
    if (w->seen[n->id]) return;
    w->seen[n->id] = 1;
    Node *t = NULL;
    if (n->kind != E_TAP && one_tap(w, n, &t) == ONE_TAP && relative(w, t) && ex_costly(n)) {
        if (w->nocc < MAXTAP) add_occurrence(w, n, occ_field(n, t), t, NULL);
        return;
    }
    for (int i = 0; i < n->nargs; ++i) find_occurrences(w, n->a[i]);
}

/* the cell fields' occurrences, top down: the largest cell occurrences of
 * fields read at two offsets or more (CAND holds the candidates) */
static void find_cell_tops(Walk *w, Node *n, const Walk *cand, unsigned char *seen)
{
    if (seen[n->id]) return;
    seen[n->id] = 1;
    for (int o = 0; o < cand->nocc; ++o)
        if (cand->occ[o] == n && read_twice(cand, cand->occg[o])) {
            if (w->nocc < MAXTAP) add_occurrence(w, n, cand->occg[o], NULL, cand->occo[o]);
            return;
        }
    for (int i = 0; i < n->nargs; ++i) find_cell_tops(w, n->a[i], cand, seen);
}

/* the tap an occurrence reads (its offset is the occurrence's) */
static Node *occ_tap(Walk *w, Node *n)
{
    Node *t = NULL;
    one_tap(w, n, &t);
    return t;
}

/* field f's offsets from its occurrences; 0 when it is read at one only */
static int field_extent(Walk *w, Field *f, Node *g)
{
    int first = 1, many = 0;
    for (int o = 0; o < w->nocc; ++o) {
        if (w->occg[o] != g) continue;
        for (int d = 0; d < 3; ++d) {
            const long c = w->occo[o][d];
            if (!first && (c != f->lo[d] || c != f->hi[d])) many = 1;
            if (first || c < f->lo[d]) f->lo[d] = c;
            if (first || c > f->hi[d]) f->hi[d] = c;
        }
        first = 0;
    }
    return many;
}

/* the rows of the fields found, each its y/z offset's pseudo-array; 0 when
 * they do not fit (then the value is evaluated as written) */
static int field_rows(Fields *F, int base)
{
    enum { REACH = 4 }; /* rows a field spans along y or z, most */
    F->nrow = 0;
    for (int f = 0; f < F->n; ++f) {
        Field *fd = &F->f[f];
        if (fd->hi[0] - fd->lo[0] > 8 * REACH || fd->hi[1] - fd->lo[1] >= REACH || fd->hi[2] - fd->lo[2] >= REACH) return 0;
        fd->row0 = F->nrow;
        for (long z = fd->lo[2]; z <= fd->hi[2]; ++z)
            for (long y = fd->lo[1]; y <= fd->hi[1]; ++y) {
                if (F->nrow == MAXFROW || base + F->nrow >= MAXARR) return 0;
                F->rowf[F->nrow] = f, F->rowy[F->nrow] = y, F->rowz[F->nrow] = z;
                ++F->nrow;
            }
    }
    return 1;
}

/* the row array of field f at offsets (y, z) */
static int row_of(const Fields *F, int f, long y, long z)
{
    const Field *fd = &F->f[f];
    return fd->row0 + (int)((z - fd->lo[2]) * (fd->hi[1] - fd->lo[1] + 1) + (y - fd->lo[1]));
}

/* whether field FD's rows hold the place of pinned x index X: the strips
 * of the interior [L, n - R) fill [L + lo, n - R + hi) of each row */
static int pinned_filled(const Walk *w, const Field *fd, Index x)
{
    const long L = w->pinx[0], R = w->pinx[1], nmin = w->pinx[2];
    if (x.kind == IK_CONST) return x.c >= L + fd->lo[0] && x.c < nmin - R + fd->hi[0];
    return x.c < fd->hi[0] - R && nmin + x.c >= L + fd->lo[0]; /* IK_END: n + c */
}

/* the field of occurrence O and its row array, or -1 when no field (or
 * none whose rows hold its offset) is planned for it */
static int occ_row(Walk *w, const Fields *F, int o)
{
    const Index x = w->occx[o];
    const long y = w->occo[o][1], z = w->occo[o][2];
    const int inx = x.kind != IK_VAR; /* pinned: a place of the whole row */
    for (int f = 0; f < F->n; ++f) {
        const Field *fd = &F->f[f];
        if (fd->inner || w->occg[o] != fd->g || (inx ? !pinned_filled(w, fd, x) : x.c < fd->lo[0] || x.c > fd->hi[0]) ||
            y < fd->lo[1] || y > fd->hi[1] || z < fd->lo[2] || z > fd->hi[2])
            continue;
        return row_of(F, f, y, z);
    }
    return -1;
}

/* the occurrences of N's fields, top down: the largest costly
 * subexpressions of one tap that are fields, and inside those that are
 * not, the fields they contain (Good's gradient reads 1/sqrt(x[p] + eps)
 * at the point alone: not a field, but its root is one) */
static void find_field_occurrences(Walk *w, const Fields *F, Node *n)
{
    if (w->seen[n->id]) return;
    w->seen[n->id] = 1;
    Node *t = NULL, *g = NULL;
    long off[3];
    if (w->nocc < MAXTAP && cell_occurrence(w, n, off, &g)) {
        add_occurrence(w, n, g, NULL, off);
        if (occ_row(w, F, w->nocc - 1) >= 0) return;
        --w->nocc;
    }
    if (n->kind != E_TAP && one_tap(w, n, &t) == ONE_TAP && relative(w, t) && ex_costly(n) && w->nocc < MAXTAP) {
        add_occurrence(w, n, occ_field(n, t), t, NULL);
        if (occ_row(w, F, w->nocc - 1) >= 0) return;
        --w->nocc;
    }
    for (int i = 0; i < n->nargs; ++i) find_field_occurrences(w, F, n->a[i]);
}

/* ROOT with each of its fields' occurrences replaced by its row array's tap */
static Node *substitute(Walk *w, const Fields *F, Node *root, int base)
{
    find_field_occurrences(w, F, root);
    Node *from[MAXTAP], *to[MAXTAP];
    for (int o = 0; o < w->nocc; ++o) {
        const Index idx[3] = {w->occx[o], {IK_VAR, 0}, {IK_VAR, 0}};
        from[o] = w->occ[o];
        to[o] = ex_tap(base + occ_row(w, F, o), idx);
    }
    return ex_substitute(root, from, to, w->nocc);
}

static int walk_open(Walk *w, const Stencil *s)
{
    const size_t nn = ex_count();
    memset(w, 0, sizeof *w);
    w->s = s, w->state = calloc(nn, 1), w->tap = calloc(nn, sizeof(Node *)), w->seen = calloc(nn, 1);
    return w->state && w->tap && w->seen ? 0 : -1;
}
static void walk_close(Walk *w) { free(w->state); free(w->tap); free(w->seen); }

/* the cell fields' occurrences of the roots into W (W->cells set), before
 * the point fields'; 0, or -1 out of memory */
static int plan_cells(Walk *w, Node *const *roots, int nroots)
{
    Walk cand;
    const size_t nn = ex_count(); /* the roots' nodes (the walk makes more) */
    unsigned char *seen = calloc(nn, 1);
    int rc = seen && !walk_open(&cand, w->s) ? 0 : -1;
    cand.cells = 1;
    for (int r = 0; r < nroots && rc == 0; ++r) find_cells(&cand, roots[r], seen);
    if (rc == 0) memset(seen, 0, nn);
    for (int r = 0; r < nroots && rc == 0; ++r) find_cell_tops(w, roots[r], &cand, seen);
    for (int o = 0; o < w->nocc; ++o) w->seen[w->occ[o]->id] = 1; /* the point fields' walk stays out */
    walk_close(&cand);
    free(seen);
    return rc;
}

/* an inner row of field R at offsets Y, Z from the fill's row: its
 * pseudo-array (base + nrow + its number), or -1 when too many */
static int inner_row(Fields *F, int base, int r, long y, long z)
{
    for (int u = 0; u < F->ninr; ++u)
        if (F->inrf[u] == r && F->inry[u] == y && F->inrz[u] == z) return base + F->nrow + u;
    if (F->ninr == MAXINR || base + F->nrow + F->ninr >= MAXARR) return -1;
    F->inrf[F->ninr] = r, F->inry[F->ninr] = y, F->inrz[F->ninr] = z;
    return base + F->nrow + F->ninr++;
}

/* Nesting: the costly subexpressions of one tap that cell field C
 * reads at two offsets or more (the harmonic mean's reciprocals) become a
 * point field of their own, filled before C's rows and read by C's fill
 * alone (Field.inner: no row arrays of the interior), through its rows at
 * their offsets from the fill's row (F->inrf, inry, inrz): a division a
 * point instead of one for each corner of a cell (perf/NOTES.md section
 * 66).  Nothing when that field is the gather's own too, or does not fit;
 * -1 out of memory. */
static int plan_inner(const Stencil *s, Fields *F, int c, int base)
{
    Walk w;
    if (walk_open(&w, s)) { walk_close(&w); return -1; }
    Field *C = &F->f[c];
    find_occurrences(&w, C->g);
    Node *g = NULL;
    for (int o = 0; o < w.nocc && !g; ++o)
        if (read_twice(&w, w.occg[o])) g = w.occg[o];
    int ok = g && F->n < MAXFIELD;
    for (int q = 0; q < F->n && ok; ++q) ok = F->f[q].g != g;
    Field R = {g, {0, 0, 0}, {0, 0, 0}, 0, -1, NULL, 1};
    Node *from[MAXTAP], *to[MAXTAP];
    int n = 0;
    for (int o = 0; o < w.nocc && ok; ++o) {
        if (w.occg[o] != g) continue;
        for (int d = 0; d < 3; ++d) {
            const long lo = C->lo[d] + w.occo[o][d], hi = C->hi[d] + w.occo[o][d];
            R.lo[d] = n == 0 || lo < R.lo[d] ? lo : R.lo[d];
            R.hi[d] = n == 0 || hi > R.hi[d] ? hi : R.hi[d];
        }
        R.arr = occ_tap(&w, w.occ[o])->ref;
        const int u = inner_row(F, base, F->n, w.occo[o][1], w.occo[o][2]);
        const Index at[3] = {{IK_VAR, w.occo[o][0]}, {IK_VAR, 0}, {IK_VAR, 0}};
        ok = u >= 0;
        from[n] = w.occ[o], to[n++] = ok ? ex_tap(u, at) : NULL;
    }
    ok = ok && R.hi[0] - R.lo[0] <= 32 && R.hi[1] - R.lo[1] < 4 && R.hi[2] - R.lo[2] < 4;
    if (ok) {
        C->fill = ex_substitute(C->g, from, to, n);
        F->f[F->n++] = R;
    } else F->ninr = 0;
    walk_close(&w);
    return 0;
}

static int plan_roots(const Stencil *s, Node *const *roots, int nroots, int base, int cells, Fields *F)
{
    memset(F, 0, sizeof *F);
    Walk w;
    int rc = walk_open(&w, s);
    if (rc == 0 && cells) rc = plan_cells(&w, roots, nroots);
    if (rc) { walk_close(&w); return -1; }
    for (int r = 0; r < nroots; ++r) find_occurrences(&w, roots[r]);
    for (int o = 0; o < w.nocc; ++o) {
        int known = 0;
        for (int f = 0; f < F->n; ++f) known |= F->f[f].g == w.occg[o];
        if (known || F->n == MAXFIELD) continue;
        const Node *t = occ_tap(&w, w.occ[o]);
        Field fd = {w.occg[o], {0, 0, 0}, {0, 0, 0}, 0, t ? t->ref : -1, NULL, 0}; /* -1: a cell field */
        if (field_extent(&w, &fd, fd.g)) F->f[F->n++] = fd;
    }
    if (F->n == 0 || !field_rows(F, base)) F->n = F->nrow = 0;
    walk_close(&w);
    for (int q = 0; q < F->n; ++q) /* the first cell field's inner field */
        if (F->f[q].arr < 0) {
            if (plan_inner(s, F, q, base)) return -1;
            break;
        }
    return F->n;
}

int fields_plan_roots(const Stencil *s, Node *const *roots, int nroots, int base, Fields *F)
{
    return plan_roots(s, roots, nroots, base, 0, F);
}

static Node *apply(const Stencil *s, const Fields *F, Node *root, int base, const long *pinx)
{
    if (F->n == 0) return root;
    Walk w;
    Node *r = NULL;
    if (!walk_open(&w, s)) {
        w.pinx = pinx;
        for (int f = 0; f < F->n; ++f) w.cells |= F->f[f].arr < 0;
        r = substitute(&w, F, root, base);
    }
    walk_close(&w);
    return r;
}

Node *fields_apply(const Stencil *s, const Fields *F, Node *root, int base) { return apply(s, F, root, base, NULL); }

Node *fields_apply_ends(const Stencil *s, const Fields *F, Node *root, int base, long L, long R, long nmin)
{
    const long cover[3] = {L, R, nmin};
    return apply(s, F, root, base, cover);
}

static int plan_value(const Stencil *s, Node *value, int base, int cells, Fields *F)
{
    const int n = plan_roots(s, &value, 1, base, cells, F);
    F->value = value;
    if (n > 0 && !(F->value = fields_apply(s, F, value, base))) return -1;
    return n;
}

int fields_plan(const Stencil *s, Node *value, int base, Fields *F) { return plan_value(s, value, base, 0, F); }
int fields_plan_cells(const Stencil *s, Node *value, int base, Fields *F) { return plan_value(s, value, base, 1, F); }

int fields_leader(const Fields *F, int q)
{
    for (int l = 0; l < q && F->f[q].arr >= 0; ++l)
        if (F->f[l].arr == F->f[q].arr && F->f[l].inner == F->f[q].inner && !memcmp(F->f[l].lo, F->f[q].lo, sizeof F->f[q].lo) &&
            !memcmp(F->f[l].hi, F->f[q].hi, sizeof F->f[q].hi))
            return l;
    return q;
}
