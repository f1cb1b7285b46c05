/* stenc-gen: semantic checks.  Every read is proven in bounds for the
 * declared extents, written arrays are checked for races, and each
 * statement's written box is derived (ParallelStencil semantics: an index
 * i+a on the left-hand side writes a..E-1-a along that dimension). */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

const char *dimvar(int d) { static const char *v[] = {"i", "j", "k"}; return v[d]; }
const char *dimn(int d) { static const char *v[] = {"nx", "ny", "nz"}; return v[d]; }
static const char *axis(int d) { static const char *v[] = {"x", "y", "z"}; return v[d]; }

static void fmt_index(char *buf, size_t n, int d, Index ix)
{
    if (ix.kind == IK_VAR) {
        if (ix.c) snprintf(buf, n, "%s%+ld", dimvar(d), ix.c);
        else snprintf(buf, n, "%s", dimvar(d));
    } else if (ix.kind == IK_CONST) snprintf(buf, n, "%ld", ix.c);
    else if (ix.c) snprintf(buf, n, "%s%+ld", dimn(d), ix.c);
    else snprintf(buf, n, "%s", dimn(d));
}

static void fmt_tap(char *buf, size_t n, const Stencil *s, int arr, const Index *idx)
{
    size_t used = (size_t)snprintf(buf, n, "%s[", s->arr[arr].name);
    for (int d = 0; d < s->dims && used < n; ++d) {
        char ib[48];
        fmt_index(ib, sizeof ib, d, idx[d]);
        used += (size_t)snprintf(buf + used, n - used, "%s%s", d ? "," : "", ib);
    }
    if (used < n) snprintf(buf + used, n - used, "]");
}

static void fmt_extent(char *buf, size_t n, int d, long e)
{
    if (e) snprintf(buf, n, "%s%+ld", dimn(d), e);
    else snprintf(buf, n, "%s", dimn(d));
}

/* bounds of a constant / end-relative index: 0 <= v <= n+e-1 */
static int check_fixed(const Stencil *s, int line, const char *what, int arr, int d, Index ix)
{
    const Array *A = &s->arr[arr];
    if (ix.kind == IK_CONST && ix.c < 0)
        return gen_error(s->file, line, "%s: index %ld along %s is negative", what, ix.c, axis(d));
    if (ix.kind == IK_END && ix.c > A->ext[d] - 1) {
        char eb[48], ib[48];
        fmt_extent(eb, sizeof eb, d, A->ext[d]);
        fmt_extent(ib, sizeof ib, d, ix.c);
        return gen_error(s->file, line, "%s is out of bounds: along %s it reaches index %s but %s has extent %s",
                         what, axis(d), ib, A->name, eb);
    }
    return 0;
}

/* 1 if fixed indices a and b can never name the same point along d; a
 * const/end pair needs n_d > c_const - c_end, recorded in the kernel. */
static int fixed_apart(Kernel *k, int d, Index a, Index b)
{
    if (a.kind == IK_VAR || b.kind == IK_VAR) return 0;
    if (a.kind == b.kind) return a.c != b.c;
    long cc = a.kind == IK_CONST ? a.c : b.c, ce = a.kind == IK_END ? a.c : b.c;
    if (cc - ce + 1 > k->kmin[d]) k->kmin[d] = cc - ce + 1;
    return 1;
}

/* Do two accesses of one array in a kernel stay apart (some dimension where
 * both use fixed, different indices)? */
static int accesses_apart(Kernel *k, int dims, const Index *a, const Index *b)
{
    for (int d = 0; d < dims; ++d)
        if (fixed_apart(k, d, a[d], b[d])) return 1;
    return 0;
}

static int check_stmt(Stencil *s, Kernel *k, int si)
{
    Stmt *st = &k->st[si];
    const Array *W = &s->arr[st->arr];
    char lhs[160];
    fmt_tap(lhs, sizeof lhs, s, st->arr, st->lhs);
    for (int d = 0; d < s->dims; ++d) {
        Index ix = st->lhs[d];
        if (ix.kind == IK_VAR) {
            if (ix.c < 0)
                return gen_error(s->file, st->line,
                                 "left-hand side %s: offset %ld along %s is negative; write the statement relative to the lowest point it reads",
                                 lhs, ix.c, axis(d));
            st->loop[d] = 1;
            st->hi[d] = W->ext[d] - 2 * ix.c;
        } else {
            st->loop[d] = 0;
            if (check_fixed(s, st->line, lhs, st->arr, d, ix)) return -1;
        }
    }
    Node *taps[MAXTAP];
    int nt = ex_taps(st->rhs, -1, taps, MAXTAP);
    if (nt > MAXTAP) return gen_error(s->file, st->line, "too many distinct reads (at most %d)", MAXTAP);
    for (int t = 0; t < nt; ++t) {
        const Node *tp = taps[t];
        const Array *B = &s->arr[tp->ref];
        char rd[160];
        fmt_tap(rd, sizeof rd, s, tp->ref, tp->idx);
        /* written arrays: only the statement's own point */
        for (int o = 0; o < k->nst; ++o) {
            if (k->st[o].arr != tp->ref) continue;
            if (o != si) {
                if (accesses_apart(k, s->dims, tp->idx, k->st[o].lhs)) continue;
                return gen_error(s->file, st->line,
                                 "array '%s' is written by the statement at line %d of this kernel and read here: "
                                 "statements of one kernel run concurrently, so this would race",
                                 B->name, k->st[o].line);
            }
            int same = 1;
            for (int d = 0; d < s->dims; ++d) {
                Index a = tp->idx[d], b = st->lhs[d];
                if (a.kind != b.kind || a.c != b.c) same = 0;
            }
            if (!same && !accesses_apart(k, s->dims, tp->idx, st->lhs))
                return gen_error(s->file, st->line,
                                 "read %s: array '%s' is written here at %s and read at a neighbour in the same kernel; "
                                 "that races between threads (write the result into another array)",
                                 rd, B->name, lhs);
        }
        for (int d = 0; d < s->dims; ++d) {
            Index ix = tp->idx[d];
            if (st->loop[d]) {
                if (ix.kind == IK_VAR) {
                    if (ix.c < 0)
                        return gen_error(s->file, st->line,
                                         "read %s can go out of bounds: the statement's first point has %s = 0, so it reads index %ld along %s",
                                         rd, dimvar(d), ix.c, axis(d));
                    long reach = st->hi[d] - 1 + ix.c; /* n + reach is the largest index */
                    if (reach > B->ext[d] - 1) {
                        char eb[48], ib[48];
                        fmt_extent(eb, sizeof eb, d, B->ext[d]);
                        fmt_extent(ib, sizeof ib, d, reach);
                        return gen_error(s->file, st->line,
                                         "read %s can go out of bounds: along %s it reaches index %s but '%s' has extent %s",
                                         rd, axis(d), ib, B->name, eb);
                    }
                } else if (check_fixed(s, st->line, rd, tp->ref, d, ix)) return -1;
            } else {
                if (ix.kind == IK_VAR)
                    return gen_error(s->file, st->line,
                                     "read %s uses %s, but the left-hand side %s fixes dimension %s (only looped dimensions may use %s)",
                                     rd, dimvar(d), lhs, axis(d), dimvar(d));
                if (check_fixed(s, st->line, rd, tp->ref, d, ix)) return -1;
            }
        }
    }
    return 0;
}

/* 1 when an addend of the sum n is a positive number or a parameter (taken
 * to be a positive eps): then sqrt(n) stays away from 0 */
static int has_positive_addend(const Node *n)
{
    if (n->kind == E_ADD) return has_positive_addend(n->a[0]) || has_positive_addend(n->a[1]);
    return (n->kind == E_NUM && n->num > 0) || n->kind == E_PARAM;
}

/* Warn once per reduction about sqrt(u) where u can be 0 (sqrt(d_xa(x)^2 +
 * ...), no eps): the derivative 1/(2 sqrt(u)) is infinite there, and the
 * gradient NaN on flat regions.  abs, min and max are differentiated by a
 * documented convention instead (docs/language.md). */
static int find_sqrt_of_zero(const Node *n, char *seen)
{
    if (seen[n->id]) return 0;
    seen[n->id] = 1;
    if (n->kind == E_SELECT) return find_sqrt_of_zero(n->a[0], seen); /* a branch may be guarded (Huber) */
    if (n->kind == E_CALL && n->op == F_SQRT && !has_positive_addend(n->a[0])) return 1;
    for (int i = 0; i < n->nargs; ++i)
        if (find_sqrt_of_zero(n->a[i], seen)) return 1;
    return 0;
}

static void warn_sqrt_of_zero(const Stencil *s, const Reduce *r)
{
    char *seen = calloc(ex_count(), 1); /* each shared node once */
    if (seen && find_sqrt_of_zero(r->f, seen))
        gen_warning(s->file, r->line,
                    "reduction '%s': sqrt of an expression that can be 0 (nothing positive is added inside): its "
                    "derivative is infinite there, so the gradient is NaN wherever the argument is 0 (flat regions); "
                    "write sqrt(eps + ...) with a parameter eps > 0", r->name);
    free(seen);
}

int analyze(Stencil *s)
{
    if (!s->name[0]) return gen_error(s->file, 1, "missing 'stencil NAME' declaration");
    for (int a = 0; a < s->narr; ++a)
        for (int d = s->dims; d < 3; ++d) s->arr[a].ext[d] = 0;
    for (int ki = 0; ki < s->nk; ++ki) {
        Kernel *k = &s->k[ki];
        for (int d = 0; d < 3; ++d) k->kmin[d] = 1;
        for (int i = 0; i < k->nst; ++i) {
            for (int j = 0; j < i; ++j)
                if (k->st[j].arr == k->st[i].arr && !accesses_apart(k, s->dims, k->st[j].lhs, k->st[i].lhs))
                    return gen_error(s->file, k->st[i].line,
                                     "array '%s' is already written by the statement at line %d of kernel '%s' "
                                     "(two statements may write one array only at fixed, different indices)",
                                     s->arr[k->st[i].arr].name, k->st[j].line, k->name);
        }
        for (int i = 0; i < k->nst; ++i)
            if (check_stmt(s, k, i)) return -1;
    }
    for (int ri = 0; ri < s->nr && !s->quiet; ++ri) warn_sqrt_of_zero(s, &s->r[ri]);
    for (int ri = 0; ri < s->nr; ++ri) {
        Reduce *r = &s->r[ri];
        Node *taps[MAXTAP];
        int nt = ex_taps(r->f, -1, taps, MAXTAP);
        if (nt > MAXTAP) return gen_error(s->file, r->line, "too many distinct reads (at most %d)", MAXTAP);
        if (nt == 0) return gen_error(s->file, r->line, "reduction '%s' reads no array", r->name);
        for (int t = 0; t < nt; ++t) {
            const Array *B = &s->arr[taps[t]->ref];
            char rd[160];
            fmt_tap(rd, sizeof rd, s, taps[t]->ref, taps[t]->idx);
            for (int d = 0; d < s->dims; ++d) {
                if (B->ext[d] != 0)
                    return gen_error(s->file, r->line,
                                     "reduction '%s' reads '%s', whose extent is not the grid: arrays read by reductions must have extent (nx, ny%s)",
                                     r->name, B->name, s->dims == 3 ? ", nz" : "");
                if (taps[t]->idx[d].kind != IK_VAR)
                    return gen_error(s->file, r->line,
                                     "reduction '%s': read %s uses a fixed index; reductions read relative to the point (i, j%s) only",
                                     r->name, rd, s->dims == 3 ? ", k" : "");
                if (labs(taps[t]->idx[d].c) > 16)
                    return gen_error(s->file, r->line, "reduction '%s': read %s is further than 16 points from the point", r->name, rd);
            }
        }
    }
    return 0;
}
