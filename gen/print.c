/* stenc-gen: printing expressions, as C (with shared temporaries) and in the
 * stencil language (for the readable adjoint files). */
#include "gen.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int tmp_counter;
static int use_tag = 2000000000;

static const char *cmp_op[] = {"<", "<=", ">", ">=", "==", "!="};
static const char *c_fn[F_COUNT] = {
    "sqrt", "exp", "log", "fabs", "fmin", "fmax", "pow", "sin", "cos", "tan",
    "tanh", "atan", "sinh", "cosh", "floor", NULL};

static const char *aname(const Stencil *s, const char *const *names, int a)
{
    return names ? names[a] : s->arr[a].name;
}

static void pr_num(FILE *f, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "((stn_real)%.0f)", v);
    else
        fprintf(f, "((stn_real)%.17g)", v);
}

/* An index: loop variables i,j,k (or vars); an end-relative index as nx+c in
 * the stencil language (c_form = 0) or st_n0+c in generated C (c_form = 1). */
static void pr_index_vars(FILE *f, int d, Index ix, int c_form, const char *const *vars)
{
    const char *v = vars ? vars[d] : dimvar(d);
    if (ix.kind == IK_VAR) {
        if (ix.c == 0) fprintf(f, "%s", v);
        else fprintf(f, "%s%+ld", v, ix.c);
    } else if (ix.kind == IK_CONST) {
        fprintf(f, "%ld", ix.c);
    } else if (c_form) {
        fprintf(f, "st_n%d%+ld", d, ix.c);
    } else if (ix.c == 0) {
        fprintf(f, "%s", dimn(d));
    } else {
        fprintf(f, "%s%+ld", dimn(d), ix.c);
    }
}
static void pr_index(FILE *f, int d, Index ix) { pr_index_vars(f, d, ix, 0, NULL); }

int pr_new_tmps(int n)
{
    const int first = tmp_counter + 1;
    tmp_counter += n;
    return first;
}

/* a tap whose y/z indices are j+c, k+c: relative to its row pointer */
static int row_relative(const Stencil *s, const Node *t)
{
    for (int d = 1; d < s->dims; ++d)
        if (t->idx[d].kind != IK_VAR) return 0;
    return 1;
}

void pr_tap_c(FILE *f, const PrintCtx *pc, const Node *t)
{
    const char *nm = aname(pc->s, pc->arrname, t->ref);
    int D = pc->s->dims;
    const int row = pc->tapmode == TAP_ROW || pc->tapmode == TAP_AHEAD || (pc->rowfrom > 0 && t->ref >= pc->rowfrom);
    if (row && row_relative(pc->s, t)) {
        fprintf(f, "%s%s[(", pc->tapmode == TAP_AHEAD ? "st_next_" : "st_row_", nm);
        pr_index_vars(f, 0, t->idx[0], 1, pc->vars);
        fprintf(f, ")");
        if (pc->xorg && pc->xorg[t->ref]) fprintf(f, " - %s", pc->xorg[t->ref]);
        if (D == 2 && t->idx[1].c) fprintf(f, " + %s_s0*(%ld)", nm, t->idx[1].c);
        if (D == 3 && (t->idx[1].c || t->idx[2].c)) fprintf(f, " + %s_s0*(%ld + %s_s1*(%ld))", nm, t->idx[1].c, nm, t->idx[2].c);
        fprintf(f, "]");
        return;
    }
    fprintf(f, "%s[", nm);
    for (int d = 0; d < D; ++d) {
        if (d > 0) fprintf(f, " + %s_s%d*(", nm, d - 1);
        int mapped = (pc->tapmode == TAP_MAPPED || (pc->tapmode == TAP_MAPPED_YZ && d > 0) ||
                      (pc->tapmode == TAP_MAPPED_X && d == 0)) &&
                     t->idx[d].kind == IK_VAR;
        /* MAPPED_YZ is used inline in mode-specialised loops: st_mode */
        if (pc->tapmode == TAP_HOISTED_YZ && d > 0 && t->idx[d].kind == IK_VAR)
            fprintf(f, "st_m%d%c%ld", d, t->idx[d].c < 0 ? 'n' : 'p', labs(t->idx[d].c));
        else if (mapped)
            fprintf(f, "(ptrdiff_t)stenc_map(%s, %ld, st_n%d, %s)", pc->vars ? pc->vars[d] : dimvar(d), t->idx[d].c, d,
                    pc->tapmode == TAP_MAPPED_YZ ? "st_mode" : "mode");
        else {
            fprintf(f, "(");
            pr_index_vars(f, d, t->idx[d], 1, pc->vars);
            fprintf(f, ")");
        }
    }
    for (int d = 1; d < D; ++d) fprintf(f, ")");
    fprintf(f, "]");
}

int pr_hoisted_yz(FILE *f, const Stencil *s, Node **roots, int nroots, const char *const *vars, const char *ind)
{
    enum { SPAN = 64 };
    char seen[3][2 * SPAN + 1] = {{0}};
    for (int r = 0; r < nroots; ++r) { /* offsets past SPAN: not hoisted (the caller maps inline) */
        Node *taps[MAXTAP];
        int nt = ex_taps(roots[r], -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t)
            for (int d = 1; d < s->dims; ++d)
                if (taps[t]->idx[d].kind == IK_VAR && labs(taps[t]->idx[d].c) > SPAN) return 0;
    }
    for (int r = 0; r < nroots; ++r) {
        Node *taps[MAXTAP];
        int nt = ex_taps(roots[r], -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t)
            for (int d = 1; d < s->dims; ++d) {
                long c = taps[t]->idx[d].c;
                if (taps[t]->idx[d].kind != IK_VAR || labs(c) > SPAN || seen[d][c + SPAN]) continue;
                seen[d][c + SPAN] = 1;
                fprintf(f, "%sconst ptrdiff_t st_m%d%c%ld = (ptrdiff_t)stenc_map(%s, %ld, st_n%d, st_mode);\n", ind, d,
                        c < 0 ? 'n' : 'p', labs(c), vars[d], c, d);
            }
    }
    return 1;
}

void pr_row_pointers(FILE *f, const Stencil *s, Node **roots, int nroots, const char *const *arrname, const char *ind)
{
    int seen[MAXARR] = {0};
    for (int r = 0; r < nroots; ++r) {
        Node *taps[MAXTAP];
        int nt = ex_taps(roots[r], -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t) {
            const int a = taps[t]->ref;
            if (seen[a] || !row_relative(s, taps[t])) continue;
            seen[a] = 1;
            const char *nm = aname(s, arrname, a);
            if (s->dims == 3)
                fprintf(f, "%sconst stn_real *const st_row_%s = %s + %s_s0*(j + %s_s1*k); (void)st_row_%s;\n", ind, nm, nm, nm, nm, nm);
            else fprintf(f, "%sconst stn_real *const st_row_%s = %s + %s_s0*j; (void)st_row_%s;\n", ind, nm, nm, nm, nm);
        }
    }
}

static void count_uses(Node *n, int tag)
{
    if (n->mark == tag) { n->uses++; return; }
    n->mark = tag;
    n->uses = 1;
    n->tmp = 0;
    for (int i = 0; i < n->nargs; ++i) count_uses(n->a[i], tag);
}

static void pr_expr_c(FILE *f, const PrintCtx *pc, const Node *n);

/* a quotient by a divisor that reads no array and is not a plain number
 * (dx*dx: the same at every point), printed as a product with the
 * divisor's reciprocal, which a hand-written loop computes once (the
 * compiler hoists it out of the loops; the product may differ from the
 * exact quotient in the last bit: docs/language.md "Division by
 * parameters") */
static int recip_div(const Node *n)
{
    if (n->kind != E_DIV || ex_is_num(n->a[0], 1) || n->a[1]->kind == E_NUM) return 0;
    Node *b[1];
    return ex_taps(n->a[1], -1, b, 1) == 0;
}

static void pr_operand(FILE *f, const PrintCtx *pc, const Node *n)
{
    if (n->tmp) fprintf(f, "t%d", n->tmp);
    else pr_expr_c(f, pc, n);
}

static void pr_expr_c(FILE *f, const PrintCtx *pc, const Node *n)
{
    switch (n->kind) {
    case E_NUM: pr_num(f, n->num); return;
    case E_PARAM: fprintf(f, "%s", pc->s->param[n->ref]); return;
    case E_TAP: pr_tap_c(f, pc, n); return;
    case E_ADD: case E_SUB: case E_MUL: case E_DIV: {
        const int rd = recip_div(n); /* a / d, d the same at every point: a * (1 / d), 1 / d out of the loops */
        const char *op = rd ? "*(((stn_real)1)/" : n->kind == E_ADD ? " + " : n->kind == E_SUB ? " - " : n->kind == E_MUL ? "*" : "/";
        fprintf(f, "(");
        pr_operand(f, pc, n->a[0]);
        fprintf(f, "%s", op);
        pr_operand(f, pc, n->a[1]);
        fprintf(f, rd ? "))" : ")");
        return;
    }
    case E_NEG: fprintf(f, "(-"); pr_operand(f, pc, n->a[0]); fprintf(f, ")"); return;
    case E_POWI: {
        int e = n->op < 0 ? -n->op : n->op;
        fprintf(f, "(");
        if (n->op < 0) fprintf(f, "((stn_real)1)/(");
        if (e <= 4) {
            for (int i = 0; i < e; ++i) {
                if (i) fprintf(f, "*");
                pr_operand(f, pc, n->a[0]);
            }
        } else {
            fprintf(f, "pow(");
            pr_operand(f, pc, n->a[0]);
            fprintf(f, ", (stn_real)%d)", e);
        }
        if (n->op < 0) fprintf(f, ")");
        fprintf(f, ")");
        return;
    }
    case E_CALL:
        if (n->op == F_SIGN) {
            fprintf(f, "((stn_real)((");
            pr_operand(f, pc, n->a[0]);
            fprintf(f, " > 0) - (");
            pr_operand(f, pc, n->a[0]);
            fprintf(f, " < 0)))");
            return;
        }
        fprintf(f, "%s(", c_fn[n->op]);
        for (int i = 0; i < n->nargs; ++i) {
            if (i) fprintf(f, ", ");
            pr_operand(f, pc, n->a[i]);
        }
        fprintf(f, ")");
        return;
    case E_SELECT: /* both branches evaluated: runtime/stenc_inline.h */
        fprintf(f, "stenc_select(");
        pr_operand(f, pc, n->a[0]);
        fprintf(f, ", ");
        pr_operand(f, pc, n->a[1]);
        fprintf(f, ", ");
        pr_operand(f, pc, n->a[2]);
        fprintf(f, ")");
        return;
    case E_CMP:
        fprintf(f, "(");
        pr_operand(f, pc, n->a[0]);
        fprintf(f, " %s ", cmp_op[n->op]);
        pr_operand(f, pc, n->a[1]);
        fprintf(f, ")");
        return;
    }
}

static int needs_tmp(const Node *n)
{
    if (n->kind == E_NUM || n->kind == E_PARAM) return 0;
    if (n->uses > 1) return 1;
    return 0;
}

static void emit_tmps(FILE *f, const PrintCtx *pc, Node *n, const char *indent, int tag)
{
    if (n->mark == tag) return;
    n->mark = tag;
    for (int i = 0; i < n->nargs; ++i) emit_tmps(f, pc, n->a[i], indent, tag);
    /* a power's base is printed several times: give it a temporary */
    if (n->kind == E_POWI && n->a[0]->kind != E_TAP && n->a[0]->kind != E_PARAM &&
        n->a[0]->kind != E_NUM && !n->a[0]->tmp) {
        Node *b = n->a[0];
        int id = ++tmp_counter;
        fprintf(f, "%sconst stn_real t%d = ", indent, id);
        pr_expr_c(f, pc, b);
        fprintf(f, ";\n");
        b->tmp = id;
    }
    if (needs_tmp(n) && n->kind != E_CMP) {
        int id = ++tmp_counter;
        fprintf(f, "%sconst stn_real t%d = ", indent, id);
        pr_expr_c(f, pc, n);
        fprintf(f, ";\n");
        n->tmp = id;
    }
}

static int has_tap_rec(Node *n, int tag)
{
    if (n->mark == tag) return n->uses;
    n->mark = tag;
    int t = n->kind == E_TAP;
    for (int i = 0; i < n->nargs; ++i) t |= has_tap_rec(n->a[i], tag);
    n->uses = t;
    return t;
}

/* after has_tap_rec (uses: whether a tap is below) */
static void find_pins(Node *n, int tag, Pins *p)
{
    if (n->mark == tag) return;
    n->mark = tag;
    if (!n->uses && n->nargs && n->kind != E_CMP) {
        if (p->n < MAXPIN) p->node[p->n++] = n;
        return;
    }
    for (int i = 0; i < n->nargs; ++i) find_pins(n->a[i], tag, p);
}

/* The largest subexpressions of the roots that read no array and compute
 * something (a reciprocal of a parameter, a product of two), printed as
 * constants at INDENT, before the loop whose body prints the roots with
 * pr_c_block_pinned.  GCC hoists them itself, except where it if-converts a
 * select in a vector reduction: there it computed 1/(2*delta) in the loop
 * under a mask, a second division per point (Huber's 3D value_grad, 1.07-1.17x
 * the time; perf/NOTES.md section 23). */
void pr_c_invariants(FILE *f, const PrintCtx *pc, Node **roots, int nroots, const char *indent, Pins *p)
{
    const int tag = --use_tag, tag2 = --use_tag;
    p->n = 0;
    for (int r = 0; r < nroots; ++r) has_tap_rec(roots[r], tag);
    for (int r = 0; r < nroots; ++r) find_pins(roots[r], tag2, p);
    for (int q = 0; q < p->n; ++q) {
        Node *n = p->node[q];
        count_uses(n, --use_tag); /* its own shared parts: temporaries too */
        const int tag3 = --use_tag;
        emit_tmps(f, pc, n, indent, tag3);
        if (!n->tmp) {
            const int id = ++tmp_counter;
            fprintf(f, "%sconst stn_real t%d = ", indent, id);
            pr_expr_c(f, pc, n);
            fprintf(f, ";\n");
            n->tmp = id;
        }
        p->tmp[q] = n->tmp;
    }
}

/* N read from READ into a temporary (printed at INDENT) and pinned in P:
 * a block printed with P then names it instead of computing it */
void pr_c_pin_read(FILE *f, Pins *p, Node *n, const char *read, const char *indent)
{
    const int id = ++tmp_counter;
    fprintf(f, "%sconst stn_real t%d = %s;\n", indent, id, read);
    if (p->n < MAXPIN) p->node[p->n] = n, p->tmp[p->n++] = id;
}

void pr_c_block(FILE *f, const PrintCtx *pc, Node **roots, int nroots,
                const char *const *fmts, const char *indent)
{
    pr_c_block_pinned(f, pc, roots, nroots, fmts, indent, NULL);
}

void pr_c_block_pinned(FILE *f, const PrintCtx *pc, Node **roots, int nroots, const char *const *fmts,
                       const char *indent, const Pins *p)
{
    int tag = --use_tag;
    for (int r = 0; r < nroots; ++r) count_uses(roots[r], tag);
    /* roots themselves are used once more by their assignment */
    int tag2 = --use_tag;
    for (int q = 0; p && q < p->n; ++q) { /* printed before the loop: their names */
        p->node[q]->tmp = p->tmp[q];
        p->node[q]->mark = tag2;
    }
    for (int r = 0; r < nroots; ++r) emit_tmps(f, pc, roots[r], indent, tag2);
    for (int r = 0; r < nroots; ++r) {
        char *buf = NULL; /* any length: no fixed buffer may cut an expression */
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) { pr_operand(m, pc, roots[r]); fclose(m); }
        fprintf(f, "%s", indent);
        fprintf(f, fmts[r], buf ? buf : "");
        fprintf(f, "\n");
        free(buf);
    }
}

/* ---- stencil language ---- */

/* The stencil-language printer: as few parentheses as the language's
 * precedence needs (comparisons, then sums, products, a sign, powers), and
 * the association as evaluated: a right operand of the same strength keeps
 * its parentheses (a - (b - c), a*(b*c)), so the text reads back to the
 * same floating-point operations.  NAMED (or NULL) maps subexpressions to
 * the names a listing gave them. */
typedef struct {
    int n;
    const Node *node[MAXNAMED];
    char name[MAXNAMED][MAXNAME];
} StnNamed;

typedef struct {
    const Stencil *s;
    const char *const *arrname;
    const StnNamed *named;
} StnCtx;

static const char *stn_name_of(const StnCtx *c, const Node *n)
{
    for (int i = 0; c->named && i < c->named->n; ++i)
        if (c->named->node[i] == n) return c->named->name[i];
    return NULL;
}

void pr_stn_ref(FILE *f, int dims, const char *name, const Index *idx, int sign)
{
    fprintf(f, "%s[", name);
    for (int d = 0; d < dims; ++d) {
        Index ix = idx[d];
        if (ix.kind == IK_VAR) ix.c *= sign;
        if (d) fprintf(f, ",");
        pr_index(f, d, ix);
    }
    fprintf(f, "]");
}

/* how strongly N binds: 6 for what never needs parentheses */
static int stn_prec(const StnCtx *c, const Node *n)
{
    if (stn_name_of(c, n)) return 6;
    switch (n->kind) {
    case E_CMP: return 1;
    case E_ADD: case E_SUB: return 2;
    case E_MUL: case E_DIV: return 3;
    case E_NEG: return 4;
    case E_POWI: return 5;
    case E_NUM: return n->num < 0 ? 4 : 6;
    default: return 6;
    }
}

static void stn_rec(FILE *f, const StnCtx *c, const Node *n);

/* whether N's text starts with a minus sign */
static int stn_starts_neg(const StnCtx *c, const Node *n)
{
    if (stn_name_of(c, n)) return 0;
    if (n->kind == E_NEG) return 1;
    if (n->kind == E_NUM) return n->num < 0;
    if (n->kind >= E_ADD && n->kind <= E_DIV) return stn_prec(c, n->a[0]) >= stn_prec(c, n) && stn_starts_neg(c, n->a[0]);
    return 0;
}

/* operand A of an operator of strength PREC; TIGHT: a right operand, in
 * parentheses at the same strength too, and where it starts with a minus
 * sign (a - (-b), not a - -b) */
static void stn_operand(FILE *f, const StnCtx *c, const Node *a, int prec, int tight)
{
    const int p = stn_prec(c, a), paren = p < prec || (tight && (p == prec || stn_starts_neg(c, a)));
    if (paren) fprintf(f, "(");
    stn_rec(f, c, a);
    if (paren) fprintf(f, ")");
}

static void stn_rec(FILE *f, const StnCtx *c, const Node *n)
{
    const char *nm = stn_name_of(c, n);
    if (nm) { fprintf(f, "%s", nm); return; }
    switch (n->kind) {
    case E_NUM:
        if (n->num == floor(n->num) && fabs(n->num) < 1e15) fprintf(f, "%.0f", n->num);
        else fprintf(f, "%.17g", n->num);
        return;
    case E_PARAM: fprintf(f, "%s", c->s->param[n->ref]); return;
    case E_TAP: pr_stn_ref(f, c->s->dims, aname(c->s, c->arrname, n->ref), n->idx, 1); return;
    case E_ADD: case E_SUB: case E_MUL: case E_DIV: case E_CMP: {
        const int p = stn_prec(c, n);
        const char *op = n->kind == E_ADD ? " + " : n->kind == E_SUB ? " - " : n->kind == E_MUL ? "*" : n->kind == E_DIV ? "/" : NULL;
        stn_operand(f, c, n->a[0], p, 0);
        if (op) fprintf(f, "%s", op);
        else fprintf(f, " %s ", cmp_op[n->op]);
        stn_operand(f, c, n->a[1], p, 1);
        return;
    }
    case E_NEG: fprintf(f, "-"); stn_operand(f, c, n->a[0], 5, 0); return;
    case E_POWI: stn_operand(f, c, n->a[0], 6, 0); fprintf(f, "^%d", n->op); return;
    case E_CALL: case E_SELECT:
        fprintf(f, "%s(", n->kind == E_CALL ? ex_fn_name[n->op] : "select");
        for (int i = 0; i < n->nargs; ++i) {
            if (i) fprintf(f, ", ");
            stn_rec(f, c, n->a[i]);
        }
        fprintf(f, ")");
        return;
    }
}

void pr_stn(FILE *f, const Stencil *s, const Node *n, const char *const *names)
{
    const StnCtx c = {s, names, NULL};
    stn_rec(f, &c, n);
}

/* what a listing prints from: its lines (roots, names, notes), the names
 * given so far */
#define MAXLINES (2 * MAXTAP + 2)
typedef struct {
    Node *const *roots;
    const char *const *rootname;
    const char *const *note;
    int nroots, ntmp, tag, cur;
    const char *ind;
    char printed[MAXLINES];
    StnNamed named;
} Listing;

/* a name a later line may use for its expression ("all(x_grad)" is not) */
static int is_ident(const char *n)
{
    if (!*n || isdigit((unsigned char)*n)) return 0;
    for (; *n; ++n)
        if (!isalnum((unsigned char)*n) && *n != '_') return 0;
    return 1;
}

/* "IND NAME = EXPR[    # NOTE]" */
static void listing_print(FILE *f, const StnCtx *c, const char *ind, const char *name, const Node *n, const char *note)
{
    fprintf(f, "%s%s = ", ind, name);
    stn_rec(f, c, n);
    if (note) fprintf(f, "    # %s", note);
    fprintf(f, "\n");
}

static void listing_line(FILE *f, const StnCtx *c, Listing *L, int r, const Node *n)
{
    listing_print(f, c, L->ind, L->rootname[r], n, L->note ? L->note[r] : NULL);
    L->printed[r] = 1;
}

/* the listing's lines up to and including N's (post-order): a line's
 * expression, a subexpression used more than once (not a read, number or
 * parameter) as "tK = EXPR" */
static void listing_rec(FILE *f, const StnCtx *c, Listing *L, Node *n)
{
    if (n->mark == L->tag) return;
    n->mark = L->tag;
    for (int i = 0; i < n->nargs; ++i) listing_rec(f, c, L, n->a[i]);
    /* a read, a number or a parameter keeps its own spelling: a line of
     * one (d1 = c) comes in its turn and names nothing */
    const int leaf = n->kind == E_NUM || n->kind == E_PARAM || n->kind == E_TAP;
    /* the line being listed: a later line's expression met inside it is a
     * shared subexpression (tK) here, and that line reads "dK = tK" */
    const int r = !leaf && n == L->roots[L->cur] && !L->printed[L->cur] ? L->cur : L->nroots;
    const int shared = n->uses > 1 && !leaf;
    if (r < L->nroots) {
        listing_line(f, c, L, r, n);
        if (!is_ident(L->rootname[r]) || L->named.n == MAXNAMED) return;
        snprintf(L->named.name[L->named.n], MAXNAME, "%s", L->rootname[r]);
    } else {
        if (!shared || L->named.n == MAXNAMED) return;
        snprintf(L->named.name[L->named.n], MAXNAME, "t%d", ++L->ntmp);
        listing_print(f, c, L->ind, L->named.name[L->named.n], n, NULL);
    }
    L->named.node[L->named.n++] = n;
}

void pr_stn_listing(FILE *f, const Stencil *s, const char *const *arrname, Node *const *roots,
                    const char *const *rootname, const char *const *note, int nroots, const char *ind)
{
    if (nroots > MAXLINES) nroots = MAXLINES;
    Listing L = {roots, rootname, note, nroots, 0, --use_tag, 0, ind, {0}, {0}};
    const int count = --use_tag;
    for (int r = 0; r < nroots; ++r) count_uses(roots[r], count);
    const StnCtx c = {s, arrname, &L.named};
    for (int r = 0; r < nroots; ++r) {
        L.cur = r;
        listing_rec(f, &c, &L, roots[r]);
        /* a line whose expression an earlier line's holds (printed there as
         * a name), or a second line of the same expression */
        if (!L.printed[r]) listing_line(f, &c, &L, r, roots[r]);
    }
}
