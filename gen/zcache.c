/* stenc-gen: the CUDA kernels' plane cache along z.
 *
 * A 3D CUDA kernel marches each thread up a column (i, j) of its tile
 * through a chunk of planes (m4/backend_cuda.m4 stn_zmarch).  A tap
 * (i+a, j+b, k+c) read at plane k is the tap (i+a, j+b, k+c+1) read one
 * plane before: for every column (a, b) of the body's taps that reads two
 * planes or more, the values of planes k+cmin .. k+cmax-1 stay in
 * registers from one plane to the next, and each interior point loads
 * only the column's newest plane k+cmax (Micikevicius 2009, "3D finite
 * difference computation on GPUs using CUDA", keeps the z neighbours in
 * registers the same way).  A column's run of interior planes:
 *
 *     stn_real t1 = X(k+cmin), t2 = X(k+cmin+1);   ZDECL, at the first plane
 *     for (; k < st_kb; ++k) {                      the template's loop
 *         const stn_real t3 = X(k+cmax);            ZBODY: the newest plane,
 *         ... the body, the column's taps named t1 .. t3 ...
 *         t1 = t2; t2 = t3;                         and the rotation
 *     }
 *
 * Pipelined (STENC_CUDA_ZPIPE, the default): every column, one plane or
 * more, keeps planes k+cmin .. k+cmax in registers, and a point loads the
 * next point's newest plane k+1+cmax before it computes, so each thread
 * has two points' loads in flight instead of one (a thread waiting on its
 * loads at every point leaves the memory latency-bound):
 *
 *     stn_real t1 = X(k+cmin), t2 = X(k+cmax);      ZDECL
 *     for (; k < st_kb; ++k) {
 *         const ptrdiff_t st_kp = k + 1 < st_kb ? k + 1 : k;
 *         const stn_real t3 = X(st_kp+cmax);        the next point's plane
 *         ... the body, the column's taps named t1 .. t2 ...
 *         t1 = t2; t2 = t3;
 *     }
 *
 * A 2D row's interior (threads stride over i by the block's width) is
 * pipelined the same way along i: every tap is a column of one plane, and
 * the next point's taps, at i + blockDim.x (st_ip), load before the point
 * computes.  Both forms are printed, under #if STENC_CUDA_ZPIPE (2D has
 * no other form: without it the plain interior).
 *
 * In 3D the pipelined form also carries costly subexpressions up the
 * column (STENC_CUDA_ZNODES, a third form printed when there are any):
 * where the body reads a square root, a call or a division by a variable
 * E at plane k+c and at k+c+1, the point computes the newest, E(k+cmax),
 * into a register, and E(k+cmin) .. E(k+cmax-1) are registers rotated like
 * the taps' (zn_plan):
 *
 *     stn_real t7 = E(k-1);                         ZDECL
 *     for (; k < st_kb; ++k) {
 *         ... the loads ahead ...
 *         const stn_real t8 = E(k);                 the newest
 *         ... the body, E(k-1) read as t7, E(k) as t8 ...
 *         t7 = t8;  ... the taps' rotation ...
 *     }
 *
 * Planning (zc_plan, zn_plan: which columns and chains, which registers)
 * is kept apart from printing (zc_print_*, zn_print_*).  Arrays the job
 * writes are never cached, nor subexpressions of them. */
#include "gen.h"

#include <stdlib.h>

/* the registers a job carries, all columns together (each one is live
 * through a column's whole run of interior planes: register pressure) */
enum { ZC_MAXREG = 24, ZC_MAXREG_PIPE = 32 };

typedef struct {
    int arr;
    long dx, dy, cmin, cmax;
    int ntap;  /* distinct planes the body reads in this column */
    int reg;   /* temporary number of plane cmin; cmin + r is reg + r */
} ZCol;

/* a chain of costly subexpressions along z: n[c] is n[0] shifted c planes
 * up; n[0 .. len-2] are carried in registers reg .. reg+len-2, the newest
 * n[len-1] is computed at each point into reg+len-1 */
enum { ZN_MAXLEN = 4, ZN_MAXCHAIN = 8, ZN_MAXREG = 8, ZN_MAXNODE = 1024 };
typedef struct {
    Node *n[ZN_MAXLEN];
    int len, reg;
} ZChain;

typedef struct {
    int pipe;  /* the pipelined form: every column, the next plane loaded ahead */
    int n, nreg;
    int ntap;  /* distinct taps of the body */
    ZCol col[MAXTAP];
    int nch;   /* chains of costly subexpressions carried (zn_plan) */
    ZChain ch[ZN_MAXCHAIN];
} ZPlan;

static int zc_cacheable(const Node *t, const int *skip)
{
    for (int d = 0; d < 3; ++d)
        if (t->idx[d].kind != IK_VAR) return 0;
    return !skip[t->ref];
}

static ZCol *zc_column(ZPlan *Z, const Node *t)
{
    for (int c = 0; c < Z->n; ++c) {
        ZCol *z = &Z->col[c];
        if (z->arr == t->ref && z->dx == t->idx[0].c && z->dy == t->idx[1].c) return z;
    }
    if (Z->n >= MAXTAP) return NULL;
    ZCol *z = &Z->col[Z->n++];
    z->arr = t->ref, z->dx = t->idx[0].c, z->dy = t->idx[1].c;
    z->cmin = z->cmax = t->idx[2].c;
    z->ntap = 0;
    return z;
}

/* Keep the columns worth their registers: a column carries cmax - cmin
 * planes and saves ntap - 1 loads a point; it stays when each register
 * saves at least a quarter of a load and all fit in ZC_MAXREG.  Pipelined,
 * a column carries cmax - cmin + 1 planes and stays while all fit in
 * ZC_MAXREG_PIPE (its loads move ahead whether or not it saves any). */
static void zc_select(ZPlan *Z)
{
    int keep = 0;
    Z->nreg = 0;
    for (int c = 0; c < Z->n; ++c) {
        const ZCol z = Z->col[c];
        const long carry = z.cmax - z.cmin + (Z->pipe ? 1 : 0);
        if (Z->pipe ? Z->nreg + carry > ZC_MAXREG_PIPE
                    : z.ntap < 2 || carry > 4L * (z.ntap - 1) || Z->nreg + carry > ZC_MAXREG)
            continue;
        Z->nreg += (int)carry;
        Z->col[keep++] = z;
    }
    Z->n = keep;
}

static int zn_carried(const ZPlan *Z, const Node *n)
{
    for (int c = 0; c < Z->nch; ++c)
        for (int k = 0; k + 1 < Z->ch[c].len; ++k)
            if (Z->ch[c].n[k] == n) return 1;
    return 0;
}

/* the distinct subexpressions a point evaluates or reads from a register:
 * under the roots, not inside the subexpressions Z carries up from the
 * point below, into seen (zn_plan took chains only from bodies of at most
 * ZN_MAXNODE distinct nodes, so each is visited once) */
static void zn_reach(Node *n, const ZPlan *Z, Node **seen, int *nseen)
{
    for (int q = 0; q < *nseen; ++q)
        if (seen[q] == n) return;
    if (*nseen < ZN_MAXNODE) seen[(*nseen)++] = n;
    if (zn_carried(Z, n)) return;
    for (int a = 0; a < n->nargs; ++a) zn_reach(n->a[a], Z, seen, nseen);
}

static int zn_seen(Node *const *seen, int nseen, const Node *n)
{
    for (int q = 0; q < nseen; ++q)
        if (seen[q] == n) return 1;
    return 0;
}

/* drop the chains with a member the body no longer reads (all its uses
 * inside another chain's carried members: its register would be set and
 * never used), until every member is read; returns how many nodes the last
 * pass reached (seen: what a point evaluates with the chains kept) */
static int zn_prune(Node **roots, int nr, ZPlan *Z, Node **seen)
{
    int nseen = 0;
    for (int dropped = 1; dropped && Z->nch;) {
        int keep = 0;
        nseen = dropped = 0;
        for (int r = 0; r < nr; ++r) zn_reach(roots[r], Z, seen, &nseen);
        for (int c = 0; c < Z->nch; ++c) {
            int all = 1;
            for (int k = 0; k < Z->ch[c].len; ++k) all &= zn_seen(seen, nseen, Z->ch[c].n[k]);
            if (all) Z->ch[keep++] = Z->ch[c];
            else dropped = 1;
        }
        Z->nch = keep;
    }
    return nseen;
}

/* the distinct taps a point reads (nodes are hash-consed) into taps: with
 * chains (zn_plan), which are pruned first, not those only their carried
 * members read; returns how many */
static int zc_taps(Node **roots, int nr, ZPlan *Z, Node **taps)
{
    int nt = 0;
    Node **seen = Z->nch ? malloc(ZN_MAXNODE * sizeof *seen) : NULL;
    if (!seen) Z->nch = 0; /* none, or out of memory: no chains */
    const int nseen = seen ? zn_prune(roots, nr, Z, seen) : 0;
    for (int q = 0; q < nseen && Z->nch; ++q)
        if (seen[q]->kind == E_TAP && nt < MAXTAP) taps[nt++] = seen[q];
    free(seen);
    if (Z->nch) return nt;
    for (int r = 0; r < nr; ++r) {
        Node *rt[MAXTAP];
        const int n = ex_taps(roots[r], -1, rt, MAXTAP);
        for (int t = 0; t < n && t < MAXTAP; ++t) {
            int dup = 0;
            for (int u = 0; u < nt; ++u) dup |= taps[u] == rt[t];
            if (!dup && nt < MAXTAP) taps[nt++] = rt[t];
        }
    }
    return nt;
}

/* the columns of the roots' taps; Z's chains (zn_plan) are kept and their
 * carried members' taps left out */
static void zc_plan(Node **roots, int nr, const int *skip, int pipe, int dims, ZPlan *Z)
{
    Node *taps[MAXTAP];
    Z->n = 0;
    Z->pipe = pipe;
    const int nt = zc_taps(roots, nr, Z, taps);
    Z->ntap = nt;
    for (int t = 0; t < nt; ++t) {
        if (!zc_cacheable(taps[t], skip)) continue;
        ZCol *z = zc_column(Z, taps[t]);
        if (!z) continue;
        const long c = taps[t]->idx[2].c;
        if (c < z->cmin) z->cmin = c;
        if (c > z->cmax) z->cmax = c;
        z->ntap++;
    }
    if (dims == 2 && !pipe) Z->n = 0; /* nothing to keep from one point to the next */
    zc_select(Z);
    for (int c = 0; c < Z->n; ++c) /* planes cmin .. cmax, the newest too (pipelined: and the next) */
        Z->col[c].reg = pr_new_tmps((int)(Z->col[c].cmax - Z->col[c].cmin + 1 + pipe));
}

/* ---- costly subexpressions carried along z ----
 * A subexpression E read at plane k is E shifted one plane down read at
 * plane k+1: when the body holds E and E shifted one plane up (TV's
 * gradient: the partial's 1 / sqrt at (i, j, k-1) and at (i, j, k)), a
 * point computes only the newest and takes the others from the registers
 * of the points below, as the plane cache does for taps.  Only costly
 * subexpressions (a call such as sqrt or exp, a division by a variable),
 * only over arrays the job does not write, the largest first: one whose
 * carried members all lie inside carried members of a chain already taken
 * adds nothing. */
typedef struct {
    Node *node[ZN_MAXNODE];
    unsigned char costly[ZN_MAXNODE], ok[ZN_MAXNODE], covered[ZN_MAXNODE];
    int n;
} ZSet;

static int zn_index(const ZSet *S, const Node *x)
{
    for (int q = 0; q < S->n; ++q)
        if (S->node[q] == x) return q;
    return -1;
}

/* every distinct subexpression of N, arguments before their users
 * (returns -1 when the set is full: no chains then) */
static int zn_collect(Node *n, ZSet *S)
{
    if (zn_index(S, n) >= 0) return 0;
    for (int a = 0; a < n->nargs; ++a)
        if (zn_collect(n->a[a], S)) return -1;
    if (S->n == ZN_MAXNODE) return -1;
    S->node[S->n++] = n;
    return 0;
}

/* costly: a call but abs, min, max, floor, sign, or a division by a non-
 * constant, or one inside; ok: its taps all move with the point and read
 * arrays the job does not write, and it reads at least one */
static void zn_classify(ZSet *S, const int *skip)
{
    for (int q = 0; q < S->n; ++q) { /* arguments come first */
        const Node *n = S->node[q];
        int c = (n->kind == E_CALL && n->op != F_ABS && n->op != F_MIN && n->op != F_MAX && n->op != F_FLOOR &&
                 n->op != F_SIGN) ||
                (n->kind == E_DIV && n->a[1]->kind != E_NUM && n->a[1]->kind != E_PARAM);
        int ok = n->kind == E_TAP && zc_cacheable(n, skip), taps = n->kind == E_TAP;
        if (n->kind != E_TAP) ok = 1;
        for (int a = 0; a < n->nargs; ++a) {
            const int r = zn_index(S, n->a[a]);
            c |= S->costly[r];
            ok &= S->ok[r] & 1;
            taps |= S->ok[r] >> 1;
        }
        S->costly[q] = (unsigned char)c;
        S->ok[q] = (unsigned char)(ok | (taps << 1)); /* bit 1: reads a tap */
        S->covered[q] = 0;
    }
}

static int zn_candidate(const ZSet *S, const Node *x)
{
    const int q = x ? zn_index(S, x) : -1;
    return q >= 0 && S->costly[q] && S->ok[q] == 3;
}

static void zn_cover(ZSet *S, const Node *n)
{
    const int q = zn_index(S, n);
    if (q < 0 || S->covered[q]) return;
    S->covered[q] = 1;
    for (int a = 0; a < n->nargs; ++a) zn_cover(S, n->a[a]);
}

/* the chains of costly subexpressions worth carrying, into Z */
static void zn_plan(Node **roots, int nr, const int *skip, ZPlan *Z)
{
    static const long up[3] = {0, 0, 1}, down[3] = {0, 0, -1};
    Z->nch = 0;
    ZSet *S = malloc(sizeof *S);
    if (!S) return;
    S->n = 0;
    int full = 0;
    for (int r = 0; r < nr && !full; ++r) full = zn_collect(roots[r], S) != 0;
    if (!full) zn_classify(S, skip);
    /* largest first: from the end of the set, where users follow arguments */
    for (int q = full ? -1 : S->n - 1; q >= 0 && Z->nch < ZN_MAXCHAIN; --q) {
        Node *n = S->node[q];
        if (!zn_candidate(S, n) || zn_candidate(S, ex_shift(n, down))) continue;
        ZChain c = {{n}, 1, 0};
        for (Node *u = ex_shift(n, up); c.len < ZN_MAXLEN && zn_candidate(S, u); u = ex_shift(u, up)) c.n[c.len++] = u;
        int fresh = 0, nreg = 0;
        for (int k = 0; k < Z->nch; ++k) nreg += Z->ch[k].len - 1;
        for (int k = 0; k + 1 < c.len; ++k) fresh |= !S->covered[zn_index(S, c.n[k])];
        if (c.len < 2 || !fresh || nreg + c.len - 1 > ZN_MAXREG) continue;
        for (int k = 0; k + 1 < c.len; ++k) zn_cover(S, c.n[k]);
        Z->ch[Z->nch++] = c;
    }
    free(S);
    for (int k = 0; k < Z->nch; ++k) Z->ch[k].reg = pr_new_tmps(Z->ch[k].len);
}

static Node *zc_tap(const ZCol *z, long c)
{
    const Index idx[3] = {{IK_VAR, z->dx}, {IK_VAR, z->dy}, {IK_VAR, c}};
    return ex_tap(z->arr, idx);
}

/* the registers declared at the run's first plane k with the
 * planes below the newest (taps indexed directly: the row pointers are
 * the body's) */
static void zc_print_decl(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind)
{
    const PrintCtx direct = {pc->s, TAP_DIRECT, pc->arrname, pc->vars, NULL, 0};
    if (Z->n == 0 && Z->nch == 0) return;
    int kept = 0;
    for (int c = 0; c < Z->n; ++c) kept += Z->col[c].ntap - 1;
    if (Z->pipe && pc->s->dims == 2)
        fprintf(f, "%s/* pipelined: the %d taps from the %d registers below, the next point's (i + blockDim.x) loaded ahead */\n",
                ind, Z->ntap, Z->nreg);
    else if (Z->pipe)
        fprintf(f, "%s/* plane cache, pipelined: %d of the %d taps from the %d registers below, the next point's loaded ahead */\n",
                ind, kept + Z->n, Z->ntap, Z->nreg);
    else
        fprintf(f, "%s/* plane cache: %d of the %d taps from the %d registers below; %d loads a point */\n", ind, kept,
                Z->ntap, Z->nreg, Z->ntap - kept);
    for (int c = 0; c < Z->n; ++c) {
        const ZCol *z = &Z->col[c];
        for (long p = z->cmin; p < z->cmax + Z->pipe; ++p) {
            fprintf(f, "%sstn_real t%ld = ", ind, z->reg + (p - z->cmin));
            pr_tap_c(f, &direct, zc_tap(z, p));
            fprintf(f, ";\n");
        }
    }
    if (Z->nch) fprintf(f, "%s/* and %d costly subexpressions carried up from the points below */\n", ind, Z->nch);
    for (int c = 0; c < Z->nch; ++c)
        for (int k = 0; k + 1 < Z->ch[c].len; ++k) {
            char fmt[48];
            snprintf(fmt, sizeof fmt, "stn_real t%d = %%s;", Z->ch[c].reg + k);
            const char *fm = fmt;
            Node *n = Z->ch[c].n[k];
            pr_c_block(f, &direct, &n, 1, &fm, ind);
        }
}

/* 3D, pipelined: the row of the next point (plane k+1; the run's last
 * point: its own) of each array a cached column reads, st_next_NAME, for
 * the loads ahead (TAP_AHEAD: displacements from it, no index arithmetic
 * a tap); written as the point's row plus a plane, which the compiler
 * shares with the row pointer and carries from point to point (the
 * clamped plane index itself would cost a multiplication a point) */
static void zc_print_next_rows(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind)
{
    int done[MAXARR] = {0};
    for (int c = 0; c < Z->n; ++c) {
        const int a = Z->col[c].arr;
        if (done[a]) continue;
        done[a] = 1;
        const char *nm = pc->arrname ? pc->arrname[a] : pc->s->arr[a].name;
        fprintf(f, "%sconst stn_real *const st_next_%s = %s + %s_s0*(j + %s_s1*k) + (k + 1 < st_kb ? %s_s0*%s_s1 : 0);\n",
                ind, nm, nm, nm, nm, nm, nm);
    }
}

/* each column's newest plane, and every cached tap pinned to its register */
static void zc_print_loads(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind, Pins *p)
{
    const int D = pc->s->dims;
    const char *vars[3] = {D == 2 ? "st_ip" : pc->vars ? pc->vars[0] : "i", pc->vars ? pc->vars[1] : "j", "st_kp"};
    const PrintCtx ahead = {pc->s, D == 3 ? TAP_AHEAD : TAP_DIRECT, pc->arrname, vars, NULL, 0};
    p->n = 0;
    if (Z->pipe && Z->n && D == 3) zc_print_next_rows(f, pc, Z, ind);
    if (Z->pipe && Z->n && D == 2)
        fprintf(f, "%sconst ptrdiff_t st_ip = i + (ptrdiff_t)blockDim.x < st_ie ? i + (ptrdiff_t)blockDim.x : i;\n", ind);
    for (int c = 0; c < Z->n; ++c) {
        const ZCol *z = &Z->col[c];
        const long top = z->reg + (z->cmax - z->cmin) + Z->pipe;
        fprintf(f, "%sconst stn_real t%ld = ", ind, top);
        pr_tap_c(f, Z->pipe ? &ahead : pc, zc_tap(z, z->cmax));
        fprintf(f, ";\n");
        for (long q = z->cmin; q <= z->cmax && p->n < MAXPIN; ++q) {
            p->node[p->n] = zc_tap(z, q);
            p->tmp[p->n++] = (int)(z->reg + (q - z->cmin));
        }
    }
}

/* each chain's newest subexpression into its register, and every member
 * pinned to its register */
static void zn_print_newest(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind, Pins *p)
{
    for (int c = 0; c < Z->nch; ++c) {
        const ZChain *z = &Z->ch[c];
        char fmt[48];
        snprintf(fmt, sizeof fmt, "const stn_real t%d = %%s;", z->reg + z->len - 1);
        const char *fm = fmt;
        Node *newest = z->n[z->len - 1];
        pr_c_block_pinned(f, pc, &newest, 1, &fm, ind, p);
        for (int k = 0; k < z->len && p->n < MAXPIN; ++k) {
            p->node[p->n] = z->n[k];
            p->tmp[p->n++] = z->reg + k;
        }
    }
}

static void zc_print_rotate(FILE *f, const ZPlan *Z, const char *ind)
{
    for (int c = 0; c < Z->nch; ++c) {
        fprintf(f, "%s", ind);
        for (int k = 0; k + 1 < Z->ch[c].len; ++k)
            fprintf(f, "%st%d = t%d;", k ? " " : "", Z->ch[c].reg + k, Z->ch[c].reg + k + 1);
        fprintf(f, "\n");
    }
    for (int c = 0; c < Z->n; ++c) {
        const ZCol *z = &Z->col[c];
        fprintf(f, "%s", ind);
        for (long q = z->cmin; q < z->cmax + Z->pipe; ++q)
            fprintf(f, "%st%ld = t%ld;", q > z->cmin ? " " : "", z->reg + (q - z->cmin), z->reg + (q - z->cmin) + 1);
        fprintf(f, "\n");
    }
}

/* one form's body (Z->n == 0: the plain interior, every tap loaded) */
static void zc_print_body(FILE *f, const ZcIn *in, const ZPlan *Z, const char *ind)
{
    Pins p;
    zc_print_loads(f, in->pc, Z, ind, &p);
    zn_print_newest(f, in->pc, Z, ind, &p);
    for (int r = 0; r < in->nr; r += in->per_root ? 1 : in->nr) {
        const int n = in->per_root ? 1 : in->nr;
        if (in->per_root) fprintf(f, "%s{\n", ind);
        pr_c_block_pinned(f, in->pc, in->roots + r, n, in->fmts + r, ind, &p);
        if (in->per_root) fprintf(f, "%s}\n", ind);
    }
    zc_print_rotate(f, Z, ind);
}

int zc_body(const ZcIn *in, char **decl, char **body)
{
    int skip[MAXARR] = {0};
    for (int w = 0; w < in->nwritten; ++w) skip[in->written[w]] = 1;
    *decl = *body = NULL;
    ZPlan *Z = malloc(3 * sizeof *Z); /* pipelined, with carried subexpressions; pipelined; the other */
    if (!Z) return -1;
    const int D = in->pc->s->dims;
    Z[0].nch = Z[1].nch = Z[2].nch = 0;
    if (D == 3) zn_plan(in->roots, in->nr, skip, &Z[0]);
    zc_plan(in->roots, in->nr, skip, 1, D, &Z[0]);
    zc_plan(in->roots, in->nr, skip, 1, D, &Z[1]);
    zc_plan(in->roots, in->nr, skip, 0, D, &Z[2]);
    if (Z[1].n == 0 && Z[2].n == 0 && Z[0].nch == 0) { free(Z); return 0; }
    const int nf = Z[0].nch ? 3 : 2, f0 = Z[0].nch ? 0 : 1;
    static const char *const cond[3] = {"#if STENC_CUDA_ZPIPE && STENC_CUDA_ZNODES\n", "#if STENC_CUDA_ZPIPE\n", "#else\n"};
    const char *ind = "            ";
    Str d, b;
    str_open(&d); str_open(&b);
    fprintf(b.f, "{\n%s", in->head ? in->head : "");
    for (int q = f0; q < 3; ++q) {
        const char *c = q == 1 && nf == 3 ? "#elif STENC_CUDA_ZPIPE\n" : cond[q];
        fprintf(d.f, "%s", c);
        zc_print_decl(d.f, in->pc, &Z[q], "                ");
        fprintf(b.f, "%s", c);
        zc_print_body(b.f, in, &Z[q], ind);
    }
    fprintf(d.f, "#endif\n");
    fprintf(b.f, "#endif\n        }\n");
    *decl = str_close(&d), *body = str_close(&b);
    free(Z);
    return 0;
}
