/* stenc-gen: the printing of point fields (fields.c plans them): the
 * field rows that a row function with fields (backend_c.m4
 * stn_rowfn_fields) declares, fills and reads, in a per-thread buffer the
 * job allocates.  In 2D, rings of strips of rows (whole rows up to
 * STENC_FIELD_BYTES) kept along y; in 3D (P->planes), rows of each
 * field's planes along z, each row tagged with the grid row and x range it
 * holds, so a row is filled once for the planes that read it.  Used by a
 * reduction's value and gradient, an update kernel's statement and an
 * update adjoint's gather (perf/NOTES.md sections 43-45 and 49). */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the arrays' names for printing (the user's, then st_frR, each field row
 * array) and each row array's strip origin (st_foF, its field's) */
typedef struct {
    const char *names[MAXARR], *xorg[MAXARR];
    char rown[MAXFROW][16], orgn[MAXFIELD][16], inrn[MAXINR][16];
} FieldNames;

static void field_names(const FieldPrint *P, FieldNames *fn)
{
    memset(fn, 0, sizeof *fn);
    for (int a = 0; a < P->N; ++a) fn->names[a] = P->names[a];
    for (int f = 0; f < P->F->n; ++f) snprintf(fn->orgn[f], sizeof fn->orgn[f], "st_fo%d", f);
    for (int r = 0; r < P->F->nrow; ++r) {
        snprintf(fn->rown[r], sizeof fn->rown[r], "st_fr%d", r);
        fn->names[P->N + r] = fn->rown[r];
        fn->xorg[P->N + r] = P->planes ? NULL : fn->orgn[P->F->rowf[r]]; /* planes: whole rows */
    }
    for (int u = 0; u < P->F->ninr; ++u) { /* an inner field's rows, in a cell field's fill */
        snprintf(fn->inrn[u], sizeof fn->inrn[u], "st_fq%d", u);
        fn->names[P->N + P->F->nrow + u] = fn->inrn[u];
        fn->xorg[P->N + P->F->nrow + u] = P->planes ? NULL : fn->orgn[P->F->inrf[u]];
    }
}

/* what field FD's fill evaluates: its expression, or, where it reads an
 * inner field (fields.c plan_inner), the expression over that field's rows */
static Node *field_fill(const Field *fd) { return fd->fill ? fd->fill : fd->g; }

/* a row's elements in the thread's buffer of field rows, 2D and 3D: the
 * width backend_c.m4 stn_job allocates its FSIZE rows with */
#define FIELD_ROW_WIDTH "st_n0 + STENC_ROW_PAD"

/* the arrays that the fills of fields G[0 .. NG) read from memory (those
 * below NREAL, 0: all), each once (a cell field's several; a point
 * field's one); their count */
static int fill_arrays(Node *const *g, int ng, int nreal, int *arr)
{
    int n = 0;
    for (int u = 0; u < ng; ++u) {
        Node *taps[MAXTAP];
        const int nt = ex_taps(g[u], -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t) {
            if (nreal > 0 && taps[t]->ref >= nreal) continue;
            int v = 0;
            while (v < n && arr[v] != taps[t]->ref) ++v;
            if (v == n && n < MAXARR) arr[n++] = taps[t]->ref;
        }
    }
    return n;
}

/* the reach of G's taps of array A: the highest y offset, and the lowest
 * and highest z offset */
static void fill_reach(Node *g, int a, long *y, long *zlo, long *zhi)
{
    Node *taps[MAXTAP];
    const int nt = ex_taps(g, a, taps, MAXTAP);
    *y = *zlo = *zhi = 0;
    for (int t = 0; t < nt && t < MAXTAP; ++t) {
        const long ty = taps[t]->idx[1].c, tz = taps[t]->idx[2].c;
        *y = t == 0 || ty > *y ? ty : *y;
        *zlo = t == 0 || tz < *zlo ? tz : *zlo;
        *zhi = t == 0 || tz > *zhi ? tz : *zhi;
    }
}

/* the row pointers st_row_NAME of the arrays the fills of fields G[0 ..
 * NG) read, at grid row J (and plane K in 3D; C expressions) */
static void print_fill_rows(FILE *f, const Stencil *es, const char *const *names, int nreal, Node *const *g, int ng,
                            const char *j, const char *k, const char *ind)
{
    int arr[MAXARR];
    const int n = fill_arrays(g, ng, nreal, arr);
    for (int u = 0; u < n; ++u) {
        const char *nm = names[arr[u]];
        if (es->dims == 3)
            fprintf(f, "%sconst stn_real *const st_row_%s = %s + %s_s0*((%s) + %s_s1*(%s));\n", ind, nm, nm, nm, j, nm, k);
        else fprintf(f, "%sconst stn_real *const st_row_%s = %s + %s_s0*(%s);\n", ind, nm, nm, nm, j);
    }
}

/* in a 3D fill's line loop: the prefetch of the line of the next row that
 * the next fill reads, each array's (of a cell field's, at each plane its
 * taps read) */
static void print_fill_prefetch(FILE *f, const char *const *names, int nreal, Node *const *g, int ng, const char *ind)
{
    int arr[MAXARR];
    const int n = fill_arrays(g, ng, nreal, arr);
    for (int u = 0; u < n; ++u) {
        const char *nm = names[arr[u]];
        long y = 0, zlo = 0, zhi = 0;
        for (int m = 0; m < ng; ++m) {
            long my, mlo, mhi;
            fill_reach(g[m], arr[u], &my, &mlo, &mhi);
            y = m == 0 || my > y ? my : y, zlo = m == 0 || mlo < zlo ? mlo : zlo, zhi = m == 0 || mhi > zhi ? mhi : zhi;
        }
        for (long z = zlo; z <= zhi; ++z)
            if (y == 0 && z == 0) fprintf(f, "%sstenc_prefetch(st_row_%s, sizeof(stn_real), %s_s0 + st_fi);\n", ind, nm, nm);
            else fprintf(f, "%sstenc_prefetch(st_row_%s, sizeof(stn_real), %s_s0*(%ld + %s_s1*(%ld)) + st_fi);\n", ind, nm, nm, y + 1, nm, z);
    }
}

/* a clipped fill (CLIP, FieldPrint's) of rows J, K (C expressions) over
 * [A, B): its points inside the clip, [st_fca, st_fcb), and zero written
 * to the rest by W (a format of one %s, the point: "st_fw0[%s]") */
static void print_fill_clip(FILE *f, const Stencil *es, const char *const *clip, const char *j, const char *k, const char *a,
                            const char *b, const char *w, const char *ind)
{
    fprintf(f, "%sconst int st_fin = (%s) >= %s && (%s) < %s", ind, j, clip[2], j, clip[3]);
    if (es->dims == 3) fprintf(f, " && (%s) >= %s && (%s) < %s", k, clip[4], k, clip[5]);
    fprintf(f, ";\n%sconst ptrdiff_t st_fca = st_fin ? stenc_iclamp(%s, %s, %s) : (%s);\n", ind, clip[0], a, b, b);
    fprintf(f, "%sconst ptrdiff_t st_fcb = st_fin ? stenc_iclamp(%s, st_fca, %s) : (%s);\n", ind, clip[1], b, b);
    for (int side = 0; side < 2; ++side) {
        fprintf(f, "%sfor (ptrdiff_t i = %s; i < %s; ++i) ", ind, side ? "st_fcb" : a, side ? b : "st_fca");
        fprintf(f, w, "i");
        fprintf(f, " = 0;\n");
    }
}

/* the ring rows of field Q's z offsets before Z, and of all fields (Q = F->n) */
static long ring_rows_before(const Fields *F, int q, long z)
{
    long n = 0;
    for (int p = 0; p < F->n; ++p)
        for (long w = F->f[p].lo[2]; w <= F->f[p].hi[2]; ++w)
            if (p < q || (p == q && w < z)) n += F->f[p].hi[1] - F->f[p].lo[1] + 1;
    return n;
}

/* FDECL: the strip's points (st_fsp: a whole row's interior up to
 * STENC_FIELD_BYTES), a ring row's width (st_fsw: a strip with the fields'
 * x reach fits st_n0 elements, since its fill reads inside the row) and
 * each field's ring of rows per z offset, st_fbF_Z, in the thread's buffer
 * st_fpl (FSIZE rows of FIELD_ROW_WIDTH) */
static void print_field_decl(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    fprintf(f, "    const ptrdiff_t st_fsp = STENC_FIELD_BYTES / sizeof(stn_real), st_fsw = " FIELD_ROW_WIDTH "; (void)st_ty;\n");
    for (int q = 0; q < F->n; ++q)
        for (long z = F->f[q].lo[2]; z <= F->f[q].hi[2]; ++z)
            fprintf(f, "    stn_real *const st_fb%d_%ld = st_fpl + (size_t)%ld * (size_t)st_fsw;\n", q, z - F->f[q].lo[2],
                    ring_rows_before(F, q, z));
}

/* FSIZE of the strips: the ring rows a thread */
static void print_field_size(FILE *f, const Fields *F)
{
    fprintf(f, "(size_t)%ld", ring_rows_before(F, F->n, 0));
}

/* the fill of field Q's rows at z offset Z for row j of the strip
 * [st_fa, st_fe): all its y offsets' rows for the run's first row, the
 * highest's alone after it (the rest are the rows before's) */
static void print_field_fill(FILE *f, const FieldPrint *P, int q, long z)
{
    const Field *fd = &P->F->f[q];
    const long m = fd->hi[1] - fd->lo[1] + 1;
    fprintf(f, "    for (ptrdiff_t st_fy = st_jr == 0 ? %ld : %ld; st_fy <= %ld; ++st_fy) {\n", fd->lo[1], fd->hi[1], fd->hi[1]);
    fprintf(f, "    stn_real *const st_fw = st_fb%d_%ld + (size_t)stenc_imod(j + st_fy, %ld) * (size_t)st_fsw;\n", q,
            z - fd->lo[2], m);
    char kz[32];
    snprintf(kz, sizeof kz, "k + %ld", z);
    const Fields *F = P->F;
    for (int u = 0; u < F->ninr && fd->fill; ++u) { /* the inner field's ring rows that its fill reads */
        const Field *r = &F->f[F->inrf[u]];
        fprintf(f, "    const stn_real *const st_row_st_fq%d = st_fb%d_%ld + (size_t)stenc_imod(j + st_fy + %ld, %ld) * (size_t)st_fsw;\n",
                u, F->inrf[u], z + F->inrz[u] - r->lo[2], F->inry[u], r->hi[1] - r->lo[1] + 1);
    }
    Node *g = field_fill(fd);
    print_fill_rows(f, P->es, P->names, P->N, &g, 1, "j + st_fy", kz, "    ");
    char a[32], b[32];
    snprintf(a, sizeof a, "st_fo%d", q);
    snprintf(b, sizeof b, "st_fe + %ld", fd->hi[0]);
    if (P->clip && P->clip->b[q][0]) {
        char w[48];
        snprintf(w, sizeof w, "st_fw[%%s - st_fo%d]", q);
        print_fill_clip(f, P->es, P->clip->b[q], "j + st_fy", kz, a, b, w, "    ");
        snprintf(a, sizeof a, "st_fca"), snprintf(b, sizeof b, "st_fcb");
    }
    fprintf(f, "    #pragma omp simd\n    for (ptrdiff_t i = %s; i < %s; ++i) {\n", a, b);
    FieldNames fn;
    field_names(P, &fn);
    const PrintCtx pc = {P->es, TAP_ROW, fn.names, NULL, fn.xorg, 0};
    char fmt[48];
    snprintf(fmt, sizeof fmt, "st_fw[i - st_fo%d] = %%s;", q);
    const char *fm = fmt;
    pr_c_block(f, &pc, &g, 1, &fm, "        ");
    fprintf(f, "    }\n    }\n");
}

/* FROW: row j's fields filled for the strip, and its row arrays' pointers */
static void print_field_rows(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    for (int inner = 1; inner >= 0; --inner) /* inner fields first: the others' fills read them */
        for (int q = 0; q < F->n; ++q) {
            if (F->f[q].inner != inner) continue;
            fprintf(f, "    const ptrdiff_t st_fo%d = st_fa + (%ld);\n", q, F->f[q].lo[0]);
            for (long z = F->f[q].lo[2]; z <= F->f[q].hi[2]; ++z) print_field_fill(f, P, q, z);
        }
    for (int r = 0; r < F->nrow; ++r) {
        const Field *fd = &F->f[F->rowf[r]];
        fprintf(f, "    const stn_real *const st_row_st_fr%d = st_fb%d_%ld + (size_t)stenc_imod(j + %ld, %ld) * (size_t)st_fsw;"
                   " (void)st_row_st_fr%d;\n",
                r, F->rowf[r], F->rowz[r] - fd->lo[2], F->rowy[r], fd->hi[1] - fd->lo[1] + 1, r);
    }
}

/* ---- tagged rows of fields (3D planes here, gen/emit.c's rolling rows) ---- */

void fields_print_tagged_fill(FILE *f, const TaggedFill *t)
{
    const Fields *F = t->F;
    Node *g[MAXFIELD];
    char fmb[MAXFIELD][32];
    const char *fm[MAXFIELD];
    int mem[MAXFIELD], ng = 0; /* the leader's members */
    for (int m = t->q; m < F->n; ++m) {
        if (fields_leader(F, m) != t->q) continue;
        fprintf(f, "        stn_real *const st_fw%d = ", m);
        t->row(f, t->ctx, m);
        fprintf(f, ";\n");
        snprintf(fmb[ng], sizeof fmb[ng], "st_fw%d[i] = %%s;", m);
        mem[ng] = m, g[ng] = field_fill(&F->f[m]), fm[ng] = fmb[ng], ++ng;
    }
    fprintf(f, "        if (%s%s%sstenc_ftag_has(st_fw%d + %s, %s, %s, %s, %s)) continue;\n", t->fresh ? "!(" : "",
            t->fresh ? t->fresh : "", t->fresh ? ") && " : "", t->q, t->tag ? t->tag : "st_n0", t->j, t->k, t->a, t->b);
    const char *sj = t->sj ? t->sj : t->j, *sk = t->sk ? t->sk : t->k, *a = t->a, *b = t->b;
    print_fill_rows(f, t->es, t->names, t->nreal, g, ng, sj, sk, "        ");
    for (int u = 0; u < ng && t->clip; ++u) {
        char w[32];
        snprintf(w, sizeof w, "st_fw%d[%%s]", mem[u]);
        if (u == 0) print_fill_clip(f, t->es, t->clip, sj, sk, t->a, t->b, w, "        ");
        else { /* the other members' zeros */
            fprintf(f, "        for (ptrdiff_t i = %s; i < st_fca; ++i) st_fw%d[i] = 0;\n", t->a, mem[u]);
            fprintf(f, "        for (ptrdiff_t i = st_fcb; i < %s; ++i) st_fw%d[i] = 0;\n", t->b, mem[u]);
        }
        a = "st_fca", b = "st_fcb";
    }
    const PrintCtx pc = {t->es, TAP_ROW, t->names, NULL, NULL, 0};
    const int lines = t->es->dims == 3;
    if (lines) { /* a line of points at a time, each after the prefetch of the
                  * line of the next row the next fill reads (row j + 1: 0.96-0.98
                  * of Good's 3D gradient's time at 256^3, perf/NOTES.md section 51) */
        fprintf(f, "        const ptrdiff_t st_fll = (ptrdiff_t)(64 / sizeof(stn_real));\n"
                   "        for (ptrdiff_t st_fi = %s; st_fi < %s; st_fi += st_fll) {\n"
                   "        const ptrdiff_t st_fie = %s - st_fi < st_fll ? %s : st_fi + st_fll;\n",
                a, b, b, b);
        print_fill_prefetch(f, t->names, t->nreal, g, ng, "        ");
    }
    fprintf(f, "        #pragma omp simd\n        for (ptrdiff_t i = %s; i < %s; ++i) {\n", lines ? "st_fi" : a,
            lines ? "st_fie" : b);
    pr_c_block(f, &pc, g, ng, fm, "            ");
    fprintf(f, "        }\n%s", lines ? "        }\n" : "");
    for (int u = 0; u < ng && (t->xlo || t->xhi); ++u) /* the end points' copies past the row's ends */
        fprintf(f, "        if (%s == 0) for (ptrdiff_t st_u = 1; st_u <= %ld; ++st_u) st_fw%d[-st_u] = st_fw%d[0];\n"
                   "        if (%s == st_n0) for (ptrdiff_t st_u = 0; st_u < %ld; ++st_u) st_fw%d[st_n0 + st_u] = st_fw%d[st_n0 - 1];\n",
                t->a, t->xlo, mem[u], mem[u], t->b, t->xhi, mem[u], mem[u]);
    fprintf(f, "        stenc_ftag_put(st_fw%d + %s, %s, %s, %s, %s);\n", t->q, t->tag ? t->tag : "st_n0", t->j, t->k, t->a, t->b);
}

/* ---- 3D: planes of field rows (P->planes) ---- */

/* the ring rows of a plane (st_fry = st_ty + the widest y span) and the
 * planes of fields before Q (each field keeps its z offsets' count) */
static long field_span(const Fields *F)
{
    long s = 0;
    for (int q = 0; q < F->n; ++q)
        if (F->f[q].hi[1] - F->f[q].lo[1] > s) s = F->f[q].hi[1] - F->f[q].lo[1];
    return s;
}
static long planes_before(const Fields *F, int q)
{
    long n = 0;
    for (int p = 0; p < q; ++p) n += F->f[p].hi[2] - F->f[p].lo[2] + 1;
    return n;
}

/* field Q's row for grid row (j + DY, K) in the thread's buffer st_fpl
 * (DY a C expression, its value within the fields' y span): its ring slot
 * (j + DY) mod st_fry from row j's, st_fjs (print_plane_rows), without a
 * division (stenc_iwrap; a division a slot was up to twelve a row,
 * perf/NOTES.md section 50) */
static void print_plane_row(FILE *f, const Fields *F, int q, const char *dy, const char *kv)
{
    fprintf(f, "st_fpl + ((size_t)%ld * (size_t)st_fry + (size_t)stenc_imod(%s, %ld) * (size_t)st_fry + "
               "(size_t)stenc_iwrap(st_fjs + %s, st_fry)) * (size_t)st_fpw",
            planes_before(F, q), kv, F->f[q].hi[2] - F->f[q].lo[2] + 1, dy);
}

/* FSIZE: the buffer's rows a thread */
static void print_plane_size(FILE *f, const Fields *F)
{
    fprintf(f, "(size_t)%ld * (size_t)(st_ty + %ld)", planes_before(F, F->n), field_span(F));
}

/* member M's row (j + y, k + z) of the buffer, for fields_print_tagged_fill */
static void plane_row_of(FILE *f, const void *ctx, int m)
{
    print_plane_row(f, ctx, m, "st_fy", "st_fk");
}

/* leader Q's fill of its fields' rows (j + y, k + z) over the box's
 * offsets that their tags do not cover for the strip [st_fa, st_fe): all
 * its y offsets' tags checked for the run's first row, the highest's alone
 * after it (the row before checked the rest, in this strip and plane: six
 * of nine tag checks a row fewer for Good's 3D gradient, perf/NOTES.md
 * section 48) */
static void print_plane_fill(FILE *f, const FieldPrint *P, int q)
{
    const Field *fd = &P->F->f[q];
    if (fd->lo[2] < fd->hi[2]) /* st_fwm: the planes below the newest are filled (stn_loops' march) */
        fprintf(f, "    for (ptrdiff_t st_fz = st_fwm ? %ld : %ld; st_fz <= %ld; ++st_fz)\n", fd->hi[2], fd->lo[2], fd->hi[2]);
    else fprintf(f, "    for (ptrdiff_t st_fz = %ld; st_fz <= %ld; ++st_fz)\n", fd->lo[2], fd->hi[2]);
    if (fd->lo[1] < fd->hi[1])
        fprintf(f, "    for (ptrdiff_t st_fy = st_jr == 0 ? %ld : %ld; st_fy <= %ld; ++st_fy) {\n", fd->lo[1], fd->hi[1], fd->hi[1]);
    else fprintf(f, "    for (ptrdiff_t st_fy = %ld; st_fy <= %ld; ++st_fy) {\n", fd->lo[1], fd->hi[1]);
    fprintf(f, "        const ptrdiff_t st_fj = j + st_fy, st_fk = k + st_fz;\n"
               "        const ptrdiff_t st_fa0 = st_fa%+ld, st_fe0 = st_fe%+ld;\n",
            fd->lo[0], fd->hi[0]);
    if (P->clamp) /* a row past a face holds the face's, the points past its ends its end points' (RULE_EXTEND) */
        fprintf(f, "        const ptrdiff_t st_fsj = stenc_iclamp(st_fj, 0, st_n1 - 1), st_fsk = stenc_iclamp(st_fk, 0, st_n2 - 1);\n"
                   "        const ptrdiff_t st_fa1 = stenc_imax(st_fa0, 0), st_fe1 = stenc_imin(st_fe0, st_n0);\n");
    /* the row at the highest offsets is first read by row j of plane k:
     * no row before it in the march filled it */
    char fresh[64];
    snprintf(fresh, sizeof fresh, "st_fz == %ld && st_fy == %ld", fd->hi[2], fd->hi[1]);
    FieldNames fn;
    field_names(P, &fn);
    for (int u = 0; u < P->F->ninr && fd->fill; ++u) { /* the inner field's rows that its fill reads */
        char dy[32], kv[32];
        snprintf(dy, sizeof dy, "st_fy + %ld", P->F->inry[u]);
        snprintf(kv, sizeof kv, "st_fk + %ld", P->F->inrz[u]);
        fprintf(f, "        const stn_real *const st_row_st_fq%d = ", u);
        print_plane_row(f, P->F, P->F->inrf[u], dy, kv);
        fprintf(f, ";\n");
    }
    const TaggedFill t = {P->es, fn.names, P->F, q, "st_fj", "st_fk", P->clamp ? "st_fa1" : "st_fa0", P->clamp ? "st_fe1" : "st_fe0",
                          plane_row_of, P->F, P->clamp ? "st_fsj" : NULL, P->clamp ? "st_fsk" : NULL,
                          "st_n0 + STENC_FIELD_XPAD", P->clamp ? -fd->lo[0] : 0, P->clamp ? fd->hi[0] : 0, fresh,
                          P->clip && P->clip->b[q][0] ? P->clip->b[q] : NULL, P->N};
    fields_print_tagged_fill(f, &t);
    fprintf(f, "    }\n");
}

/* a cell field's share of PF: the row of each array its fills read that
 * the next row's fills read first, at each plane they read */
static void print_cell_pf(FILE *f, const FieldPrint *P, const Field *fd)
{
    int arr[MAXARR];
    Node *g = field_fill(fd);
    const int n = fill_arrays(&g, 1, P->N, arr);
    for (int u = 0; u < n; ++u) {
        const char *nm = P->names[arr[u]];
        long y, zlo, zhi;
        fill_reach(g, arr[u], &y, &zlo, &zhi);
        for (long z = zlo; z <= zhi; ++z)
            fprintf(f, " stenc_prefetch(%s, sizeof(*%s), %s_s0*((j + %ld) + %s_s1*(k + %ld)) + st_pi);", nm, nm, nm,
                    fd->hi[1] + y + 1, nm, fd->hi[2] + z);
    }
}

/* PF: the prefetches, from point st_pi on, of the row the next row's fills
 * read first, one above each array's newest field row: the interior reads
 * the fields alone, so the job's own hint (the row of its taps) asked for
 * a row the fills had just read (perf/NOTES.md section 45) */
static void print_plane_pf(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    for (int q = 0; q < F->n; ++q) {
        int first = 1;
        long dy = 0, dz = 0;
        for (int p = 0; p < F->n; ++p) {
            if (F->f[p].arr != F->f[q].arr || F->f[q].arr < 0) continue;
            if (p < q) first = 0;
            dy = F->f[p].hi[1] + 1 > dy ? F->f[p].hi[1] + 1 : dy;
            dz = F->f[p].hi[2] > dz ? F->f[p].hi[2] : dz;
        }
        if (F->f[q].arr < 0) {
            print_cell_pf(f, P, &F->f[q]);
            continue;
        }
        const char *nm = P->names[F->f[q].arr];
        if (first)
            fprintf(f, " stenc_prefetch(%s, sizeof(*%s), %s_s0*((j + %ld) + %s_s1*(k + %ld)) + st_pi);", nm, nm, nm, dy, nm, dz);
    }
}

/* FDECL and FROW of the planes */
static void print_plane_decl(FILE *f, const FieldPrint *P)
{
    fprintf(f, "    const ptrdiff_t st_fsp = STENC_FIELD_BYTES / sizeof(stn_real), st_fpw = " FIELD_ROW_WIDTH
               ", st_fry = st_ty + %ld;\n",
            field_span(P->F));
    fprintf(f, "    const ptrdiff_t st_fs0 = stenc_imod(st_j0, st_fry); (void)st_fwm;\n");
}
static void print_plane_rows(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    fprintf(f, "    const ptrdiff_t st_fjs = st_fs0 + st_jr; /* row j's ring slot, plus st_fry or not */\n");
    for (int inner = 1; inner >= 0; --inner) /* inner fields first: the others' fills read them */
        for (int q = 0; q < F->n; ++q)
            if (fields_leader(F, q) == q && F->f[q].inner == inner) print_plane_fill(f, P, q);
    for (int r = 0; r < F->nrow; ++r) {
        char jv[32], kv[32];
        snprintf(jv, sizeof jv, "(%ld)", F->rowy[r]);
        snprintf(kv, sizeof kv, "k + %ld", F->rowz[r]);
        fprintf(f, "    const stn_real *const st_row_st_fr%d = ", r);
        print_plane_row(f, F, F->rowf[r], jv, kv);
        fprintf(f, "; (void)st_row_st_fr%d;\n", r);
    }
}

void fields_print_block(FILE *f, const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr, const char *ind)
{
    FieldNames fn;
    field_names(P, &fn);
    const PrintCtx pc = {P->es, TAP_ROW, fn.names, NULL, fn.xorg, 0};
    pr_c_block(f, &pc, (Node **)roots, nr, fmts, ind);
}

/* FBODY: an interior point's statements FMTS of the NR ROOTS (their fields
 * read from their rows: fields_apply) */
static void print_field_interior(FILE *f, const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr)
{
    Node *taps[MAXTAP], *real[MAXTAP], *rs[MAXARR + 1];
    int nu = 0;
    for (int q = 0; q < nr; ++q) {
        rs[q] = roots[q];
        const int nt = ex_taps(roots[q], -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP && nu < MAXTAP; ++t)
            if (taps[t]->ref < P->N) real[nu++] = taps[t];
    }
    fprintf(f, "{\n");
    pr_row_pointers(f, P->es, real, nu, P->names, "            ");
    fields_print_block(f, P, rs, fmts, nr, "            ");
    fprintf(f, "        }\n");
}

void fields_print_roots(const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr, FieldText *t)
{
    Str d, r, b, z, pf;
    str_open(&d); str_open(&r); str_open(&b); str_open(&z); str_open(&pf);
    if (P && P->F->n > 0 && P->planes) {
        print_plane_decl(d.f, P);
        print_plane_rows(r.f, P);
        print_plane_size(z.f, P->F);
        print_plane_pf(pf.f, P);
    } else if (P && P->F->n > 0) {
        print_field_decl(d.f, P);
        print_field_rows(r.f, P);
        print_field_size(z.f, P->F);
    }
    if (P && P->F->n > 0) print_field_interior(b.f, P, roots, fmts, nr);
    t->decl = str_close(&d), t->rows = str_close(&r), t->body = str_close(&b), t->size = str_close(&z), t->pf = str_close(&pf);
    t->planes = 0;
    for (int q = 0; P && P->planes && q < P->F->n; ++q) {
        int r0 = 0; /* a plane of each array a point field's fills read (at its point) */
        while (r0 < q && P->F->f[r0].arr != P->F->f[q].arr) ++r0;
        t->planes += r0 == q && P->F->f[q].arr >= 0;
        int arr[MAXARR]; /* a cell field's: the planes of each array its taps read */
        Node *g = field_fill(&P->F->f[q]);
        const int n = P->F->f[q].arr < 0 ? fill_arrays(&g, 1, P->N, arr) : 0;
        for (int u = 0; u < n; ++u) {
            long y, zlo, zhi;
            fill_reach(g, arr[u], &y, &zlo, &zhi);
            t->planes += (int)(zhi - zlo + 1);
        }
    }
}

void fields_print(const FieldPrint *P, const char *fmt, FieldText *t)
{
    fields_print_roots(P, P ? &P->F->value : NULL, &fmt, 1, t);
}

void fields_text_free(FieldText *t)
{
    free(t->decl); free(t->rows); free(t->body); free(t->size); free(t->pf);
}
