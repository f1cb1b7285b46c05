/* stenc-gen: the expression DAG.  Nodes are hash-consed (structurally equal
 * nodes are one node), which gives common-subexpression sharing for free;
 * constructors simplify as they build.  Symbolic differentiation and index
 * shifting work on the DAG with per-pass memoisation. */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HSIZE 65536
static Node *htab[HSIZE];
static Node **all_nodes;
static size_t n_nodes, cap_nodes;
static int memo_counter;
static int nonfinite_seen;

const char *const ex_fn_name[F_COUNT] = {
    "sqrt", "exp", "log", "abs", "min", "max", "pow", "sin", "cos", "tan",
    "tanh", "atan", "sinh", "cosh", "floor", "sign"};
const int ex_fn_arity[F_COUNT] = {1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1};

int ex_fn_lookup(const char *name)
{
    for (int i = 0; i < F_COUNT; ++i)
        if (strcmp(name, ex_fn_name[i]) == 0) return i;
    return -1;
}

size_t ex_count(void) { return n_nodes; }

int ex_take_nonfinite(void)
{
    int r = nonfinite_seen;
    nonfinite_seen = 0;
    return r;
}

void ex_reset(void)
{
    nonfinite_seen = 0;
    for (size_t i = 0; i < n_nodes; ++i) free(all_nodes[i]);
    free(all_nodes);
    all_nodes = NULL;
    n_nodes = cap_nodes = 0;
    memset(htab, 0, sizeof htab);
}

static unsigned mix(unsigned h, unsigned v) { return (h ^ v) * 16777619u + 0x9e3779b9u; }

static unsigned node_hash(const Node *n)
{
    unsigned h = mix(2166136261u, (unsigned)n->kind);
    h = mix(h, (unsigned)n->op);
    unsigned long long bits;
    memcpy(&bits, &n->num, sizeof bits);
    h = mix(h, (unsigned)bits);
    h = mix(h, (unsigned)(bits >> 32));
    h = mix(h, (unsigned)n->ref);
    for (int d = 0; d < 3; ++d) {
        h = mix(h, (unsigned)n->idx[d].kind);
        h = mix(h, (unsigned)n->idx[d].c);
    }
    for (int i = 0; i < n->nargs; ++i) h = mix(h, (unsigned)n->a[i]->id);
    return h;
}

static int node_eq(const Node *x, const Node *y)
{
    if (x->kind != y->kind || x->op != y->op || x->ref != y->ref || x->nargs != y->nargs)
        return 0;
    if (memcmp(&x->num, &y->num, sizeof x->num) != 0) return 0;
    for (int d = 0; d < 3; ++d)
        if (x->idx[d].kind != y->idx[d].kind || x->idx[d].c != y->idx[d].c) return 0;
    for (int i = 0; i < x->nargs; ++i)
        if (x->a[i] != y->a[i]) return 0;
    return 1;
}

static Node *intern(const Node *proto)
{
    Node tmp = *proto;
    tmp.hash = node_hash(&tmp);
    for (Node *n = htab[tmp.hash % HSIZE]; n; n = n->chain)
        if (n->hash == tmp.hash && node_eq(n, &tmp)) return n;
    Node *n = malloc(sizeof *n);
    if (!n) { fprintf(stderr, "stenc-gen: out of memory\n"); exit(2); }
    *n = tmp;
    n->id = (int)n_nodes;
    n->chain = htab[n->hash % HSIZE];
    htab[n->hash % HSIZE] = n;
    if (n_nodes == cap_nodes) {
        cap_nodes = cap_nodes ? 2 * cap_nodes : 1024;
        all_nodes = realloc(all_nodes, cap_nodes * sizeof *all_nodes);
        if (!all_nodes) { fprintf(stderr, "stenc-gen: out of memory\n"); exit(2); }
    }
    all_nodes[n_nodes++] = n;
    return n;
}

static Node proto(int kind)
{
    Node p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    return p;
}

Node *ex_num(double v)
{
    Node p = proto(E_NUM);
    if (!isfinite(v)) { nonfinite_seen = 1; v = 0; } /* reported by the caller; never printed */
    p.num = v == 0 ? 0.0 : v; /* no negative zero */
    return intern(&p);
}

Node *ex_param(int k)
{
    Node p = proto(E_PARAM);
    p.ref = k;
    return intern(&p);
}

Node *ex_tap(int arr, const Index idx[3])
{
    Node p = proto(E_TAP);
    p.ref = arr;
    for (int d = 0; d < 3; ++d) p.idx[d] = idx[d];
    return intern(&p);
}

int ex_is_num(const Node *n, double v) { return n->kind == E_NUM && n->num == v; }

static Node *mk(int kind, int op, int nargs, Node *a, Node *b, Node *c)
{
    Node p = proto(kind);
    p.op = op;
    p.nargs = nargs;
    p.a[0] = a; p.a[1] = b; p.a[2] = c;
    for (int i = 0; i < nargs; ++i)
        if (p.a[i]->depth + 1 > p.depth) p.depth = p.a[i]->depth + 1;
    return intern(&p);
}

Node *ex_neg(Node *a)
{
    if (a->kind == E_NUM) return ex_num(-a->num);
    if (a->kind == E_NEG) return a->a[0];
    return mk(E_NEG, 0, 1, a, NULL, NULL);
}

Node *ex_add(Node *a, Node *b)
{
    if (a->kind == E_NUM && b->kind == E_NUM) return ex_num(a->num + b->num);
    if (ex_is_num(a, 0)) return b;
    if (ex_is_num(b, 0)) return a;
    if (b->kind == E_NEG) return ex_sub(a, b->a[0]);
    if (a->kind == E_NEG) return ex_sub(b, a->a[0]);
    if (a->id > b->id) { Node *t = a; a = b; b = t; }
    return mk(E_ADD, 0, 2, a, b, NULL);
}

Node *ex_sub(Node *a, Node *b)
{
    if (a->kind == E_NUM && b->kind == E_NUM) return ex_num(a->num - b->num);
    if (ex_is_num(b, 0)) return a;
    if (ex_is_num(a, 0)) return ex_neg(b);
    if (a == b) return ex_num(0);
    if (b->kind == E_NEG) return ex_add(a, b->a[0]);
    return mk(E_SUB, 0, 2, a, b, NULL);
}

Node *ex_mul(Node *a, Node *b)
{
    if (a->kind == E_NUM && b->kind == E_NUM) return ex_num(a->num * b->num);
    if (ex_is_num(a, 0) || ex_is_num(b, 0)) return ex_num(0);
    if (ex_is_num(a, 1)) return b;
    if (ex_is_num(b, 1)) return a;
    if (ex_is_num(a, -1)) return ex_neg(b);
    if (ex_is_num(b, -1)) return ex_neg(a);
    if (a->kind == E_NEG) return ex_neg(ex_mul(a->a[0], b));
    if (b->kind == E_NEG) return ex_neg(ex_mul(a, b->a[0]));
    if (b->kind == E_NUM) { Node *t = a; a = b; b = t; }
    else if (a->kind != E_NUM && a->id > b->id) { Node *t = a; a = b; b = t; }
    if (a == b) return ex_powi(a, 2);
    return mk(E_MUL, 0, 2, a, b, NULL);
}

Node *ex_div(Node *a, Node *b)
{
    if (a->kind == E_NUM && b->kind == E_NUM && b->num != 0) return ex_num(a->num / b->num);
    if (ex_is_num(b, 0)) { nonfinite_seen = 1; return ex_num(0); } /* x/0: reported by the caller; never printed */
    if (ex_is_num(a, 0)) return ex_num(0);
    if (ex_is_num(b, 1)) return a;
    if (ex_is_num(b, -1)) return ex_neg(a);
    if (a == b) return ex_num(1);
    if (a->kind == E_NEG) return ex_neg(ex_div(a->a[0], b));
    if (b->kind == E_NEG) return ex_neg(ex_div(a, b->a[0]));
    return mk(E_DIV, 0, 2, a, b, NULL);
}

Node *ex_powi(Node *a, int n)
{
    if (n == 0) return ex_num(1);
    if (n == 1) return a;
    if (a->kind == E_NUM) return ex_num(pow(a->num, n));
    if (a->kind == E_POWI) return ex_powi(a->a[0], a->op * n);
    return mk(E_POWI, n, 1, a, NULL, NULL);
}

Node *ex_call(int fn, int nargs, Node **args)
{
    if (fn == F_POW && args[1]->kind == E_NUM && args[1]->num == floor(args[1]->num) &&
        fabs(args[1]->num) <= 64)
        return ex_powi(args[0], (int)args[1]->num);
    if ((fn == F_MIN || fn == F_MAX) && args[0] == args[1]) return args[0];
    return mk(E_CALL, fn, nargs, args[0], nargs > 1 ? args[1] : NULL, NULL);
}

Node *ex_select(Node *c, Node *a, Node *b)
{
    if (a == b) return a;
    return mk(E_SELECT, 0, 3, c, a, b);
}

Node *ex_cmp(int op, Node *a, Node *b) { return mk(E_CMP, op, 2, a, b, NULL); }

Node *ex_bin(int kind, Node *a, Node *b)
{
    switch (kind) {
    case E_ADD: return ex_add(a, b);
    case E_SUB: return ex_sub(a, b);
    case E_MUL: return ex_mul(a, b);
    case E_DIV: return ex_div(a, b);
    default: return NULL;
    }
}

/* ---- differentiation ---- */

/* a product's numeric coefficient (*coef) and other factors (f[*nf], at
 * most FMAX; 0 past that): products and negations flatten, a quotient
 * a/d gives a's factors and 1/d */
enum { FMAX = 16 };
static int product_factors(Node *n, double *coef, Node **f, int *nf)
{
    if (n->kind == E_NUM) return *coef *= n->num, 1;
    if (n->kind == E_NEG) return *coef = -*coef, product_factors(n->a[0], coef, f, nf);
    if (n->kind == E_MUL) return product_factors(n->a[0], coef, f, nf) && product_factors(n->a[1], coef, f, nf);
    if (n->kind == E_DIV && !ex_is_num(n->a[0], 1)) {
        if (!product_factors(n->a[0], coef, f, nf) || *nf == FMAX) return 0;
        f[(*nf)++] = ex_div(ex_num(1), n->a[1]);
        return 1;
    }
    if (*nf == FMAX) return 0;
    f[(*nf)++] = n;
    return 1;
}

/* the product of the factors f[0..n) not marked in used[] (1 if none) */
static Node *product_unused(Node *const *f, const int *used, int n)
{
    Node *r = ex_num(1);
    for (int i = 0; i < n; ++i)
        if (!used[i]) r = ex_mul(r, f[i]);
    return r;
}

/* The derivative of select(c, a, b): select(c, da, db) with the factors
 * common to both branches taken out, ca * select(c, A, (cb/ca) B) * C for
 * da = ca A C and db = cb B C (numbers ca, cb).  Huber's partials are
 * select(small, t5*dq, (0.5*dq)/r) for each tap's dq: as s*dq with one
 * s = select(small, t5, 0.5*(1/r)) a point they are linear in the
 * differences like TV's, so the centre point's partial is the others'
 * negated sum and the rolling gradient keeps one row of partials fewer
 * (gen/emit.c plan_factors).  The same products either way (a/d becomes
 * a*(1/d): one rounding more where the branches share a factor). */
static Node *select_factored(Node *c, Node *a, Node *b)
{
    Node *fa[FMAX], *fb[FMAX];
    double ca = 1, cb = 1;
    int na = 0, nb = 0, ua[FMAX] = {0}, ub[FMAX] = {0}, common = 0;
    if (a == b || !product_factors(a, &ca, fa, &na) || !product_factors(b, &cb, fb, &nb) || ca == 0 || cb == 0)
        return ex_select(c, a, b);
    Node *C = ex_num(1);
    for (int i = 0; i < na; ++i)
        for (int j = 0; j < nb; ++j)
            if (!ub[j] && fa[i] == fb[j]) {
                ua[i] = ub[j] = 1, ++common;
                C = ex_mul(C, fa[i]);
                break;
            }
    if (!common) return ex_select(c, a, b);
    Node *A = product_unused(fa, ua, na), *B = ex_mul(ex_num(cb / ca), product_unused(fb, ub, nb));
    return ex_mul(ex_num(ca), ex_mul(ex_select(c, A, B), C));
}

static int same_tap(const Node *n, int arr, const Index idx[3])
{
    if (n->kind != E_TAP || n->ref != arr) return 0;
    for (int d = 0; d < 3; ++d)
        if (n->idx[d].kind != idx[d].kind || n->idx[d].c != idx[d].c) return 0;
    return 1;
}

static Node *diff_rec(Node *n, int arr, const Index idx[3], int *bad, int tag)
{
    if (n->memo_tag == tag) return n->memo;
    Node *r = NULL, *da = NULL, *db = NULL;
    Node *zero = ex_num(0), *one = ex_num(1);
    if (n->nargs >= 1 && n->kind != E_CMP) da = diff_rec(n->a[0], arr, idx, bad, tag);
    if (n->nargs >= 2 && n->kind != E_CMP) db = diff_rec(n->a[1], arr, idx, bad, tag);
    switch (n->kind) {
    case E_NUM: case E_PARAM: case E_CMP: r = zero; break;
    case E_TAP: r = same_tap(n, arr, idx) ? one : zero; break;
    case E_ADD: r = ex_add(da, db); break;
    case E_SUB: r = ex_sub(da, db); break;
    case E_NEG: r = ex_neg(da); break;
    case E_MUL: r = ex_add(ex_mul(da, n->a[1]), ex_mul(n->a[0], db)); break;
    case E_DIV: /* (da - (a/b) db) / b */
        r = ex_div(ex_sub(da, ex_mul(n, db)), n->a[1]);
        break;
    case E_POWI:
        r = ex_mul(ex_mul(ex_num(n->op), ex_powi(n->a[0], n->op - 1)), da);
        break;
    case E_SELECT: {
        Node *d1 = diff_rec(n->a[1], arr, idx, bad, tag);
        Node *d2 = diff_rec(n->a[2], arr, idx, bad, tag);
        r = select_factored(n->a[0], d1, d2);
        break;
    }
    case E_CALL: {
        Node *a = n->a[0];
        if (ex_is_num(da, 0) && (n->nargs < 2 || ex_is_num(db, 0))) { r = zero; break; }
        switch (n->op) {
        case F_SQRT: r = ex_div(ex_mul(ex_num(0.5), da), n); break;
        case F_EXP: r = ex_mul(n, da); break;
        case F_LOG: r = ex_div(da, a); break;
        case F_ABS: r = ex_select(ex_cmp(C_LT, a, zero), ex_neg(da), da); break;
        case F_MIN: r = ex_select(ex_cmp(C_LE, a, n->a[1]), da, db); break;
        case F_MAX: r = ex_select(ex_cmp(C_GE, a, n->a[1]), da, db); break;
        case F_POW: {
            Node *b = n->a[1];
            if (ex_is_num(db, 0)) {
                Node *args[2] = {a, ex_sub(b, one)};
                r = ex_mul(ex_mul(b, ex_call(F_POW, 2, args)), da);
            } else {
                Node *la = ex_call(F_LOG, 1, &a);
                r = ex_mul(n, ex_add(ex_mul(db, la), ex_div(ex_mul(b, da), a)));
            }
            break;
        }
        case F_SIN: r = ex_mul(ex_call(F_COS, 1, &a), da); break;
        case F_COS: r = ex_neg(ex_mul(ex_call(F_SIN, 1, &a), da)); break;
        case F_TAN: r = ex_mul(ex_add(one, ex_powi(n, 2)), da); break;
        case F_TANH: r = ex_mul(ex_sub(one, ex_powi(n, 2)), da); break;
        case F_ATAN: r = ex_div(da, ex_add(one, ex_powi(a, 2))); break;
        case F_SINH: r = ex_mul(ex_call(F_COSH, 1, &a), da); break;
        case F_COSH: r = ex_mul(ex_call(F_SINH, 1, &a), da); break;
        default:
            if (!*bad) *bad = n->op + 1;
            r = zero;
            break;
        }
        break;
    }
    }
    n->memo_tag = tag;
    n->memo = r;
    return r;
}

Node *ex_diff(Node *n, int arr, const Index idx[3], int *bad)
{
    *bad = 0;
    Node *r = diff_rec(n, arr, idx, bad, ++memo_counter);
    return *bad ? NULL : r;
}

/* n's operation over new operands a[] (the rewriting passes below) */
static Node *rebuild(const Node *n, Node **a)
{
    switch (n->kind) {
    case E_ADD: case E_SUB: case E_MUL: case E_DIV: return ex_bin(n->kind, a[0], a[1]);
    case E_NEG: return ex_neg(a[0]);
    case E_POWI: return ex_powi(a[0], n->op);
    case E_CALL: return ex_call(n->op, n->nargs, a);
    case E_SELECT: return ex_select(a[0], a[1], a[2]);
    case E_CMP: return ex_cmp(n->op, a[0], a[1]);
    default: return (Node *)n;
    }
}

/* One rewriting pass, bottom up and memoised per pass (tag): a node's
 * operands are rewritten first, then post(n, a, ctx) gives its image (the
 * passes below: shifted taps, reciprocals, shared weights) */
typedef Node *(*RewriteFn)(Node *n, Node **a, const void *ctx);
static Node *rewrite_rec(Node *n, RewriteFn post, const void *ctx, int tag)
{
    if (n->memo_tag == tag) return n->memo;
    Node *a[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n->nargs; ++i) a[i] = rewrite_rec(n->a[i], post, ctx, tag);
    Node *r = post(n, a, ctx);
    n->memo_tag = tag;
    n->memo = r;
    return r;
}

static Node *shift_post(Node *n, Node **a, const void *ctx)
{
    if (n->kind != E_TAP) return rebuild(n, a);
    const long *off = ctx;
    Index idx[3];
    for (int d = 0; d < 3; ++d) {
        idx[d] = n->idx[d];
        if (idx[d].kind == IK_VAR) idx[d].c += off[d];
    }
    return ex_tap(n->ref, idx);
}

Node *ex_shift(Node *n, const long off[3]) { return rewrite_rec(n, shift_post, off, ++memo_counter); }

typedef struct { Node *const *from, *const *to; int count; } Subst;
static Node *subst_post(Node *n, Node **a, const void *ctx)
{
    const Subst *x = ctx;
    for (int t = 0; t < x->count; ++t)
        if (x->from[t] == n) return x->to[t];
    return rebuild(n, a);
}

Node *ex_substitute(Node *n, Node *const *from, Node *const *to, int count)
{
    const Subst x = {from, to, count};
    return rewrite_rec(n, subst_post, &x, ++memo_counter);
}

/* pinning dimension d: a tap at offset o along d of the point p = base + c
 * reads p + o, mapped by the boundary mode for an extent of at least as
 * many points as keep p + o within one period of the end it belongs to
 * (emit.c, edge_min) */
typedef struct { int d, mode, from_n; long c; } Pin;
static Index pinned(const Pin *p, long o)
{
    const long v = p->c + o; /* the read, from 0 or from n */
    Index r = {p->from_n ? IK_END : IK_CONST, v};
    if (p->mode == 1 && !p->from_n && v < 0) r.c = 0;                    /* neumann: clamped */
    if (p->mode == 1 && p->from_n && v >= 0) r.c = -1;
    if (p->mode == 2 && !p->from_n && v < 0) r.kind = IK_END;            /* periodic: wrapped */
    if (p->mode == 2 && p->from_n && v >= 0) r.kind = IK_CONST;
    return r;
}
static Node *pin_post(Node *n, Node **a, const void *ctx)
{
    const Pin *p = ctx;
    if (n->kind != E_TAP || n->idx[p->d].kind != IK_VAR) return rebuild(n, a);
    Index idx[3] = {n->idx[0], n->idx[1], n->idx[2]};
    idx[p->d] = pinned(p, n->idx[p->d].c);
    return ex_tap(n->ref, idx);
}

Node *ex_pin(Node *n, int d, int mode, int from_n, long c)
{
    const Pin p = {d, mode, from_n, c};
    return rewrite_rec(n, pin_post, &p, ++memo_counter);
}

Node *ex_pin_x(Node *n, int mode, int from_n, long c) { return ex_pin(n, 0, mode, from_n, c); }

static Node *unpin_post(Node *n, Node **a, const void *ctx)
{
    const int d = *(const int *)ctx;
    if (n->kind != E_TAP || n->idx[d].kind == IK_VAR) return rebuild(n, a);
    Index idx[3] = {n->idx[0], n->idx[1], n->idx[2]};
    idx[d] = (Index){IK_VAR, 0};
    return ex_tap(n->ref, idx);
}

Node *ex_unpin(Node *n, int d) { return rewrite_rec(n, unpin_post, &d, ++memo_counter); }

static Node *recip_post(Node *n, Node **a, const void *ctx)
{
    (void)ctx;
    if (n->kind != E_DIV) return rebuild(n, a);
    /* a number stays a divisor (the compiler folds exact cases); any other
     * divisor becomes a reciprocal, which is a loop invariant (hoisted) when
     * the divisor reads no array */
    return a[1]->kind == E_NUM ? ex_div(a[0], a[1]) : ex_mul(a[0], ex_div(ex_num(1), a[1]));
}

Node *ex_recip(Node *n) { return rewrite_rec(n, recip_post, NULL, ++memo_counter); }

static int has_tap(Node *n);

/* ---- weights shared between a square and its partial ----
 * R = sqrt(eps + w*d^2) has the partial (w*d)/R: written as printed, the
 * square is w*(d*d) and the partial's factor c*(d*q) with c = 0.5*(2*w),
 * so w*d is multiplied twice.  Rewritten, w*d^2 becomes (w*d)*d and c*(d*q)
 * becomes (w*d)*q (c's numbers folded: 0.5*2 = 1), and the printer's common
 * subexpressions share w*d: three multiplies fewer per point for 3D TV
 * (perf/NOTES.md section 13).  Rounding: each product is rounded once in
 * either form; only the association changes. */
static Node *fold_coef(Node *c)
{
    Node *f[8], *todo[16];
    int nf = 0, nt = 0;
    double num = 1;
    todo[nt++] = c;
    while (nt > 0) {
        Node *n = todo[--nt];
        if (n->kind == E_NUM) num *= n->num;
        else if (n->kind == E_NEG && nt < 16) { num = -num; todo[nt++] = n->a[0]; }
        else if (n->kind == E_MUL && nt + 2 <= 16) { todo[nt++] = n->a[1]; todo[nt++] = n->a[0]; }
        else if (nf < 8) f[nf++] = n;
        else return c;
    }
    Node *r = ex_num(num);
    for (int i = 0; i < nf; ++i) r = ex_mul(r, f[i]);
    return r;
}

static int is_costly_op(const Node *n)
{
    return n->kind == E_DIV || n->kind == E_CALL || (n->kind == E_SELECT && (ex_costly(n->a[1]) || ex_costly(n->a[2])));
}

/* c's numbers multiplied (1 when it has none) and the product of its other
 * factors (*rest) */
static double coef_number(Node *c, Node **rest)
{
    Node *f[FMAX];
    int nf = 0;
    double num = 1;
    *rest = c;
    if (!product_factors(c, &num, f, &nf)) return 1;
    *rest = product_unused(f, (const int[FMAX]){0}, nf);
    return num;
}

static Node *share_post(Node *n, Node **a, const void *ctx)
{
    (void)ctx;
    if (n->kind != E_MUL) return rebuild(n, a);
    /* c: the tap-free operand, o: the other (when exactly one reads taps) */
    const int t0 = has_tap(a[0]), t1 = has_tap(a[1]);
    Node *c = t0 ? a[1] : a[0], *o = t0 ? a[0] : a[1];
    const int d0 = o->kind == E_MUL && is_costly_op(o->a[0]); /* o->a[d0]: the cheap operand */
    if (t0 == t1) return ex_mul(a[0], a[1]);
    if (o->kind == E_POWI && o->op == 2) return ex_mul(ex_mul(fold_coef(c), o->a[0]), o->a[0]);
    if (o->kind == E_MUL && d0 != is_costly_op(o->a[1]) && has_tap(o->a[0]) && has_tap(o->a[1])) {
        /* (c*cheap)*dear; a number of c goes into a select's branches
         * (Huber's 2*w*(d*s) as (w*d)*s2, s2 = select(small, 2*t, 1/r) for
         * s = select(small, t, 0.5*(1/r)): w*d is the square's, s2 shared by
         * every partial, the 2 and the 0.5 folded) */
        Node *rest, *dear = o->a[!d0];
        const double num = dear->kind == E_SELECT ? coef_number(c, &rest) : 1;
        if (num != 1) {
            Node *k = ex_num(num);
            Node *s = ex_select(dear->a[0], fold_coef(ex_mul(k, dear->a[1])), fold_coef(ex_mul(k, dear->a[2])));
            return ex_mul(ex_mul(rest, o->a[d0]), s);
        }
        return ex_mul(ex_mul(fold_coef(c), o->a[d0]), dear);
    }
    return ex_mul(a[0], a[1]);
}

void ex_share_weights(Node **roots, int n)
{
    const int tag = ++memo_counter;
    for (int i = 0; i < n; ++i) roots[i] = rewrite_rec(roots[i], share_post, NULL, tag);
}

/* ---- common coefficients ----
 * A gather sum of a quadratic regularizer or a linear kernel's adjoint is a
 * sum of terms such as -(w*(2*(x[i+1] - x[i]))) + w*(2*(x[i] - x[i-1])):
 * each term multiplies a difference by the same parameter expression.
 * Grouping the terms by their tap-free factor gives w*2*((x[i] - x[i-1]) -
 * (x[i+1] - x[i])): one multiply per group instead of two per term, and the
 * differences are kept as derived, so a gradient of data with a large offset
 * is as accurate as before.  (Collecting per tap instead, c*x[i] - a*x[i+1]
 * - ..., is cheaper still but loses that accuracy: measured 2e-3 relative
 * error in float at an offset of 1e4, against exact before; perf/NOTES.md
 * section 7.) */
#define MAXTERM 512
typedef struct {
    int n;
    Node *coef[MAXTERM], *rest[MAXTERM];
    int neg[MAXTERM];
} Terms;

static int has_tap(Node *n)
{
    Node *b[1];
    return ex_taps(n, -1, b, 1) > 0;
}

/* split a product into its tap-free factors (into cf; the caller sorts them
 * by id for a canonical coefficient) and the others (multiplied into *r);
 * *neg flips with each negation */
static void split_factors(Node *n, Node **cf, int *ncf, Node **r, int *neg)
{
    if (n->kind == E_NEG) { *neg ^= 1; split_factors(n->a[0], cf, ncf, r, neg); return; }
    if (n->kind == E_MUL) { split_factors(n->a[0], cf, ncf, r, neg); split_factors(n->a[1], cf, ncf, r, neg); return; }
    if (n->kind == E_NUM && n->num < 0) { *neg ^= 1; n = ex_num(-n->num); }
    if (!has_tap(n) && *ncf < 16) { cf[(*ncf)++] = n; return; }
    *r = ex_mul(*r, n);
}

/* the signed additive terms of n, each as coefficient * rest */
static int collect_terms(Node *n, int neg, Terms *T)
{
    if (n->kind == E_ADD) return collect_terms(n->a[0], neg, T) && collect_terms(n->a[1], neg, T);
    if (n->kind == E_SUB) return collect_terms(n->a[0], neg, T) && collect_terms(n->a[1], !neg, T);
    if (n->kind == E_NEG) return collect_terms(n->a[0], !neg, T);
    if (T->n == MAXTERM) return 0;
    Node *cf[16], *r = ex_num(1);
    int ncf = 0;
    split_factors(n, cf, &ncf, &r, &neg);
    for (int i = 1; i < ncf; ++i)
        for (int j = i; j > 0 && cf[j - 1]->id > cf[j]->id; --j) { Node *t = cf[j]; cf[j] = cf[j - 1]; cf[j - 1] = t; }
    Node *c = ex_num(1);
    for (int i = 0; i < ncf; ++i) c = ex_mul(c, cf[i]);
    T->coef[T->n] = c;
    T->rest[T->n] = r;
    T->neg[T->n++] = neg;
    return 1;
}

/* balanced sum of terms[lo, hi): independent partial sums */
static Node *sum_tree(Node **terms, int lo, int hi)
{
    if (hi - lo == 1) return terms[lo];
    int mid = lo + (hi - lo) / 2;
    return ex_add(sum_tree(terms, lo, mid), sum_tree(terms, mid, hi));
}

/* ---- factors common to every term ----
 * Good's gradient at a point is sum_q w_q*(2*(s_p - s_q))*(0.5*(1/s_p)):
 * every term's rest multiplies by the point's 1/s_p.  Taken out of the sum
 * it is applied once: (w_x*(...) + w_y*(...) + w_z*(...))/s_p, six
 * multiplies fewer a point in 3D (perf/NOTES.md section 46), and the
 * reciprocal's multiply too (section 48).  Only factors
 * that every term holds are taken out (always fewer multiplies): regrouping
 * terms by a factor some of them share (TV's 1/R_p) would split the
 * coefficient groups and cost more multiplies than it saves.  Rounding:
 * one product of the sum instead of a product in each term. */
static int product_has(const Node *r, const Node *f)
{
    if (r == f) return 1;
    return r->kind == E_MUL && (product_has(r->a[0], f) || product_has(r->a[1], f));
}

/* r without one factor f (r holds it: product_has) */
static Node *product_drop(Node *r, const Node *f)
{
    if (r == f) return ex_num(1);
    if (product_has(r->a[0], f)) return ex_mul(product_drop(r->a[0], f), r->a[1]);
    return ex_mul(r->a[0], product_drop(r->a[1], f));
}

/* the first factor (not a number) of r, the first term's rest, that every
 * rest holds */
static Node *common_factor(Node *r, const Terms *T)
{
    if (r->kind == E_MUL) {
        Node *c = common_factor(r->a[0], T);
        return c ? c : common_factor(r->a[1], T);
    }
    if (r->kind == E_NUM) return NULL;
    for (int u = 1; u < T->n; ++u)
        if (!product_has(T->rest[u], r)) return NULL;
    return r;
}

/* ---- a coefficient group's sum, collected by its terms ----
 * A group's rests are often differences that share a term: Good's x
 * group is (s - s_m) - (s_p - s), the Tikhonov gradient's (x - x_m) -
 * (x_p - x).  Collected, ((s + s) - s_m) - s_p: the doubled point is one
 * node, shared by every dimension's group, two subtractions a dimension
 * fewer (Good's gradient ran 0.96-0.99 of its time, perf/NOTES.md
 * section 53).  Not where a value_grad computes the differences for its
 * value anyway: there the old form reuses them (one operation fewer a
 * point than the collected one).  Only sums whose terms repeat change;
 * the terms keep their order of first appearance, positive ones first. */
enum { LIN_MAX = 16 };
typedef struct {
    Node *term[LIN_MAX];
    int coef[LIN_MAX], n, seen;
} LinSum;

static int lin_flatten(Node *n, int sign, LinSum *L)
{
    if (n->kind == E_ADD) return lin_flatten(n->a[0], sign, L) && lin_flatten(n->a[1], sign, L);
    if (n->kind == E_SUB) return lin_flatten(n->a[0], sign, L) && lin_flatten(n->a[1], -sign, L);
    if (n->kind == E_NEG) return lin_flatten(n->a[0], -sign, L);
    ++L->seen;
    for (int k = 0; k < L->n; ++k)
        if (L->term[k] == n) return L->coef[k] += sign, 1;
    if (L->n == LIN_MAX) return 0;
    L->term[L->n] = n, L->coef[L->n++] = sign;
    return 1;
}

/* C times term T (C > 0): T, T + T, or C*T */
static Node *lin_times(Node *t, int c)
{
    return c == 1 ? t : c == 2 ? ex_add(t, t) : ex_mul(ex_num(c), t);
}

static Node *lin_collect(Node *sum)
{
    LinSum L = {.n = 0, .seen = 0};
    if (!lin_flatten(sum, 1, &L) || L.n == L.seen) return sum;
    Node *r = NULL;
    for (int k = 0; k < L.n; ++k)
        if (L.coef[k] > 0) r = r ? ex_add(r, lin_times(L.term[k], L.coef[k])) : lin_times(L.term[k], L.coef[k]);
    for (int k = 0; k < L.n; ++k)
        if (L.coef[k] < 0) r = r ? ex_sub(r, lin_times(L.term[k], -L.coef[k])) : ex_neg(lin_times(L.term[k], -L.coef[k]));
    return r ? r : ex_num(0);
}

/* a common factor 1/d with d reading the grid (not hoisted out of the
 * loop) */
static int point_recip(Node *f) { return f->kind == E_DIV && ex_is_num(f->a[0], 1) && has_tap(f->a[1]); }

static int holds(Node *n, const Node *f);

Node *ex_group_coef(Node *n, int collect)
{
    Terms T;
    T.n = 0;
    if (!collect_terms(n, 0, &T) || T.n < 2) return n;
    Node *common = ex_num(1), *recips[MAXTERM];
    int nrecip = 0;
    for (Node *f; (f = common_factor(T.rest[0], &T));) {
        if (point_recip(f) && nrecip < MAXTERM) recips[nrecip++] = f;
        else common = ex_mul(common, f);
        for (int t = 0; t < T.n; ++t) T.rest[t] = product_drop(T.rest[t], f);
    }
    Node *groups[MAXTERM];
    int ng = 0, done[MAXTERM] = {0};
    for (int t = 0; t < T.n; ++t) {
        if (done[t]) continue;
        Node *sum = ex_num(0);
        for (int u = t; u < T.n; ++u) /* the group's rests, in order of appearance */
            if (!done[u] && T.coef[u] == T.coef[t]) {
                sum = T.neg[u] ? ex_sub(sum, T.rest[u]) : ex_add(sum, T.rest[u]);
                done[u] = 1;
            }
        groups[ng++] = ex_mul(T.coef[t], collect ? lin_collect(sum) : sum);
    }
    Node *total = sum_tree(groups, 0, ng);
    Node *r = ex_mul(common, total);
    /* a point's reciprocal taken out of every term divides the sum: one
     * rounding and one operation fewer than 1/d times it (Good's gradient,
     * perf/NOTES.md section 48), unless the sum still multiplies by it */
    for (int i = 0; i < nrecip; ++i) r = holds(total, recips[i]) ? ex_mul(recips[i], r) : ex_div(r, recips[i]->a[1]);
    return r;
}

/* ---- partials as terms over factors of the reduction (rolling rows) ---- */
enum { FT_MAX = 16, FT_FAC = 8 };
typedef struct {
    int n;
    Node *coef[FT_MAX];
    Node *fac[FT_MAX][FT_FAC];
    int nfac[FT_MAX], neg[FT_MAX];
} FTerms;

static void collect_ids(Node *n, unsigned char *in)
{
    if (in[n->id]) return;
    in[n->id] = 1;
    for (int i = 0; i < n->nargs; ++i) collect_ids(n->a[i], in);
}

/* n expanded into terms coef * factors: sums distribute, except sums that
 * are subexpressions of the reduction (in[]), which stay factors */
static int expand_terms(Node *n, const unsigned char *in, FTerms *T)
{
    T->n = 0;
    if (!has_tap(n)) { T->coef[0] = n; T->nfac[0] = 0; T->neg[0] = 0; T->n = 1; return 1; }
    if (!in[n->id] && (n->kind == E_ADD || n->kind == E_SUB)) {
        FTerms B;
        if (!expand_terms(n->a[0], in, T) || !expand_terms(n->a[1], in, &B) || T->n + B.n > FT_MAX) return 0;
        for (int u = 0; u < B.n; ++u, ++T->n) {
            T->coef[T->n] = B.coef[u];
            T->nfac[T->n] = B.nfac[u];
            memcpy(T->fac[T->n], B.fac[u], sizeof B.fac[u]);
            T->neg[T->n] = B.neg[u] ^ (n->kind == E_SUB);
        }
        return 1;
    }
    if (!in[n->id] && n->kind == E_NEG) {
        if (!expand_terms(n->a[0], in, T)) return 0;
        for (int u = 0; u < T->n; ++u) T->neg[u] ^= 1;
        return 1;
    }
    if (!in[n->id] && n->kind == E_MUL) {
        FTerms A, B;
        if (!expand_terms(n->a[0], in, &A) || !expand_terms(n->a[1], in, &B) || A.n * B.n > FT_MAX) return 0;
        for (int u = 0; u < A.n; ++u)
            for (int v = 0; v < B.n; ++v, ++T->n) {
                if (A.nfac[u] + B.nfac[v] > FT_FAC) return 0;
                T->coef[T->n] = ex_mul(A.coef[u], B.coef[v]);
                T->neg[T->n] = A.neg[u] ^ B.neg[v];
                T->nfac[T->n] = A.nfac[u] + B.nfac[v];
                memcpy(T->fac[T->n], A.fac[u], sizeof(Node *) * (size_t)A.nfac[u]);
                memcpy(T->fac[T->n] + A.nfac[u], B.fac[v], sizeof(Node *) * (size_t)B.nfac[v]);
            }
        return 1;
    }
    if (!in[n->id] && n->kind == E_DIV && !has_tap(n->a[1])) {
        if (!expand_terms(n->a[0], in, T)) return 0;
        for (int u = 0; u < T->n; ++u) T->coef[u] = ex_div(T->coef[u], n->a[1]);
        return 1;
    }
    T->coef[0] = ex_num(1); T->nfac[0] = 1; T->fac[0][0] = n; T->neg[0] = 0; T->n = 1;
    return 1;
}

int ex_factor_terms(Node *n, Node *within, Node **coef, Node **rest, int *neg, int max)
{
    unsigned char *in = calloc(n_nodes + 1, 1);
    if (!in) return -1;
    collect_ids(within, in);
    FTerms T;
    int ok = expand_terms(n, in, &T);
    free(in);
    if (!ok || T.n > max) return -1;
    int m = 0;
    for (int t = 0; t < T.n; ++t) {
        Node **f = T.fac[t];
        for (int i = 1; i < T.nfac[t]; ++i) /* by id: the same factors give the same node */
            for (int j = i; j > 0 && f[j - 1]->id > f[j]->id; --j) { Node *x = f[j]; f[j] = f[j - 1]; f[j - 1] = x; }
        Node *r = ex_num(1);
        for (int i = 0; i < T.nfac[t]; ++i) r = ex_mul(r, f[i]);
        Node *c = T.neg[t] ? ex_neg(T.coef[t]) : T.coef[t];
        int u = 0; /* terms of one factor merge */
        while (u < m && rest[u] != r) ++u;
        if (u < m) { coef[u] = ex_add(coef[u], c); continue; }
        if (r->kind == E_NEG) { r = r->a[0]; c = ex_neg(c); }
        coef[m] = c; rest[m] = r; neg[m] = 0;
        ++m;
    }
    return m;
}

static void taps_rec(Node *n, int arr, Node **out, int *cnt, int max, int tag)
{
    if (n->mark == tag) return;
    n->mark = tag;
    if (n->kind == E_TAP && (arr < 0 || n->ref == arr)) {
        if (*cnt < max) out[*cnt] = n;
        ++*cnt;
    }
    for (int i = 0; i < n->nargs; ++i) taps_rec(n->a[i], arr, out, cnt, max, tag);
}

static int mark_counter = 1000000;

int ex_taps(Node *n, int arr, Node **out, int max)
{
    int cnt = 0;
    taps_rec(n, arr, out, &cnt, max, ++mark_counter);
    /* sort by node id for a deterministic order independent of traversal */
    int m = cnt < max ? cnt : max;
    for (int i = 1; i < m; ++i)
        for (int j = i; j > 0 && out[j - 1]->id > out[j]->id; --j) {
            Node *t = out[j]; out[j] = out[j - 1]; out[j - 1] = t;
        }
    return cnt;
}

int ex_reads(Node *n, int arr)
{
    Node *buf[1];
    return ex_taps(n, arr, buf, 1) > 0;
}

static int param_rec(Node *n, int p, int tag)
{
    if (n->mark == tag) return 0;
    n->mark = tag;
    if (n->kind == E_PARAM && n->ref == p) return 1;
    for (int i = 0; i < n->nargs; ++i)
        if (param_rec(n->a[i], p, tag)) return 1;
    return 0;
}

int ex_uses_param(Node *n, int p) { return param_rec(n, p, ++mark_counter); }

/* whether f is n or one of its subexpressions */
static int holds_rec(Node *n, const Node *f, int tag)
{
    if (n->mark == tag) return 0;
    n->mark = tag;
    if (n == f) return 1;
    for (int i = 0; i < n->nargs; ++i)
        if (holds_rec(n->a[i], f, tag)) return 1;
    return 0;
}
static int holds(Node *n, const Node *f) { return holds_rec(n, f, ++mark_counter); }

/* ---- cost ---- */
int ex_costly_op(const Node *n)
{
    if (n->kind == E_CALL && n->op != F_ABS && n->op != F_MIN && n->op != F_MAX && n->op != F_FLOOR && n->op != F_SIGN) return 1;
    return n->kind == E_DIV && n->a[1]->kind != E_NUM && n->a[1]->kind != E_PARAM;
}

static int costly_tag = -1;
static int costly_rec(Node *n, int tag)
{
    if (n->mark == tag) return 0;
    n->mark = tag;
    if (ex_costly_op(n)) return 1;
    for (int i = 0; i < n->nargs; ++i)
        if (costly_rec(n->a[i], tag)) return 1;
    return 0;
}
int ex_costly(Node *n) { return costly_rec(n, --costly_tag); }
