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
 * Planning (zc_plan: which columns, which registers) is kept apart from
 * printing (zc_print_*).  Arrays the job writes are never cached. */
#include "gen.h"

#include <stdlib.h>

/* the registers a job carries, all columns together (each one is live
 * through a column's whole run of interior planes: register pressure) */
enum { ZC_MAXREG = 24 };

typedef struct {
    int arr;
    long dx, dy, cmin, cmax;
    int ntap;  /* distinct planes the body reads in this column */
    int reg;   /* temporary number of plane cmin; cmin + r is reg + r */
} ZCol;

typedef struct {
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
 * saves at least a quarter of a load and all fit in ZC_MAXREG. */
static void zc_select(ZPlan *Z)
{
    int keep = 0;
    Z->nreg = 0;
    for (int c = 0; c < Z->n; ++c) {
        const ZCol z = Z->col[c];
        const long carry = z.cmax - z.cmin;
        if (z.ntap < 2 || carry > 4L * (z.ntap - 1) || Z->nreg + carry > ZC_MAXREG) continue;
        Z->nreg += (int)carry;
        Z->col[keep++] = z;
    }
    Z->n = keep;
}

/* the columns of the roots' taps (distinct taps: nodes are hash-consed) */
static void zc_plan(Node **roots, int nr, const int *skip, ZPlan *Z)
{
    Node *taps[MAXTAP];
    int nt = 0;
    Z->n = 0;
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
    zc_select(Z);
    for (int c = 0; c < Z->n; ++c) /* planes cmin .. cmax, the newest too */
        Z->col[c].reg = pr_new_tmps((int)(Z->col[c].cmax - Z->col[c].cmin + 1));
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
    int kept = 0;
    for (int c = 0; c < Z->n; ++c) kept += Z->col[c].ntap - 1;
    fprintf(f, "%s/* plane cache: %d of the %d taps from the %d registers below; %d loads a point */\n", ind, kept,
            Z->ntap, Z->nreg, Z->ntap - kept);
    for (int c = 0; c < Z->n; ++c) {
        const ZCol *z = &Z->col[c];
        for (long p = z->cmin; p < z->cmax; ++p) {
            fprintf(f, "%sstn_real t%ld = ", ind, z->reg + (p - z->cmin));
            pr_tap_c(f, &direct, zc_tap(z, p));
            fprintf(f, ";\n");
        }
    }
}

/* each column's newest plane, and every cached tap pinned to its register */
static void zc_print_loads(FILE *f, const PrintCtx *pc, const ZPlan *Z, const char *ind, Pins *p)
{
    p->n = 0;
    for (int c = 0; c < Z->n; ++c) {
        const ZCol *z = &Z->col[c];
        const long top = z->reg + (z->cmax - z->cmin);
        fprintf(f, "%sconst stn_real t%ld = ", ind, top);
        pr_tap_c(f, pc, zc_tap(z, z->cmax));
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
        for (long q = z->cmin; q < z->cmax; ++q)
            fprintf(f, "%st%ld = t%ld;", q > z->cmin ? " " : "", z->reg + (q - z->cmin), z->reg + (q - z->cmin) + 1);
        fprintf(f, "\n");
    }
}

int zc_body(const ZcIn *in, char **decl, char **body)
{
    int skip[MAXARR] = {0};
    for (int w = 0; w < in->nwritten; ++w) skip[in->written[w]] = 1;
    *decl = *body = NULL;
    ZPlan *Z = malloc(sizeof *Z);
    if (!Z) return -1;
    zc_plan(in->roots, in->nr, skip, Z);
    if (Z->n == 0) { free(Z); return 0; }
    const char *ind = "            ";
    Str d, b;
    str_open(&d); str_open(&b);
    zc_print_decl(d.f, in->pc, Z, "                ");
    fprintf(b.f, "{\n%s", in->head ? in->head : "");
    Pins p;
    zc_print_loads(b.f, in->pc, Z, ind, &p);
    for (int r = 0; r < in->nr; r += in->per_root ? 1 : in->nr) {
        const int n = in->per_root ? 1 : in->nr;
        if (in->per_root) fprintf(b.f, "%s{\n", ind);
        pr_c_block_pinned(b.f, in->pc, in->roots + r, n, in->fmts + r, ind, &p);
        if (in->per_root) fprintf(b.f, "%s}\n", ind);
    }
    zc_print_rotate(b.f, Z, ind);
    fprintf(b.f, "        }\n");
    *decl = str_close(&d), *body = str_close(&b);
    free(Z);
    return 0;
}
