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
 * no other form: without it the plain interior).  Planning (zc_plan:
 * which columns, which registers) is kept apart from printing
 * (zc_print_*).  Arrays the job writes are never cached. */
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

typedef struct {
    int pipe;  /* the pipelined form: every column, the next plane loaded ahead */
    int n, nreg;
    int ntap;  /* distinct taps of the body */
    ZCol col[MAXTAP];
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

/* the columns of the roots' taps (distinct taps: nodes are hash-consed) */
static void zc_plan(Node **roots, int nr, const int *skip, int pipe, int dims, ZPlan *Z)
{
    Node *taps[MAXTAP];
    int nt = 0;
    Z->n = 0;
    Z->pipe = pipe;
    for (int r = 0; r < nr; ++r) {
        Node *rt[MAXTAP];
        const int n = ex_taps(roots[r], -1, rt, MAXTAP);
        for (int t = 0; t < n && t < MAXTAP; ++t) {
            int seen = 0;
            for (int u = 0; u < nt; ++u) seen |= taps[u] == rt[t];
            if (!seen && nt < MAXTAP) taps[nt++] = rt[t];
        }
    }
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
    const PrintCtx direct = {pc->s, TAP_DIRECT, pc->arrname, pc->vars};
    if (Z->n == 0) return;
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
}

/* each column's newest plane, and every cached tap pinned to its register */
static void zc_print_loads(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind, Pins *p)
{
    const int D = pc->s->dims;
    const char *vars[3] = {D == 2 ? "st_ip" : pc->vars ? pc->vars[0] : "i", pc->vars ? pc->vars[1] : "j", "st_kp"};
    const PrintCtx ahead = {pc->s, TAP_DIRECT, pc->arrname, vars};
    p->n = 0;
    if (Z->pipe && Z->n && D == 3) fprintf(f, "%sconst ptrdiff_t st_kp = k + 1 < st_kb ? k + 1 : k;\n", ind);
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

static void zc_print_rotate(FILE *f, const ZPlan *Z, const char *ind)
{
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
    ZPlan *Z = malloc(2 * sizeof *Z); /* the pipelined form, then the other */
    if (!Z) return -1;
    const int D = in->pc->s->dims;
    zc_plan(in->roots, in->nr, skip, 1, D, &Z[0]);
    zc_plan(in->roots, in->nr, skip, 0, D, &Z[1]);
    if (Z[0].n == 0 && Z[1].n == 0) { free(Z); return 0; }
    const char *ind = "            ";
    Str d, b;
    str_open(&d); str_open(&b);
    fprintf(d.f, "#if STENC_CUDA_ZPIPE\n");
    zc_print_decl(d.f, in->pc, &Z[0], "                ");
    fprintf(d.f, "#else\n");
    zc_print_decl(d.f, in->pc, &Z[1], "                ");
    fprintf(d.f, "#endif\n");
    fprintf(b.f, "{\n%s#if STENC_CUDA_ZPIPE\n", in->head ? in->head : "");
    zc_print_body(b.f, in, &Z[0], ind);
    fprintf(b.f, "#else\n");
    zc_print_body(b.f, in, &Z[1], ind);
    fprintf(b.f, "#endif\n        }\n");
    *decl = str_close(&d), *body = str_close(&b);
    free(Z);
    return 0;
}
