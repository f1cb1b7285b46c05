/* stenc-gen: the point fields of a reduction's value, an update kernel's
 * statement or an update adjoint's gather (a plan: data only;
 * fields_print.c prints from it).
 *
 * A point field is a costly subexpression of one tap, such as
 * sqrt(x[p] + eps) in Good's roughness, that the value reads at several
 * offsets: sqrt(x[p+e_d] + eps) for every d and sqrt(x[p] + eps).  Evaluated
 * per point of the value it costs one square root per offset (four in 3D);
 * evaluated once per point of x into a strip of a row and kept while the
 * rows of a run walk up in y, it costs one per row of offsets along z (two
 * in 3D, one in 2D).  The value interior then reads each occurrence from
 * its row array: a tap of the pseudo-array of its field and y/z offset at
 * its x offset (perf/NOTES.md sections 43-44). */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

enum { ONE_NONE = 0, ONE_TAP = 1, ONE_MANY = 2 };

typedef struct {
    const Stencil *s;
    unsigned char *state; /* by node id: 0 unseen, else 1 + ONE_* */
    Node **tap;           /* by node id: the one tap (ONE_TAP) */
    unsigned char *seen;  /* by node id: visited by the occurrence walk */
    int nocc;
    Node *occ[MAXTAP], *occg[MAXTAP]; /* occurrences and their fields at offset 0 */
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

/* a tap relative to the point along every dimension */
static int relative(const Walk *w, const Node *t)
{
    for (int d = 0; d < w->s->dims; ++d)
        if (t->idx[d].kind != IK_VAR) return 0;
    return 1;
}

/* the largest costly subexpressions of one relative tap, top down */
static void find_occurrences(Walk *w, Node *n)
{
    if (w->seen[n->id]) return;
    w->seen[n->id] = 1;
    Node *t = NULL;
    if (n->kind != E_TAP && one_tap(w, n, &t) == ONE_TAP && relative(w, t) && ex_costly(n)) {
        if (w->nocc < MAXTAP) {
            long back[3] = {0, 0, 0};
            for (int d = 0; d < 3; ++d) back[d] = -t->idx[d].c;
            w->occ[w->nocc] = n;
            w->occg[w->nocc] = ex_shift(n, back);
            ++w->nocc;
        }
        return;
    }
    for (int i = 0; i < n->nargs; ++i) find_occurrences(w, n->a[i]);
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
        const Node *t = occ_tap(w, w->occ[o]);
        for (int d = 0; d < 3; ++d) {
            const long c = d < w->s->dims ? t->idx[d].c : 0;
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

/* the value with each occurrence replaced by its row array's tap */
static Node *substitute(Walk *w, Fields *F, Node *value, int base)
{
    Node *from[MAXTAP], *to[MAXTAP];
    int n = 0;
    for (int o = 0; o < w->nocc; ++o)
        for (int f = 0; f < F->n; ++f) {
            if (w->occg[o] != F->f[f].g) continue;
            const Node *t = occ_tap(w, w->occ[o]);
            const long y = w->s->dims > 1 ? t->idx[1].c : 0, z = w->s->dims > 2 ? t->idx[2].c : 0;
            const Index idx[3] = {{IK_VAR, t->idx[0].c}, {IK_VAR, 0}, {IK_VAR, 0}};
            from[n] = w->occ[o];
            to[n] = ex_tap(base + row_of(F, f, y, z), idx);
            ++n;
        }
    return ex_substitute(value, from, to, n);
}

int fields_plan(const Stencil *s, Node *value, int base, Fields *F)
{
    memset(F, 0, sizeof *F);
    F->value = value;
    const size_t nn = ex_count();
    Walk w = {s, calloc(nn, 1), calloc(nn, sizeof(Node *)), calloc(nn, 1), 0, {0}, {0}};
    if (!w.state || !w.tap || !w.seen) { free(w.state); free(w.tap); free(w.seen); return -1; }
    find_occurrences(&w, value);
    for (int o = 0; o < w.nocc; ++o) {
        int known = 0;
        for (int f = 0; f < F->n; ++f) known |= F->f[f].g == w.occg[o];
        if (known || F->n == MAXFIELD) continue;
        Field fd = {w.occg[o], {0, 0, 0}, {0, 0, 0}, 0, occ_tap(&w, w.occ[o])->ref};
        if (field_extent(&w, &fd, fd.g)) F->f[F->n++] = fd;
    }
    if (F->n > 0 && field_rows(F, base)) F->value = substitute(&w, F, value, base);
    else F->n = F->nrow = 0;
    free(w.state); free(w.tap); free(w.seen);
    return F->n;
}
