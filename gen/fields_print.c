/* stenc-gen: the printing of point fields (fields.c plans them): the
 * strips of field rows kept along y that a row function with fields
 * (backend_c.m4 stn_rowfn_fields) declares, fills and reads.  Used by a
 * reduction's value and by an update kernel's statement (perf/NOTES.md
 * sections 43-44). */
#include "gen.h"

#include <stdio.h>
#include <string.h>

/* the arrays' names for printing (the user's, then st_frR, each field row
 * array) and each row array's strip origin (st_foF, its field's) */
typedef struct {
    const char *names[MAXARR], *xorg[MAXARR];
    char rown[MAXFROW][16], orgn[MAXFIELD][16];
} FieldNames;

static void field_names(const FieldPrint *P, FieldNames *fn)
{
    memset(fn, 0, sizeof *fn);
    for (int a = 0; a < P->N; ++a) fn->names[a] = P->names[a];
    for (int f = 0; f < P->F->n; ++f) snprintf(fn->orgn[f], sizeof fn->orgn[f], "st_fo%d", f);
    for (int r = 0; r < P->F->nrow; ++r) {
        snprintf(fn->rown[r], sizeof fn->rown[r], "st_fr%d", r);
        fn->names[P->N + r] = fn->rown[r];
        fn->xorg[P->N + r] = fn->orgn[P->F->rowf[r]];
    }
}

/* FDECL: the strip's points (st_fsp), a strip row's width with the fields'
 * x reach (st_fsw) and each field's ring of rows per z offset, st_fbF_Z */
static void print_field_decl(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    long h = 0;
    for (int q = 0; q < F->n; ++q)
        if (F->f[q].hi[0] - F->f[q].lo[0] > h) h = F->f[q].hi[0] - F->f[q].lo[0];
    fprintf(f, "    enum { st_fsp = STENC_FIELD_BYTES / sizeof(stn_real), st_fsw = st_fsp + %ld };\n", h);
    for (int q = 0; q < F->n; ++q)
        for (long z = F->f[q].lo[2]; z <= F->f[q].hi[2]; ++z)
            fprintf(f, "    _Alignas(64) stn_real st_fb%d_%ld[%ld * st_fsw];\n", q, z - F->f[q].lo[2],
                    F->f[q].hi[1] - F->f[q].lo[1] + 1);
}

/* the fill of field Q's rows at z offset Z for row j of the strip
 * [st_fa, st_fe): all its y offsets' rows for the run's first row, the
 * highest's alone after it (the rest are the rows before's) */
static void print_field_fill(FILE *f, const FieldPrint *P, int q, long z)
{
    const Field *fd = &P->F->f[q];
    const char *nm = P->names[fd->arr];
    const long m = fd->hi[1] - fd->lo[1] + 1;
    fprintf(f, "    for (ptrdiff_t st_fy = st_jr == 0 ? %ld : %ld; st_fy <= %ld; ++st_fy) {\n", fd->lo[1], fd->hi[1], fd->hi[1]);
    fprintf(f, "    stn_real *const st_fw = st_fb%d_%ld + (size_t)stenc_imod(j + st_fy, %ld) * (size_t)st_fsw;\n", q,
            z - fd->lo[2], m);
    if (P->es->dims == 3)
        fprintf(f, "    const stn_real *const st_row_%s = %s + %s_s0*((j + st_fy) + %s_s1*(k + %ld));\n", nm, nm, nm, nm, z);
    else fprintf(f, "    const stn_real *const st_row_%s = %s + %s_s0*(j + st_fy);\n", nm, nm, nm);
    fprintf(f, "    #pragma omp simd\n    for (ptrdiff_t i = st_fo%d; i < st_fe + %ld; ++i) {\n", q, fd->hi[0]);
    const PrintCtx pc = {P->es, TAP_ROW, P->names, NULL, NULL, 0};
    char fmt[48];
    snprintf(fmt, sizeof fmt, "st_fw[i - st_fo%d] = %%s;", q);
    const char *fm = fmt;
    Node *g = fd->g;
    pr_c_block(f, &pc, &g, 1, &fm, "        ");
    fprintf(f, "    }\n    }\n");
}

/* FROW: row j's fields filled for the strip, and its row arrays' pointers */
static void print_field_rows(FILE *f, const FieldPrint *P)
{
    const Fields *F = P->F;
    for (int q = 0; q < F->n; ++q) {
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

/* FBODY: an interior point's statements FMTS of the NR ROOTS (their fields
 * read from their rows: fields_apply) */
static void print_field_interior(FILE *f, const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr)
{
    FieldNames fn;
    field_names(P, &fn);
    const PrintCtx pc = {P->es, TAP_ROW, fn.names, NULL, fn.xorg, 0};
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
    pr_c_block(f, &pc, rs, nr, fmts, "            ");
    fprintf(f, "        }\n");
}

void fields_print_roots(const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr, char **decl, char **rows,
                        char **body)
{
    Str d, r, b;
    str_open(&d); str_open(&r); str_open(&b);
    if (P && P->F->n > 0) {
        print_field_decl(d.f, P);
        print_field_rows(r.f, P);
        print_field_interior(b.f, P, roots, fmts, nr);
    }
    *decl = str_close(&d), *rows = str_close(&r), *body = str_close(&b);
}

void fields_print(const FieldPrint *P, const char *fmt, char **decl, char **rows, char **body)
{
    fields_print_roots(P, P ? &P->F->value : NULL, &fmt, 1, decl, rows, body);
}
