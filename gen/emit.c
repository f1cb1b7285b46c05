/* stenc-gen: the second pass.  For every kernel and reduction it builds the
 * loop jobs (box, interior box, branch-free interior body, guarded or
 * boundary-mapped border body), derives the adjoint (gather form, symbolic
 * partials with shared subexpressions), and writes them as an m4 instance
 * file that the backend templates (m4/backend_*.m4) turn into C and CUDA. */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

/* An extended view of the stencil: arrays [0, narr) are the user's, arrays
 * [narr, 2*narr) their adjoints (NAME_bar / NAME_grad). */
typedef struct {
    Stencil s;
    int nuser;
    const char *names[2 * MAXARR];
    char namebuf[2 * MAXARR][MAXNAME + 8];
} Ext;

static void ext_init(Ext *E, const Stencil *s, const char *suffix)
{
    E->s = *s;
    E->nuser = s->narr;
    for (int a = 0; a < s->narr; ++a) {
        snprintf(E->namebuf[a], sizeof E->namebuf[a], "%s", s->arr[a].name);
        snprintf(E->namebuf[s->narr + a], sizeof E->namebuf[0], "%s_%s", s->arr[a].name, suffix);
        E->s.arr[s->narr + a] = s->arr[a];
        strcpy(E->s.arr[s->narr + a].name, E->namebuf[s->narr + a]);
    }
    for (int a = 0; a < 2 * s->narr; ++a) E->names[a] = E->namebuf[a];
    E->s.narr = 2 * s->narr;
}

static void print_quoted(FILE *f, const char *text) { fprintf(f, "[[%s]]", text ? text : ""); }

static const char *func_base(const Stencil *s, const char *name, char *buf, size_t n)
{
    if (strcmp(name, s->name) == 0) snprintf(buf, n, "%s", s->name);
    else snprintf(buf, n, "%s_%s", s->name, name);
    return buf;
}

/* ---- pieces shared by entry points ---- */

static void extent_c(FILE *f, int d, long e)
{
    if (e) fprintf(f, "(st_n%d%+ld)", d, e);
    else fprintf(f, "st_n%d", d);
}

static void extent_doc(FILE *f, const Stencil *s, const Array *a)
{
    fprintf(f, "(");
    for (int d = 0; d < s->dims; ++d) {
        if (d) fprintf(f, ", ");
        if (a->ext[d]) fprintf(f, "%s%+ld", dimn(d), a->ext[d]);
        else fprintf(f, "%s", dimn(d));
    }
    fprintf(f, ")");
}

/* sizes as parameters, then as ptrdiff_t locals */
static void args_sizes(FILE *f, int D)
{
    for (int d = 0; d < D; ++d) fprintf(f, "%ssize_t %s", d ? ", " : "", dimn(d));
}

static void setup_sizes(FILE *f, int D)
{
    for (int d = 0; d < D; ++d)
        fprintf(f, "    const ptrdiff_t st_n%d = (ptrdiff_t)%s; (void)st_n%d;\n", d, dimn(d), d);
}

/* (void) for every parameter in params[], so that one unused by a body
 * (constant partials, an additive constant's adjoint) stays warning-free */
static void void_params(FILE *f, const Stencil *s, const int *params)
{
    for (int p = 0; p < s->nparam; ++p)
        if (params[p]) fprintf(f, "    (void)%s;\n", s->param[p]);
}

/* (void) for a point helper's position and size arguments: a partial that
 * is constant reads none of them */
static void void_point_args(FILE *f, int D)
{
    for (int d = 0; d < D; ++d) fprintf(f, " (void)%s; (void)st_n%d;", dimvar(d), d);
}

static void setup_strides(FILE *f, const Stencil *s, int a, const char *name)
{
    for (int d = 0; d + 1 < s->dims; ++d) {
        fprintf(f, "    const ptrdiff_t %s_s%d = ", name, d);
        extent_c(f, d, s->arr[a].ext[d]);
        fprintf(f, "; (void)%s_s%d;\n", name, d);
    }
}

/* checks: sizes small enough for ptrdiff_t arithmetic, minimum grid */
static void checks_sizes(FILE *f, int D, const long *minn, int mode_dep, const long *minvalid)
{
    fprintf(f, "    if (");
    for (int d = 0; d < D; ++d) fprintf(f, "%s%s > (size_t)PTRDIFF_MAX / 4", d ? " || " : "", dimn(d));
    fprintf(f, ") return STENC_ERR_OVERFLOW;\n");
    if (mode_dep) {
        fprintf(f, "    if (mode != STENC_VALID && mode != STENC_NEUMANN && mode != STENC_PERIODIC) return STENC_ERR_MODE;\n");
        fprintf(f, "    if (");
        for (int d = 0; d < D; ++d)
            fprintf(f, "%s%s < (mode == STENC_VALID ? (size_t)%ld : (size_t)%ld)", d ? " || " : "", dimn(d),
                    minvalid[d], minn[d]);
        fprintf(f, ") return STENC_ERR_GRID;\n");
    } else {
        fprintf(f, "    if (");
        for (int d = 0; d < D; ++d) fprintf(f, "%s%s < (size_t)%ld", d ? " || " : "", dimn(d), minn[d]);
        fprintf(f, ") return STENC_ERR_GRID;\n");
    }
}

/* element count of array a into st_c_<name>, with overflow check */
static void checks_count(FILE *f, const Stencil *s, int a, const char *name)
{
    fprintf(f, "    size_t st_c_%s;\n    { size_t st_e[3] = {", name);
    for (int d = 0; d < s->dims; ++d) {
        if (d) fprintf(f, ", ");
        if (s->arr[a].ext[d]) fprintf(f, "(size_t)(st_n%d%+ld)", d, s->arr[a].ext[d]);
        else fprintf(f, "(size_t)st_n%d", d);
    }
    fprintf(f, "};\n      if (stenc_checked_count(%d, st_e, sizeof(stn_real), &st_c_%s) != STENC_OK) return STENC_ERR_OVERFLOW; }\n",
            s->dims, name);
}

static void checks_null(FILE *f, const char *name)
{
    fprintf(f, "    if (!%s) return STENC_ERR_NULL;\n", name);
}

static void checks_alias(FILE *f, const char *out, const char *other)
{
    fprintf(f, "    if (stenc_overlap(%s, st_c_%s * sizeof(stn_real), %s, st_c_%s * sizeof(stn_real))) return STENC_ERR_ALIAS;\n",
            out, out, other, other);
}

/* the offset of point (X, j, k) in array NAME: X + NAME_s0*(j + NAME_s1*k) */
static void point_offset(FILE *f, const Stencil *s, const char *name, const char *x)
{
    fprintf(f, "%s", x);
    if (s->dims >= 2) fprintf(f, " + %s_s0*(j", name);
    if (s->dims == 3) fprintf(f, " + %s_s1*k", name);
    if (s->dims >= 2) fprintf(f, ")");
}
static void point_index(FILE *f, const Stencil *s, const char *name, const char *var)
{
    /* const ptrdiff_t var = i + name_s0*(j + name_s1*k); */
    fprintf(f, "const ptrdiff_t %s = ", var);
    point_offset(f, s, name, "i");
    fprintf(f, ";");
}

/* The loops over the preimages of a point's coordinates d0 <= d < d1 (i, j,
 * k) under TAP's offsets: their bounds (stenc_preimage; a 2D stencil's z
 * bounds are 0 and 1), then one for header per coordinate, z outermost, the
 * preimage of coordinate d in st_p<d>, every line at IND.  The caller prints
 * the rest of the innermost header's line (" {" or a statement) and the
 * loop body, and closes its own block. */
static void print_preimage_loops(FILE *f, const Node *tap, int D, int d0, int d1, const char *ind)
{
    fprintf(f, "%sptrdiff_t", ind);
    for (int d = d0; d < d1; ++d)
        fprintf(f, "%s st_a%d%s, st_b%d%s", d > d0 ? "," : "", d, d < D ? "" : " = 0", d, d < D ? "" : " = 1");
    fprintf(f, ";\n");
    for (int d = d0; d < d1 && d < D; ++d)
        fprintf(f, "%sstenc_preimage(%s, %ld, st_n%d, st_dlo%d, st_dhi%d, st_mode, &st_a%d, &st_b%d);\n", ind, dimvar(d),
                tap->idx[d].c, d, d, d, d, d);
    for (int d = d1 - 1; d >= d0; --d)
        fprintf(f, "%sfor (ptrdiff_t st_p%d = st_a%d; st_p%d < st_b%d; ++st_p%d)%s", ind, d, d, d, d, d, d > d0 ? "\n" : "");
}

/* The border code's strips: up to BORDER_STRIP points [st_i0, st_i0 +
 * st_len) of [LO, HI), the size of its strip buffers (print_border_value's
 * st_vb, border_rows' st_ga); the loop's header, which the caller closes */
enum { BORDER_STRIP = 256 };
static void print_border_strips_open(FILE *f, const char *lo, const char *hi, const char *ind)
{
    fprintf(f, "%sfor (ptrdiff_t st_bs = %s; st_bs < %s; st_bs += %d) {\n"
               "%s    const ptrdiff_t st_i0 = st_bs, st_len = %s - st_bs < %d ? %s - st_bs : %d;\n",
            ind, lo, hi, BORDER_STRIP, ind, hi, BORDER_STRIP, hi, BORDER_STRIP);
}

/* A border row's x-interior [st_xa, st_xb), the points outside it by POINT
 * (C text for point i), the interior in strips (print_border_strips_open):
 * the bounds, the points before st_xa and the strip loop's header
 * (print_xsplit_open), the strip loop's end and the points from st_xb
 * (print_xsplit_close). */
static void print_xsplit_bounds(FILE *f)
{
    fprintf(f, "            const ptrdiff_t st_xa = stenc_iclamp(st_ilo0, st_lo0, st_hi0), "
               "st_xb = stenc_iclamp(st_ihi0, st_xa, st_hi0);\n");
}
static void print_xsplit_open(FILE *f, const char *point)
{
    fprintf(f, "            for (ptrdiff_t i = st_lo0; i < st_xa; ++i) {\n        %s\n            }\n", point);
    print_border_strips_open(f, "st_xa", "st_xb", "            ");
}
static void print_xsplit_close(FILE *f, const char *point)
{
    fprintf(f, "            }\n            for (ptrdiff_t i = st_xb; i < st_hi0; ++i) {\n        %s\n            }\n", point);
}

/* A loop job: stn_job(DIMS, ACC, BETA, BOX, INTERIOR, BORDER, MODESPEC,
 * BORDER_ROW, XEND, ROLL, ROLL_INIT, ROLL_SIZE, ROLL_STATE, XROW, ZDECL, ZBODY, NT, PF).
 * MODESPEC = 1: the bodies use st_mode, which the templates make a constant
 * per boundary mode (one loop copy per mode) so that the border's index maps
 * fold into plain clamps and wraps.  ZDECL, ZBODY: the CUDA interior with a
 * plane cache along z (zcache.c), empty when it has none.  NT: the gradient
 * that a gradient-only interior may stream (backend_c.m4 stn_gtail_nt).  PF:
 * statements that prefetch the interior's input rows from point st_pi on
 * (reduce_prefetch).  FDECL, FROW, FBODY: the job's point fields (fields.c;
 * backend_c.m4 stn_rowfn_fields), empty when it has none. */
typedef struct {
    const char *borderrow, *xend, *roll, *rinit, *rsize, *xrow, *zdecl, *zbody;
    int modespec, rstate;
    const char *nt; /* NT: the gradient a gradient-only interior may stream, or "" */
    const char *pf; /* PF: the prefetches of an interior's points from st_pi on, or "" */
    const char *fdecl, *frow, *fbody, *fsize; /* the job's point fields, or "" (FieldText) */
    int planes; /* 3D: the planes of input rows its rows read (its tile's model, stenc_fit_tile_rows), or 0 */
} JobOpt;

/* TEXTS quoted, one a line, separated by commas */
static void quoted_list(FILE *out, const char *const *texts, int n)
{
    for (int t = 0; t < n; ++t) {
        print_quoted(out, texts[t]);
        if (t + 1 < n) fprintf(out, ",\n");
    }
}

static void job_opt(FILE *out, int D, int acc, int beta, const char *box, const char *interior, const char *border,
                    const JobOpt *o)
{
    const char *const bodies[] = {box, interior, border};
    const char *const rows[] = {o->borderrow, o->xend, o->roll, o->rinit, o->rsize};
    const char *const rest[] = {o->xrow, o->zdecl, o->zbody};
    fprintf(out, "stn_job(%d, %d, %d, ", D, acc, beta);
    quoted_list(out, bodies, 3);
    fprintf(out, ", %d,\n", o->modespec);
    quoted_list(out, rows, 5);
    fprintf(out, ", %d,\n", o->rstate);
    quoted_list(out, rest, 3);
    fprintf(out, ", [[%s]], [[%s]],\n", o->nt, o->pf ? o->pf : "");
    const char *const fields[] = {o->fdecl ? o->fdecl : "", o->frow ? o->frow : "", o->fbody ? o->fbody : "",
                                  o->fsize ? o->fsize : ""};
    quoted_list(out, fields, 4);
    fprintf(out, ", %d)\n", o->planes);
}

static void job(FILE *out, int D, int acc, int beta, const char *box, const char *interior, const char *border,
                const char *zdecl, const char *zbody)
{
    const JobOpt o = {"", "", "", "", "", "", zdecl, zbody, 0, 0, "", "", "", "", "", "", 0};
    job_opt(out, D, acc, beta, box, interior, border, &o);
}

/* ARGS, CALL (the argument names), SIZES, CHECKS, SETUP of stn_entry */
static void entry_pieces(FILE *out, const char *args, const char *checks, const char *setup)
{
    print_quoted(out, args);
    fprintf(out, ",\n[[");
    /* names: the identifier at the end of each comma-separated item */
    const char *p = args;
    int first = 1;
    while (*p) {
        const char *e = strchr(p, ',');
        if (!e) e = p + strlen(p);
        const char *q = e;
        while (q > p && (q[-1] == ' ')) --q;
        const char *b = q;
        while (b > p && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= 'A' && b[-1] <= 'Z') || (b[-1] >= '0' && b[-1] <= '9'))) --b;
        fprintf(out, "%s%.*s", first ? "" : ", ", (int)(q - b), b);
        first = 0;
        p = *e ? e + 1 : e;
    }
    fprintf(out, "]],\n");
    /* CHECKS starts with the size locals: they become SIZES */
    const char *c = checks;
    while (strncmp(c, "    const ptrdiff_t st_n", 24) == 0) {
        const char *nl = strchr(c, '\n');
        if (!nl) break;
        c = nl + 1;
    }
    fprintf(out, "[[%.*s]],\n", (int)(c - checks), checks);
    print_quoted(out, c);
    fprintf(out, ",\n");
    print_quoted(out, setup);
}

static void entry_begin(FILE *out, const char *base, const char *kind, int D)
{
    fprintf(out, "stn_entry([[%s_%dd]], [[%s]], %d,\n", base, D, kind, D);
}

/* ---- array kernels: forward update ---- */

static void stmt_box_hi(FILE *f, const Stmt *st, int d)
{
    if (st->loop[d]) extent_c(f, d, st->hi[d]);
    else fprintf(f, "1");
}

/* kernel arguments: which arrays are read / written / params used */
static void kernel_usage(const Stencil *s, const Kernel *k, int *reads, int *writes, int *params)
{
    for (int a = 0; a < s->narr; ++a) { reads[a] = 0; writes[a] = 0; }
    for (int p = 0; p < s->nparam; ++p) params[p] = 0;
    for (int i = 0; i < k->nst; ++i) {
        writes[k->st[i].arr] = 1;
        for (int a = 0; a < s->narr; ++a)
            if (ex_reads(k->st[i].rhs, a)) reads[a] = 1;
        for (int p = 0; p < s->nparam; ++p)
            if (ex_uses_param(k->st[i].rhs, p)) params[p] = 1;
    }
}

/* the ghost width a kernel needs on a distributed grid: its reads' largest
 * distance from the written point (at least 1), and for an array shorter
 * than the grid by e points along a dimension ceil(e/2), below which the
 * blocks' copies of it would leave a gap between neighbours (stenc_dist.h) */
static int kernel_reach(const Stencil *s, const Kernel *k)
{
    long need = 1;
    int reads[MAXARR], writes[MAXARR], params[MAXPARAM];
    kernel_usage(s, k, reads, writes, params);
    for (int a = 0; a < s->narr; ++a)
        for (int d = 0; d < s->dims; ++d)
            if ((reads[a] || writes[a]) && (1 - s->arr[a].ext[d]) / 2 > need) need = (1 - s->arr[a].ext[d]) / 2;
    for (int i = 0; i < k->nst; ++i) {
        Node *taps[MAXTAP];
        int nt = ex_taps(k->st[i].rhs, -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t)
            for (int d = 0; d < s->dims; ++d)
                if (taps[t]->idx[d].kind == IK_VAR && k->st[i].lhs[d].kind == IK_VAR) {
                    long r = labs(taps[t]->idx[d].c - k->st[i].lhs[d].c);
                    if (r > need) need = r;
                }
    }
    return (int)need;
}

static void min_grid_kernel(const Stencil *s, const Kernel *k, const int *used, long *minn)
{
    for (int d = 0; d < 3; ++d) minn[d] = k->kmin[d] > 1 ? k->kmin[d] : 1;
    for (int a = 0; a < s->narr; ++a)
        if (used[a])
            for (int d = 0; d < s->dims; ++d)
                if (1 - s->arr[a].ext[d] > minn[d]) minn[d] = 1 - s->arr[a].ext[d];
    for (int i = 0; i < k->nst; ++i) {
        const Stmt *st = &k->st[i];
        for (int d = 0; d < s->dims; ++d) {
            if (st->loop[d] && 1 - st->hi[d] > minn[d]) minn[d] = 1 - st->hi[d];
            if (!st->loop[d] && st->lhs[d].kind == IK_CONST && st->lhs[d].c + 1 - s->arr[st->arr].ext[d] > minn[d])
                minn[d] = st->lhs[d].c + 1 - s->arr[st->arr].ext[d];
            if (!st->loop[d] && st->lhs[d].kind == IK_END && -st->lhs[d].c > minn[d]) minn[d] = -st->lhs[d].c;
        }
        Node *taps[MAXTAP];
        int nt = ex_taps(st->rhs, -1, taps, MAXTAP);
        for (int t = 0; t < nt; ++t)
            for (int d = 0; d < s->dims; ++d) {
                Index ix = taps[t]->idx[d];
                long e = s->arr[taps[t]->ref].ext[d];
                if (ix.kind == IK_CONST && ix.c + 1 - e > minn[d]) minn[d] = ix.c + 1 - e;
                if (ix.kind == IK_END && -ix.c > minn[d]) minn[d] = -ix.c;
            }
    }
}

static void doc_arrays(FILE *f, const Stencil *s, const int *used, const char *const *names, int offset)
{
    for (int a = 0; a < s->narr; ++a)
        if (used[a]) {
            fprintf(f, " *   %-12s extent ", names ? names[offset + a] : s->arr[a].name);
            extent_doc(f, s, &s->arr[a]);
            fprintf(f, "\n");
        }
}

static void doc_min(FILE *f, const Stencil *s, const long *minn)
{
    fprintf(f, " * Minimum grid: ");
    for (int d = 0; d < s->dims; ++d) fprintf(f, "%s%s >= %ld", d ? ", " : "", dimn(d), minn[d]);
    fprintf(f, ".\n");
}

/* the kernel's comment: its statements as written, its arrays, its minimum grid */
static char *update_doc(const Stencil *s, const Kernel *k, const int *used, const long *minn)
{
    const int D = s->dims;
    Str doc;
    str_open(&doc);
    fprintf(doc.f, "/* Kernel '%s' of stencil '%s' (%dD): one application of\n", k->name, s->name, D);
    for (int i = 0; i < k->nst; ++i) {
        fprintf(doc.f, " *   %s[", s->arr[k->st[i].arr].name);
        for (int d = 0; d < D; ++d) {
            Index ix = k->st[i].lhs[d];
            if (d) fprintf(doc.f, ",");
            if (ix.kind == IK_VAR) fprintf(doc.f, "%s%+ld", dimvar(d), ix.c);
            else if (ix.kind == IK_CONST) fprintf(doc.f, "%ld", ix.c);
            else fprintf(doc.f, "%s%+ld", dimn(d), ix.c);
        }
        fprintf(doc.f, "] = ");
        pr_stn(doc.f, s, k->st[i].rhs, NULL);
        fprintf(doc.f, "\n");
    }
    fprintf(doc.f, " * Arrays (column-major, i fastest):\n");
    doc_arrays(doc.f, s, used, NULL, 0);
    doc_min(doc.f, s, minn);
    fprintf(doc.f, " * Returns STENC_OK or an error code (stenc_strerror). */");
    return str_close(&doc);
}

/* the kernel entry's arguments (written arrays, read-only arrays,
 * parameters), checks (sizes, null, counts, aliasing) and strides */
static void update_entry_text(const Stencil *s, const int *reads, const int *writes, const int *params,
                              const int *used, const long *minn, char **sargs, char **schk, char **sset)
{
    const int D = s->dims;
    Str args, chk, set;
    str_open(&args); str_open(&chk); str_open(&set);
    args_sizes(args.f, D);
    for (int a = 0; a < s->narr; ++a)
        if (writes[a]) fprintf(args.f, ", stn_real *stn_restrict %s", s->arr[a].name);
    for (int a = 0; a < s->narr; ++a)
        if (reads[a] && !writes[a]) fprintf(args.f, ", const stn_real *stn_restrict %s", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p)
        if (params[p]) fprintf(args.f, ", stn_real %s", s->param[p]);

    setup_sizes(chk.f, D);
    checks_sizes(chk.f, D, minn, 0, NULL);
    for (int a = 0; a < s->narr; ++a)
        if (used[a]) { checks_null(chk.f, s->arr[a].name); checks_count(chk.f, s, a, s->arr[a].name); }
    for (int a = 0; a < s->narr; ++a)
        if (writes[a])
            for (int b = 0; b < s->narr; ++b)
                if (used[b] && b != a && (b > a || !writes[b])) checks_alias(chk.f, s->arr[a].name, s->arr[b].name);

    for (int a = 0; a < s->narr; ++a)
        if (used[a]) setup_strides(set.f, s, a, s->arr[a].name);
    *sargs = str_close(&args), *schk = str_close(&chk), *sset = str_close(&set);
}

/* one bound of the statements' boxes along d: FN stenc_imax (their union's
 * high end) or stenc_imin (their intersection's) */
static void print_stmt_hi_fold(FILE *f, const Kernel *k, int d, const char *fn)
{
    for (int i = 0; i < k->nst; ++i) {
        if (i < k->nst - 1) fprintf(f, "%s(", fn);
        stmt_box_hi(f, &k->st[i], d);
        if (i < k->nst - 1) fprintf(f, ", ");
    }
    for (int i = 0; i < k->nst - 1; ++i) fprintf(f, ")");
}

/* the job's box (the union of the statements' boxes) and interior (their intersection) */
static char *update_box(const Stencil *s, const Kernel *k)
{
    Str box;
    str_open(&box);
    for (int d = 0; d < s->dims; ++d) {
        fprintf(box.f, "const ptrdiff_t st_lo%d = 0, st_hi%d = ", d, d);
        print_stmt_hi_fold(box.f, k, d, "stenc_imax");
        fprintf(box.f, ";\n    const ptrdiff_t st_ilo%d = 0, st_ihi%d = ", d, d);
        print_stmt_hi_fold(box.f, k, d, "stenc_imin");
        fprintf(box.f, ";\n    ");
    }
    return str_close(&box);
}

/* The array an update streams where it is large (the whole 64-byte lines
 * of its interior rows, backend_c.m4 stn_gtail_nt; stenc_nt_on): the
 * array of a kernel of one statement that does not read it, without point
 * fields, written along x at i + c (a row of points, not one); -1 for
 * none.  Not read, it costs no read for ownership streamed
 * (the hand diffusion 3D loop took 0.80-0.85 of its time at 256^3 and
 * 512^3: perf/NOTES.md section 65), and a point computed twice (a row's
 * last vector again) stores the same value. */
static int update_streamed(const Kernel *k, const int *reads, int nfields)
{
    if (k->nst != 1 || nfields > 0 || k->st[0].lhs[0].kind != IK_VAR) return -1;
    return reads[k->st[0].arr] ? -1 : k->st[0].arr;
}

/* A job whose interior streams the array it writes at TAP (an update's,
 * or the adjoint array an adjoint zeroes; O->nt its name), with its row
 * pointer for the job, stn_j_ntrow: element i of it is the point the
 * interior's iteration i writes */
static void job_streamed(FILE *out, const Stencil *s, Node *tap, int D, const char *box, const char *interior,
                         const char *border, const JobOpt *o)
{
    static const char *vars[3] = {"0", "j", "k"};
    const PrintCtx pc = {s, TAP_DIRECT, NULL, vars, NULL, 0};
    fprintf(out, "m4_pushdef([[stn_j_ntrow]], [[&");
    pr_tap_c(out, &pc, tap);
    fprintf(out, "]])");
    job_opt(out, D, 0, 0, box, interior, border, o);
    fprintf(out, "m4_popdef([[stn_j_ntrow]])");
}

static char *prefetch_arrays(int D, int n, const char *const *names, const int *reads, int none, const char *jv,
                             const char *kv, long dy, long dz);

/* A streamed update's prefetches (stn_j_pf): each array it reads, at the
 * row its walk reads first, as a reduction's value asks (prefetch_next_row):
 * the array's last tap in walk order (highest z, then y), a row on in 3D.
 * With them the hand diffusion 3D loop that streams took 0.80-0.85 of its
 * time at 512^3, without them 1.15 (perf/NOTES.md section 65) */
static char *update_prefetch(const Stencil *s, const Kernel *k, const int *reads)
{
    Node *taps[MAXTAP];
    const int D = s->dims, nt = ex_taps(k->st[0].rhs, -1, taps, MAXTAP);
    const char *names[MAXARR];
    for (int a = 0; a < s->narr; ++a) names[a] = s->arr[a].name;
    Str t;
    str_open(&t);
    for (int a = 0; a < s->narr; ++a) {
        long ly = 0, lz = 0;
        int any = 0;
        for (int q = 0; q < nt && q < MAXTAP; ++q) {
            const Node *p = taps[q];
            if (p->ref != a || p->idx[1].kind != IK_VAR || (D == 3 && p->idx[2].kind != IK_VAR)) continue;
            const long dy = p->idx[1].c, dz = D == 3 ? p->idx[2].c : 0;
            if (!any || dz > lz || (dz == lz && dy > ly)) ly = dy, lz = dz, any = 1;
        }
        int one[MAXARR] = {0};
        one[a] = reads[a];
        char *pa = prefetch_arrays(D, s->narr, names, one, !any, "j", "k", ly + (D == 3), lz);
        fputs(pa, t.f);
        free(pa);
    }
    return str_close(&t);
}

/* the job's bodies: inside, every statement (STREAMED >= 0: its store
 * stn_ustore's, which a streamed line redirects); on the border, each
 * statement where the point lies in its own box; in 3D the CUDA interior
 * with its plane cache (*szd, *szb; NULL without one) */
static void update_bodies(const Stencil *s, const Kernel *k, int streamed, char **sin, char **sbd, char **szd,
                          char **szb)
{
    PrintCtx pc = {s, TAP_DIRECT, NULL, NULL, NULL, 0};
    Str in, bd;
    char *fmt[MAXSTMT];
    Node *roots[MAXSTMT];
    int written[MAXSTMT];
    str_open(&in); str_open(&bd);
    for (int i = 0; i < k->nst; ++i) {
        const Stmt *st = &k->st[i];
        Str lhs, us;
        str_open(&lhs);
        pr_tap_c(lhs.f, &pc, ex_tap(st->arr, st->lhs));
        char *lv = str_close(&lhs);
        str_open(&lhs);
        fprintf(lhs.f, "%s = %%s;", lv);
        fmt[i] = str_close(&lhs);
        str_open(&us); /* the interior's store where it streams */
        fprintf(us.f, streamed >= 0 ? "{ const stn_real st_gv = %%s; stn_ustore([[%s]]) }" : "%s = %%s;", lv);
        char *ufmt = str_close(&us);
        free(lv);
        roots[i] = st->rhs, written[i] = st->arr;
        fprintf(in.f, "{\n");
        pr_c_block(in.f, &pc, roots + i, 1, (const char *const *)&ufmt, "            ");
        free(ufmt);
        fprintf(in.f, "        }\n");
        fprintf(bd.f, "if (");
        for (int d = 0; d < s->dims; ++d) {
            fprintf(bd.f, "%s%s < ", d ? " && " : "", dimvar(d));
            stmt_box_hi(bd.f, st, d);
        }
        fprintf(bd.f, ") {\n");
        pr_c_block(bd.f, &pc, roots + i, 1, (const char *const *)fmt + i, "            ");
        fprintf(bd.f, "        }\n");
    }
    const ZcIn z = {&pc, roots, k->nst, (const char *const *)fmt, 1, "", written, k->nst};
    (void)zc_body(&z, szd, szb);
    for (int i = 0; i < k->nst; ++i) free(fmt[i]);
    *sin = str_close(&in), *sbd = str_close(&bd);
}

/* whether a fill of F's fields reads an array the job writes */
static int fields_read_written(const Fields *F, const int *written)
{
    for (int q = 0; q < F->n; ++q) {
        Node *taps[MAXTAP];
        const int nt = ex_taps(F->f[q].g, -1, taps, MAXTAP);
        for (int u = 0; u < nt && u < MAXTAP; ++u)
            if (written[taps[u]->ref]) return 1;
    }
    return 0;
}

/* A job's point fields (fields.c; the C row functions, not CUDA): where
 * EXPR (NULL: none) reads a costly subexpression of one tap (the
 * reciprocals of a harmonic mean) at several offsets, of arrays the job
 * does not write (WRITTEN, by array of ES), each is evaluated once a point
 * into rows (backend_c.m4 stn_rowfn_fields; fields_print.c); *T the
 * job's texts (the point's statement FMT), "" without fields.  Returns
 * the fields' count, -1 out of memory.  fields_job_text prints a plan F of
 * N fields (CLIP: cell_gather_fields' whole box, or NULL). */
static int fields_job_text(const Stencil *es, const char *const *names, const Fields *F, int n, const int *written,
                           const FieldClip *clip, const char *fmt, FieldText *t)
{
    if (n > 0 && fields_read_written(F, written)) n = 0;
    const FieldPrint fp = {es, names, es->narr, F, es->dims == 3, 0, clip};
    fields_print(n > 0 ? &fp : NULL, fmt, t);
    return n;
}

static int job_fields(const Stencil *es, const char *const *names, Node *expr, const int *written, const char *fmt,
                      FieldText *t)
{
    Fields F;
    const int n = expr ? fields_plan(es, expr, es->narr, &F) : 0;
    return fields_job_text(es, names, &F, n, written, NULL, fmt, t);
}

/* The planes of input rows that ROOTS read (the model of a job's cache use
 * that bounds its 3D tile, stenc_fit_tile_rows): the z reach of each of
 * arrays 0 .. NARR - 1 over the roots' taps, summed over the arrays */
static int taps_planes(Node *const *roots, int nroots, int narr, int D)
{
    Node *taps[MAXTAP];
    int planes = 0;
    for (int a = 0; a < narr; ++a) {
        long lo = 0, hi = -1;
        for (int e = 0; e < nroots; ++e) {
            const int nt = roots[e] ? ex_taps(roots[e], a, taps, MAXTAP) : 0;
            for (int t = 0; t < nt && t < MAXTAP; ++t) {
                const long z = D == 3 && taps[t]->idx[2].kind == IK_VAR ? taps[t]->idx[2].c : 0;
                if (hi < lo) lo = hi = z;
                lo = z < lo ? z : lo, hi = z > hi ? z : hi;
            }
        }
        planes += (int)(hi - lo + 1);
    }
    return planes;
}

/* an update's fields: a kernel of one statement */
static int update_fields(const Stencil *s, const Kernel *k, const int *writes, FieldText *t)
{
    const char *names[MAXARR];
    for (int a = 0; a < s->narr; ++a) names[a] = s->arr[a].name;
    const PrintCtx pc = {s, TAP_DIRECT, NULL, NULL, NULL, 0};
    Str lhs;
    str_open(&lhs);
    pr_tap_c(lhs.f, &pc, ex_tap(k->st[0].arr, k->st[0].lhs));
    fprintf(lhs.f, " = %%s;");
    char *fmt = str_close(&lhs);
    const int n = job_fields(s, names, k->nst == 1 ? k->st[0].rhs : NULL, writes, fmt, t);
    free(fmt);
    return n;
}

/* The kernel k's entry: one job over the union of its statements' boxes,
 * and its distributed-grid wrappers */
static int emit_update(FILE *out, const Stencil *s, const Kernel *k)
{
    const int D = s->dims;
    int reads[MAXARR], writes[MAXARR], params[MAXPARAM], used[MAXARR];
    kernel_usage(s, k, reads, writes, params);
    for (int a = 0; a < s->narr; ++a) used[a] = reads[a] || writes[a];
    FieldText ft;
    const int nfields = update_fields(s, k, writes, &ft);
    if (nfields < 0) return gen_error(s->file, k->line, "out of memory");
    const int streamed = update_streamed(k, reads, nfields);
    long minn[3];
    min_grid_kernel(s, k, used, minn);
    char base[160];
    func_base(s, k->name, base, sizeof base);
    char *sdoc = update_doc(s, k, used, minn), *sargs, *schk, *sset, *sin, *sbd, *szd, *szb;
    update_entry_text(s, reads, writes, params, used, minn, &sargs, &schk, &sset);
    char *sbox = update_box(s, k);
    update_bodies(s, k, streamed, &sin, &sbd, &szd, &szb);
    entry_begin(out, base, "update", D);
    print_quoted(out, sdoc); fprintf(out, ",\n");
    entry_pieces(out, sargs, schk, sset);
    fprintf(out, ",\n[[");
    Node *rhs[MAXSTMT];
    for (int t = 0; t < k->nst; ++t) rhs[t] = k->st[t].rhs;
    char *upf = streamed >= 0 ? update_prefetch(s, k, reads) : NULL;
    const JobOpt jo = {"", "", "", "", "", "", szd, szb, 0, 0, streamed >= 0 ? s->arr[streamed].name : "",
                       upf ? upf : ft.pf, ft.decl, ft.rows, ft.body, ft.size,
                       ft.planes ? ft.planes : taps_planes(rhs, k->nst, s->narr, D)};
    if (streamed >= 0) job_streamed(out, s, ex_tap(k->st[0].arr, k->st[0].lhs), D, sbox, sin, sbd, &jo);
    else job_opt(out, D, 0, 0, sbox, sin, sbd, &jo);
    free(upf);
    fprintf(out, "]])\n\n");
    char what[200], ent[200];
    snprintf(what, sizeof what, "kernel '%s' of stencil '%s'", k->name, s->name);
    snprintf(ent, sizeof ent, "%s_%dd", base, D);
    emit_dist(out, ent, "update", D, sargs, kernel_reach(s, k), NULL, NULL, what);
    emit_dist_hide(out, ent, D, sargs, kernel_reach(s, k), what, s, k);
    free(sdoc); free(sargs); free(schk); free(sset); free(sbox); free(sin); free(sbd); free(szd); free(szb);
    fields_text_free(&ft);
    return 0;
}

/* ---- array kernels: adjoint (vector-Jacobian product, gather form) ---- */

static int is_self_tap(const Stmt *st, const Node *t)
{
    if (t->ref != st->arr) return 0;
    for (int d = 0; d < 3; ++d)
        if (t->idx[d].kind != st->lhs[d].kind || t->idx[d].c != st->lhs[d].c) return 0;
    return 1;
}

typedef struct {
    int stmt;
    Node *tap;      /* the tap of X in the statement */
    Node *expr;     /* shifted contribution at q */
} Term;

/* The differentiable inputs of kernel k (DIFF): the arrays a statement reads
 * at a point other than its own written one, unless const and not written */
static void adjoint_inputs(const Stencil *s, const Kernel *k, const int *writes, int *diff)
{
    for (int a = 0; a < s->narr; ++a) diff[a] = 0;
    for (int si = 0; si < k->nst; ++si) {
        Node *taps[MAXTAP];
        int nt = ex_taps(k->st[si].rhs, -1, taps, MAXTAP);
        for (int t = 0; t < nt; ++t)
            if (!is_self_tap(&k->st[si], taps[t]) && (!s->arr[taps[t]->ref].is_const || writes[taps[t]->ref]))
                diff[taps[t]->ref] = 1;
    }
}

/* ---- an adjoint's cell factor ----
 * A statement's partials with respect to its taps of x often share a
 * factor of the whole statement: the harmonic mean 8/S of eight taps has
 * the partial (8/S^2)*(1/x_t^2) with respect to tap t.  Each gather point
 * then reads the shared factor at every cell whose statement reads it
 * (eight in 3D), and evaluated there it cost two divisions a term.
 * Written as the product of the cell factor (times the written array's
 * adjoint) and the tap's own part, the cell factors are shifts of one
 * expression, which the gather's fields evaluate once per cell
 * (fields_plan_cells; perf/NOTES.md section 66). */
enum { MAXFAC = 32 };
typedef struct {
    int n, neg;
    Node *f[MAXFAC];
    int e[MAXFAC]; /* each factor's power, negative in the divisor */
} Factors;

/* N's factors with powers times E; 0 when there are too many */
static int factors_of(Node *n, int e, Factors *F)
{
    switch (n->kind) {
    case E_MUL: return factors_of(n->a[0], e, F) && factors_of(n->a[1], e, F);
    case E_DIV: return factors_of(n->a[0], e, F) && factors_of(n->a[1], -e, F);
    case E_NEG: F->neg ^= 1; return factors_of(n->a[0], e, F);
    case E_POWI: return factors_of(n->a[0], e * n->op, F);
    default:
        if (F->n == MAXFAC) return 0;
        F->f[F->n] = n, F->e[F->n++] = e;
        return 1;
    }
}

/* whether factor N reads tap T and no other */
static int reads_only(Node *n, const Node *t)
{
    Node *taps[MAXTAP];
    const int nt = ex_taps(n, -1, taps, MAXTAP);
    return nt == 1 && taps[0] == t;
}

/* the product of the factors of class LOCAL (1: reading tap T alone),
 * divided by its divisors: the same factors give the same node */
static Node *factor_product(const Factors *F, const Node *t, int local)
{
    Node *f[MAXFAC];
    int e[MAXFAC], m = 0;
    for (int u = 0; u < F->n; ++u) { /* by node id, equal factors' powers added */
        if (reads_only(F->f[u], t) != local) continue;
        int v = m;
        while (v > 0 && f[v - 1]->id > F->f[u]->id) --v;
        if (v > 0 && f[v - 1] == F->f[u]) { e[v - 1] += F->e[u]; continue; }
        memmove(f + v + 1, f + v, sizeof *f * (size_t)(m - v));
        memmove(e + v + 1, e + v, sizeof *e * (size_t)(m - v));
        f[v] = F->f[u], e[v] = F->e[u], ++m;
    }
    Node *num = ex_num(1), *den = ex_num(1);
    for (int u = 0; u < m; ++u) {
        if (e[u] > 0) num = ex_mul(num, ex_powi(f[u], e[u]));
        if (e[u] < 0) den = ex_mul(den, ex_powi(f[u], -e[u]));
    }
    return ex_div(num, den);
}

/* P (a partial with respect to tap T) as CELL * OWN, OWN the factors that
 * read T alone; 0 when P has too many factors */
static int split_partial(Node *p, const Node *t, Node **cell, Node **own)
{
    Factors F = {0, 0, {0}, {0}};
    if (!factors_of(p, 1, &F)) return 0;
    *cell = factor_product(&F, t, 0);
    if (F.neg) *cell = ex_neg(*cell);
    *own = factor_product(&F, t, 1);
    return 1;
}

/* Terms [from, to) are statement ST's (the only writer of its array): when
 * their partials share a costly cell factor, each term becomes that factor
 * times the written array's adjoint (array N + its number), at the
 * statement's point, times the tap's own part, both shifted to q */
static Node *cell_factor_terms(const Kernel *k, int N, Node *const *partial, Term *terms, int from, int to)
{
    const Stmt *st = &k->st[terms[from].stmt];
    for (int si = 0; si < k->nst; ++si)
        if (si != terms[from].stmt && k->st[si].arr == st->arr) return NULL;
    Node *cell[MAXTAP], *own[MAXTAP];
    for (int t = from; t < to; ++t)
        if (!split_partial(partial[t], terms[t].tap, &cell[t], &own[t]) || cell[t] != cell[from]) return NULL;
    if (to - from < 2 || !ex_costly(cell[from])) return NULL;
    Node *z = ex_mul(cell[from], ex_tap(N + st->arr, st->lhs));
    for (int t = from; t < to; ++t) {
        long off[3] = {0, 0, 0};
        for (int d = 0; d < 3; ++d)
            if (st->loop[d]) off[d] = -terms[t].tap->idx[d].c;
        terms[t].expr = ex_mul(ex_shift(z, off), ex_shift(own[t], off));
    }
    return z;
}

/* a gather whose terms are all one statement's (looped along every
 * dimension) cell factor times their taps' own parts */
typedef struct {
    Node *z;     /* the cell factor times the adjoint, at the statement's point (NULL: not such a gather) */
    long m[3];   /* its taps' least offsets along each dimension */
    long hi[3];  /* the statement's points: [0, n_d + hi[d]) */
} CellGather;

/* whether the terms' taps fill a box of offsets: then every point of the
 * union of their ranges is some term's, and the whole box's gather adds
 * nothing to a point the statement does not read (an own part there, 1/x^2
 * of a value no term reads, is never evaluated as 0 * inf) */
static int taps_fill_box(const Stencil *s, const Term *terms, int nterm)
{
    long lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, cells = 1;
    for (int d = 0; d < s->dims; ++d) {
        for (int t = 0; t < nterm; ++t) {
            const long c = terms[t].tap->idx[d].c;
            lo[d] = t == 0 || c < lo[d] ? c : lo[d], hi[d] = t == 0 || c > hi[d] ? c : hi[d];
        }
        cells *= hi[d] - lo[d] + 1;
    }
    return cells == nterm; /* the taps are distinct: nterm of the box's cells */
}

static void cell_gather(const Stencil *s, const Kernel *k, const Term *terms, int nterm, Node *z, CellGather *cg)
{
    memset(cg, 0, sizeof *cg);
    const Stmt *st = &k->st[terms[0].stmt];
    for (int t = 0; t < nterm; ++t)
        if (terms[t].stmt != terms[0].stmt) return;
    for (int d = 0; d < s->dims; ++d)
        if (!st->loop[d]) return;
    if (!taps_fill_box(s, terms, nterm)) return;
    Node *taps[MAXTAP];
    const int nt = ex_taps(z, -1, taps, MAXTAP);
    for (int d = 0; d < s->dims; ++d) {
        for (int u = 0; u < nt && u < MAXTAP; ++u)
            if (u == 0 || taps[u]->idx[d].c < cg->m[d]) cg->m[d] = taps[u]->idx[d].c;
        cg->hi[d] = st->hi[d];
    }
    cg->z = z;
}

/* Plan: the terms of input x's gather, each statement's partial with respect
 * to one of its taps of x times the written array's adjoint (array N + the
 * written one), shifted to the gathering point q (cell_factor_terms: its
 * cell factor apart).  Returns their count, or -1 after reporting why x has
 * no stencil adjoint. */
static int adjoint_terms(const Stencil *s, const Kernel *k, int x, int N, Term *terms, CellGather *cg)
{
    Node *z = NULL;
    const int D = s->dims;
    const char *rd = s->arr[x].name;
    int nterm = 0;
    Node *partial[MAXTAP];
    for (int si = 0; si < k->nst; ++si) {
        const Stmt *st = &k->st[si];
        const int first = nterm;
        Node *taps[MAXTAP];
        int nt = ex_taps(st->rhs, x, taps, MAXTAP);
        for (int t = 0; t < nt; ++t) {
            if (is_self_tap(st, taps[t])) continue;
            for (int d = 0; d < D; ++d)
                if (st->loop[d] && taps[t]->idx[d].kind != IK_VAR)
                    return gen_error(s->file, st->line,
                                     "cannot differentiate with respect to '%s': it is read at a fixed index along %s in a loop over %s, "
                                     "so its adjoint would be a reduction, not a stencil (declare it 'const' if it needs no gradient)",
                                     rd, dimvar(d) , dimvar(d)), -1;
            int bad = 0;
            Node *p = ex_diff(st->rhs, x, taps[t]->idx, &bad);
            if (!p)
                return gen_error(s->file, st->line,
                                 "cannot differentiate with respect to '%s': %s() is not differentiable (declare '%s' const, or write the "
                                 "function with select so its derivative is defined)",
                                 rd, ex_fn_name[bad - 1], rd), -1;
            if (ex_is_num(p, 0)) continue;
            Node *w = ex_mul(p, ex_tap(N + st->arr, st->lhs));
            long off[3] = {0, 0, 0};
            for (int d = 0; d < D; ++d)
                if (st->loop[d]) off[d] = -taps[t]->idx[d].c;
            if (nterm == MAXTAP) return gen_error(s->file, st->line, "too many adjoint terms"), -1;
            terms[nterm].stmt = si;
            terms[nterm].tap = taps[t];
            terms[nterm].expr = ex_shift(w, off);
            partial[nterm++] = p;
        }
        if (nterm > first) z = cell_factor_terms(k, N, partial, terms, first, nterm);
    }
    if (z && nterm > 0) cell_gather(s, k, terms, nterm, z, cg);
    else memset(cg, 0, sizeof *cg);
    return nterm;
}

/* one end of q's range along d for term t: PASS 0 its low end, 1 its high end */
static void print_term_end(FILE *f, const Kernel *k, const Term *t, int d, int pass)
{
    const Stmt *st = &k->st[t->stmt];
    Index ix = t->tap->idx[d];
    if (st->loop[d]) {
        if (pass == 0) fprintf(f, "%ld", ix.c);
        else { fprintf(f, "("); extent_c(f, d, st->hi[d]); fprintf(f, "%+ld)", ix.c); }
    } else if (ix.kind == IK_CONST) fprintf(f, "%ld", ix.c + pass);
    else fprintf(f, "(st_n%d%+ld)", d, ix.c + pass);
}

/* one end of q's box along d: INNER 0 the union of the terms' ranges
 * (st_lo/st_hi), 1 their intersection (st_ilo/st_ihi) */
static void print_box_end(FILE *f, const Kernel *k, const Term *terms, int nterm, int d, int pass, int inner)
{
    const char *fn = (pass == 0) == (inner == 0) ? "stenc_imin" : "stenc_imax";
    fprintf(f, "const ptrdiff_t st_%s%s%d = ", inner ? "i" : "", pass ? "hi" : "lo", d);
    for (int t = 0; t < nterm; ++t) {
        if (t < nterm - 1) fprintf(f, "%s(", fn);
        print_term_end(f, k, &terms[t], d, pass);
        if (t < nterm - 1) fprintf(f, ", ");
    }
    for (int t = 0; t < nterm - 1; ++t) fprintf(f, ")");
    fprintf(f, ";\n    ");
}

/* q's box per dimension: st_lo/st_hi the union of the terms' ranges, st_ilo/st_ihi their
 * intersection (the interior).  WHOLE (a cell gather with its zero-extended field,
 * cell_gather_fields): the C interior is the whole box, CUDA's the intersection
 * (m4 stn_c_else) */
static void print_adjoint_box(FILE *f, const Stencil *s, const Kernel *k, const Term *terms, int nterm, int whole)
{
    for (int d = 0; d < s->dims; ++d)
        for (int pass = 0; pass < 2; ++pass)
            for (int inner = 0; inner < 2 - whole; ++inner) print_box_end(f, k, terms, nterm, d, pass, inner);
    if (!whole) return;
    fprintf(f, "stn_c_else([[");
    for (int d = 0; d < s->dims; ++d) fprintf(f, "const ptrdiff_t st_ilo%d = st_lo%d, st_ihi%d = st_hi%d;\n    ", d, d, d, d);
    fprintf(f, "]], [[");
    for (int d = 0; d < s->dims; ++d)
        for (int pass = 0; pass < 2; ++pass) print_box_end(f, k, terms, nterm, d, pass, 1);
    fprintf(f, "]])");
}

/* whether VALUE reads the arrays of ES (not its field rows) at the point alone */
static int reads_point_only(Node *value, const Stencil *es)
{
    Node *taps[MAXTAP];
    const int nt = ex_taps(value, -1, taps, MAXTAP);
    for (int u = 0; u < nt && u < MAXTAP; ++u)
        for (int d = 0; d < es->dims && taps[u]->ref < es->narr; ++d)
            if (taps[u]->idx[d].kind != IK_VAR || taps[u]->idx[d].c != 0) return 0;
    return nt <= MAXTAP;
}

/* A cell gather's fields (CG, its gather SUM, the job's WRITTEN arrays,
 * its point statement FMT; *T the texts).  Where the plan is the one cell
 * field of CG's factor and the point reads nothing else but its own
 * point, the field's fills write zero outside the statement's points, so
 * the sum holds on the gather's whole box (*WHOLE set): no border terms
 * in C, each evaluating its cell's factor again (a third of the Stokes
 * viscosity adjoint's time at 512^3, perf/NOTES.md section 66).  Else
 * the same plan unclipped.  Returns the fields' count, -1 out of memory. */
static int cell_gather_fields(const Ext *E, Node *sum, const CellGather *cg, const int *written, const char *fmt,
                              FieldText *t, int *whole)
{
    const Stencil *es = &E->s;
    Fields F;
    const int n = fields_plan_cells(es, sum, es->narr, &F);
    const long back[3] = {-cg->m[0], -cg->m[1], -cg->m[2]};
    int outer = 0; /* the fields the gather reads: the cell field alone */
    for (int q = 0; q < n; ++q) outer += !F.f[q].inner;
    *whole = outer == 1 && F.f[0].arr < 0 && F.f[0].g == ex_shift(cg->z, back) && reads_point_only(F.value, es) &&
             !fields_read_written(&F, written);
    if (!*whole) return fields_job_text(es, E->names, &F, n, written, NULL, fmt, t);
    char text[MAXFIELD][6][48];
    FieldClip clip;
    memset(&clip, 0, sizeof clip);
    for (int q = 0; q < n; ++q) /* the cell field on the statement's points, an inner field on its array's */
        for (int d = 0; d < 3; ++d) {
            const Array *a = F.f[q].inner ? &es->arr[F.f[q].arr] : NULL;
            const long lo = a ? 0 : cg->m[d], hi = a ? a->ext[d] : cg->hi[d] + cg->m[d];
            snprintf(text[q][2 * d], sizeof text[q][0], "%ld", lo);
            if (d < es->dims) snprintf(text[q][2 * d + 1], sizeof text[q][0], "(st_n%d%+ld)", d, hi);
            else snprintf(text[q][2 * d + 1], sizeof text[q][0], "1");
            clip.b[q][2 * d] = text[q][2 * d], clip.b[q][2 * d + 1] = text[q][2 * d + 1];
        }
    return fields_job_text(es, E->names, &F, n, written, &clip, fmt, t);
}

/* a border point: each term where q lies in its range, summed; the point is
 * touched only if some term reaches it (the others may be another
 * statement's written points, read concurrently) */
static void print_adjoint_border(FILE *f, const Stencil *s, const Kernel *k, const PrintCtx *pc, Term *terms,
                                 int nterm, const char *qs, const char *name)
{
    const int D = s->dims;
    fprintf(f, "{\n            %s\n            stn_real st_g = 0;\n            int st_hit = 0;\n", qs);
    for (int t = 0; t < nterm; ++t) {
        const Stmt *st = &k->st[terms[t].stmt];
        Index *ix = terms[t].tap->idx;
        fprintf(f, "            if (");
        for (int d = 0; d < D; ++d) {
            if (d) fprintf(f, " && ");
            if (st->loop[d]) {
                fprintf(f, "%s >= %ld && %s < ", dimvar(d), ix[d].c, dimvar(d));
                fprintf(f, "("); extent_c(f, d, st->hi[d]); fprintf(f, "%+ld)", ix[d].c);
            } else if (ix[d].kind == IK_CONST) fprintf(f, "%s == %ld", dimvar(d), ix[d].c);
            else fprintf(f, "%s == st_n%d%+ld", dimvar(d), d, ix[d].c);
        }
        fprintf(f, ") {\n                st_hit = 1;\n");
        const char *f2[1] = {"st_g += %s;"};
        pr_c_block(f, pc, &terms[t].expr, 1, f2, "                ");
        fprintf(f, "            }\n");
    }
    fprintf(f, "            if (st_hit) %s_bar[st_q] += st_g;\n        }\n", name);
}

/* a kernel adjoint's .adj listing, printed once its lines are all known
 * (pr_stn_listing: the subexpressions they share named once) */
#define MAXADJLINE (MAXARR + MAXSTMT)
typedef struct {
    int n;
    Node *root[MAXADJLINE];
    char name[MAXADJLINE][2 * MAXNAME];
    const char *note[MAXADJLINE];
} AdjLines;

static void adj_line(AdjLines *L, Node *root, const char *name, const char *note)
{
    if (L->n == MAXADJLINE) return;
    L->root[L->n] = root;
    snprintf(L->name[L->n], sizeof L->name[L->n], "%s", name);
    L->note[L->n++] = note;
}

/* Phase 1 for input x: its gather job (box, the terms' sum inside, the
 * guarded terms on the border) and its line of the .adj listing.  Returns
 * 0, or -1 after an error. */
static int emit_adjoint_gather(FILE *jobs, AdjLines *dump, const Stencil *s, const Kernel *k, const Ext *E,
                               const PrintCtx *pc, int x)
{
    const int D = s->dims, N = E->nuser;
    Term terms[MAXTAP];
    CellGather cg;
    const int nterm = adjoint_terms(s, k, x, N, terms, &cg);
    if (nterm <= 0) return nterm;
    Str box, in, bd, q;
    str_open(&box); str_open(&in); str_open(&bd);
    Node *sum = ex_num(0);
    for (int t = 0; t < nterm; ++t) sum = ex_add(sum, terms[t].expr);
    sum = ex_group_coef(sum, 1);
    str_open(&q);
    point_index(q.f, &E->s, E->names[N + x], "st_q");
    char *qs = str_close(&q);
    char fmt[256];
    snprintf(fmt, sizeof fmt, "%s_bar[st_q] += %%s;", s->arr[x].name);
    const char *fmts[1] = {fmt};
    fprintf(in.f, "{\n            %s\n", qs);
    pr_c_block(in.f, pc, &sum, 1, fmts, "            ");
    fprintf(in.f, "        }\n");
    print_adjoint_border(bd.f, s, k, pc, terms, nterm, qs, s->arr[x].name);
    char *szd = NULL, *szb = NULL, head[300];
    const int written[1] = {N + x};
    snprintf(head, sizeof head, "            %s\n", qs);
    const ZcIn z = {pc, &sum, 1, fmts, 0, head, written, 1};
    (void)zc_body(&z, &szd, &szb);
    /* the fields' point statement: its index, then the sum */
    int wr[MAXARR] = {0};
    wr[N + x] = 1;
    char ffmt[600];
    FieldText ft;
    snprintf(ffmt, sizeof ffmt, "%s %s", qs, fmt);
    int whole = 0;
    const int nf = cg.z ? cell_gather_fields(E, sum, &cg, wr, ffmt, &ft, &whole) : job_fields(&E->s, E->names, sum, wr, ffmt, &ft);
    print_adjoint_box(box.f, s, k, terms, nterm, whole);
    free(qs);
    char *sbox = str_close(&box), *sin = str_close(&in), *sbd = str_close(&bd);
    const JobOpt jo = {"", "", "", "", "", "", szd, szb, 0, 0, "", ft.pf, ft.decl, ft.rows, ft.body, ft.size,
                       ft.planes ? ft.planes : taps_planes(&sum, 1, E->s.narr, D)};
    if (nf >= 0) job_opt(jobs, D, 0, 0, sbox, sin, sbd, &jo);
    free(sbox); free(sin); free(sbd); free(szd); free(szb);
    fields_text_free(&ft);
    if (nf < 0) return gen_error(s->file, k->line, "out of memory");
    const Index at[3] = {{IK_VAR, 0}, {IK_VAR, 0}, {IK_VAR, 0}};
    char name[2 * MAXNAME];
    snprintf(name, sizeof name, "all(%s)", E->names[N + x]);
    adj_line(dump, ex_add(ex_tap(N + x, at), sum), name, NULL);
    return 0;
}

/* Phase 2 for statement si: the written array's own adjoint, Y_bar times the
 * statement's partial with respect to Y at its written point (nothing when
 * that is 1).  Returns 0, or -1 after an error. */
static int emit_adjoint_self(FILE *jobs, AdjLines *dump, const Stencil *s, const Kernel *k, const Ext *E,
                             const PrintCtx *pc, int si)
{
    const int D = s->dims, N = E->nuser;
    const Stmt *st = &k->st[si];
    int bad = 0;
    Node *fac = ex_diff(st->rhs, st->arr, st->lhs, &bad);
    if (!fac)
        return gen_error(s->file, st->line, "cannot differentiate the in-place update of '%s': %s() is not differentiable",
                         s->arr[st->arr].name, ex_fn_name[bad - 1]), -1;
    if (ex_is_num(fac, 1)) return 0;
    Str box, in, lhs;
    str_open(&box); str_open(&in);
    for (int d = 0; d < D; ++d) {
        fprintf(box.f, "const ptrdiff_t st_lo%d = 0, st_hi%d = ", d, d);
        stmt_box_hi(box.f, st, d);
        fprintf(box.f, ", st_ilo%d = st_lo%d, st_ihi%d = st_hi%d;\n    ", d, d, d, d);
    }
    Node *yb = ex_tap(N + st->arr, st->lhs);
    str_open(&lhs);
    pr_tap_c(lhs.f, pc, yb);
    char *l = str_close(&lhs);
    char fmt[512];
    Node *root = ex_mul(fac, yb);
    /* zeroed (the statement does not read what it writes): whole lines
     * streamed on large grids, as an update's (stn_ustore), without the
     * reads a plain store makes for each line */
    const int zeroed = ex_is_num(root, 0) && st->lhs[0].kind == IK_VAR;
    snprintf(fmt, sizeof fmt, zeroed ? "{ const stn_real st_gv = %%s; stn_ustore([[%s]]) }" : "%s = %%s;", l);
    const char *fmts[1] = {fmt};
    fprintf(in.f, "{\n");
    pr_c_block(in.f, pc, &root, 1, fmts, "            ");
    fprintf(in.f, "        }\n");
    free(l);
    char *sbox = str_close(&box), *sin = str_close(&in);
    if (zeroed) {
        const JobOpt jo = {"", "", "", "", "", "", "", "", 0, 0, E->names[N + st->arr], "", "", "", "", "", 0};
        job_streamed(jobs, &E->s, yb, D, sbox, sin, "", &jo);
    } else job(jobs, D, 0, 0, sbox, sin, "", "", "");
    free(sbox); free(sin);
    Str nm;
    str_open(&nm);
    pr_stn(nm.f, &E->s, yb, E->names);
    char *name = str_close(&nm);
    adj_line(dump, root, name, "after all gathers");
    free(name);
    return 0;
}

/* the adjoint entry's comment, arguments, checks and set-up (READS: the
 * primal arrays it reads; BARS: the adjoint arrays it updates) */
static void adjoint_entry_text(const Stencil *s, const Kernel *k, const Ext *E, const int *reads, const int *params,
                               const int *bars, const long *minn, char **sdoc, char **sargs, char **schk, char **sset)
{
    const int D = s->dims, N = E->nuser;
    Str doc, args, chk, set;
    str_open(&doc); str_open(&args); str_open(&chk); str_open(&set);
    fprintf(doc.f, "/* Adjoint of kernel '%s' of stencil '%s' (%dD): the vector-Jacobian product\n"
                   " * of one application, in gather form (no atomics; any thread count).\n"
                   " * Given the primal inputs (for an array updated in place: its values before\n"
                   " * the update) and the adjoint of every written array Y (Y_bar), it adds\n"
                   " * (dY/dX)^T Y_bar to X_bar for every differentiable input X, then replaces\n"
                   " * Y_bar on the written points by the adjoint of Y's old values there (0 when\n"
                   " * the update does not read Y).\n * Arrays:\n", k->name, s->name, D);
    doc_arrays(doc.f, s, reads, NULL, 0);
    doc_arrays(doc.f, s, bars, E->names, N);
    doc_min(doc.f, s, minn);
    fprintf(doc.f, " * Returns STENC_OK or an error code (stenc_strerror). */");

    args_sizes(args.f, D);
    for (int a = 0; a < N; ++a)
        if (reads[a]) fprintf(args.f, ", const stn_real *stn_restrict %s", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p)
        if (params[p]) fprintf(args.f, ", stn_real %s", s->param[p]);
    for (int a = 0; a < N; ++a)
        if (bars[a]) fprintf(args.f, ", stn_real *stn_restrict %s", E->names[N + a]);

    setup_sizes(chk.f, D);
    void_params(chk.f, s, params); /* a parameter of the update may vanish from its adjoint */
    checks_sizes(chk.f, D, minn, 0, NULL);
    for (int a = 0; a < N; ++a)
        if (reads[a]) { checks_null(chk.f, s->arr[a].name); checks_count(chk.f, s, a, s->arr[a].name); }
    for (int a = 0; a < N; ++a)
        if (bars[a]) { checks_null(chk.f, E->names[N + a]); checks_count(chk.f, s, a, E->names[N + a]); }
    for (int a = 0; a < N; ++a) {
        if (!bars[a]) continue;
        for (int b = 0; b < N; ++b) {
            if (reads[b]) checks_alias(chk.f, E->names[N + a], s->arr[b].name);
            if (bars[b] && b > a) checks_alias(chk.f, E->names[N + a], E->names[N + b]);
        }
    }
    for (int a = 0; a < N; ++a) {
        if (reads[a]) setup_strides(set.f, s, a, s->arr[a].name);
        if (bars[a]) setup_strides(set.f, s, a, E->names[N + a]);
    }
    *sdoc = str_close(&doc), *sargs = str_close(&args), *schk = str_close(&chk), *sset = str_close(&set);
}

/* The adjoint of kernel k: plan and print each input's gather (phase 1),
 * then each written array's own adjoint (phase 2), as one entry; its
 * readable form goes to DUMP (the .adj listing). */
static int emit_kernel_adjoint(FILE *out, FILE *dump, const Stencil *s, const Kernel *k)
{
    const int D = s->dims;
    int reads[MAXARR], writes[MAXARR], params[MAXPARAM], diff[MAXARR], used[MAXARR], bars[MAXARR] = {0};
    kernel_usage(s, k, reads, writes, params);
    for (int a = 0; a < s->narr; ++a) used[a] = reads[a] || writes[a];
    adjoint_inputs(s, k, writes, diff);
    Ext E;
    ext_init(&E, s, "bar");
    const int N = E.nuser;
    PrintCtx pc = {&E.s, TAP_DIRECT, E.names, NULL, NULL, 0};
    long minn[3];
    min_grid_kernel(s, k, used, minn);

    fprintf(dump, "# adjoint of kernel '%s' (%dD), gather form: each line is one loop over the\n"
                  "# written array's points; reads outside a term's statement box count as zero.\n",
            k->name, D);
    fprintf(dump, "kernel %s_adjoint_%dd {\n", k->name, D);
    Str jobs;
    str_open(&jobs);
    int rc = 0;
    AdjLines lines = {0};
    for (int x = 0; x < N && rc == 0; ++x)
        if (diff[x]) rc = emit_adjoint_gather(jobs.f, &lines, s, k, &E, &pc, x);
    for (int si = 0; si < k->nst && rc == 0; ++si) rc = emit_adjoint_self(jobs.f, &lines, s, k, &E, &pc, si);
    char *sjobs = str_close(&jobs);
    if (rc != 0) { free(sjobs); return -1; }
    const char *names[MAXADJLINE];
    for (int l = 0; l < lines.n; ++l) names[l] = lines.name[l];
    pr_stn_listing(dump, &E.s, E.names, lines.root, names, lines.note, lines.n, "  ");
    fprintf(dump, "}\n\n");

    for (int a = 0; a < N; ++a) bars[a] = diff[a] || writes[a];
    char *sdoc, *sargs, *schk, *sset, base[160], b2[200];
    adjoint_entry_text(s, k, &E, reads, params, bars, minn, &sdoc, &sargs, &schk, &sset);
    func_base(s, k->name, base, sizeof base);
    snprintf(b2, sizeof b2, "%s_adjoint", base);
    entry_begin(out, b2, "adjoint", D);
    print_quoted(out, sdoc); fprintf(out, ",\n");
    entry_pieces(out, sargs, schk, sset);
    fprintf(out, ",\n[[");
    fprintf(out, "%s]])\n\n", sjobs);
    char what[200], ent[240];
    snprintf(what, sizeof what, "adjoint of kernel '%s' of stencil '%s'", k->name, s->name);
    snprintf(ent, sizeof ent, "%s_%dd", b2, D);
    emit_dist(out, ent, "adjoint", D, sargs, kernel_reach(s, k), NULL, NULL, what);
    free(sdoc); free(sargs); free(schk); free(sset); free(sjobs);
    return 0;
}

/* ---- reductions: value, grad, value_grad ---- */


/* a border point's gradient sums: its index st_q and one sum per
 * differentiable array (open), then the stores (store) */
static void point_sums_open(FILE *f, const Stencil *es, const char *arr, int N, const int *diff)
{
    fprintf(f, "            ");
    point_index(f, es, arr, "st_q");
    fprintf(f, "\n");
    for (int a = 0; a < N; ++a) if (diff[a]) fprintf(f, "            stn_real st_g%d = 0;\n", a);
}
static void point_sums_store(FILE *f, int N, const int *diff, const char *const *names)
{
    for (int a = 0; a < N; ++a)
        if (diff[a]) fprintf(f, "            { const stn_real st_gv = st_g%d; stn_gstore(%s, st_q) }\n", a, names[N + a]);
}

/* ---- rolling rows of partials (C backend, gradients of costly reductions) ----
 * The gather form evaluates every tap's partial once per tap, so a point costs
 * as many square roots (divisions, ...) as the reduction has taps, and a
 * linear reduction as many evaluations of its stencil.  In an interior row
 * the C kernels instead evaluate the reduction once per point of a row of
 * "R points", store what the partials are made of in a per-thread ring, and
 * gather from the ring.  What is stored ("slots"): each partial is split
 * into terms coefficient * factor (coefficients free of taps), and each
 * distinct factor is one slot; G[q] sums coefficient * slot over the terms
 * of the taps that reach q (TV: a*q, b*q, c*q for three stores where the
 * taps' partials are four; the Laplacian's seven partials are multiples of
 * one value).  When that does not save anything, each tap's partial is its
 * own slot.  The newest R row (the highest y, and in 3D the highest z, any
 * point of the row needs) is computed strip by strip just before the
 * strip's gather, so both stay in L1.  A slot read only on the plane of its
 * R point (lag 0) keeps a ring of the last maxy-miny+1 rows; in 3D a slot
 * read lag > 0 planes later keeps the current y tile's rows of every plane
 * alive (maxz-minz+1; the rows walk a tile plane by plane, and a thread's
 * chunks follow each other; a row's place is its distance from the tile's
 * first R row, no division), so each R point is evaluated once.  Rows a
 * point needs that are not in the ring (the start of a chunk, a tile or a
 * plane) are computed first, by small functions of their own.  The CUDA
 * kernels keep the direct gather. */

typedef struct {
    Node *f;         /* what a slot holds at each R point */
    int lag;         /* planes between an R point and the last plane that reads it */
    long base0, base1; /* its first ring row: base0 + base1*st_tyr */
    int strip;       /* read in the newest row only: strip row sbase too (strip_slots) */
    long sbase;
} Slot;

typedef struct {
    int slot, tap, neg;
    Node *coef;      /* the term: (neg ? -1 : 1) * coef * slot, read for tap's consumer */
} Use;

typedef struct {
    long minx, maxx, miny, maxy, minz, maxz;
    int depth;           /* rows of a lag-0 ring: maxy - miny + 1 */
    int nplane;          /* planes of R points alive: maxz - minz + 1 */
    int nslot, nuse;
    int vslot;           /* the slot of the reduction's value at each R point, or -1 */
    int vfrom;           /* the value is a function of the slots (vuse) at its R point */
    int vdiag;           /* 3D: the value is summed by the row functions of the newest row (roll_counts) */
    int plane;           /* 3D: the newest plane computed a tile's plane at a time (roll_plan) */
    int ext;             /* 3D: R rows at and past the faces from the mapped functions (roll_mapped_helper) */
    int wide;            /* 3D: rows [rlo, n - rhi) in y and z roll, wider than the gather's interior (roll_extend) */
    long rlo[3], rhi[3];
    int rule;            /* 3D gradients: the rule by which Neumann border rows roll too (roll_rule), or RULE_NONE */
    int xrule;           /* 3D gradients: the rule holds along x too, the rows can run whole in Neumann mode (roll_xrule) */
    int valid;           /* 3D gradients: valid mode's border rows roll too (roll_rule) */
    int vuse[MAXTAP];
    Slot slot[MAXTAP];
    Use use[4 * MAXTAP];
    long size0, size1;   /* ring rows per thread: size0 + size1*st_tyr */
    int nstrip;          /* slots with strip set */
    Fields F;            /* the newest row's point fields (roll_fields), row arrays from es->narr */
    long fbase0, fbase1; /* their first ring row: fbase0 + fbase1*st_tyr, after every slot's */
} Roll;

/* the taps' partials as terms over shared factors; 0 when that saves
 * nothing or does not apply (then one slot per tap) */
static int plan_factors(Node *f, Node *const *part, int ndt, Roll *R)
{
    enum { MT = 16 };
    R->nslot = R->nuse = 0;
    for (int t = 0; t < ndt; ++t) {
        Node *coef[MT], *rest[MT];
        int neg[MT], n = ex_factor_terms(part[t], f, coef, rest, neg, MT);
        if (n < 1) return 0;
        for (int u = 0; u < n; ++u) {
            if (rest[u]->kind == E_NUM || R->nuse == 4 * MAXTAP) return 0; /* a constant term: no factor to store */
            int k = 0;
            while (k < R->nslot && R->slot[k].f != rest[u]) ++k;
            if (k == R->nslot) {
                if (R->nslot == MAXTAP) return 0;
                R->slot[R->nslot++].f = rest[u];
            }
            R->use[R->nuse++] = (Use){k, t, neg[u], coef[u]};
        }
    }
    /* a slot whose terms all have one coefficient up to sign stores it
     * multiplied in: the gather then only adds and subtracts */
    for (int k = 0; k < R->nslot; ++k) {
        Node *c0 = NULL;
        int one = 1;
        for (int u = 0; u < R->nuse && one; ++u)
            if (R->use[u].slot == k) {
                if (!c0) c0 = R->use[u].coef;
                else one = R->use[u].coef == c0 || R->use[u].coef == ex_neg(c0);
            }
        if (!one || !c0) continue;
        if (c0->kind == E_NEG) c0 = c0->a[0];
        R->slot[k].f = ex_mul(c0, R->slot[k].f);
        for (int u = 0; u < R->nuse; ++u)
            if (R->use[u].slot == k) {
                R->use[u].neg ^= R->use[u].coef != c0;
                R->use[u].coef = NULL;
            }
    }
    return R->nslot < ndt;
}

/* the box of the R points a gather point reads, relative to the point */
static void plan_box(const Stencil *s, int ndt, Node *const *dtaps, Roll *R)
{
    const int D = s->dims;
    memset(R, 0, sizeof *R);
    R->vslot = -1;
    R->minx = R->maxx = dtaps[0]->idx[0].c;
    R->miny = R->maxy = dtaps[0]->idx[1].c;
    R->minz = R->maxz = D == 3 ? dtaps[0]->idx[2].c : 0;
    for (int t = 0; t < ndt; ++t) {
        const long ox = dtaps[t]->idx[0].c, oy = dtaps[t]->idx[1].c, oz = D == 3 ? dtaps[t]->idx[2].c : 0;
        R->minx = ox < R->minx ? ox : R->minx; R->maxx = ox > R->maxx ? ox : R->maxx;
        R->miny = oy < R->miny ? oy : R->miny; R->maxy = oy > R->maxy ? oy : R->maxy;
        R->minz = oz < R->minz ? oz : R->minz; R->maxz = oz > R->maxz ? oz : R->maxz;
    }
    R->depth = (int)(R->maxy - R->miny + 1);
    R->nplane = (int)(R->maxz - R->minz + 1);
}

/* 1 when every tap of N lies below a slot's factor that the gather reads at
 * the point's own R point (a use of the tap at offset 0): the factors the
 * value is made of, marked in R->vuse */
static int over_slots_rec(Node *n, Node *const *dtaps, int D, Roll *R)
{
    for (int k = 0; k < R->nslot; ++k) {
        if (R->slot[k].f != n) continue;
        for (int u = 0; u < R->nuse; ++u) {
            const Node *t = dtaps[R->use[u].tap];
            if (R->use[u].slot == k && t->idx[0].c == 0 && t->idx[1].c == 0 && (D < 3 || t->idx[2].c == 0)) {
                R->vuse[k] = 1;
                return 1;
            }
        }
    }
    if (n->kind == E_TAP) return 0;
    for (int i = 0; i < n->nargs; ++i)
        if (!over_slots_rec(n->a[i], dtaps, D, R)) return 0;
    return 1;
}

/* The value a function of the factors the ring holds at the point's own R
 * point (the Laplacian's value is its factor squared; central TV's and the
 * Hessian's take a square root: vdiag): it needs no slot of its own.  3D
 * only (section 23 of perf/NOTES.md: a value slot there made the ring twice
 * the gradient's for the Laplacian; 2D sums the slot in the row functions). */
static int value_over_slots(Node *value, Node *const *dtaps, int D, Roll *R)
{
    memset(R->vuse, 0, sizeof R->vuse);
    if (over_slots_rec(value, dtaps, D, R)) return 1;
    memset(R->vuse, 0, sizeof R->vuse);
    return 0;
}

/* In 2D, the slots that the gather reads in the newest row only (their
 * taps' y offset is miny: TV's x partial) need that row's current strip
 * alone.  Such a slot keeps two ring rows: the row as usual, at x itself,
 * and a strip row, written from its start (x - st_so, where st_so is the
 * strip's first R point), so that a strip stays in L1 from its row
 * function to its gather; in full rows, each strip's lines had left L1
 * since the row before (perf/NOTES.md section 38).  A row's middle strips
 * use the strip row; its first and last strips (st_so = -1), the catchup
 * and the ends function write the row itself, and hold every R point the
 * row's ends gather reads.  The strip rows come first in the ring: the 2D
 * TV gradient took 1.2x the time with its strip row second (section 38).
 * Not with a value slot (the 2D row functions' sums, roll_sums_value).
 * Not in 3D: its rows (in row order, the value_grads of forward taps)
 * are rarely long enough to have middle strips, and the ring's new layout
 * alone moved their times by -12% to +15% (section 38). */
static void strip_slots(int D, Node *const *dtaps, Roll *R)
{
    R->nstrip = 0;
    if (D != 2 || R->vslot >= 0) return;
    for (int k = 0; k < R->nslot; ++k) {
        int newest = 1;
        for (int u = 0; u < R->nuse; ++u)
            if (R->use[u].slot == k && dtaps[R->use[u].tap]->idx[1].c != R->miny) newest = 0;
        R->slot[k].strip = newest;
        R->nstrip += newest;
    }
}

/* Where each slot's rows live: plan only, no printing.  With VALUE (the
 * reduction's expression) and the point's own R point in the box, the value
 * comes with the rolling rows, computed with the partials (one evaluation
 * of the square roots; value_grad of central differences, the Laplacian,
 * the Hessian: section 13 of perf/NOTES.md).  In 3D from the factors the
 * ring holds (vfrom: the Laplacian), else summed by the newest row's
 * functions as they compute it (vdiag: central TV, the Hessian; section
 * 27: a value slot of the ring, stored and summed again, cost them 8-19%
 * of their time); in 2D one more slot holds it, summed by the row
 * functions (roll_sums_value). */
static void plan_roll(const Stencil *s, Node *f, int ndt, Node *const *dtaps, Node *const *part, Node *value, Roll *R)
{
    const int D = s->dims;
    if (!plan_factors(f, part, ndt, R)) {
        R->nslot = R->nuse = ndt;
        for (int t = 0; t < ndt; ++t) {
            R->slot[t].f = part[t];
            R->use[t] = (Use){t, t, 0, NULL};
        }
    }
    for (int u = 0; u < R->nuse; ++u) {
        Slot *k = &R->slot[R->use[u].slot];
        int lag = (int)((D == 3 ? dtaps[R->use[u].tap]->idx[2].c : 0) - R->minz);
        if (lag > k->lag) k->lag = lag;
    }
    const int own = R->minx <= 0 && R->maxx >= 0 && R->miny <= 0 && R->maxy >= 0 && R->minz <= 0 && R->maxz >= 0;
    if (value && own && D == 3 && value_over_slots(value, dtaps, D, R)) R->vfrom = 1;
    else if (value && own && D == 3) R->vdiag = 1;
    else if (value && own && R->nslot < MAXTAP) {
        R->vslot = R->nslot++;
        R->slot[R->vslot] = (Slot){value, (int)-R->minz, 0, 0, 0, 0};
    }
    strip_slots(D, dtaps, R);
    for (int k = 0; k < R->nslot; ++k)
        if (R->slot[k].strip) R->slot[k].sbase = R->size0++; /* first: measured faster (section 38) */
    for (int k = 0; k < R->nslot; ++k) {
        R->slot[k].base0 = R->size0;
        R->slot[k].base1 = R->size1;
        if (R->slot[k].strip) R->size0 += 1;
        else if (R->slot[k].lag == 0 && R->plane) R->size1 += 1; /* the newest plane's rows, all of them */
        else if (R->slot[k].lag == 0) R->size0 += R->depth;
        else R->size1 += R->nplane; /* slots of the planes' bookkeeping: a plane's rows live as long as it says */
    }
}

/* the ring row of slot k for R row (JQ, KQ) */
static void print_ring_row(FILE *f, const Roll *R, int k, const char *jq, const char *kq)
{
    const Slot *sl = &R->slot[k];
    fprintf(f, "st_rb + (size_t)(%ld + %ld * st_tyr + ", sl->base0, sl->base1);
    if (sl->strip) fprintf(f, "0");
    else if (sl->lag == 0 && R->plane) fprintf(f, "(%s - st_jt)", jq);
    else if (sl->lag == 0) fprintf(f, "stenc_imod(%s, %d)", jq, R->depth);
    else fprintf(f, "stenc_imod(%s, %d) * st_tyr + (%s - st_jt)", kq, R->nplane, jq);
    fprintf(f, ") * (size_t)st_rw");
}

/* strip slot k's row for the strip st_so names (strip_slots): its ring row,
 * or (st_so >= 0) its strip row, where x is at x - st_sx */
static void print_strip_row(FILE *f, const Roll *R, int k)
{
    fprintf(f, "st_so < 0 ? ");
    print_ring_row(f, R, k, "", "");
    fprintf(f, " : st_rb + (size_t)%ld * (size_t)st_rw", R->slot[k].sbase);
}

/* ---- a reduction's plan: what each of its entry points prints from ---- */
typedef struct RedPlan {
    const Stencil *s, *es;   /* the stencil; es with the gradient arrays (E.s) */
    Ext E;
    const Reduce *ru;        /* as written (the docs show it) */
    Reduce rv;               /* as evaluated: divisions by anything but a
                              * number become reciprocals (hoisted) */
    int D, N, first_read, ndt;
    int reads[MAXARR], diff[MAXARR], params[MAXPARAM];
    long omin[3], omax[3], minvalid[3]; /* the taps' offsets; valid mode's smallest grid */
    long last[3];            /* 3D: the last tap in walk order (highest z, then y) */
    Node *dtaps[MAXTAP], *part[MAXTAP]; /* differentiable taps and their partials */
    Node *gsum[MAXARR];      /* the gather form at interior points, per array (value_grad) */
    Node *gsum_g[MAXARR];    /* the same, terms collected, for gradients (ex_group_coef) */
    int rule;                /* 3D: the rolling rows' border rule in Neumann mode (RULE_ZERO, RULE_CLAMP; rules.c) */
    int xrule;               /* 3D: that rule holds at the x faces too (RULE_XBIT) */
    int extend;              /* 3D: RULE_EXTEND holds (the field rows' border rule: gather_fields) */
    char base[160];
    char *sha, *shc;         /* helpers' parameters; their calls (helper_call_format) */
    Fields F;                /* the value's point fields (fields.c): its row arrays from N on */
    char *svoid, *sdom;      /* (void) of the inputs; value-domain bounds */
} RedPlan;

/* The planes of input rows a reduction's job reads (taps_planes): those
 * of the reduction (a rolling job's newest rows, a value) or, GATHER, also
 * of the gradient's gather sums */
static int reduce_planes(const RedPlan *P, int gather)
{
    Node *roots[MAXARR + 1];
    int n = 0;
    roots[n++] = P->rv.f;
    for (int e = 0; gather && e < P->N; ++e) roots[n++] = P->gsum[e];
    return taps_planes(roots, n, P->N, P->D);
}

/* Software prefetch (stenc_prefetch): the statements that ask for each
 * array P reads at row (JV + DY, KV + DZ) from point st_pi on.  3D
 * (perf/NOTES.md section 42): the row of the highest y and z offsets, which
 * the walk up in z (2.5D tiles of rows, plane by plane) reads first.  2D
 * (section 52): that row STENC_PF2D_BYTES further on, rows following each
 * other in memory (the hardware prefetcher alone left the 2D gradients
 * 1.1-1.6x slower on a Zen 4 core); none for a reduction with point fields
 * (Good's: its value 1.2x slower with it). */
static char *prefetch_text(const RedPlan *P, const char *jv, const char *kv, long dy, long dz)
{
    return prefetch_arrays(P->D, P->N, P->E.names, P->reads, P->D == 2 && P->F.n > 0, jv, kv, dy, dz);
}

/* prefetch_text's statements for arrays 0 .. N - 1 of NAMES that READS
 * marks (none with NONE), in D dimensions */
static char *prefetch_arrays(int D, int n, const char *const *names, const int *reads, int none, const char *jv,
                             const char *kv, long dy, long dz)
{
    Str t;
    str_open(&t);
    for (int a = 0; a < n && !none; ++a) {
        const char *m = names[a];
        if (!reads[a]) continue;
        if (D == 3)
            fprintf(t.f, " stenc_prefetch(%s, sizeof(*%s), %s_s0*(%s + %ld + %s_s1*(%s + %ld)) + st_pi);", m, m, m, jv, dy, m,
                    kv, dz);
        else
            fprintf(t.f, " stenc_prefetch(%s, sizeof(*%s), %s_s0*(%s + %ld) + st_pi + (ptrdiff_t)(STENC_PF2D_BYTES / sizeof(*%s)));",
                    m, m, m, jv, dy, m);
    }
    return str_close(&t);
}

/* the prefetch of the row the next row (JV + 1, KV) reads first, EXTRA
 * rows further: the row above the last tap in walk order (P->last; the
 * walks go up in y, then in z); in 2D the row's own newest row, further on
 * (prefetch_text) */
static char *prefetch_next_row(const RedPlan *P, const char *jv, const char *kv, long extra)
{
    return prefetch_text(P, jv, kv, P->last[1] + (P->D == 3) + extra, P->last[2]);
}

/* the prefetches of a reduction's interior rows (JobOpt.pf).  A value:
 * the row the next row reads first, a row above the last tap in walk
 * order (P->last: the Hessian's (1, 1) asks for row (j + 2, k + 1), TV's
 * (0, 1) for (j + 1, k + 1)), with point fields (stn_rowfn_fields) a row
 * further, the row the next row's fills read first (0.91 of the time at
 * 512^3, perf/NOTES.md section 43).  With the gradient: the highest
 * offsets of the taps or of its gather form (minus the taps' lowest),
 * whichever is higher.  In 2D for the reductions that read two rows or
 * more: a pointwise one reads one stream, which the hardware follows (the
 * Tikhonov identity's gradient took 1.02-1.09x the time with it on a Zen 4
 * core, section 52); the two-row values took 0.93-1.11x there and
 * 0.75-0.95x on a Zen 3 core (section 65). */
static char *reduce_prefetch(const RedPlan *P, int want_g)
{
    if (P->D == 2 && P->omax[1] - P->omin[1] < 1) return strdup("");
    if (!want_g) return prefetch_next_row(P, "j", "k", P->F.n > 0);
    long up[3] = {0, 0, 0};
    for (int d = 1; d < P->D; ++d) up[d] = -P->omin[d] > P->omax[d] ? -P->omin[d] : P->omax[d];
    return prefetch_text(P, "j", "k", up[1], up[2]);
}

/* what the rolling rows print from: the reduction's plan and the entry */
typedef struct {
    const RedPlan *P;
    int want_v;          /* value_grad: the value too */
    const char *fn;      /* helper name prefix: stenc_h_BASE_KIND_Dd */
    const char *mval;    /* the call of the mapped value helper at (i, j[, k]) */
    const char *vpoint;  /* a border point's value alone (want_v) */
    int planes;          /* 3D: plane order allowed (roll_plan; roll_body prints both orders) */
} RollIn;

/* what roll_body prints of the entry's loops (m4 stn_job's roll arguments) */
typedef struct {
    char *body, *init, *size, *border;
    int state;
} RollText;

/* The value at R point (j, k, i) from its factors in the ring (R->vfrom),
 * as the statement FMT of the value ("st_acc += (double)%s;"), at IND; the
 * factors read from their ring rows, or (STRIP) from st_sK[i] */
static void print_value_from_slots(FILE *f, const Roll *R, const RollIn *in, const char *fmt, const char *ind, int strip)
{
    static const char *vars[3] = {"i", "j", "k"};
    PrintCtx pc = {in->P->es, TAP_DIRECT, in->P->E.names, vars, NULL, 0};
    Pins pins = {0};
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s    ", ind);
    fprintf(f, "%s{\n", ind);
    for (int k = 0; k < R->nslot; ++k) {
        if (!R->vuse[k]) continue;
        Str r;
        str_open(&r);
        if (strip) fprintf(r.f, "st_s%d[i]", k);
        else {
            fprintf(r.f, "(");
            print_ring_row(r.f, R, k, "j", in->P->s->dims == 3 ? "k" : "0");
            fprintf(r.f, ")[i]");
        }
        char *read = str_close(&r);
        pr_c_pin_read(f, &pins, R->slot[k].f, read, ind2);
        free(read);
    }
    Node *root = in->P->rv.f;
    pr_c_block_pinned(f, &pc, &root, 1, &fmt, ind2, &pins);
    fprintf(f, "%s}\n", ind);
}

/* the statement that adds an end point's value (i, j, k) to st_acc: from the
 * value slot, from its factors (vfrom), or by the mapped value helper */
static void print_end_value(FILE *f, const Roll *R, const RollIn *in)
{
    /* rows outside the value's y/z domain roll too in valid mode (roll_rule): they add nothing */
    if (R->valid) fprintf(f, "                if (j >= st_dlo1 && j < st_dhi1 && k >= st_dlo2 && k < st_dhi2)\n");
    if (R->vslot >= 0) {
        fprintf(f, "                st_acc += (double)(");
        print_ring_row(f, R, R->vslot, "j", in->P->s->dims == 3 ? "k" : "0");
        fprintf(f, ")[i];\n");
    } else if (R->vfrom) print_value_from_slots(f, R, in, "st_acc += (double)%s;", "                ", 0);
    else fprintf(f, "                st_acc += (double)%s;\n", in->mval);
}

/* the inputs of the rolling rows' functions after their own: sizes, arrays
 * read, params, as parameters, as (void) uses or as a call's arguments */
enum { IN_PARAMS, IN_VOIDS, IN_ARGS };
static void print_roll_inputs(FILE *f, const RollIn *in, int form)
{
    static const char *const fmt[3][3] = {{", ptrdiff_t st_n%d", ", const stn_real *stn_restrict %s", ", stn_real %s"},
                                          {" (void)st_n%d;", " (void)%s;", " (void)%s;"},
                                          {", st_n%d", ", %s", ", %s"}};
    for (int d = 0; d < in->P->s->dims; ++d) fprintf(f, fmt[form][0], d);
    for (int a = 0; a < in->P->N; ++a)
        if (in->P->reads[a]) fprintf(f, fmt[form][1], in->P->s->arr[a].name);
    for (int p = 0; p < in->P->s->nparam; ++p)
        if (in->P->params[p]) fprintf(f, fmt[form][2], in->P->s->param[p]);
}

/* a function's (void) uses of its inputs, and the arrays' strides */
static void print_roll_input_setup(FILE *f, const RollIn *in)
{
    print_roll_inputs(f, in, IN_VOIDS);
    fprintf(f, "\n");
    for (int a = 0; a < in->P->N; ++a)
        if (in->P->reads[a]) setup_strides(f, in->P->s, a, in->P->s->arr[a].name);
}

static void print_roll_pinned_ends(FILE *f, const Roll *R, const RollIn *in, Node **roots, const char **fm, int nr, int lag);
static void print_roll_fields(FILE *f, const Roll *R, const RollIn *in, const char **names);
static void print_field_tags_clear(FILE *f, const Roll *R, int D);
static void print_ring_pads(FILE *f, const Roll *R, int lag, const char *mode, const char *ind);
static void print_ring_zero_pads(FILE *a, const Roll *R, int D);
static void print_ring_size(FILE *f, const Roll *R, int D);

/* Whether the row function of LAG sums the value slot instead of storing it
 * (perf/NOTES.md section 22): the interior rows' values are read back once a
 * row, as that row's sum, so the functions that compute the slot add their
 * own points' values, [st_xa + maxx, st_xb + minx), in the value loops'
 * lanes (roll_value_loops: pieces of STENC_VSTRIP in stn_real lanes, the
 * pieces into double lanes), the lanes' sum into a double kept in the ring
 * row's padding past its st_n0 points (stenc_vrow_set; a new row's first
 * call, st_vr, starts it at 0).  The slot itself still holds the values the
 * row ends read point by point: the ENDS functions' points and a call's
 * points outside its own, stored by the vectors that hold them
 * (roll_vsum_statements).  2D only: in 3D the sum in the row functions
 * measured 1.02-1.05x the time of the slot and the strips' sums (256^3), in
 * 2D 0.81-1.01x.  Before the value loops (a float sum a piece over the own
 * points, the halo points in a scalar loop) the f64 value_grads took
 * 1.20-1.26x their gradients' time (perf/NOTES.md section 53). */
static int roll_sums_value(const Roll *R, const RollIn *in, int lag, int value, int ends)
{
    return in->P->s->dims == 2 && !value && !ends && R->vslot >= 0 && R->slot[R->vslot].lag >= lag;
}

/* a value's addition to its lane in the value loops' whole vectors */
static const char *const lane_add = "st_fl[st_w] += %s;";

/* the counted value's additions of st_v, masked to [st_sa, st_sb) in the
 * value loops (roll_value_loops): whole vectors, the range's last vector
 * again, point by point */
static const char *const count_add[3] = {
    "st_fl[st_w] += stenc_keep_[[]]stn_sfx[[]](st_v, (size_t)(i - st_sa) < st_sn);",
    "st_fl[st_w] += stenc_keep_[[]]stn_sfx[[]](st_v, i >= st_xm && (size_t)(i - st_sa) < st_sn);",
    "st_fl[0] += (size_t)(i - st_sa) < st_sn ? st_v : 0;"};

/* the statement format (the value: %s) in BUF that adds the value as ADD
 * (count_add) does, after it stores it to LV (NULL: no store) */
static void count_statement(char *buf, size_t n, const char *lv, const char *add)
{
    snprintf(buf, n, "{ const stn_real st_v = %%s; %s%s%s }", lv ? lv : "", lv ? " = st_v; " : "", add);
}

/* A VSUM function's statements of its value slot, LV, in BUF: every
 * value_loops' vector that holds points outside [st_sa, st_sb) (its
 * halo, which the ends read point by point) stores the slot and adds its
 * own points; the whole vectors inside, FMU, add without a store. */
static void roll_vsum_statements(const char *lv, char (*buf)[160], const char **fm, const char **fmu, const char **fmt,
                                 const char **fms)
{
    for (int q = 0; q < 3; ++q) count_statement(buf[q], sizeof buf[q], lv, count_add[q]);
    *fm = buf[0], *fmu = lane_add, *fmt = buf[1], *fms = buf[2];
}

/* a VSUM function's end: its lanes' sum added to its ring row's (or, on
 * the row's first call, st_vr, stored as it) */
static void roll_vsum_close(FILE *f, const Roll *R)
{
    fprintf(f, "    double st_vs = st_vr ? 0 : stenc_vrow_get(st_w%d + st_n0);\n"
               "    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) st_vs += st_dl[st_w];\n"
               "    stenc_vrow_set(st_w%d + st_n0, st_vs);\n", R->vslot, R->vslot);
}

/* PF (prefetch_text; NULL or "": none) from point AT on, ahead of a block
 * of an interior loop */
static void print_prefetch_at(FILE *f, const char *pf, const char *at)
{
    if (pf && *pf) fprintf(f, "    { const ptrdiff_t st_pi = %s;%s }\n", at, pf);
}

/* the whole vectors from LO to HI (vector starts; a multiple of st_vl
 * apart), in pieces of STENC_VSTRIP points, each piece's float lanes st_fl
 * added into the double lanes st_dl, each vector after PF's prefetches;
 * FM: the roots' statements */
static void roll_value_strips(FILE *f, const PrintCtx *pc, Node **roots, int nr, const char **fm, const char *lo,
                              const char *hi, const Pins *pins, const char *pf)
{
    fprintf(f, "    for (ptrdiff_t st_b0 = %s; st_b0 < %s; st_b0 += STENC_VSTRIP) {\n"
               "    const ptrdiff_t st_b1 = %s - st_b0 < STENC_VSTRIP ? %s : st_b0 + STENC_VSTRIP;\n"
               "    for (ptrdiff_t st_b = st_b0; st_b < st_b1; st_b += st_vl) {\n", lo, hi, hi, hi);
    print_prefetch_at(f, pf, "st_b");
    fprintf(f, "    #pragma omp simd\n    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) {\n"
               "        const ptrdiff_t i = st_b + st_w;\n");
    pr_c_block_pinned(f, pc, roots, nr, fm, "        ", pins);
    fprintf(f, "    }\n    }\n    #pragma omp simd\n    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) st_dl[st_w] += (double)st_fl[st_w];\n"
               "    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) st_fl[st_w] = 0;\n    }\n");
}

/* The loops of a row function that sums values over [LO, HI): whole vectors
 * up to st_xm, then the range's last vector again, or point by point when
 * the range is shorter than a vector.  The value (the last root; FM, FMT,
 * FMS: the roots' statements in those three loops) adds per vector lane
 * (st_fl), each piece's lanes into the double lanes st_dl that the entry
 * adds once a chunk.  A reduction per call ended in a horizontal sum of the
 * lanes (a chain of 16 dependent adds with AVX-512 f32), twice a row: the
 * 3D value_grads of the forward stencils spent 5-8% of their time there
 * (perf/NOTES.md section 26).  The value counts in [st_sa, st_sb) only:
 * FM masks each lane to it, and the whole vectors inside it, [st_ua,
 * st_ue), run FMU's statements, without the mask: a lane test in 64-bit
 * indices took central TV's 3D value_grad to 1.2x its gradient
 * (perf/NOTES.md section 30). */
static void roll_value_loops(FILE *f, const PrintCtx *pc, Node **roots, int nr, const char **fm, const char **fmu,
                             const char **fmt, const char **fms, const char *lo, const char *hi, const Pins *pins,
                             const char *pf)
{
    fprintf(f, "    const ptrdiff_t st_vl = (ptrdiff_t)(STENC_VLB / sizeof(stn_real));\n"
               "    const ptrdiff_t st_xm = %s + (%s - %s) / st_vl * st_vl;\n"
               "    stn_real st_fl[STENC_VLB / sizeof(stn_real)] = {0};\n", lo, hi, lo);
    fprintf(f, "    const ptrdiff_t st_ua = stenc_imin(st_sa > %s ? %s + (st_sa - %s + st_vl - 1) / st_vl * st_vl : %s, st_xm);\n"
               "    const ptrdiff_t st_ue = stenc_imax(st_sb > %s ? stenc_imin(%s + (st_sb - %s) / st_vl * st_vl, st_xm) : %s, st_ua);\n",
            lo, lo, lo, lo, lo, lo, lo, lo);
    roll_value_strips(f, pc, roots, nr, fm, lo, "st_ua", pins, pf);
    roll_value_strips(f, pc, roots, nr, fmu, "st_ua", "st_ue", pins, pf);
    roll_value_strips(f, pc, roots, nr, fm, "st_ue", "st_xm", pins, pf);
    fprintf(f, "    if (st_xm < %s && %s - %s >= st_vl) {\n    #pragma omp simd\n"
               "    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) {\n"
               "        const ptrdiff_t i = %s - st_vl + st_w;\n", hi, hi, lo, hi);
    pr_c_block_pinned(f, pc, roots, nr, fmt, "        ", pins);
    fprintf(f, "    }\n    }\n    else for (ptrdiff_t i = st_xm; i < %s; ++i) {\n", hi);
    pr_c_block_pinned(f, pc, roots, nr, fms, "        ", pins);
    fprintf(f, "    }\n    #pragma omp simd\n    for (ptrdiff_t st_w = 0; st_w < st_vl; ++st_w) st_dl[st_w] += (double)st_fl[st_w];\n");
}

/* the row function's loops over x in [st_xa, st_xb): whole vectors, then the
 * range's last vector's points again.  With prefetches (PF), the whole
 * vectors a line at a time, each after PF (m4 stn_pf_loop, as the job's
 * interiors); a range shorter than a vector point by point. */
static void roll_vector_loops(FILE *f, const PrintCtx *pc, Node **roots, int nr, const char **fm, const char **fmt,
                              const Pins *pins, const char *pf)
{
    fprintf(f, "    const ptrdiff_t st_vl = (ptrdiff_t)(STENC_VLB / sizeof(stn_real));\n");
    fprintf(f, "    const ptrdiff_t st_xm = st_xb - st_xa >= st_vl ? st_xa + (st_xb - st_xa) / st_vl * st_vl : st_xb;\n");
    fprintf(f, "stn_pf_loop([[st_xa]], [[st_xm]], [[{\n");
    pr_c_block_pinned(f, pc, roots, nr, fm, "        ", pins);
    fprintf(f, "    }]], [[%s]])", pf ? pf : "");
    fprintf(f, "    if (st_xm < st_xb) {\n    #pragma omp simd\n");
    fprintf(f, "    for (ptrdiff_t st_u = 0; st_u < st_vl; ++st_u) {\n"
               "        const ptrdiff_t i = st_xb - st_vl + st_u;\n");
    pr_c_block_pinned(f, pc, roots, nr, fmt, "        ", pins);
    fprintf(f, "    }\n    }\n");
}

/* Whether the row function of LAG adds the reduction's values to lanes its
 * caller passes (R->vdiag: the newest row's functions, lag 0): the plain
 * one the values of its points in [st_sa, st_sb) (the caller's own share
 * of the row), the ENDS one of all its points (perf/NOTES.md section 27) */
static int roll_counts(const Roll *R, int lag, int value)
{
    return R->vdiag && lag == 0 && !value;
}

/* Whether a 3D value_grad's newest-row ENDS function counts its points'
 * values (st_ec set where it did, print_roll_newest_ends): where the
 * newest row is the row itself (miny = minz = 0) and the value comes from
 * the mapped helper, the ENDS points [st_dlo0, st_ia - maxx) and
 * [st_ib - minx, st_dhi0) are row ends whose values the ends block
 * (print_roll_ends) would otherwise compute again, each with its own
 * square root: TV's last point in Neumann mode (perf/NOTES.md section 62) */
static int roll_ends_count(const Roll *R, const RollIn *in)
{
    return in->want_v && !R->vdiag && !R->plane && in->P->s->dims == 3 && R->miny == 0 && R->minz == 0 &&
           R->vslot < 0 && !R->vfrom && R->minx <= 0 && R->maxx >= 0;
}

/* whether lag LAG's function of the kind (VALUE, ENDS) takes lanes to count into */
static int roll_takes_counts(const Roll *R, const RollIn *in, int lag, int value, int ends)
{
    return roll_counts(R, lag, value) || (ends && lag == 0 && roll_ends_count(R, in));
}

/* The ends block's condition that row point i's value is not counted yet
 * ("" where nothing else counts row ends).  Where roll_ends_count, the
 * newest row's ENDS function counted its points (st_ec), and the row's
 * first strip the points its value function computes before the strip,
 * [st_ia - maxx, st_ia) (its st_va; st_ev where it ran,
 * print_roll_newest_strip): TV's first point, whose partials it computes
 * anyway.  The ends block then adds the values of a mapped row's ends
 * only. */
static void print_ends_uncounted(FILE *f, const Roll *R, const RollIn *in, const char *pre)
{
    if (roll_ends_count(R, in))
        fprintf(f, "%s!(st_ec && (i < st_ia%+ld || i >= st_ib%+ld)) && !(st_ev && i >= st_ia%+ld && i < st_ia)", pre,
                -R->maxx, -R->minx, -R->maxx);
}

/* Whether lag LAG's row function computes its row's x ends too, by a call
 * of the ENDS function at its end: where only the catchup calls it (plane
 * order, or the lagged planes), whole rows at a time; in row order the
 * newest row's function runs strip by strip.  One call a row instead of two
 * (perf/NOTES.md section 36). */
static int roll_merged_ends(const Roll *R, int lag)
{
    return R->plane || lag > 0;
}

/* roll_helper's function head up to its inputs' set-up: the parameters of
 * its kind (ENDS, or MERGED: the mode and x domain; VSUM: st_vr; VALUE or
 * COUNTS: the lanes st_dl; COUNTS, not ENDS: the counted range; SO: st_so,
 * the strip slots' row and first R point, print_strip_row).  An ENDS
 * function that a MERGED one calls, its one caller, is always inlined into
 * it (STENC_HD, runtime/stenc_inline.h: GCC had left it a call of its own
 * in the large units; the 3D Laplacian's gradient 0.91-0.95 of its time at
 * 128^3 inlined, perf/NOTES.md section 63). */
static void roll_helper_head(FILE *f, const RollIn *in, int lag, int value, int ends, int vsum, int counts, int merged,
                             int so, int va)
{
    fprintf(f, "stn_c_only([[%s void %s_roll%d%s_[[]]stn_sfx[[]](ptrdiff_t st_xa, ptrdiff_t st_xb, "
               "ptrdiff_t st_jq, ptrdiff_t st_kq", ends && merged ? "STENC_HD" : "static STENC_NOINLINE", in->fn, lag,
            value ? "v" : ends ? "e" : "");
    print_roll_inputs(f, in, IN_PARAMS);
    fprintf(f, ", stn_real *st_rb, ptrdiff_t st_rw, ptrdiff_t st_tyr, ptrdiff_t st_jt%s%s%s%s%s)\n{\n    (void)st_jq; (void)st_kq; (void)st_tyr; (void)st_jt;",
            ends || merged ? ", int mode, ptrdiff_t st_dlo, ptrdiff_t st_dhi" : "", vsum ? ", int st_vr" : "",
            value || counts ? ", double *stn_restrict st_dl" : "", counts && !ends ? ", ptrdiff_t st_sa, ptrdiff_t st_sb" :
                                                                   va ? ", ptrdiff_t st_va" : "",
            so ? ", ptrdiff_t st_so" : "");
    if (ends) fprintf(f, " (void)mode;"); /* no mapped x read when a lag's slots read no x offset */
    print_roll_input_setup(f, in);
    if (so) fprintf(f, "    const ptrdiff_t st_sx = st_so < 0 ? 0 : st_so; (void)st_sx;\n");
}

/* a MERGED row function's last statement: its row's x ends (the lanes st_dl
 * with COUNTS) */
static void print_merged_ends(FILE *f, const RollIn *in, int lag, int counts)
{
    fprintf(f, "    %s_roll%de_[[]]stn_sfx[[]](st_xa, st_xb, st_jq, st_kq", in->fn, lag);
    print_roll_inputs(f, in, IN_ARGS);
    fprintf(f, ", st_rb, st_rw, st_tyr, st_jt, mode, st_dlo, st_dhi%s);\n", counts ? ", st_dl" : "");
}

/* The function that computes R row (st_jq, st_kq), lag planes behind the
 * newest, for x in [st_xa, st_xb): the slots still read (lag >= lag) into
 * the ring and, with value, the sum of the reduction's value over the strip's
 * own points [st_xa + maxx, st_xb + minx), into the lanes st_dl (COUNTS:
 * roll_counts).
 * Its own small function (C only, not inlined): inside the kernel's big
 * parallel body GCC keeps the row pointers on the stack and reloads them
 * every iteration (perf/NOTES.md section 11).  The ENDS variant computes the
 * row's R points outside [st_xa, st_xb) and inside the x domain [st_dlo,
 * st_dhi), its x reads mapped by the boundary mode: the gradient's row ends
 * then gather from the ring like the interior (section 12).  The vector
 * range runs in whole vectors (STENC_VLB bytes), the rest as the range's
 * last vector's points again (rewriting the same values): a scalar epilogue
 * of a square root and a division per point cost more than that.  A function
 * that sums values runs its vectors from st_xa as the gradient's does, the
 * value masked to its own points in the first and last vectors only
 * (roll_value_loops; a test in every vector took Huber's value_grad to
 * 1.04-1.13x the time; vectors from the first own point, st_xa + 1, with
 * the halo point alone, to 1.1-1.2x the gradient's, perf/NOTES.md section
 * 52).  Where roll_merged_ends, the plain function ends with the call of
 * its ENDS one. */
static void roll_helper(FILE *f, const Roll *R, const RollIn *in, int lag, int value, int ends)
{
    static const char *vars[3] = {"i", "st_jq", "st_kq"};
    static const char *cnt_end = "st_dl[0] += (double)%s;"; /* an ENDS function's counted value: whole */
    char cnt[3][160];
    for (int q = 0; q < 3; ++q) count_statement(cnt[q], sizeof cnt[q], NULL, count_add[q]);
    /* the newest row's point fields: their row arrays after es's */
    const int fields = lag == 0 && !ends && R->F.n > 0, base = in->P->es->narr;
    const char *names[2 * MAXARR + MAXFROW];
    char rown[MAXFROW][16];
    memcpy(names, in->P->E.names, (size_t)base * sizeof names[0]);
    for (int r = 0; fields && r < R->F.nrow; ++r) snprintf(rown[r], sizeof rown[r], "st_fr%d", r), names[base + r] = rown[r];
    PrintCtx pc = {in->P->es, ends ? TAP_MAPPED_X : TAP_DIRECT, names, vars, NULL, fields ? base : 0};
    const int vsum = roll_sums_value(R, in, lag, value, ends), counts = roll_takes_counts(R, in, lag, value, ends);
    const int merged = !value && roll_merged_ends(R, lag);
    const int va = value && roll_ends_count(R, in); /* the first counted point from the caller (print_ends_uncounted) */
    roll_helper_head(f, in, lag, value, ends, vsum, counts, merged, R->nstrip && !ends, va);
    if (fields) print_roll_fields(f, R, in, names);
    Node *roots[MAXTAP + 1];
    char fmb[MAXTAP + 1][64], lv[48], vsb[3][160];
    const char *fm[MAXTAP + 1], *fmu[MAXTAP + 1], *fmt[MAXTAP + 1], *fms[MAXTAP + 1];
    int nr = 0;
    for (int k = 0; k < R->nslot; ++k) {
        if (R->slot[k].lag < lag) continue;
        fprintf(f, "    stn_real *stn_restrict st_w%d = ", k);
        if (R->slot[k].strip && !ends) print_strip_row(f, R, k);
        else print_ring_row(f, R, k, "st_jq", "st_kq");
        fprintf(f, ";\n");
        roots[nr] = R->slot[k].f;
        snprintf(lv, sizeof lv, R->slot[k].strip && !ends ? "st_w%d[i - st_sx]" : "st_w%d[i]", k);
        snprintf(fmb[nr], sizeof fmb[nr], "%s = %%s;", lv);
        fm[nr] = fmu[nr] = fmt[nr] = fms[nr] = fmb[nr];
        if (vsum && k == R->vslot) roll_vsum_statements(lv, vsb, fm + nr, fmu + nr, fmt + nr, fms + nr);
        ++nr;
    }
    if (counts || value) /* (a value function has no ENDS variant: roll_form) */
        roots[nr] = in->P->rv.f, fm[nr] = ends ? cnt_end : cnt[0], fmu[nr] = lane_add, fmt[nr] = cnt[1], fms[nr] = cnt[2], ++nr;
    for (int r = 0; fields && r < nr; ++r) {
        Node *sub = fields_apply(in->P->s, &R->F, roots[r], base);
        if (sub) roots[r] = sub;
    }
    ex_share_weights(roots, nr); /* a square and its partial share w*d */
    if (ends) {
        print_roll_pinned_ends(f, R, in, roots, fm, nr, lag);
        fprintf(f, "    for (int st_h = 0; st_h < 2; ++st_h) {\n"
                   "    const ptrdiff_t st_ea = st_h ? stenc_imax(st_xb, st_dlo) : st_dlo, st_eb = st_h ? st_dhi : stenc_imin(st_xa, st_dhi);\n"
                   "    for (ptrdiff_t i = st_ea; i < st_eb; ++i) {\n");
        pr_c_block(f, &pc, roots, nr, fm, "        ");
        fprintf(f, "    }\n    }\n");
        print_ring_pads(f, R, lag, "mode", "    ");
        fprintf(f, "}\n]])\n");
        return;
    }
    Pins pins;
    /* the newest row's function reads rows no other has read: prefetched */
    char *pf = lag == 0 ? prefetch_next_row(in->P, "st_jq", "st_kq", 0) : NULL;
    if (counts || value || vsum) { /* the whole range, its values counted in [st_sa, st_sb) */
        if (va) /* from st_va: a row's first strip counts the row's first points too (print_ends_uncounted) */
            fprintf(f, "    const ptrdiff_t st_sa = stenc_imin(st_va, st_xb), st_sb = stenc_imax(st_xb%+ld, st_sa);\n",
                    R->minx);
        else if (value || vsum) /* its own points; the vectors start at st_xa, as the gradient's do */
            fprintf(f, "    const ptrdiff_t st_sa = stenc_imin(st_xa%+ld, st_xb), st_sb = stenc_imax(st_xb%+ld, st_sa);\n",
                    R->maxx, R->minx);
        if (vsum) fprintf(f, "    double st_dl[STENC_VLB / sizeof(stn_real)] = {0};\n");
        pr_c_invariants(f, &pc, roots, nr, "    ", &pins);
        fprintf(f, "    const size_t st_sn = st_sb > st_sa ? (size_t)(st_sb - st_sa) : 0;\n");
        roll_value_loops(f, &pc, roots, nr, fm, fmu, fmt, fms, "st_xa", "st_xb", &pins, pf);
        if (vsum) roll_vsum_close(f, R);
        if (merged) print_merged_ends(f, in, lag, counts);
        fprintf(f, "}\n]])\n");
        free(pf);
        return;
    }
    pr_c_invariants(f, &pc, roots, nr, "    ", &pins);
    roll_vector_loops(f, &pc, roots, nr, fm, fmt, &pins, pf);
    if (merged) print_merged_ends(f, in, lag, counts);
    fprintf(f, "}\n]])\n");
    free(pf);
}

/* ---- the rolling rows' point fields (roll_fields plans them) ---- */

/* field Q's ring row at z offset Z for grid row st_jq + Y */
static void print_field_ring_row(FILE *f, const Roll *R, int q, const char *y, long z)
{
    const Field *fd = &R->F.f[q];
    const long my = fd->hi[1] - fd->lo[1] + 1;
    fprintf(f, "st_rb + (size_t)(%ld + %ld * st_tyr + stenc_imod(st_jq + %s, %ld)) * (size_t)st_rw",
            R->fbase0 + fd->row0 + (z - fd->lo[2]) * my, R->fbase1, y, my);
}

/* member M's ring row at z offset (RollFill.z), for fields_print_tagged_fill */
typedef struct { const Roll *R; long z; } RollFill;
static void roll_field_row(FILE *f, const void *ctx, int m)
{
    const RollFill *c = ctx;
    print_field_ring_row(f, c->R, m, "st_fy", c->z);
}

/* leader Q's fill of its fields' rows at z offset Z, for x in [st_xa + lo,
 * st_xb + hi): every y offset whose row's tag does not cover it */
static void print_roll_field_fill(FILE *f, const Roll *R, const RollIn *in, int q, long z)
{
    const Field *fd = &R->F.f[q];
    char kv[32];
    snprintf(kv, sizeof kv, "st_kq%+ld", z);
    fprintf(f, "    for (ptrdiff_t st_fy = %ld; st_fy <= %ld; ++st_fy) {\n", fd->lo[1], fd->hi[1]);
    fprintf(f, "        const ptrdiff_t st_fa = st_xa%+ld, st_fb = st_xb%+ld;\n", fd->lo[0], fd->hi[0]);
    const RollFill c = {R, z};
    const TaggedFill t = {in->P->es, in->P->E.names, &R->F, q, "st_jq + st_fy", kv, "st_fa", "st_fb", roll_field_row, &c, NULL, NULL, NULL, 0, 0, NULL, NULL, 0};
    fields_print_tagged_fill(f, &t);
    fprintf(f, "    }\n");
}

/* a row function's point fields: the fills its rows need, then each row
 * array's pointer (st_row_st_frR, the names NAMES give them) */
static void print_roll_fields(FILE *f, const Roll *R, const RollIn *in, const char **names)
{
    const Fields *F = &R->F;
    const int base = in->P->es->narr;
    for (int q = 0; q < F->n; ++q)
        if (fields_leader(F, q) == q)
            for (long z = F->f[q].lo[2]; z <= F->f[q].hi[2]; ++z) print_roll_field_fill(f, R, in, q, z);
    for (int r = 0; r < F->nrow; ++r) {
        char y[24];
        snprintf(y, sizeof y, "%ld", F->rowy[r]);
        fprintf(f, "    const stn_real *stn_restrict st_row_%s = ", names[base + r]);
        print_field_ring_row(f, R, F->rowf[r], y, F->rowz[r]);
        fprintf(f, "; (void)st_row_%s;\n", names[base + r]); /* a box's row none reads (3D Good's +y+z) */
    }
}

/* the thread's part of the ring, where its first row starts: with whole
 * rows (R->xrule) a page in (m4 stn_job's st_rper has room for it), the
 * first row's points past its low end in that lead (print_ring_pads).  A
 * page, not a line: the rows keep their offsets in their pages (a line's
 * lead took TV's 3D gradient to 1.03-1.04x the time at 256^3 and 512^3,
 * perf/NOTES.md section 59) */
static const char *ring_base(const Roll *R)
{
    return R->xrule ? "st_ring + (size_t)stenc_omp_thread() * st_rper + STENC_PAGE_BYTES / sizeof(stn_real)"
                    : "st_ring + (size_t)stenc_omp_thread() * st_rper";
}

/* the tags of a thread's field rows cleared, when it starts on a ring (D:
 * the dimensions; in 3D st_tyr is st_ty + depth - 1, print_roll_state) */
static void print_field_tags_clear(FILE *f, const Roll *R, int D)
{
    if (R->F.nrow == 0) return;
    fprintf(f, "        if (st_c == 0 || st_rs[0] != st_c)\n"
               "            for (size_t st_g = %ld; st_g < %ld; ++st_g)\n"
               "                stenc_ftag_clear(%s + (st_g + (size_t)%ld * (size_t)(%s + %d))"
               " * (size_t)st_rw + st_n0);\n",
            R->fbase0, R->fbase0 + R->F.nrow, ring_base(R), R->fbase1, D == 3 ? "st_ty" : "0", D == 3 ? R->depth - 1 : 1);
}

/* the call of that function for x in [XA, XB) (ENDS: outside it); CNT: a
 * counting function's lanes and range (roll_counts), NULL: none counted;
 * SO: where the strip slots go (strip_slots): st_so for a strip, "-1" for
 * the catchup's rows */
static void roll_call_so(FILE *f, const Roll *R, const RollIn *in, int lag, int value, int ends, const char *xa,
                         const char *xb, const char *vr, const char *cnt, const char *ind, const char *so)
{
    const int vsum = roll_sums_value(R, in, lag, value, ends), merged = !value && !ends && roll_merged_ends(R, lag);
    fprintf(f, "%s%s_roll%d%s_[[]]stn_sfx[[]](%s, %s, st_jq, st_kq", ind, in->fn, lag, value ? "v" : ends ? "e" : "", xa, xb);
    print_roll_inputs(f, in, IN_ARGS);
    fprintf(f, ", st_rb, st_rw, st_tyr, st_jt%s%s%s%s", ends || merged ? ", st_mode, st_dlo0, st_dhi0" : "", vsum ? ", " : "",
            vsum ? vr : "", value ? ", st_dl" : "");
    if (roll_takes_counts(R, in, lag, value, ends)) fprintf(f, ", %s", cnt ? cnt : ends ? "st_dz" : "st_dz, 0, 0");
    if (value && roll_ends_count(R, in)) /* print_ends_uncounted */
        fprintf(f, ", st_i0 == st_ia ? stenc_imax(st_i0%+ld, st_dlo0) : st_i0", -R->maxx);
    if (R->nstrip && !ends) fprintf(f, ", %s", so);
    fprintf(f, ");\n");
}

/* roll_call_so with the strip slots in their rows (st_so -1) */
static void roll_call(FILE *f, const Roll *R, const RollIn *in, int lag, int value, int ends, const char *xa, const char *xb,
                      const char *vr, const char *cnt, const char *ind)
{
    roll_call_so(f, R, in, lag, value, ends, xa, xb, vr, cnt, ind, "-1");
}

/* In plane order, whether the newest plane's row st_jq counts its values
 * (R->vdiag) as row (j, k)'s catchup computes it: when it is interior and
 * the interior row whose newest row it is comes at or after row j in this
 * chunk (the rows before counted theirs), so each interior row once */
static void print_plane_counts(const Roll *R, char *cnt, size_t n, char *cnte, size_t ne)
{
    char own[96];
    snprintf(own, sizeof own, "st_jq >= j%+ld && st_jq < st_rhi1 && st_kq < st_rhi2", -R->miny);
    snprintf(cnt, n, "%s ? st_dl : st_dz, stenc_imax(st_ia%+ld, st_dlo0), stenc_imin(st_ib%+ld, st_dhi0)", own,
             -R->maxx, -R->minx);
    snprintf(cnte, ne, "%s ? st_dl : st_dz", own);
}

/* R->ext: an R row whose reads leave the grid in y or z, or that lies
 * outside the value's domain, comes from the mapped row function (zeros
 * outside the domain); the others from the plain ones.  print_mapped_cond:
 * st_dom and the "if (...)" of a mapped row (PLAIN: of a plain one);
 * print_mapped_call: the mapped function's call for row (st_jq, st_kq),
 * whole */
static void print_mapped_cond(FILE *f, const RollIn *in, const char *ind, int plain)
{
    const long *omin = in->P->omin, *omax = in->P->omax;
    fprintf(f, "%sconst int st_dom = st_jq >= st_dlo1 && st_jq < st_dhi1 && st_kq >= st_dlo2 && st_kq < st_dhi2;\n", ind);
    fprintf(f, "%sif (%s(st_dom && st_jq >= %ld && st_jq < st_n1 - %ld && st_kq >= %ld && st_kq < st_n2 - %ld))", ind,
            plain ? "" : "!", -omin[1], omax[1], -omin[2], omax[2]);
}
static void print_mapped_call(FILE *f, const RollIn *in, int L, const char *ind)
{
    fprintf(f, "%s%s_roll%dm_[[]]stn_sfx[[]](st_jq, st_kq", ind, in->fn, L);
    print_roll_inputs(f, in, IN_ARGS);
    fprintf(f, ", st_rb, st_rw, st_tyr, st_jt, st_mode, st_dlo0, st_dhi0, !st_dom);\n");
}

/* the catchup's dispatch: the mapped call, or the caller's plain calls in
 * the else branch this opens */
static void print_mapped_dispatch(FILE *f, const RollIn *in, int L)
{
    print_mapped_cond(f, in, "                    ", 0);
    fprintf(f, "\n");
    print_mapped_call(f, in, L, "                        ");
    fprintf(f, "                    else {\n");
}

/* The rows of each plane of R points that row (j, k) needs and the ring does
 * not hold: per plane slot, the tile, plane and row range [st_hl, st_hh]
 * computed last (contiguous); a miss recomputes the whole range.  3D: for
 * the run of st_nr rows from j on (print_roll_row), every plane's rows up
 * to the run's last row's; in row order the newest plane's newest rows are
 * left to the strips, in plane order (R->plane) computed here at once,
 * counting values as print_plane_counts says. */
static void print_roll_catchup(FILE *f, const Roll *R, const RollIn *in)
{
    const int D = in->P->s->dims;
    const char *K = D == 3 ? "k" : "0", *T = D == 3 ? "st_t" : "0";
    char xa[64], xb[64], cnt[256], cnte[128];
    snprintf(xa, sizeof xa, "st_ia%+ld", -R->maxx);
    snprintf(xb, sizeof xb, "st_ib%+ld", -R->minx);
    print_plane_counts(R, cnt, sizeof cnt, cnte, sizeof cnte);
    for (int L = R->nplane - 1; L >= 0; --L) {
        const int ahead = R->plane && L == 0;
        fprintf(f, "            {\n                const ptrdiff_t st_kq = %s%+ld, st_s = stenc_imod(st_kq, %d);\n",
                K, -R->minz - L, R->nplane);
        if (D == 3 && (R->plane || L > 0))
            fprintf(f, "                const ptrdiff_t st_ja = j%+ld, st_jb = j + st_nr%+ld;\n", -R->maxy, -1 - R->miny);
        else fprintf(f, "                const ptrdiff_t st_ja = j%+ld, st_jb = j%+ld;\n", -R->maxy, -R->miny - (L == 0));
        fprintf(f, "                ptrdiff_t st_j0 = st_ja;\n");
        fprintf(f, "                if (st_ht[st_s] == %s && st_hk[st_s] == st_kq && st_hl[st_s] <= st_ja) st_j0 = st_hh[st_s] + 1;\n", T);
        fprintf(f, "                else { st_ht[st_s] = %s; st_hk[st_s] = st_kq; st_hl[st_s] = st_ja; st_hh[st_s] = st_ja - 1; }\n", T);
        fprintf(f, "                for (ptrdiff_t st_jq = st_j0; st_jq <= st_jb; ++st_jq) {\n");
        if (R->ext) print_mapped_dispatch(f, in, L);
        roll_call(f, R, in, L, 0, 0, xa, xb, "1", ahead ? cnt : NULL, "                    ");
        if (!roll_merged_ends(R, L)) roll_call(f, R, in, L, 0, 1, xa, xb, NULL, ahead ? cnte : NULL, "                    ");
        fprintf(f, "                }\n%s", R->ext ? "                }\n" : "");
        /* in row order the newest plane's newest rows are computed by the strips below */
        if (D == 3) fprintf(f, "                if (j + st_nr%+ld > st_hh[st_s]) st_hh[st_s] = j + st_nr%+ld;\n            }\n",
                            -1 - R->miny, -1 - R->miny);
        else fprintf(f, "                if (j%+ld > st_hh[st_s]) st_hh[st_s] = j%+ld;\n            }\n", -R->miny, -R->miny);
    }
}

/* 3D: the rows that roll in y and z, [st_rlo, st_rhi) (stn_loops' st_in):
 * with R->ext wider than the interior when the row is (roll_extend) */
static void print_roll_bounds(FILE *a, const Roll *R)
{
    if (!R->wide && !R->rule && !R->valid) {
        fprintf(a, "        const ptrdiff_t st_rlo1 = st_ilo1, st_rhi1 = st_ihi1, st_rlo2 = st_ilo2, st_rhi2 = st_ihi2;\n");
        return;
    }
    const int all = R->rule || R->valid;
    if (all) /* st_rc: every row rolls (roll_rule) */
        fprintf(a, "        /* the border rows roll too:%s%s%s (gen/emit.c roll_rule) */\n",
                R->valid ? " in valid mode (the R rows outside its domain are zeros)" : "", R->valid && R->rule ? "," : "",
                !R->rule ? "" : R->rule == RULE_CLAMP ? " in Neumann mode (the partials past a face count as the face's)"
                                                       : " in Neumann mode (the partials past a face count as zero)");
    fprintf(a, "        const int st_rx = st_ilo0 < st_ihi0");
    if (all)
        fprintf(a, ", st_rc = st_rx && (%s%s%s)", R->rule ? "st_mode == STENC_NEUMANN" : "", R->rule && R->valid ? " || " : "",
                R->valid ? "st_mode == STENC_VALID" : "");
    fprintf(a, ";\n");
    for (int d = 1; d < 3; ++d) {
        fprintf(a, "        const ptrdiff_t st_rlo%d = %s", d, all ? "st_rc ? 0 : " : "");
        if (R->wide) fprintf(a, "st_rx ? %ld : st_ilo%d", R->rlo[d], d);
        else fprintf(a, "st_ilo%d", d);
        fprintf(a, ", st_rhi%d = ", d);
        if (all) fprintf(a, "st_rc ? st_n%d : ", d);
        if (R->wide) fprintf(a, "st_rx ? st_n%d - %ld : st_ihi%d;\n", d, R->rhi[d], d);
        else fprintf(a, "st_ihi%d;\n", d);
    }
}

/* the per-thread bookkeeping of the ring (ROLL_INIT) and its size (ROLL_SIZE) */
static void print_roll_state(FILE *a, const Roll *R, int D, int state)
{
    /* per thread: the chunk it ran last, then per plane slot the tile, plane
     * and row range in the ring; a chunk that does not follow the thread's
     * last one starts with an empty ring */
    fprintf(a, "ptrdiff_t *const st_rs = st_rstate + (size_t)stenc_omp_thread() * %d;\n", state);
    fprintf(a, "        ptrdiff_t *const st_ht = st_rs + 1, *const st_hk = st_ht + %d, *const st_hl = st_hk + %d, "
               "*const st_hh = st_hl + %d;\n", R->nplane, R->nplane, R->nplane);
    print_field_tags_clear(a, R, D);
    fprintf(a, "        if (st_c == 0 || st_rs[0] != st_c) for (int st_g = 0; st_g < %d; ++st_g) st_ht[st_g] = PTRDIFF_MIN;\n",
            R->nplane);
    print_ring_zero_pads(a, R, D);
    fprintf(a, "        st_rs[0] = st_c + 1;\n");
    if (D == 3) {
        fprintf(a, "        const ptrdiff_t st_tyr = st_ty + %d; (void)st_tyr;\n", R->depth - 1);
        print_roll_bounds(a, R);
    } else fprintf(a, "        const ptrdiff_t st_tyr = 1; (void)st_tyr;\n");
    fprintf(a, "        const ptrdiff_t st_rlo0 = st_ilo0, st_rhi0 = st_ihi0; /* the rows' x-interior */\n");
    /* R->vdiag: where the rows the chunk does not count add their values */
    if (R->vdiag) fprintf(a, "        double st_dz[STENC_VLB / sizeof(float)] = {0};\n");
}

/* RULE_ZERO's pads (print_ring_pads) in every row of the thread's ring,
 * at the start of its run of chunks (3D) */
static void print_ring_zero_pads(FILE *a, const Roll *R, int D)
{
    if (!R->xrule || R->rule != RULE_ZERO) return;
    fprintf(a, "        if (STENC_WHOLE_ROWS && (st_c == 0 || st_rs[0] != st_c)) /* whole rows' zeros past the x ends (gen/emit.c print_ring_pads) */\n"
               "            for (size_t st_g = 0; st_g < (size_t)(");
    print_ring_size(a, R, D);
    fprintf(a, "); ++st_g) {\n                stn_real *const st_p = %s + st_g * (size_t)st_rw;\n", ring_base(R));
    for (long e = 1; e <= R->maxx; ++e) fprintf(a, "                st_p[-%ld] = 0;\n", e);
    for (long e = 0; e < -R->minx; ++e) fprintf(a, "                st_p[st_n0 + %ld] = 0;\n", e);
    fprintf(a, "            }\n");
}

/* the ring's rows per thread (an expression of st_ty in 3D) */
static void print_ring_size(FILE *f, const Roll *R, int D)
{
    if (D == 3) fprintf(f, "%ld + %ld * (st_ty + %d)", R->size0, R->size1, R->depth - 1);
    else fprintf(f, "%ld", R->size0);
}

/* the first use that reads the same ring row as use u (same slot, same y/z
 * offset): one pointer per distinct row, or the gather of a stencil with
 * many terms keeps its pointers on the stack (section 12) */
static int roll_row_of(const Roll *R, const RollIn *in, int u)
{
    const Node *tu = in->P->dtaps[R->use[u].tap];
    for (int v = 0; v < u; ++v) {
        const Node *tv = in->P->dtaps[R->use[v].tap];
        if (R->use[v].slot == R->use[u].slot && tv->idx[1].c == tu->idx[1].c &&
            (in->P->s->dims < 3 || tv->idx[2].c == tu->idx[2].c))
            return v;
    }
    return u;
}

/* the ring rows the gather terms of row (j, k) read: st_r<use> for the
 * first use of each row; STRIP: a strip's gather (print_strip_row) */
static void print_roll_rows(FILE *f, const Roll *R, const RollIn *in, int strip)
{
    const int D = in->P->s->dims;
    const char *K = D == 3 ? "k" : "0";
    for (int u = 0; u < R->nuse; ++u) {
        if (roll_row_of(R, in, u) != u) continue;
        const Node *tp = in->P->dtaps[R->use[u].tap];
        char jq[64], kq[64];
        if (R->rule == RULE_CLAMP) { /* only border rows' clamps take effect (roll_rule) */
            snprintf(jq, sizeof jq, "stenc_iclamp(j%+ld, 0, st_n1 - 1)", -tp->idx[1].c);
            snprintf(kq, sizeof kq, "stenc_iclamp(k%+ld, 0, st_n2 - 1)", -tp->idx[2].c);
        } else {
            snprintf(jq, sizeof jq, "j%+ld", -tp->idx[1].c);
            snprintf(kq, sizeof kq, "%s%+ld", K, D == 3 ? -tp->idx[2].c : 0L);
        }
        fprintf(f, "            const stn_real *stn_restrict st_r%d = ", u);
        if (strip && R->slot[R->use[u].slot].strip) print_strip_row(f, R, R->use[u].slot);
        else print_ring_row(f, R, R->use[u].slot, jq, kq);
        fprintf(f, ";\n");
    }
}

/* the terms' coefficients (free of taps): st_c<use> */
static void print_roll_coefs(FILE *f, Roll *R, const RollIn *in)
{
    PrintCtx pcd = {in->P->es, TAP_DIRECT, in->P->E.names, NULL, NULL, 0};
    for (int u = 0; u < R->nuse; ++u) {
        if (!R->use[u].coef) continue;
        char fmb[64]; /* a coefficient its group's first holds may go unused (gather_group) */
        snprintf(fmb, sizeof fmb, "const stn_real st_c%d = %%s; (void)st_c%d;", u, u);
        const char *fm[1] = {fmb};
        pr_c_block(f, &pcd, &R->use[u].coef, 1, fm, "            ");
    }
}

/* " st_gv += st_c<U> * " for use U (its sign, its coefficient when it has
 * one); the ring read follows */
static void print_term_op(FILE *f, const Roll *R, int u)
{
    const Use *us = &R->use[u];
    fprintf(f, " st_gv %c= ", us->neg ? '-' : '+');
    if (us->coef) fprintf(f, "st_c%d * ", u);
}

/* use U's coefficient up to its sign (c for c and -c: the expressions are
 * shared nodes), and the sign of its term with that coefficient */
static const Node *use_coef(const Use *us) { return us->coef && us->coef->kind == E_NEG ? us->coef->a[0] : us->coef; }
static int use_neg(const Use *us) { return us->neg ^ (us->coef && us->coef->kind == E_NEG); }

/* the group of use U among the uses of array ARR: the first use of ARR
 * with U's coefficient up to sign, whose product st_c<first> * (r_a +- r_b
 * ...) holds them all, as a hand-written Laplacian multiplies w_x once for
 * its two x neighbours; U itself where it has no coefficient */
static int gather_group(const Roll *R, const RollIn *in, int arr, int u)
{
    if (!R->use[u].coef) return u;
    for (int v = 0; v < u; ++v)
        if (use_coef(&R->use[v]) == use_coef(&R->use[u]) && in->P->dtaps[R->use[v].tap]->ref == arr) return v;
    return u;
}

/* use U's ring read, st_r<row>[i - x offset] */
static void print_gather_read(FILE *f, const Roll *R, const RollIn *in, int u)
{
    fprintf(f, "st_r%d[i%+ld%s]", roll_row_of(R, in, u), -in->P->dtaps[R->use[u].tap]->idx[0].c,
            R->slot[R->use[u].slot].strip ? " - st_sx" : "");
}

/* group G's term: its coefficient, and its uses' reads (those whose term
 * has the other sign than G's subtracted); the caller prints G's sign */
static void print_gather_group(FILE *f, const Roll *R, const RollIn *in, int arr, int g)
{
    int n = 0;
    for (int u = g; u < R->nuse; ++u) n += in->P->dtaps[R->use[u].tap]->ref == arr && gather_group(R, in, arr, u) == g;
    if (R->use[g].coef) fprintf(f, "st_c%d * %s", g, n > 1 ? "(" : "");
    for (int u = g, m = 0; u < R->nuse; ++u) {
        if (in->P->dtaps[R->use[u].tap]->ref != arr || gather_group(R, in, arr, u) != g) continue;
        if (m++) fprintf(f, " %c ", use_neg(&R->use[u]) == use_neg(&R->use[g]) ? '+' : '-');
        print_gather_read(f, R, in, u);
    }
    if (R->use[g].coef && n > 1) fprintf(f, ")");
}

/* st_gv = the sum of the ring terms that reach point i of array ARR, a
 * term a group of uses that share a coefficient (gather_group).  A long
 * sum runs in GATHER_ACC independent partial sums, terms dealt out in
 * turn and the partials added pairwise at the end: one chain of 21
 * dependent adds (the 3D Hessian) is 63 cycles of latency a vector; split,
 * the Hessian gradient took 0.94-0.97 of its time (perf/NOTES.md section
 * 16: the gather is then bound by its loads). */
enum { GATHER_ACC = 4 };
static void print_gather_sum(FILE *f, const Roll *R, const RollIn *in, int arr)
{
    int nt = 0;
    for (int u = 0; u < R->nuse; ++u)
        nt += in->P->dtaps[R->use[u].tap]->ref == arr && gather_group(R, in, arr, u) == u;
    const int K = nt >= 3 * GATHER_ACC ? GATHER_ACC : nt >= 6 ? 2 : 1;
    for (int u = 0, t = 0; u < R->nuse; ++u) {
        const Use *us = &R->use[u];
        if (in->P->dtaps[us->tap]->ref != arr || gather_group(R, in, arr, u) != u) continue;
        if (t < K) fprintf(f, " stn_real st_gv%d = %s", t, us->neg ? "-" : "");
        else fprintf(f, " st_gv%d %c= ", t % K, us->neg ? '-' : '+');
        print_gather_group(f, R, in, arr, u);
        fprintf(f, ";");
        ++t;
    }
    if (nt == 0) fprintf(f, " const stn_real st_gv = 0;");
    else if (K == 1) fprintf(f, " const stn_real st_gv = st_gv0;");
    else if (K == 2) fprintf(f, " const stn_real st_gv = st_gv0 + st_gv1;");
    else fprintf(f, " const stn_real st_gv = (st_gv0 + st_gv1) + (st_gv2 + st_gv3);");
}

/* the one differentiated array's gradient, which may stream (the gathers'
 * print_roll_gather_nt, the row loops' m4 stn_gtail_nt), or "" when there
 * are several */
static const char *nt_array(const RedPlan *P)
{
    int a1 = -1, n = 0;
    for (int a = 0; a < P->N; ++a)
        if (P->diff[a]) a1 = a, ++n;
    return n == 1 ? P->E.names[P->N + a1] : "";
}

/* one gather loop of a strip, G[q] = the sum of the terms that reach q
 * (the coefficients, free of taps, are st_c<use>: print_roll_coefs), over
 * i in [LO, HI) (FORM GL_RANGE), over the strip's last whole vector
 * [st_ie - st_vl, st_ie) (GL_TAIL), or over the whole 64-byte lines of G
 * [st_i0 + st_na, st_i0 + st_nb) (GL_LINE: each line into st_l, then
 * streamed; print_roll_gather_nt); STORE: stn_gstore0 (beta == 0),
 * stn_gstore or stn_gstore_line */
enum { GL_RANGE, GL_TAIL, GL_LINE };
static void print_gather_loop(FILE *f, const Roll *R, const RollIn *in, int vg, const char *lo, const char *hi, int form,
                              const char *store)
{
    const int N = in->P->N;
    if (form == GL_LINE) fprintf(f, "stn_nt_lines(st_i0 + st_na, st_i0 + st_nb, [[");
    if (form != GL_RANGE)
        fprintf(f, "            #pragma omp simd\n            for (ptrdiff_t st_u = 0; st_u < %s; ++st_u) {\n"
                   "                const ptrdiff_t i = %s + st_u;\n", form == GL_TAIL ? "st_vl" : "st_ll",
                form == GL_TAIL ? "st_ie - st_vl" : "st_il");
    else fprintf(f, "            #pragma omp simd\n            for (ptrdiff_t i = %s; i < %s; ++i) {\n", lo, hi);
    fprintf(f, "                const ptrdiff_t st_vi = i - st_i0; (void)st_vi;\n                ");
    point_index(f, in->P->es, in->P->s->arr[in->P->first_read].name, "st_q");
    fprintf(f, "\n");
    if (in->want_v && !vg) { /* the value at the point itself, from x */
        PrintCtx pcd = {in->P->es, TAP_DIRECT, in->P->E.names, NULL, NULL, 0};
        Node *root = in->P->rv.f;
        const char *fm[1] = {"{ const stn_real st_v = %s; stn_vacc }"};
        pr_c_block(f, &pcd, &root, 1, fm, "                ");
    }
    for (int arr = 0; arr < N; ++arr) {
        if (!in->P->diff[arr]) continue;
        fprintf(f, "                {");
        print_gather_sum(f, R, in, arr);
        fprintf(f, " %s(%s, st_q) }\n", store, in->P->E.names[N + arr]);
    }
    fprintf(f, "            }\n%s", form == GL_LINE ? "]])" : "");
}

/* beta == 0 with streaming stores (stenc_nt_on: a gradient array past
 * STENC_NT_BYTES): the strip's points before its first whole line of G and
 * after its last plainly, its whole lines streamed (a value computed in
 * the gather goes to its strip buffer, stn_vacc, as before); else
 * (st_nb == st_na) the plain loop of print_roll_gather */
static void print_roll_gather_nt(FILE *f, const Roll *R, const RollIn *in, int vg)
{
    fprintf(f, "stn_nt_span(st_i0, st_ie, [[%s + (", nt_array(in->P));
    point_offset(f, in->P->es, in->P->s->arr[in->P->first_read].name, "0");
    fprintf(f, ")]], %d)            if (st_na < st_nb) {\n", in->P->s->dims);
    print_gather_loop(f, R, in, vg, "st_i0", "st_i0 + st_na", GL_RANGE, "stn_gstore0");
    print_gather_loop(f, R, in, vg, NULL, NULL, GL_LINE, "stn_gstore_line");
    print_gather_loop(f, R, in, vg, "st_i0 + st_nb", "st_ie", GL_RANGE, "stn_gstore0");
    fprintf(f, "            } else {\n");
}

/* The gather of the strip [st_i0, st_ie), twice, for beta == 0 (G not read)
 * and beta != 0: left to itself GCC if-converts the store's select into a
 * masked load of G, a read stream for a line that is only written (section
 * 7).  With beta == 0 every store (G, the value buffer) can run twice with
 * the same value, so the strip's last partial vector is its last whole
 * vector again instead of GCC's scalar epilogue (up to 15 points with
 * AVX-512: perf/NOTES.md section 18).  Where the gradient may stream
 * (nt_array), the beta == 0 copy first tries its streaming form. */
static void print_roll_gather(FILE *f, const Roll *R, const RollIn *in, int vg)
{
    const int nt = *nt_array(in->P) != '\0';
    print_roll_rows(f, R, in, 1);
    if (R->nstrip) fprintf(f, "            const ptrdiff_t st_sx = st_so < 0 ? 0 : st_so;\n");
    fprintf(f, "            const ptrdiff_t st_vl = (ptrdiff_t)(STENC_VLB / sizeof(stn_real));\n"
               "            const ptrdiff_t st_xm = st_ie - st_i0 >= st_vl ? st_i0 + (st_ie - st_i0) / st_vl * st_vl : st_ie;\n"
               "            if (beta == 0) {\n");
    if (nt) print_roll_gather_nt(f, R, in, vg);
    print_gather_loop(f, R, in, vg, "st_i0", "st_xm", GL_RANGE, "stn_gstore0");
    fprintf(f, "            if (st_xm < st_ie) {\n");
    print_gather_loop(f, R, in, vg, NULL, NULL, GL_TAIL, "stn_gstore0");
    fprintf(f, "            }\n%s            }\n            else {\n", nt ? "            }\n" : "");
    print_gather_loop(f, R, in, vg, "st_i0", "st_ie", GL_RANGE, "stn_gstore");
    fprintf(f, "            }\n");
}

/* The gather of a strip as its own function (C only, not inlined), for the
 * reason the row functions are: in the kernel's body GCC parks the ring
 * pointers in vector registers and on the stack (section 12).  VG: the
 * value is computed elsewhere (with the newest row, or in its slot); else
 * the gather computes the point values from x into st_vb.  RUN
 * (roll_gather_run): the strip of each of the run's st_nr rows from row
 * st_jg on, one call a run instead of one a row. */
static void roll_gather_helper(FILE *f, Roll *R, const RollIn *in, int vg, int run)
{
    const int D = in->P->s->dims, N = in->P->N;
    fprintf(f, "stn_c_only([[static STENC_NOINLINE void %s_gather_[[]]stn_sfx[[]](ptrdiff_t st_i0, ptrdiff_t st_ie, "
               "%s%s", in->fn, run ? "ptrdiff_t st_jg, ptrdiff_t st_nr" : "ptrdiff_t j", D == 3 ? ", ptrdiff_t k" : "");
    print_roll_inputs(f, in, IN_PARAMS);
    fprintf(f, ", const stn_real *st_rb, ptrdiff_t st_rw, ptrdiff_t st_tyr, ptrdiff_t st_jt, stn_real alpha, stn_real beta");
    for (int a = 0; a < N; ++a)
        if (in->P->diff[a]) fprintf(f, ", stn_real *stn_restrict %s", in->P->E.names[N + a]);
    fprintf(f, "%s%s)\n{\n    (void)st_tyr; (void)st_jt;", in->want_v && !vg ? ", stn_real *stn_restrict st_vb" : "",
            R->nstrip ? ", ptrdiff_t st_so" : "");
    print_roll_input_setup(f, in);
    print_roll_coefs(f, R, in);
    if (run) fprintf(f, "    for (ptrdiff_t st_jr = 0; st_jr < st_nr; ++st_jr) {\n    const ptrdiff_t j = st_jg + st_jr;\n");
    print_roll_gather(f, R, in, vg);
    fprintf(f, "%s}\n]])\n", run ? "    }\n" : "");
}

/* its call for the strip [st_i0, st_ie) of row (j, k), or with RUN of the
 * run's st_nr rows from row j on */
static void roll_gather_call(FILE *f, const Roll *R, const RollIn *in, int vg, int run)
{
    const int N = in->P->N;
    fprintf(f, "            %s_gather_[[]]stn_sfx[[]](st_i0, st_ie, j%s%s", in->fn, run ? ", st_nr" : "",
            in->P->s->dims == 3 ? ", k" : "");
    print_roll_inputs(f, in, IN_ARGS);
    fprintf(f, ", st_rb, st_rw, st_tyr, st_jt, alpha, beta");
    for (int a = 0; a < N; ++a)
        if (in->P->diff[a]) fprintf(f, ", %s", in->P->E.names[N + a]);
    fprintf(f, "%s%s);\n", in->want_v && !vg ? ", st_vb" : "", R->nstrip ? ", st_so" : "");
}

static int print_roll_fast_ends(FILE *f, const Roll *R, const RollIn *in);

/* The row's x ends, [st_lo0, st_ia) and [st_ib, st_hi0), gathered from the
 * ring like the interior: each term over the R points whose mapped tap lands
 * on i (stenc_preimage along x; y and z are inside), one preimage per
 * distinct x offset.  The ring holds every R point of the x domain (the ENDS
 * row functions).  The value at an end point: its value slot, else the
 * mapped value helper. */
static void print_roll_ends(FILE *f, const Roll *R, const RollIn *in)
{
    const int N = in->P->N;
    fprintf(f, "            {\n");
    print_roll_rows(f, R, in, 0);
    const int fast = print_roll_fast_ends(f, R, in);
    fprintf(f, "            %sfor (int st_h = 0; st_h < 2; ++st_h) {\n"
               "            const ptrdiff_t st_ea = st_h ? st_ib : st_lo0, st_eb = st_h ? st_hi0 : st_ia;\n"
               "            for (ptrdiff_t i = st_ea; i < st_eb; ++i) {\n                ", fast ? "{\n            " : "");
    point_index(f, in->P->es, in->P->s->arr[in->P->first_read].name, "st_q");
    fprintf(f, "\n");
    if (in->want_v && !R->vdiag) { /* vdiag: the newest row's ends counted them */
        fprintf(f, "                if (i >= st_dlo0 && i < st_dhi0");
        print_ends_uncounted(f, R, in, " && ");
        fprintf(f, ")\n");
        print_end_value(f, R, in);
    }
    for (int arr = 0; arr < N; ++arr) {
        if (!in->P->diff[arr]) continue;
        fprintf(f, "                {\n                stn_real st_gv = 0;\n");
        for (int u = 0; u < R->nuse; ++u) {
            const long ox = in->P->dtaps[R->use[u].tap]->idx[0].c;
            int first = 1; /* the first term of this array with offset ox opens the block */
            for (int v = 0; v < u && first; ++v)
                first = !(in->P->dtaps[R->use[v].tap]->ref == arr && in->P->dtaps[R->use[v].tap]->idx[0].c == ox);
            if (in->P->dtaps[R->use[u].tap]->ref != arr || !first) continue;
            fprintf(f, "                {\n");
            print_preimage_loops(f, in->P->dtaps[R->use[u].tap], in->P->D, 0, 1, "                ");
            fprintf(f, " {");
            for (int v = u; v < R->nuse; ++v) {
                const Use *us = &R->use[v];
                if (in->P->dtaps[us->tap]->ref != arr || in->P->dtaps[us->tap]->idx[0].c != ox) continue;
                print_term_op(f, R, v);
                fprintf(f, "st_r%d[st_p0];", roll_row_of(R, in, v));
            }
            fprintf(f, " }\n                }\n");
        }
        fprintf(f, "                stn_gstore(%s, st_q)\n                }\n", in->P->E.names[N + arr]);
    }
    fprintf(f, "            }\n            }\n%s            }\n", fast ? "            }\n" : "");
}

/* ---- border rows from a cache of R rows (C backend, rolling gradients) ----
 * A border row (j or k within the footprint of an edge) sums each term over
 * the R rows (p1, p2) whose mapped tap lands on (j, k) (stenc_preimage along
 * y and z).  Those R rows are computed whole, with mapped reads, into a small
 * per-thread cache that keeps them for the next border rows: a y tile's
 * border rows at plane k and k + 1 share two of their three planes of R rows,
 * the rows of a border plane share two of three rows.  The cache is direct
 * mapped, entry (p1 mod CY, p2 mod CZ), tagged 1 + p1 + n1*p2 (0: empty): a
 * collision only recomputes a row.  Without it each border point evaluated
 * every tap's partial (a Laplacian a tap: 25% of the Tikhonov-Laplacian
 * gradient's time at 256^3 went to 3% of its rows, perf/NOTES.md section 17
 * item 4). */
typedef struct { int cy, cz, ns, nd; } BCache; /* entries CY x CZ of NS slot rows; ND gradient rows */
static void print_border_value(FILE *f, const Stencil *s, const Stencil *es, const Ext *E, const Reduce *r);

static BCache bcache_of(const Roll *R, const RollIn *in)
{
    BCache c = {R->depth + 1, in->P->s->dims == 3 ? R->nplane + 1 : 1, R->nslot, 0};
    for (int a = 0; a < in->P->N; ++a) c.nd += in->P->diff[a] != 0;
    return c;
}

/* the x reach of the slots' reads: [*lo, *hi] */
static void slots_xreach(const Roll *R, long *lo, long *hi)
{
    *lo = *hi = 0;
    for (int k = 0; k < R->nslot; ++k) {
        Node *taps[MAXTAP];
        int nt = ex_taps(R->slot[k].f, -1, taps, MAXTAP);
        for (int t = 0; t < nt && t < MAXTAP; ++t) {
            if (taps[t]->idx[0].kind != IK_VAR) continue;
            long c = taps[t]->idx[0].c;
            *lo = c < *lo ? c : *lo;
            *hi = c > *hi ? c : *hi;
        }
    }
}

/* An R row's slots ROOTS, stored by FM, for x in [st_dlo0, st_dhi0): the
 * y/z reads mapped and hoisted (SH: pr_hoisted_yz's lines), the x reads
 * direct where they are inside and mapped at the row's ends */
static void print_mapped_row(FILE *f, const Roll *R, const RollIn *in, Node **roots, const char **fm, int nr, const char *sh,
                             const char *const *vars)
{
    long xlo, xhi;
    slots_xreach(R, &xlo, &xhi);
    fprintf(f, "%s", sh);
    fprintf(f, "    const ptrdiff_t st_xa = stenc_iclamp(%ld, st_dlo0, st_dhi0), st_xb = stenc_iclamp(st_n0 - %ld, st_xa, st_dhi0);\n",
            -xlo, xhi);
    PrintCtx ph = {in->P->es, TAP_HOISTED_YZ, in->P->E.names, vars, NULL, 0}, pm = {in->P->es, TAP_MAPPED, in->P->E.names, vars, NULL, 0};
    fprintf(f, "    #pragma omp simd\n    for (ptrdiff_t i = st_xa; i < st_xb; ++i) {\n");
    pr_c_block(f, &ph, roots, nr, fm, "        ");
    fprintf(f, "    }\n    for (int st_h = 0; st_h < 2; ++st_h) {\n"
               "    const ptrdiff_t st_ea = st_h ? stenc_imax(st_xb, st_dlo0) : st_dlo0, st_eb = st_h ? st_dhi0 : st_xa;\n"
               "    for (ptrdiff_t i = st_ea; i < st_eb; ++i) {\n");
    pr_c_block(f, &pm, roots, nr, fm, "        ");
    fprintf(f, "    }\n    }\n");
}

/* A mapped R row's slots (lag >= LAG, not the value's) as ROOTS, each
 * stored by FMT (its %d the slot) into FMB/FM, and in *SH the hoisted y/z
 * maps of VARS (indented IND); the number of roots, or -1 (*SH NULL) when
 * an offset is too large to hoist */
static int mapped_slots(const Roll *R, const RollIn *in, int lag, const char *fmt, const char *const *vars, const char *ind,
                        Node **roots, char (*fmb)[48], const char **fm, char **sh)
{
    int nr = 0;
    for (int k = 0; k < R->nslot; ++k) {
        if (k == R->vslot || R->slot[k].lag < lag) continue;
        roots[nr] = R->slot[k].f;
        snprintf(fmb[nr], sizeof fmb[nr], fmt, k);
        fm[nr] = fmb[nr];
        ++nr;
    }
    Str h;
    str_open(&h);
    const int ok = pr_hoisted_yz(h.f, in->P->s, roots, nr, vars, ind);
    *sh = str_close(&h);
    if (!ok) { free(*sh); *sh = NULL; return -1; }
    ex_share_weights(roots, nr);
    return nr;
}

/* The function that returns R row (st_p1, st_p2) from the cache, computing
 * it on a miss: every slot but the value's, x in [st_dlo0, st_dhi0), the
 * y/z reads mapped (hoisted), the x reads direct where they are inside and
 * mapped at the row's ends.  0 when an offset is too large to hoist. */
static int bcache_helper(FILE *f, const Roll *R, const RollIn *in, const BCache *c)
{
    static const char *vars[3] = {"i", "st_p1", "st_p2"};
    Node *roots[MAXTAP];
    char fmb[MAXTAP][48], *sh;
    const char *fm[MAXTAP];
    const int nr = mapped_slots(R, in, 0, "st_we[%d * st_rw + i] = %%s;", vars, "        ", roots, fmb, fm, &sh);
    if (nr < 0) return 0;
    fprintf(f, "stn_c_only([[static STENC_NOINLINE const stn_real *%s_bget_[[]]stn_sfx[[]](ptrdiff_t st_p1, ptrdiff_t st_p2", in->fn);
    print_roll_inputs(f, in, IN_PARAMS);
    fprintf(f, ", stn_real *st_bb, ptrdiff_t *st_bt, ptrdiff_t st_rw, int st_mode, ptrdiff_t st_dlo0, ptrdiff_t st_dhi0)\n{\n");
    fprintf(f, "    const ptrdiff_t st_key = 1 + st_p1 + st_n1 * st_p2, st_e = stenc_imod(st_p1, %d) + %d * stenc_imod(st_p2, %d);\n",
            c->cy, c->cy, c->cz);
    fprintf(f, "    stn_real *stn_restrict st_we = st_bb + (size_t)st_e * (size_t)(%d * st_rw);\n", c->ns);
    fprintf(f, "    if (st_bt[st_e] == st_key) return st_we;\n    st_bt[st_e] = st_key;\n    const int mode = st_mode; (void)mode;");
    print_roll_input_setup(f, in);
    print_mapped_row(f, R, in, roots, fm, nr, sh, vars);
    free(sh);
    fprintf(f, "    return st_we;\n}\n]])\n");
    return 1;
}

/* The function that computes R row (st_jq, st_kq) into the ring, lag planes
 * behind the newest, by mapped reads (the rows at the faces that R->ext's
 * rows need, roll_extend), or zeros (st_zero: outside the value's domain
 * in valid mode).  0 when an offset is too large to hoist. */
static int roll_mapped_helper(FILE *f, const Roll *R, const RollIn *in, int lag)
{
    static const char *vars[3] = {"i", "st_jq", "st_kq"};
    Node *roots[MAXTAP];
    char fmb[MAXTAP][48], *sh;
    const char *fm[MAXTAP];
    const int nr = mapped_slots(R, in, lag, "st_w%d[i] = %%s;", vars, "    ", roots, fmb, fm, &sh);
    if (nr < 0) return 0;
    fprintf(f, "stn_c_only([[static STENC_NOINLINE void %s_roll%dm_[[]]stn_sfx[[]](ptrdiff_t st_jq, ptrdiff_t st_kq", in->fn, lag);
    print_roll_inputs(f, in, IN_PARAMS);
    fprintf(f, ", stn_real *st_rb, ptrdiff_t st_rw, ptrdiff_t st_tyr, ptrdiff_t st_jt, int st_mode, ptrdiff_t st_dlo0, "
               "ptrdiff_t st_dhi0, int st_zero)\n{\n    const int mode = st_mode; (void)mode; (void)st_tyr; (void)st_jt;");
    print_roll_input_setup(f, in);
    for (int k = 0; k < R->nslot; ++k) {
        if (R->slot[k].lag < lag) continue;
        fprintf(f, "    stn_real *stn_restrict st_w%d = ", k);
        print_ring_row(f, R, k, "st_jq", "st_kq");
        fprintf(f, ";\n");
    }
    fprintf(f, "    if (st_zero) {\n");
    for (int k = 0; k < R->nslot; ++k)
        if (R->slot[k].lag >= lag) fprintf(f, "        for (ptrdiff_t i = 0; i < st_n0; ++i) st_w%d[i] = 0;\n", k);
    print_ring_pads(f, R, lag, "mode", "        ");
    fprintf(f, "        return;\n    }\n");
    print_mapped_row(f, R, in, roots, fm, nr, sh, vars);
    free(sh);
    print_ring_pads(f, R, lag, "mode", "    ");
    fprintf(f, "}\n]])\n");
    return 1;
}

/* whether use U has the y/z offsets of use U0 */
static int same_yz(const Roll *R, const RollIn *in, int u, int u0)
{
    const Node *t0 = in->P->dtaps[R->use[u0].tap], *tp = in->P->dtaps[R->use[u].tap];
    return tp->idx[1].c == t0->idx[1].c && (in->P->s->dims < 3 || tp->idx[2].c == t0->idx[2].c);
}

/* use U's term: its coefficient, its sign (with SIGN; without, the caller
 * prints it as the operator) and its slot row at st_we, up to the x index
 * (which the caller closes with "...]") */
static void bgather_term(char *term, size_t n, const Use *us, int u, int sign)
{
    const char *neg = sign && us->neg ? "-" : "";
    if (us->coef) snprintf(term, n, "%sst_c%d * st_we[%d * st_rw + ", neg, u, us->slot);
    else snprintf(term, n, "%sst_we[%d * st_rw + ", neg, us->slot);
}

/* the terms of the uses with the y/z offsets of use U0 (the first such use),
 * from the slot rows at st_we: over the x-interior [st_xa, st_xb) one vector
 * loop per gradient array adding its terms in their order (a loop per term
 * cost a load and a store of the row per term: the Hessian's 21), then the
 * row's ends over their x-preimages, term by term */
static void print_bgather_terms(FILE *f, const Roll *R, const RollIn *in, int u0)
{
    const int D = in->P->s->dims;
    char term[96];
    for (int a = 0; a < in->P->N; ++a) {
        int any = 0;
        for (int u = u0; u < R->nuse; ++u) {
            const Node *tp = in->P->dtaps[R->use[u].tap];
            if (!same_yz(R, in, u, u0) || tp->ref != a) continue;
            if (!any++) fprintf(f, "                #pragma omp simd\n"
                                   "                for (ptrdiff_t i = st_xa; i < st_xb; ++i) st_ga%d[i] = st_ga%d[i]", a, a);
            bgather_term(term, sizeof term, &R->use[u], u, 0);
            fprintf(f, " %c %si%+ld]", R->use[u].neg ? '-' : '+', term, -tp->idx[0].c);
        }
        if (any) fprintf(f, ";\n");
    }
    for (int u = u0; u < R->nuse; ++u) {
        const Node *tp = in->P->dtaps[R->use[u].tap];
        if (!same_yz(R, in, u, u0)) continue;
        bgather_term(term, sizeof term, &R->use[u], u, 1);
        fprintf(f, "                for (int st_h = 0; st_h < 2; ++st_h)\n"
                   "                for (ptrdiff_t i = st_h ? st_xb : st_lo0; i < (st_h ? st_hi0 : st_xa); ++i) {\n");
        print_preimage_loops(f, tp, D, 0, 1, "                    ");
        fprintf(f, " st_ga%d[i] += %sst_p0];\n                }\n", tp->ref, term);
    }
}

/* The gradient of border row (j, k) as its own function (C only): the
 * gradient rows st_ga<a> (after the cache) zeroed, per distinct y/z offset
 * of the uses the R rows of its preimages from the cache and their terms,
 * then the store */
static void bgather_helper(FILE *f, const Roll *R, const RollIn *in, const BCache *c)
{
    const int D = in->P->s->dims, N = in->P->N;
    fprintf(f, "stn_c_only([[static STENC_NOINLINE void %s_border_[[]]stn_sfx[[]](ptrdiff_t j, ptrdiff_t k", in->fn);
    print_roll_inputs(f, in, IN_PARAMS);
    fprintf(f, ", stn_real *st_bb, ptrdiff_t *st_bt, ptrdiff_t st_rw, int st_mode");
    for (int d = 0; d < D; ++d) fprintf(f, ", ptrdiff_t st_dlo%d, ptrdiff_t st_dhi%d", d, d);
    fprintf(f, ", ptrdiff_t st_lo0, ptrdiff_t st_hi0, ptrdiff_t st_xa, ptrdiff_t st_xb, stn_real alpha, stn_real beta");
    for (int a = 0; a < N; ++a)
        if (in->P->diff[a]) fprintf(f, ", stn_real *stn_restrict %s", in->P->E.names[N + a]);
    fprintf(f, ")\n{\n    (void)k;");
    print_roll_input_setup(f, in);
    for (int a = 0, n = 0; a < N; ++a)
        if (in->P->diff[a]) {
            setup_strides(f, in->P->s, a, in->P->E.names[N + a]);
            fprintf(f, "    stn_real *stn_restrict st_ga%d = st_bb + (size_t)%d * (size_t)st_rw;\n", a, c->cy * c->cz * c->ns + n++);
            fprintf(f, "    for (ptrdiff_t i = st_lo0; i < st_hi0; ++i) st_ga%d[i] = 0;\n", a);
        }
    print_roll_coefs(f, (Roll *)R, in);
    for (int u = 0; u < R->nuse; ++u) {
        const Node *tu = in->P->dtaps[R->use[u].tap];
        int first = 1;
        for (int v = 0; v < u && first; ++v) first = !same_yz(R, in, v, u);
        if (!first) continue;
        fprintf(f, "    {\n");
        print_preimage_loops(f, tu, D, 1, 3, "        ");
        fprintf(f, " {\n"
                   "                const stn_real *stn_restrict st_we = %s_bget_[[]]stn_sfx[[]](st_p1, st_p2", in->fn);
        print_roll_inputs(f, in, IN_ARGS);
        fprintf(f, ", st_bb, st_bt, st_rw, st_mode, st_dlo0, st_dhi0);\n");
        print_bgather_terms(f, R, in, u);
        fprintf(f, "        }\n    }\n");
    }
    fprintf(f, "    #pragma omp simd\n    for (ptrdiff_t i = st_lo0; i < st_hi0; ++i) {\n        ");
    point_index(f, in->P->es, in->P->s->arr[in->P->first_read].name, "st_q");
    fprintf(f, "\n");
    for (int a = 0; a < N; ++a)
        if (in->P->diff[a]) fprintf(f, "        { const stn_real st_gv = st_ga%d[i]; stn_gstore(%s, st_q) }\n", a, in->P->E.names[N + a]);
    fprintf(f, "    }\n}\n]])\n");
}

/* The border row (BORDER_ROW of stn_job) of a rolling gradient: its value
 * as the plain border rows compute it (mapped value at the x ends, vector
 * strips between), its gradient by the cached gather; NULL when the cache's
 * rows cannot be printed (an offset too large to hoist).  The cache and its
 * tags follow the ring and its bookkeeping in the per-thread buffers:
 * RING (the ring's rows, an expression) and TAG0 (the first tag). */
static char *roll_border(FILE *help, const Roll *R, const RollIn *in, const char *ring, int tag0)
{
    const int D = in->P->s->dims, N = in->P->N;
    const BCache c = bcache_of(R, in);
    if (!bcache_helper(help, R, in, &c)) return NULL;
    bgather_helper(help, R, in, &c);
    Str b;
    str_open(&b);
    FILE *f = b.f;
    fprintf(f, "{\n");
    print_xsplit_bounds(f);
    if (in->want_v) { /* the x ends point by point, the strips between */
        print_xsplit_open(f, in->vpoint);
        print_border_value(f, in->P->s, in->P->es, &in->P->E, &in->P->rv);
        print_xsplit_close(f, in->vpoint);
    }
    fprintf(f, "            %s_border_[[]]stn_sfx[[]](j, %s", in->fn, D == 3 ? "k" : "0");
    print_roll_inputs(f, in, IN_ARGS);
    fprintf(f, ", %s + (size_t)(%s) * (size_t)st_rw, st_rs + %d, st_rw, st_mode", ring_base(R), ring, tag0);
    for (int d = 0; d < D; ++d) fprintf(f, ", st_dlo%d, st_dhi%d", d, d);
    fprintf(f, ", st_lo0, st_hi0, st_xa, st_xb, alpha, beta");
    for (int a = 0; a < N; ++a)
        if (in->P->diff[a]) fprintf(f, ", %s", in->P->E.names[N + a]);
    fprintf(f, ");\n        }\n");
    return str_close(&b);
}

/* 3D: the rows that roll, in y and z: those whose transposed sum has no
 * mapped tap (Neumann maps only onto the faces, periodic onto the omax
 * rows after the low face and the -omin before the high one) and whose R
 * rows exist, [max(omax, omin < 0), n - max(-omin, omax > 0)); wider than
 * the gather's interior when the taps reach both ways (the Laplacian,
 * central differences: rows and planes 1 and n-2).  R rows at the faces
 * then come from the mapped row functions (roll_mapped_helper); perf/NOTES.md
 * section 33 item 5. */
static void roll_extend(const RollIn *in, Roll *R)
{
    const RedPlan *P = in->P;
    R->wide = 0;
    for (int d = 1; d < 3; ++d) {
        const long omin = P->omin[d], omax = P->omax[d], w = omax - omin;
        R->rlo[d] = omax > (omin < 0) ? omax : (omin < 0);
        R->rhi[d] = -omin > (omax > 0) ? -omin : (omax > 0);
        /* and never rows whose own taps leave the grid: their values (the
         * gather's, in plane order, or a row's own) read the taps directly
         * (a reach of 2 below the point gave rlo 1: row 1 read row -1) */
        if (R->rlo[d] < -omin) R->rlo[d] = -omin;
        if (R->rhi[d] < omax) R->rhi[d] = omax;
        if (R->rlo[d] < (w > -omin ? w : -omin) || R->rhi[d] < (w > omax ? w : omax)) R->wide = 1;
    }
    R->ext = R->wide;
}

/* The rule by which a 3D gradient's border rows run the interior path in
 * Neumann mode (the reduction's border_rules, rules.c), or RULE_NONE, and
 * (R->valid) whether they do in valid mode: the rows at the faces (y or z)
 * then roll like the rest, their R rows past a face (valid mode: outside
 * the domain) zeros (the mapped functions' st_zero: R->ext on) or,
 * RULE_CLAMP, read at the face (print_roll_rows), instead of the border
 * function's preimage sums over its cache (roll_border; perf/NOTES.md
 * section 57).  Valid mode needs no rule: its adjoint is the gather over
 * the domain's R points, every other R point a zero.  Not valid mode with
 * RULE_CLAMP (its clamped rows could name an R point of the domain).
 * Gradients, and the value_grads whose rows take their values from the
 * ring's factors at the row itself (vfrom: the Laplacian's; the mapped
 * functions compute those too) or from the newest row's function when that
 * row is the row itself (VG: TV's; a mapped newest row's values are then
 * summed apart, print_roll_newest_strip); not those with a value slot,
 * which the mapped functions leave out.  Not
 * RULE_CLAMP with a slot read in the newest plane alone (lag 0) when that
 * plane is ahead of the row (minz < 0): its ring holds that plane only, so
 * the plane a clamp names at the top face is not in it. */
static int roll_rule(const RollIn *in, Roll *R, int vg)
{
    int rule = in->P->rule;
    if ((in->want_v && !vg && !(R->vfrom && R->vslot < 0 && !R->vdiag)) || in->P->D != 3) return RULE_NONE;
    for (int k = 0; k < R->nslot && rule == RULE_CLAMP && R->minz < 0; ++k)
        if (R->slot[k].lag == 0) rule = RULE_NONE;
    R->valid = rule != RULE_CLAMP;
    if (rule || R->valid) R->ext = 1;
    return rule;
}

/* whether the newest R row (j - miny, k - minz) is row (j, k) itself (forward taps: TV's), which its own gather reads */
static int roll_own_newest(const Roll *R) { return R->miny == 0 && R->minz == 0; }

/* Whether an interior row runs whole in Neumann mode (print_roll_whole):
 * the border rule holds at the x faces too (RULE_XBIT) and the rows roll
 * by it; gradients, and value_grads whose values come from the ring's
 * factors at the point (vfrom: the Laplacian's; the ring rows hold them
 * over the whole row, and the strips' value loops then span it: elsewhere
 * a value at the x ends and a value slot are the ends' own), without point
 * fields or strip slots (their rows
 * use the padding or come in strips), and with the points past the ends
 * inside the padding.  In row order not where the newest row is the row's
 * own (forward differences: TV's family, Huber): its gather reads that
 * row's ends, which must then come before its strips; their x reads at the
 * row's far end waited for memory there, and whole rows took 0.89-0.95x
 * the time of the rows with ends at 128^3 but 1.00-1.06x at 256^3-512^3
 * (TV 1.00, weighted TV 1.04-1.06; after the strips, the gather's vector
 * loads waited for the ends' stores instead: 1.01-1.05x at 256^3).  The
 * Laplacian's newest row is read by later rows' gathers only (0.85-0.88x
 * at 128^3, 0.94-1.00x at 256^3-512^3).  perf/NOTES.md section 59. */
static int roll_xrule(const RollIn *in, const Roll *R)
{
    return R->rule && in->P->xrule && R->ext && (!in->want_v || R->vfrom) && R->F.n == 0 && !R->nstrip && !R->vdiag &&
           R->maxx >= 0 && R->minx <= 0 && R->maxx - R->minx <= 8 && (R->plane || !roll_own_newest(R));
}

/* Point fields of the rolling rows (fields.c): a costly function of one tap
 * that the newest row's function reads at several offsets (Good's
 * sqrt(x + eps) and its reciprocal, at the point and its +x, +y and +z
 * neighbours) is evaluated once a point into ring rows of its own, which
 * the function then reads.  Each field keeps, per z offset, a ring of its
 * y offsets' rows, a row's place its grid row modulo their count; each
 * row's tag (stenc_ftag_*, runtime/stenc_inline.h) says which grid row and
 * x range it holds, so a row function fills only the rows the function
 * before did not (the newest y offset, when rows follow each other), and
 * the calls' order (catchup, strips, planes, chunks) needs no bookkeeping
 * of its own.  The lagged planes' and the ends' functions evaluate as
 * written. */
static void roll_fields(const RollIn *in, Roll *R, int vg)
{
    Node *roots[MAXTAP + 1];
    int n = 0;
    for (int k = 0; k < R->nslot; ++k) roots[n++] = R->slot[k].f;
    if (vg || R->vdiag) roots[n++] = in->P->rv.f;
    if (fields_plan_roots(in->P->s, roots, n, in->P->es->narr, &R->F) <= 0) {
        R->F.n = R->F.nrow = 0;
        return;
    }
    R->fbase0 = R->size0, R->fbase1 = R->size1;
    R->size0 += R->F.nrow;
}

/* Plan: whether an interior row rolls its partial rows (R, the ring's plan;
 * *vg: the value rides with the newest row), or uses the direct gather */
static int roll_plan(const RollIn *in, Roll *R, int *vg)
{
    const Stencil *s = in->P->s;
    const int D = s->dims, ndt = in->P->ndt;
    int any = 0;
    if (D < 2 || ndt < 2) return 0;
    for (int t = 0; t < ndt; ++t) any |= ex_costly(in->P->part[t]);
    plan_box(s, ndt, in->P->dtaps, R);
    /* the value rides along with the newest row when that row is the point's
     * own (forward taps): the v row function returns the strip's sum; else it
     * has a slot of the ring when it can */
    *vg = in->want_v && R->minz == 0 && R->miny == 0 && R->minx <= 0 && R->maxx >= 0;
    /* 3D: the newest plane's rows a tile's plane at a time (at the plane's
     * first interior row, every row its interior rows will need, then the
     * gathers) rather than each row's newest row strip by strip just before
     * its gather, unless that row's strips return values (vg).  The
     * slots read in the newest plane alone (lag 0) then keep that plane's
     * rows, not a few rows rolling along y (plan_roll).  perf/NOTES.md
     * section 32: the planes are read and written in long runs; row order
     * is the other form roll_body prints, section 41. */
    R->plane = D == 3 && !*vg && in->planes;
    plan_roll(s, in->P->rv.f, ndt, in->P->dtaps, in->P->part, in->want_v && !*vg ? in->P->rv.f : NULL, R);
    roll_fields(in, R, *vg);
    /* rows 1 and n - 2 roll too (roll_extend): in plane order; in row order
     * where no newest row's function counts values (gradients, and value_grads
     * whose values come from the ring's factors at the row itself: the
     * Laplacian's), their rows at the faces from the mapped functions
     * (print_roll_newest_strip); perf/NOTES.md section 48 */
    if (D == 3 && (R->plane || (!*vg && !R->vdiag))) roll_extend(in, R);
    R->rule = roll_rule(in, R, *vg);
    const int vs = R->vslot >= 0;
    /* cheap partials roll when they share few factors (the Laplacian: one),
     * and in 2D not when a value must then be computed apart (the gather
     * form shares it with the partials: measured); in 3D the gather form
     * costs seven Laplacians a point, so there a value without a slot comes
     * apart */
    return any || ((ndt >= 5 && 2 * (R->nslot - vs) <= ndt) && !(in->want_v && !*vg && !vs && D == 2));
}

/* whether the plan carries a row's value whole: its sum, added by the row
 * functions, in the value slot's ring row */
static int roll_row_sums(const Roll *R, const RollIn *in)
{
    return R->vslot >= 0 && roll_sums_value(R, in, 0, 0, 0);
}
/* row (j, k)'s value when the plan carries it whole (roll_row_sums) */
static void print_roll_row_sum(FILE *f, const Roll *R, const char *K)
{
    fprintf(f, "            st_acc += stenc_vrow_get(");
    print_ring_row(f, R, R->vslot, "j", K);
    fprintf(f, " + st_n0);\n");
}

/* after a strip's gather: the value of row (j, k)'s strip, by how the plan
 * carries it (and the strip loop's end) */
static void print_roll_strip_value(FILE *f, const Roll *R, const RollIn *in, int gv, const char *K)
{
    const int vs = R->vslot >= 0, vf = R->vfrom;
    if (roll_row_sums(R, in)) {
        fprintf(f, "            }\n");
        print_roll_row_sum(f, R, K);
    } else if (vf) { /* the strip's values from their factors in its own ring rows, summed as computed */
        fprintf(f, "            {\n");
        for (int k = 0; k < R->nslot; ++k) {
            if (!R->vuse[k]) continue;
            fprintf(f, "            const stn_real *stn_restrict st_s%d = ", k);
            print_ring_row(f, R, k, "j", K);
            fprintf(f, " + st_i0;\n");
        }
        fprintf(f, "            stn_vsum(st_ie - st_i0, , [[");
        print_value_from_slots(f, R, in, "const stn_real st_v = %s; stn_vacc", "            ", 1);
        fprintf(f, "]])\n            }\n            }\n");
    } else if (vs) {
        fprintf(f, "            {\n            const stn_real *stn_restrict st_vb = ");
        print_ring_row(f, R, R->vslot, "j", K);
        fprintf(f, ";\n            stn_vsum(st_ie - st_i0, st_i0)\n            }\n            }\n");
    } else fprintf(f, "%s            }\n", in->want_v && !gv ? "            stn_vsum(st_ie - st_i0)\n" : "");
}

/* R->vdiag: row (j, k)'s own values when no interior row before it counted
 * them as its newest row.  A plain row function counts its newest row's
 * values; the mapped one (an R row whose reads leave the grid along y or z,
 * print_mapped_dispatch, with R->ext) does not.  So a row counts its own
 * values when its reads leave the grid (each point of the value's domain
 * by the mapped value helper: the rolling rows reach one row or plane past
 * the value's interior however far its taps reach, roll_extend), or when
 * the row below it by the newest row's offset does not roll
 * (print_roll_row: the first interior rows of a plane and the first
 * interior plane, 1/n of the rows per axis; the x-interior directly, the
 * ends by the mapped helper) */
static void print_roll_own_value(FILE *f, const Roll *R, const RollIn *in)
{
    static const char *vars[3] = {"(st_xo + i)", "j", "k"};
    const PrintCtx pc = {in->P->es, TAP_DIRECT, in->P->E.names, vars, NULL, 0};
    const char *fm[1] = {"{ const stn_real st_v = %s; stn_vacc }"};
    const long *omin = in->P->omin, *omax = in->P->omax;
    Node *root = in->P->rv.f;
    fprintf(f, "            if (!(j >= %ld && j < st_n1 - %ld && k >= %ld && k < st_n2 - %ld)) {\n"
               "            if (j >= st_dlo1 && j < st_dhi1 && k >= st_dlo2 && k < st_dhi2)\n"
               "            for (ptrdiff_t i = st_dlo0; i < st_dhi0; ++i)\n                st_acc += (double)%s;\n"
               "            } else if (j%+ld < st_rlo1 || k%+ld < st_rlo2) {\n",
            -omin[1], omax[1], -omin[2], omax[2], in->mval, R->miny, R->minz);
    fprintf(f, "            for (int st_h = 0; st_h < 2; ++st_h)\n"
               "            for (ptrdiff_t i = st_h ? stenc_imax(st_ib, st_dlo0) : st_dlo0; i < (st_h ? st_dhi0 : stenc_imin(st_ia, st_dhi0)); ++i)\n"
               "                st_acc += (double)%s;\n", in->mval);
    fprintf(f, "            const ptrdiff_t st_xo = st_ia, st_xn = st_ib - st_ia;\n            stn_vsum(st_xn, , [[{\n");
    pr_c_block(f, &pc, &root, 1, fm, "            ");
    fprintf(f, "            }]])\n            }\n");
}

/* ---- whole rows (R->xrule, roll_xrule; with STENC_WHOLE_ROWS 1) ----
 * Where the gradient's border rule holds at the x faces too (RULE_XBIT,
 * rules.c), an interior row in Neumann mode may gather its whole x range
 * [0, st_n0) as its interior, instead of [st_ia, st_ib) and its x ends
 * from the ring point by point (print_roll_ends): the ring rows hold their
 * R points' partials over the whole row (the ends functions compute the
 * points outside [st_ia - maxx, st_ib - minx) as before) and, past the
 * row's ends, the rule's (print_ring_pads).  The strips and the R points
 * they compute stay where the interior's were, the first strip reaching
 * down to 0 and the last up to st_n0.  The rows' x ends then cost a row
 * nothing apart.  With STENC_WHOLE_ROWS (runtime/stenc_inline.h), which
 * the build sets in plane order only: in row order the Laplacian's 3D
 * gradient took 0.85-0.89 of its time at 128^3 with them, but 1.05-1.09x
 * at 256^3-512^3 in the full benchmark's process (0.92-0.99 alone in
 * perf/ab.sh's; perf/NOTES.md section 59); in plane order 0.91-0.96 at
 * 128^3-512^3, its value_grad's too (section 63). */
static const char *strip_lo(const Roll *R) { return R->xrule ? "st_ga" : "st_ia"; }
static void print_roll_whole(FILE *f)
{
    fprintf(f, "            const int st_xw = STENC_WHOLE_ROWS && st_mode == STENC_NEUMANN && st_lo0 == 0 && st_hi0 == st_n0; /* whole rows (gen/emit.c roll_xrule) */\n"
               "            const ptrdiff_t st_ga = st_xw ? 0 : st_ia, st_gb = st_xw ? st_n0 : st_ib;\n");
}

/* The points past a ring row's x ends that a whole row's gather reads,
 * [-maxx, 0) and [st_n0, st_n0 - minx), as the rule says: RULE_CLAMP, the
 * end points' own, by each function that computes a row (ends and mapped
 * functions), in Neumann mode (MODE), for each slot row st_w<k> of lag LAG
 * or more; RULE_ZERO, zeros, once for every row of the thread's ring as its
 * run of chunks starts (print_ring_zero_pads: a zero stored with every row
 * made its first vector's load wait for the store, TV's 3D gradient 1.02x
 * the time at 256^3, perf/NOTES.md section 59).  Each row's are in the
 * padding of the ring (STENC_ROW_PAD; the first row's in the thread's
 * lead, ring_base). */
static void print_ring_pads(FILE *f, const Roll *R, int lag, const char *mode, const char *ind)
{
    if (!R->xrule || R->rule != RULE_CLAMP) return;
    fprintf(f, "%sif (STENC_WHOLE_ROWS && %s == STENC_NEUMANN) { /* the x rule's points past the row (gen/emit.c print_ring_pads) */\n", ind, mode);
    for (int k = 0; k < R->nslot; ++k) {
        if (R->slot[k].lag < lag) continue;
        for (long e = 1; e <= R->maxx; ++e) fprintf(f, "%s    st_w%d[-%ld] = st_w%d[0];\n", ind, k, e, k);
        for (long e = 0; e < -R->minx; ++e) fprintf(f, "%s    st_w%d[st_n0 + %ld] = st_w%d[st_n0 - 1];\n", ind, k, e, k);
    }
    fprintf(f, "%s}\n", ind);
}

/* row order: the newest row's strip [st_i0, st_ie) of slots (VG: and its
 * values; R->vdiag entries are in plane order, so nothing is counted here).
 * With R->ext (row order: where no newest row's function counts values,
 * roll_plan) a newest row at the faces comes whole from the mapped
 * function, at the row's first strip */
static void print_roll_newest_strip(FILE *f, const Roll *R, const RollIn *in, int vg, const char *K)
{
    char xa[64], xb[64];
    char first[48];
    fprintf(f, "            {\n                const ptrdiff_t st_kq = %s%+ld, st_jq = j%+ld;\n", K, -R->minz, -R->miny);
    if (R->xrule) { /* whole rows: the strips' R points within the interior's (st_iq, print_strip_loop), the ends apart */
        snprintf(xa, sizeof xa, "st_iq%+ld", -R->maxx);
        snprintf(xb, sizeof xb, "stenc_imin(st_ie, st_ib)%+ld", -R->minx);
    } else {
        snprintf(xa, sizeof xa, "st_i0%+ld", -R->maxx);
        snprintf(xb, sizeof xb, "st_ie%+ld", -R->minx);
    }
    snprintf(first, sizeof first, "st_i0 == %s", strip_lo(R));
    if (R->ext) {
        print_mapped_cond(f, in, "                ", 0);
        fprintf(f, " {\n                if (%s)\n", first);
        print_mapped_call(f, in, 0, "                    ");
        if (vg) { /* the strip's values, which the row function returns for a plain row (roll_rule) */
            print_border_strips_open(f, "st_i0", "st_ie", "                ");
            print_border_value(f, in->P->s, in->P->es, &in->P->E, &in->P->rv);
            fprintf(f, "                }\n");
        }
        fprintf(f, "                } else%s\n", vg && roll_ends_count(R, in) ? " {" : "");
    }
    roll_call_so(f, R, in, 0, vg, 0, xa, xb, first, NULL, R->ext ? "                    " : "                ", "st_so");
    if (vg && roll_ends_count(R, in)) /* its first strip counted the points before it (print_ends_uncounted) */
        fprintf(f, "                    st_ev = 1;\n%s", R->ext ? "                }\n" : "");
    fprintf(f, "            }\n");
}

/* row order: the newest row's x ends (only the row's ends gather reads
 * them; a mapped row has them, print_roll_newest_strip) */
static void print_roll_newest_ends(FILE *f, const Roll *R, const RollIn *in, const char *K)
{
    char xa[64], xb[64];
    fprintf(f, "            {\n                const ptrdiff_t st_kq = %s%+ld, st_jq = j%+ld;\n", K, -R->minz, -R->miny);
    snprintf(xa, sizeof xa, "st_ia%+ld", -R->maxx);
    snprintf(xb, sizeof xb, "st_ib%+ld", -R->minx);
    const int ec = roll_ends_count(R, in);
    if (R->ext) {
        print_mapped_cond(f, in, "                ", 1);
        fprintf(f, "%s\n", ec ? " {" : "");
    }
    roll_call(f, R, in, 0, 0, 1, xa, xb, NULL, ec ? "st_dl" : NULL, R->ext ? "                    " : "                ");
    if (ec) fprintf(f, "                    st_ec = 1;\n%s", R->ext ? "                }\n" : "");
    fprintf(f, "            }\n");
}

/* 3D plane order where the gather computes no values (they come from the
 * ring or the catchup): the gather takes a run's rows in one call; each
 * row's values, ends and own value follow, row by row, in the order they
 * had (one call a row cost 4-9% of the Laplacian gradient's time at
 * 128^3, 1-3% at 256^3: perf/NOTES.md section 34) */
static int roll_gather_run(const Roll *R, const RollIn *in, int gv)
{
    return R->plane && !(in->want_v && !gv); /* R->plane: 3D only (roll_plan) */
}

/* The strips [st_i0, st_ie) of an interior row: STENC_RSTRIP_f32/_f64
 * points (R below), the last one up to R + STENC_VSTRIP.  A row's value summed by its
 * strips' row functions (roll_sums_value) then comes in the pieces and
 * vectors of the same row summed in one call (the catchup): a last strip
 * shorter than a vector summed its points in another order, and the
 * value's last bits changed with the thread count. */
static void print_strip_loop(FILE *f, const Roll *R)
{
    if (R->xrule) { /* whole rows: the interior's strips, the first from st_ga and the last to st_gb (their
                       R points where the interior's are: a strip's at another offset in its ring row took
                       TV's 3D gradient to 1.01-1.02x the time, perf/NOTES.md section 59) */
        fprintf(f, "            for (ptrdiff_t st_i0 = st_ga, st_ie; st_i0 < st_gb; st_i0 = st_ie) {\n"
                   "            const ptrdiff_t st_iq = stenc_imax(st_i0, st_ia);\n"
                   "            st_ie = st_ib - st_iq < STENC_RSTRIP_[[]]stn_sfx + STENC_VSTRIP ? st_gb : st_iq + "
                   "STENC_RSTRIP_[[]]stn_sfx;\n");
        return;
    }
    fprintf(f, "            for (ptrdiff_t st_i0 = st_ia, st_ie; st_i0 < st_ib; st_i0 = st_ie) {\n"
               "            st_ie = st_ib - st_i0 < STENC_RSTRIP_[[]]stn_sfx + STENC_VSTRIP ? st_ib : st_i0 + "
               "STENC_RSTRIP_[[]]stn_sfx;\n");
}

/* the strips of row j, each: the newest row's slots in row order, the
 * gather, the strip's value (print_roll_strip_value closes the strip
 * loop); RUN: the gather of the run's rows alone */
static void print_roll_strips(FILE *f, const Roll *R, const RollIn *in, int vg, int gv, int run)
{
    const char *K = in->P->s->dims == 3 ? "k" : "0";
    print_strip_loop(f, R);
    if (R->nstrip) /* the middle strips' strip slots in their strip rows (strip_slots) */
        fprintf(f, "            const ptrdiff_t st_so = st_i0 > st_ia && st_ie < st_ib ? st_i0%+ld : -1;\n", -R->maxx);
    if (!R->plane) print_roll_newest_strip(f, R, in, vg, K);
    if (in->want_v && !gv) fprintf(f, "            stn_real st_vb[STENC_RSTRIP_[[]]stn_sfx + STENC_VSTRIP];\n");
    roll_gather_call(f, R, in, gv, run);
    if (run) fprintf(f, "            }\n");
    else print_roll_strip_value(f, R, in, gv, K);
}

/* after a run's gather (roll_gather_run), row j's value from the ring */
static void print_roll_run_value(FILE *f, const Roll *R, const RollIn *in, int gv)
{
    if (roll_row_sums(R, in)) print_roll_row_sum(f, R, "k");
    else if (R->vfrom || R->vslot >= 0) {
        print_strip_loop(f, R);
        print_roll_strip_value(f, R, in, gv, "k");
    }
}

/* the interior row's code: the ring rows it lacks, its strips (the newest
 * row's slots, the gather, the value), the newest row's x ends, the row's
 * ends; in plane order (R->plane) the catchup has computed the newest row
 * whole.  R->vdiag (always in plane order: its value is no vg): the newest
 * row (j - miny, k - minz) is computed whole once, by the catchup, which
 * counts its values (print_plane_counts): every interior row is counted
 * once, by the interior row whose newest row it is, or by itself when that
 * row is not interior (print_roll_own_value).  3D: a run of st_nr rows (the rest of
 * the tile's plane in the chunk's interior) shares one catchup, then each
 * runs its strips and ends (or, roll_gather_run, one gather call takes the
 * run's strips, then each row its ends); the chunk's loop then skips them
 * (perf/NOTES.md section 33: the per-row checks cost 1-10% of the time). */
static void print_roll_row(FILE *f, Roll *R, const RollIn *in, int vg, int gv)
{
    const int D = in->P->s->dims, plane = R->plane;
    const char *K = D == 3 ? "k" : "0";
    fprintf(f, "{\n            stn_real *const st_rb = %s;\n", ring_base(R));
    if (roll_ends_count(R, in)) /* the catchup's ENDS calls count into st_dz */
        fprintf(f, "            double st_dz[1] = {0}; (void)st_dz;\n");
    /* a lagged slot's rows of a plane: from the tile's first row's lowest R row on */
    if (D == 3) fprintf(f, "            const ptrdiff_t st_jt = st_lo1 + st_t * st_ty%+ld;\n", -R->maxy);
    else fprintf(f, "            const ptrdiff_t st_jt = 0;\n");
    print_roll_coefs(f, R, in);
    if (D == 3) fprintf(f, "            const ptrdiff_t st_nr = stenc_imin(stenc_imin(st_th - st_jj, st_r1 - st_r), st_rhi1 - j);\n");
    print_roll_catchup(f, R, in);
    if (R->xrule) print_roll_whole(f);
    const int run = roll_gather_run(R, in, gv);
    if (run) print_roll_strips(f, R, in, vg, gv, 1);
    if (D == 3) fprintf(f, "            for (ptrdiff_t st_jr = 0; st_jr < st_nr; ++st_jr) {\n"
                          "            const ptrdiff_t st_jl = j + st_jr;\n            {\n            const ptrdiff_t j = st_jl;\n");
    if (roll_ends_count(R, in)) /* each row's: a run's rows may be plain or mapped (print_ends_uncounted) */
        fprintf(f, "            int st_ec = 0, st_ev = 0;\n");
    if (run) print_roll_run_value(f, R, in, gv);
    else print_roll_strips(f, R, in, vg, gv, 0);
    /* whole rows (R->xrule) in row order: the newest row is not the row's
     * own (roll_xrule), later rows' gathers read its ends */
    if (!plane) print_roll_newest_ends(f, R, in, K);
    if (R->xrule) fprintf(f, "            if (!st_xw) {\n");
    print_roll_ends(f, R, in);
    if (R->xrule) fprintf(f, "            }\n");
    if (R->vdiag) print_roll_own_value(f, R, in);
    if (D == 3) fprintf(f, "            }\n            }\n            st_r += st_nr - 1, st_jj += st_nr - 1;\n");
    fprintf(f, "        }\n");
}

/* One form of the rolling rows (roll_body) into *t (zeroed by the caller;
 * t->body NULL: the direct gather is used, the partials are cheap).
 * Returns whether it runs in plane order and has a row-order form (not
 * R->vdiag: the newest row's functions count values in plane order only;
 * not a ring of ROLL_PLANE_SLOTS partial rows a point or more). */
/* Rings this wide run in plane order in every build: the 3D Hessian's six
 * partial rows took 0.85-0.90 of row order's time on a Zen 4 core with
 * 1 MiB of L2 (the build's default there; 0.97-1.02 of the hand loop's
 * time against 1.11-1.15), whatever the tiles' budget (1-4 MiB), and the
 * same time in either order on a Xeon with 2 MiB (perf/NOTES.md sections
 * 41 and 51). */
enum { ROLL_PLANE_SLOTS = 6 };
static int roll_form(const RollIn *in, FILE *help, RollText *t)
{
    const int D = in->P->s->dims;
    Roll R;
    int vg;
    if (!roll_plan(in, &R, &vg)) return 0;
    R.xrule = roll_xrule(in, &R);
    char *sm = NULL;
    if (R.ext) { /* the faces' rows by mapped reads: every lag's function, or no extension */
        Str m;
        str_open(&m);
        for (int L = 0; L < R.nplane && R.ext; ++L) R.ext = roll_mapped_helper(m.f, &R, in, L);
        sm = str_close(&m);
        if (!R.ext) R.wide = R.valid = R.xrule = 0, R.rule = RULE_NONE;
    }
    for (int L = 0; L < R.nplane; ++L) {
        roll_helper(help, &R, in, L, 0, 1); /* ahead of the row function that calls it (roll_merged_ends) */
        roll_helper(help, &R, in, L, 0, 0);
    }
    if (vg) roll_helper(help, &R, in, 0, 1, 0);
    if (R.ext) fprintf(help, "%s", sm);
    free(sm);
    const int gv = vg || R.vslot >= 0 || R.vfrom || R.vdiag; /* the gather computes no values: they come from elsewhere */
    roll_gather_helper(help, &R, in, gv, roll_gather_run(&R, in, gv));
    Str a, b, c, rs;
    str_open(&a); str_open(&b); str_open(&c);
    /* whole cache lines per thread: the threads write their bookkeeping every
     * row, and two threads' entries on one line cost a quarter of the time */
    str_open(&rs);
    print_ring_size(rs.f, &R, D);
    char *ring = str_close(&rs);
    const int tag0 = 1 + 4 * R.nplane;
    t->border = roll_border(help, &R, in, ring, tag0);
    const BCache bc = bcache_of(&R, in);
    t->state = (tag0 + (t->border ? bc.cy * bc.cz : 0) + 7) / 8 * 8;
    print_roll_state(a.f, &R, D, t->state);
    if (t->border) fprintf(b.f, "%s + %d", ring, bc.cy * bc.cz * bc.ns + bc.nd);
    else fprintf(b.f, "%s", ring);
    free(ring);
    print_roll_row(c.f, &R, in, vg, gv);
    t->init = str_close(&a);
    t->size = str_close(&b);
    t->body = str_close(&c);
    return R.plane && !R.vdiag && R.nslot < ROLL_PLANE_SLOTS;
}

/* PRE A "#else" B POST under "#if STENC_ROLL_PLANES" (A: plane order),
 * LEAD before A and B */
static char *roll_either(const char *a, const char *b, const char *pre, const char *lead, const char *post)
{
    Str e;
    str_open(&e);
    fprintf(e.f, "%s#if STENC_ROLL_PLANES\n%s%s#else\n%s%s#endif\n%s", pre, lead, a, lead, b, post);
    return str_close(&e);
}

static void roll_text_free(RollText *t)
{
    free(t->body); free(t->init); free(t->size); free(t->border);
}

/* The interior of an interior row with rolling partial rows into t->body,
 * or NULL (the direct gather is used) when the partials are cheap: t->init gets the
 * per-chunk state, t->size the per-thread ring size in rows, t->state the
 * per-thread bookkeeping size, t->border the border rows (NULL: GENERIC's);
 * the row functions go to help.  A 3D entry that runs in plane order is
 * printed in row order too, the two chosen by STENC_ROLL_PLANES when the
 * library is compiled (runtime/stenc_inline.h): which is faster depends on
 * the machine's caches (perf/NOTES.md section 41). */
static void roll_body(const RollIn *in, FILE *help, RollText *t, const char *generic)
{
    RollIn rows = *in;
    RollText p = {0}, r = {0};
    Str hp, hr;
    str_open(&hp);
    const int other = roll_form(in, hp.f, &p);
    char *sp = str_close(&hp);
    rows.planes = 0;
    str_open(&hr);
    if (other) (void)roll_form(&rows, hr.f, &r);
    char *sr = str_close(&hr);
    /* both or neither have border rows of their own, unless GENERIC can
     * stand in (an empty GENERIC: the border rows go point by point) */
    const int two = other && r.body && (generic[0] || !p.border == !r.border);
    if (!two) {
        fprintf(help, "%s", sp);
        roll_text_free(&r);
        free(sp); free(sr);
        *t = p;
        return;
    }
    fprintf(help, "stn_c_only([[#if STENC_ROLL_PLANES\n]])%sstn_c_only([[#else\n]])%sstn_c_only([[#endif\n]])", sp, sr);
    free(sp); free(sr);
    t->body = roll_either(p.body, r.body, "{\n", "", "        }\n");
    t->init = roll_either(p.init, r.init, "\n", "        ", ""); /* its first line comes unindented */
    Str z;
    str_open(&z);
    fprintf(z.f, "(STENC_ROLL_PLANES ? (%s) : (%s))", p.size, r.size);
    t->size = str_close(&z);
    t->state = p.state > r.state ? p.state : r.state;
    t->border = p.border || r.border ? roll_either(p.border ? p.border : generic, r.border ? r.border : generic, "{\n", "",
                                                     "        }\n") : NULL;
    roll_text_free(&p);
    roll_text_free(&r);
}

static int emit_reduce_entries(FILE *out, FILE *dump, const Stencil *s, const Reduce *r, char **helpers);

static int emit_reduce(FILE *out, FILE *dump, const Stencil *s, const Reduce *r)
{
    Str ent;
    str_open(&ent);
    char *helpers = NULL;
    int rc = emit_reduce_entries(ent.f, dump, s, r, &helpers);
    char *se = str_close(&ent);
    if (!rc) {
        fprintf(out, "stn_helpers(%d, ", s->dims);
        print_quoted(out, helpers);
        fprintf(out, ")\n\n%s", se);
    }
    free(se);
    free(helpers);
    return rc;
}

/* The value of a border row's x-interior strip [st_i0, st_i0 + st_len):
 * mapped y/z reads (hoisted out of the x loop when possible), direct x */
static void print_border_value(FILE *f, const Stencil *s, const Stencil *es, const Ext *E, const Reduce *r)
{
    static const char *vars_q[3] = {"i", "j", "k"};
    PrintCtx pq = {es, TAP_MAPPED_YZ, E->names, vars_q, NULL, 0};
    Node *root = r->f;
    Str h; /* the value's mapped y/z rows, hoisted out of its x loop when possible */
    str_open(&h);
    const int hq = pr_hoisted_yz(h.f, s, &root, 1, vars_q, "                    ");
    char *sh = str_close(&h);
    if (hq) { fprintf(f, "                {\n%s", sh); pq.tapmode = TAP_HOISTED_YZ; }
    free(sh);
    fprintf(f, "                if (j >= st_dlo1 && j < st_dhi1%s) {\n"
               "                    stn_real st_vb[%d];\n"
               "                    #pragma omp simd\n"
               "                    for (ptrdiff_t st_ii = 0; st_ii < st_len; ++st_ii) {\n"
               "                        const ptrdiff_t i = st_i0 + st_ii, st_vi = st_ii;\n",
            s->dims == 3 ? " && k >= st_dlo2 && k < st_dhi2" : "", BORDER_STRIP);
    const char *fm[1] = {"{ const stn_real st_v = %s; stn_vacc }"};
    pr_c_block(f, &pq, &root, 1, fm, "                        ");
    fprintf(f, "                    }\n                    stn_vsum(st_len)\n                }\n");
    if (hq) fprintf(f, "                }\n");
}

/* Border rows (rows whose y/z position is within the footprint of an edge):
 * their points in the x-interior have single x-preimages and direct x reads,
 * so each tap's contribution is a vectorisable x loop over strips, with the
 * y/z preimage intervals computed once per row and tap and y/z reads mapped.
 * The remaining points (x near an edge) keep the generic border body. */
static char *border_rows(const Stencil *s, const Stencil *es, const Ext *E, const Reduce *r, int N, const int *diff, int ndt,
                         Node **dtaps, Node **part, int want_v, int want_g, int first_read, const char *border,
                         const char *fast)
{
    int D = s->dims;
    static const char *vars_p[3] = {"i", "st_p1", "st_p2"};
    PrintCtx pp = {es, TAP_MAPPED_YZ, E->names, vars_p, NULL, 0};
    Str b;
    str_open(&b);
    fprintf(b.f, "{\n");
    print_xsplit_bounds(b.f);
    /* FAST (border_classes) handles the rows of its edge classes */
    if (fast) fprintf(b.f, "            int st_done = 0;\n%s            if (!st_done) {\n", fast);
    print_xsplit_open(b.f, border);
    if (want_v) print_border_value(b.f, s, es, E, r);
    if (want_g) {
        for (int a = 0; a < N; ++a)
            if (diff[a])
                fprintf(b.f, "                stn_real st_ga%d[%d];\n"
                             "                for (ptrdiff_t st_ii = 0; st_ii < st_len; ++st_ii) st_ga%d[st_ii] = 0;\n", a,
                        BORDER_STRIP, a);
        for (int t = 0; t < ndt; ++t) {
            long off[3] = {-dtaps[t]->idx[0].c, 0, 0};
            Node *pt = ex_shift(part[t], off);
            fprintf(b.f, "                {\n");
            print_preimage_loops(b.f, dtaps[t], D, 1, 3, "                    ");
            fprintf(b.f, " {\n                        (void)st_p2;\n");
            PrintCtx pph = pp;
            if (pr_hoisted_yz(b.f, s, &pt, 1, vars_p, "                        ")) pph.tapmode = TAP_HOISTED_YZ;
            fprintf(b.f, "                        #pragma omp simd\n"
                         "                        for (ptrdiff_t st_ii = 0; st_ii < st_len; ++st_ii) {\n"
                         "                            const ptrdiff_t i = st_i0 + st_ii; (void)i;\n");
            char fmb[64];
            snprintf(fmb, sizeof fmb, "st_ga%d[st_ii] += %%s;", dtaps[t]->ref);
            const char *fm[1] = {fmb};
            pr_c_block(b.f, &pph, &pt, 1, fm, "                            ");
            fprintf(b.f, "                        }\n                    }\n                }\n");
        }
        fprintf(b.f, "                #pragma omp simd\n"
                     "                for (ptrdiff_t st_ii = 0; st_ii < st_len; ++st_ii) {\n"
                     "                    const ptrdiff_t i = st_i0 + st_ii;\n                    ");
        point_index(b.f, es, s->arr[first_read].name, "st_q");
        fprintf(b.f, "\n");
        for (int a = 0; a < N; ++a)
            if (diff[a])
                fprintf(b.f, "                    { const stn_real st_gv = st_ga%d[st_ii]; stn_gstore(%s, st_q) }\n", a, E->names[N + a]);
        fprintf(b.f, "                }\n");
    }
    print_xsplit_close(b.f, border);
    if (fast) fprintf(b.f, "            }\n");
    fprintf(b.f, "        }\n");
    /* st_mode is the loop's (run-time) mode: the y/z index maps inside the x
     * loops are loop-invariant, so the x loops vectorise without copies */
    return str_close(&b);
}

/* The format of a call of a per-point helper: "%s" for the point's indices
 * (with the helper's name before them), then the extents, the boundary
 * mode, and the arrays (of the N user arrays) and parameters the reduction
 * reads. */
static char *helper_call_format(const Stencil *s, int N, const int *reads, const int *params)
{
    Str c;
    str_open(&c);
    fprintf(c.f, "%%s");
    for (int d = 0; d < s->dims; ++d) fprintf(c.f, ", st_n%d", d);
    fprintf(c.f, ", st_mode");
    for (int a = 0; a < N; ++a)
        if (reads[a]) fprintf(c.f, ", %s", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p)
        if (params[p]) fprintf(c.f, ", %s", s->param[p]);
    return str_close(&c);
}


/* the call of the mapped value helper at (i, j[, k]) */
static char *mval_call(const RedPlan *P)
{
    char call[400];
    snprintf(call, sizeof call, "stenc_h_%s_%dd_mval_[[]]stn_sfx[[]](i, j%s", P->base, P->D, P->D == 3 ? ", k" : "");
    Str m;
    str_open(&m);
    fprintf(m.f, P->shc, call);
    fprintf(m.f, ")");
    return str_close(&m);
}

/* ---- the x ends of interior rows ----
 * A point i of an interior row (y and z inside) with i < st_ilo0 or
 * i >= st_ihi0 sums each tap's partial over the points p whose tap, mapped
 * along x by the boundary mode, lands on i (the x-preimages; y and z are
 * single points, read directly).  The general code asks stenc_preimage at
 * run time, per point and tap.  In a row of at least end_min points the two
 * ends are apart, and the preimages of the point E from an end are known
 * when the kernel is generated, per mode: a range of points 0 + c or
 * st_n0 + c.  The fast ends print those sums outright, and an end point's
 * value with its x reads clamped or wrapped when the kernel is generated
 * (perf/NOTES.md section 17: the general ends cost a tenth of the Tikhonov
 * gradient's time at 256^3, the mapped value helper 5-15% of a 3D value's). */
typedef struct {
    const RedPlan *P;
    int want_v, want_g;
    const FieldPrint *fp; /* the 3D gather's planes of fields, or NULL */
} EndsIn;

typedef struct { int from_n; long lo, hi; } XPre; /* p = (from_n ? st_n<d> : 0) + c, lo <= c <= hi */

/* The points within reach of the edges along dimension D: EDGE_LO at the
 * low end, EDGE_HI at the high end (print_reduce_box's st_ilo, st_n - st_ihi;
 * a value alone has none in valid mode) */
static long edge_lo(const RedPlan *P, int want_g, int d)
{
    long w = want_g ? P->omax[d] - P->omin[d] : 0;
    return w > -P->omin[d] ? w : -P->omin[d];
}
static long edge_hi(const RedPlan *P, int want_g, int d)
{
    long w = want_g ? P->omax[d] - P->omin[d] : 0;
    return w > P->omax[d] ? w : P->omax[d];
}
/* whether edge point E along D (low: E, high: st_n-1-E) has a value under
 * MODE: every point but in valid mode, where the value's domain is
 * [-omin, st_n - omax) */
static int edge_has_value(const RedPlan *P, int d, int mode, int right, long e)
{
    return mode != 0 || (right ? e >= P->omax[d] : e >= -P->omin[d]);
}
/* extents this long along D have edges whose preimages neither meet nor
 * wrap into each other */
static long edge_min(const RedPlan *P, int want_g, int d)
{
    long e = edge_lo(P, want_g, d) > edge_hi(P, want_g, d) ? edge_lo(P, want_g, d) : edge_hi(P, want_g, d);
    return 2 * (e + P->omax[d] - P->omin[d]) + 2;
}

static XPre xpre(int from_n, long lo, long hi) { XPre p = {from_n, lo, hi}; return p; }
/* the preimage along D of edge point E (low: E, high: st_n-1-E) of a tap
 * at offset O along D under MODE (as stenc_preimage, for extents of edge_min
 * points): valid: p = q - o inside [-omin, st_n - omax); neumann: p + o
 * clamped to q (at the edge point itself every p beyond it); periodic:
 * p = q - o wrapped */
static XPre edge_preimage(const RedPlan *P, int d, int mode, int right, long e, long o)
{
    const long c = right ? -1 - e - o : e - o; /* q - o, from 0 or from st_n */
    const XPre none = xpre(0, 1, 0);
    if (mode == 1) { /* STENC_NEUMANN */
        if (e == 0) return right ? (o >= 0 ? xpre(1, -1 - o, -1) : none) : (o <= 0 ? xpre(0, 0, -o) : none);
        return (right ? c < 0 : c >= 0) ? xpre(right, c, c) : none;
    }
    if (mode == 2) return xpre(c < 0, c, c); /* STENC_PERIODIC: q - o, or wrapped from the other end */
    /* STENC_VALID */
    return (right ? c < -P->omax[d] : c >= -P->omin[d]) ? xpre(right, c, c) : none;
}

/* the fast edges print every preimage point's terms: not when a tap reaches
 * so far along D that its edge point's preimage is long */
enum { END_RANGE_MAX = 8 };
static int edge_fit(const RedPlan *P, int d)
{
    return labs(P->omin[d]) < END_RANGE_MAX && labs(P->omax[d]) < END_RANGE_MAX;
}

/* the same along x, for the rows' ends: st_ilo0 points at the left, st_n0 -
 * st_ihi0 at the right */
static long ends_left(const EndsIn *in) { return edge_lo(in->P, in->want_g, 0); }
static long ends_right(const EndsIn *in) { return edge_hi(in->P, in->want_g, 0); }
static int end_has_value(const EndsIn *in, int mode, int right, long e) { return edge_has_value(in->P, 0, mode, right, e); }
static long end_min(const EndsIn *in) { return edge_min(in->P, in->want_g, 0); }
static XPre end_preimage(const EndsIn *in, int mode, int right, long e, long ox)
{
    return edge_preimage(in->P, 0, mode, right, e, ox);
}
static int fast_ends_fit(const EndsIn *in) { return edge_fit(in->P, 0); }

/* A point's place: along each dimension D inside (SIDE[D] < 0: a tap's
 * preimage is the point shifted back by the tap) or E[D] points in from the
 * low (SIDE 0) or high (SIDE 1) edge (edge_preimage, its reads pinned): an
 * interior row's x end point, a border row of one edge class, or its x end
 * points (border_classes) */
typedef struct { int side[3]; long e[3]; } EdgeAt;

/* the point's value under MODE, its reads pinned along its edges (z's
 * first: the order fixes the printed sum's); NULL when it has none (valid
 * mode, outside the value's domain) */
static Node *edge_value(const RedPlan *P, int mode, const EdgeAt *at)
{
    Node *v = P->rv.f;
    for (int d = P->D - 1; d >= 0; --d) {
        if (at->side[d] < 0) continue;
        if (!edge_has_value(P, d, mode, at->side[d], at->e[d])) return NULL;
        v = ex_pin(v, d, mode, at->side[d], at->side[d] ? -1 - at->e[d] : at->e[d]);
    }
    return v;
}

/* ACC plus N at each combination of the edge dimensions' preimages X from
 * dimension D down (z's outermost), pinned there */
static Node *pinned_sum(Node *acc, Node *n, int mode, const EdgeAt *at, const XPre *X, int d)
{
    if (d < 0) return ex_add(acc, n);
    if (at->side[d] < 0) return pinned_sum(acc, n, mode, at, X, d - 1);
    for (long c = X[d].lo; c <= X[d].hi; ++c) acc = pinned_sum(acc, ex_pin(n, d, mode, X[d].from_n, c), mode, at, X, d - 1);
    return acc;
}

/* each array's gradient sums at the point under MODE: each tap's partial at
 * its preimage points, moved to the point (shifted by the tap's offsets
 * along the dimensions it is inside, pinned along its edges) */
static void edge_sums(const RedPlan *P, int mode, const EdgeAt *at, Node **g)
{
    for (int a = 0; a < P->N; ++a) g[a] = ex_num(0);
    for (int t = 0; t < P->ndt; ++t) {
        const Node *tap = P->dtaps[t];
        long off[3] = {0, 0, 0};
        XPre X[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
        for (int d = 0; d < P->D; ++d) {
            if (at->side[d] < 0) off[d] = -tap->idx[d].c;
            else X[d] = edge_preimage(P, d, mode, at->side[d], at->e[d], tap->idx[d].c);
        }
        g[tap->ref] = pinned_sum(g[tap->ref], ex_shift(P->part[t], off), mode, at, X, P->D - 1);
    }
}

/* what end point E (left: i = E, right: i = st_n0-1-E) adds under MODE:
 * its value, its gradient sums; returns how many roots (formats in FM) */
static int end_roots(const EndsIn *in, int mode, int right, long e, Node **roots, const char **fm, char (*fmbuf)[32])
{
    const EdgeAt at = {{right, -1, -1}, {e, 0, 0}};
    Node *g[MAXARR], *v = in->want_v ? edge_value(in->P, mode, &at) : NULL;
    int nr = 0;
    if (v) {
        roots[nr] = v;
        fm[nr++] = "st_acc += (double)%s;";
    }
    if (!in->want_g) return nr;
    edge_sums(in->P, mode, &at, g);
    for (int a = 0; a < in->P->N; ++a) {
        if (!in->P->diff[a] || ex_is_num(g[a], 0)) continue;
        snprintf(fmbuf[nr], sizeof fmbuf[nr], "st_g%d += %%s;", a);
        fm[nr] = fmbuf[nr];
        roots[nr++] = ex_group_coef(g[a], !in->want_v);
    }
    return nr;
}

/* the switch label of boundary mode MODE (0 valid, 1 neumann, 2 periodic)
 * in the per-mode row ends: valid is the default */
static const char *mode_case(int mode)
{
    static const char *const label[3] = {"default", "case STENC_NEUMANN", "case STENC_PERIODIC"};
    return label[mode];
}

/* Tap T's partial summed over its preimages into st_g<array>: along x only
 * (ALL = 0: an interior row's end point, y and z the point's own shifted by
 * the tap; the xpart helper maps x) or along every dimension (ALL = 1: a
 * border point; the mpart helper maps all) */
static void print_preimage_sum(FILE *f, const RedPlan *P, int t, int all)
{
    const Node *tap = P->dtaps[t];
    const int D = P->D;
    fprintf(f, "            {\n");
    print_preimage_loops(f, tap, D, 0, all ? 3 : 1, "                ");
    fprintf(f, "\n                    st_g%d += ", tap->ref);
    char call[400], yz[80];
    if (all) snprintf(yz, sizeof yz, "st_p1%s", D == 3 ? ", st_p2" : "");
    else if (D == 3) snprintf(yz, sizeof yz, "j%+ld, k%+ld", -tap->idx[1].c, -tap->idx[2].c);
    else snprintf(yz, sizeof yz, "j%+ld", -tap->idx[1].c);
    snprintf(call, sizeof call, "stenc_h_%s_%dd_%cpart%d_[[]]stn_sfx[[]](st_p0, %s", P->base, D, all ? 'm' : 'x', t, yz);
    fprintf(f, P->shc, call);
    fprintf(f, ");\n");
    fprintf(f, "            }\n");
}

/* the general ends: each tap's x-preimages from stenc_preimage */
static void print_general_ends(FILE *f, const EndsIn *in)
{
    for (int t = 0; t < in->P->ndt; ++t) print_preimage_sum(f, in->P, t, 0);
}

/* the general end point's value: the mapped value helper inside the domain */
static void print_general_value(FILE *f, const EndsIn *in)
{
    char *mv = mval_call(in->P);
    fprintf(f, "            if (i >= st_dlo0 && i < st_dhi0)\n                st_acc += (double)%s;\n", mv);
    free(mv);
}

/* the row pointers of the expressions an end point reads */
static void print_end_row_pointers(FILE *f, const EndsIn *in)
{
    Node *reads[MAXTAP + 1];
    int nr = 0;
    if (in->want_v) reads[nr++] = in->P->rv.f;
    for (int t = 0; t < in->P->ndt && in->want_g; ++t) reads[nr++] = in->P->part[t];
    pr_row_pointers(f, in->P->es, reads, nr, in->P->E.names, "            ");
}

/* "if (" the row has the interior the fast ends were planned for ") {":
 * rows of end_min points, the whole row in the box, [ends_left, n0 -
 * ends_right) its x-interior */
static void print_fast_row_test(FILE *f, const EndsIn *in)
{
    fprintf(f, "            if (st_n0 >= %ld && st_lo0 == 0 && st_ia == %ld && st_ib == st_n0 - %ld && st_hi0 == st_n0) {\n",
            end_min(in), ends_left(in), ends_right(in));
}

/* One end point's block in a fast-ends switch: MODE, the left (RIGHT 0)
 * or right end, E points in from it; CTX the printer's own data */
typedef void (*EndPointFn)(FILE *f, const void *ctx, int mode, int right, long e);

/* "switch (st_mode) {" with a case per boundary mode and in each the blocks
 * of the row's end points (the left ones, then the right ones) by POINT */
static void print_end_switch(FILE *f, const EndsIn *in, EndPointFn point, const void *ctx)
{
    fprintf(f, "            switch (st_mode) {\n");
    for (int m = 1; m <= 3; ++m) {
        const int mode = m % 3;
        fprintf(f, "            %s:\n", mode_case(mode));
        for (int right = 0; right < 2; ++right)
            for (long e = 0; e < (right ? ends_right(in) : ends_left(in)); ++e) point(f, ctx, mode, right, e);
        fprintf(f, "            break;\n");
    }
    fprintf(f, "            }\n");
}

/* an interior row's end point at a fixed i: its sums, value and store
 * (with IN's field planes, the fields read from their rows where the
 * interior's strips filled them: fields_apply_ends) */
static void print_row_end_point(FILE *f, const void *ctx, int mode, int right, long e)
{
    const EndsIn *in = ctx;
    const PrintCtx pc = {in->P->es, TAP_ROW, in->P->E.names, NULL, NULL, 0};
    Node *roots[MAXARR + 1];
    char fmbuf[MAXARR + 1][32];
    const char *fm[MAXARR + 1];
    const int nr = end_roots(in, mode, right, e, roots, fm, fmbuf);
    Node *sub[MAXARR + 1]; /* the roots' fields read from the planes' rows where the interior's strips filled them */
    int fields = in->fp != NULL;
    for (int r = 0; r < nr && fields; ++r) {
        sub[r] = fields_apply_ends(in->P->s, in->fp->F, roots[r], in->fp->N, ends_left(in), ends_right(in), end_min(in));
        fields = sub[r] != NULL;
    }
    for (int r = 0; r < nr && fields; ++r) roots[r] = sub[r];
    fprintf(f, "            {\n            const ptrdiff_t i = %s%ld; (void)i;\n", right ? "st_n0 - " : "", right ? 1 + e : e);
    if (in->want_g) point_sums_open(f, in->P->es, in->P->s->arr[in->P->first_read].name, in->P->N, in->P->diff);
    if (nr && fields) fields_print_block(f, in->fp, roots, fm, nr, "                ");
    else if (nr) pr_c_block(f, &pc, roots, nr, fm, "                ");
    if (in->want_g) point_sums_store(f, in->P->N, in->P->diff, in->P->E.names);
    fprintf(f, "            }\n");
}

/* The x ends of an interior row as one block (C backend), ahead of the
 * template's loops over the per-point body: when the row's interior is the
 * one the ends were planned for, one switch on the mode a row and each end
 * point's sums with i fixed; prints "if (...) { ... } else {" (the template
 * closes it after its loops), or nothing when a tap reaches too far along
 * x.  The per-point body's mode switch and tests of i cost the 3D
 * Tikhonov-gradient value_grad 3-8% of its time (perf/NOTES.md section 24). */
static void print_row_fast_ends(FILE *f, const EndsIn *in)
{
    if (!fast_ends_fit(in)) return;
    print_fast_row_test(f, in);
    print_end_row_pointers(f, in);
    print_end_switch(f, in, print_row_end_point, in);
    fprintf(f, "            } else {\n");
}

/* The body of an end point i of an interior row: its value (value,
 * value_grad) and gradient (grad, value_grad) from the general ends (the
 * x preimages searched at run time).  The C kernels reach it only in rows
 * shorter than end_min points: longer interior rows take the row's fast
 * ends block (print_row_fast_ends), whose test holds for every such row
 * (the reduction box's x-interior is [ends_left, n0 - ends_right)). */
static void print_row_ends(FILE *f, const EndsIn *in)
{
    fprintf(f, "{\n");
    if (in->want_g) point_sums_open(f, in->P->es, in->P->s->arr[in->P->first_read].name, in->P->N, in->P->diff);
    if (in->want_v) print_general_value(f, in);
    if (in->want_g) print_general_ends(f, in);
    if (in->want_g) point_sums_store(f, in->P->N, in->P->diff, in->P->E.names);
    fprintf(f, "        }\n");
}

/* a rolling row's end point at a fixed i: its value and its ring terms */
typedef struct { const Roll *R; const RollIn *in; const EndsIn *ein; } RollEnd;
static void print_roll_end_point(FILE *f, const void *ctx, int mode, int right, long e)
{
    const RollEnd *re = ctx;
    const Roll *R = re->R;
    const RollIn *in = re->in;
    const EndsIn *ein = re->ein;
    fprintf(f, "            {\n                const ptrdiff_t i = %s%ld;\n                ", right ? "st_n0 - " : "",
            right ? 1 + e : e);
    point_index(f, in->P->es, in->P->s->arr[in->P->first_read].name, "st_q");
    fprintf(f, "\n");
    if (in->want_v && !R->vdiag && end_has_value(ein, mode, right, e)) {
        if (roll_ends_count(R, in)) {
            print_ends_uncounted(f, R, in, "                if (");
            fprintf(f, ")\n");
        }
        print_end_value(f, R, in);
    }
    for (int a = 0; a < in->P->N; ++a) {
        if (!in->P->diff[a]) continue;
        fprintf(f, "                { stn_real st_gv = 0;");
        for (int u = 0; u < R->nuse; ++u) {
            const Use *us = &R->use[u];
            const Node *tp = in->P->dtaps[us->tap];
            if (tp->ref != a) continue;
            const XPre pre = end_preimage(ein, mode, right, e, tp->idx[0].c);
            for (long c = pre.lo; c <= pre.hi; ++c) {
                print_term_op(f, R, u);
                if (pre.from_n) fprintf(f, "st_r%d[st_n0 - %ld];", roll_row_of(R, in, u), -c);
                else fprintf(f, "st_r%d[%ld];", roll_row_of(R, in, u), c);
            }
        }
        fprintf(f, " stn_gstore(%s, st_q) }\n", in->P->E.names[in->P->N + a]);
    }
    fprintf(f, "            }\n");
}

/* The x ends of a rolling gradient's interior row from the ring, with the
 * preimages known at generation time (as the fast ends above): per mode
 * (st_mode is a constant in each mode's loop copy) and end point, the sum
 * of its ring terms; prints "if (rows of end_min points) { ... } else " and
 * returns 1, or 0 when a tap reaches too far along x. */
static int print_roll_fast_ends(FILE *f, const Roll *R, const RollIn *in)
{
    const EndsIn ein = {in->P, in->want_v, 1, NULL};
    if (!fast_ends_fit(&ein)) return 0;
    const RollEnd re = {R, in, &ein};
    print_fast_row_test(f, &ein);
    print_end_switch(f, &ein, print_roll_end_point, &re);
    fprintf(f, "            } else ");
    return 1;
}

/* The ENDS row function's R points (the row's x domain outside its vector
 * range) with their x reads pinned per mode when the kernel is generated,
 * as the row ends are (perf/NOTES.md section 18 item 6: those R points took
 * 4-7% of the rolling gradients' samples with their reads mapped at run
 * time): "if (rows of end_min points, the usual ranges) { switch (mode)
 * ...; return; }" ahead of the general loop.  ROOTS, FM: the row
 * function's slots and their stores at point i. */
static void print_roll_pinned_ends(FILE *f, const Roll *R, const RollIn *in, Node **roots, const char **fm, int nr, int lag)
{
    static const char *vars[3] = {"i", "st_jq", "st_kq"};
    const EndsIn ein = {in->P, 0, 1, NULL};
    if (!fast_ends_fit(&ein)) return;
    const long xa = ends_left(&ein) - R->maxx, xb = -ends_right(&ein) - R->minx; /* xb: from st_n0 */
    const long omin0 = in->P->omin[0], omax0 = in->P->omax[0];
    const PrintCtx pc = {in->P->es, TAP_DIRECT, in->P->E.names, vars, NULL, 0};
    fprintf(f, "    if (st_n0 >= %ld && st_xa == %ld && st_xb == st_n0 - %ld && st_dlo == (mode == STENC_VALID ? %ld : 0) &&\n"
               "        st_dhi == st_n0 - (mode == STENC_VALID ? %ld : 0)) {\n    switch (mode) {\n",
            end_min(&ein), xa, -xb, -omin0, omax0);
    for (int m = 1; m <= 3; ++m) {
        const int mode = m % 3;
        const long dlo = mode == 0 ? -omin0 : 0, dhi = mode == 0 ? -omax0 : 0; /* dhi: from st_n0 */
        fprintf(f, "    %s:\n", mode_case(mode));
        for (int right = 0; right < 2; ++right)
            for (long c = right ? xb : dlo; c < (right ? dhi : xa); ++c) {
                Node *pinned[MAXTAP + 1];
                for (int r = 0; r < nr; ++r) pinned[r] = ex_pin_x(roots[r], mode, right, c);
                if (right) fprintf(f, "    {\n        const ptrdiff_t i = st_n0 - %ld;\n", -c);
                else fprintf(f, "    {\n        const ptrdiff_t i = %ld;\n", c);
                pr_c_block(f, &pc, pinned, nr, fm, "        ");
                fprintf(f, "    }\n");
            }
        fprintf(f, "    break;\n");
    }
    fprintf(f, "    }\n");
    print_ring_pads(f, R, lag, "mode", "    ");
    fprintf(f, "    return;\n    }\n");
}

/* ---- border rows by edge class ----
 * A border row with one of y, z within reach of an edge and the other
 * inside (j near a y edge and k in [st_ilo2, st_ihi2), or the other way
 * round) has, in its x-interior, each tap's preimages known when the kernel
 * is generated, per boundary mode, as the x ends of interior rows do: along
 * the edge dimension points 0 + c or st_n + c (edge_preimage), along x and
 * the other dimension the point's own shifted by the tap.  Its x-interior is
 * then one loop like an interior row's, over the partials' sums at those
 * points with their edge reads pinned (clamped or wrapped when the kernel is
 * generated), instead of a value pass, a pass per tap and preimage through a
 * strip buffer and a store pass (4-5 interior rows' time: a quarter of a 3D
 * linear gradient's time at 64^3, perf/NOTES.md section 25).  Its x end
 * points likewise, pinned along x too.  Rows at two edges (along x, the
 * grid's edges) and grids shorter than edge_min along a dimension keep the
 * general border row; so do the rolling gradients (their border rows gather
 * from cached rows of partials, roll_border). */

/* A point of class (edge dimension D, low or high end RIGHT, E in from it,
 * MODE): along x inside (XR < 0), or the x end point XE in from the low
 * (XR = 0) or high (XR = 1) x end, pinned along x too.  What it adds: its
 * value when it has one (format VFM), each differentiable array's sums
 * (stored, 0 included); returns how many roots (formats in FM) */
typedef struct { int d, right; long e; int mode, xr; long xe; } ClassPt;
static int class_roots(const RedPlan *P, int want_v, int want_g, const ClassPt *c, const char *vfm, Node **roots,
                       const char **fm, char (*fmbuf)[160])
{
    EdgeAt at = {{c->xr, -1, -1}, {c->xe, 0, 0}};
    at.side[c->d] = c->right;
    at.e[c->d] = c->e;
    Node *g[MAXARR], *v = want_v ? edge_value(P, c->mode, &at) : NULL;
    int nr = 0;
    if (v) {
        roots[nr] = v;
        fm[nr++] = vfm;
    }
    if (!want_g) return nr;
    edge_sums(P, c->mode, &at, g);
    for (int a = 0; a < P->N; ++a) {
        if (!P->diff[a]) continue;
        snprintf(fmbuf[nr], sizeof fmbuf[nr], "{ const stn_real st_gv = %%s; stn_gstore(%s, st_q) }", P->E.names[P->N + a]);
        fm[nr] = fmbuf[nr];
        roots[nr++] = ex_group_coef(g[a], !want_v);
    }
    return nr;
}

/* the body of a point of class C at i: its index st_q, its roots */
static void print_class_point(FILE *f, const RedPlan *P, int want_v, int want_g, const ClassPt *c, const char *vfm)
{
    const PrintCtx pc = {P->es, TAP_ROW, P->E.names, NULL, NULL, 0};
    Node *roots[MAXARR + 1];
    char fmbuf[MAXARR + 1][160];
    const char *fm[MAXARR + 1];
    const int nr = class_roots(P, want_v, want_g, c, vfm, roots, fm, fmbuf);
    if (want_g) {
        fprintf(f, "            ");
        point_index(f, P->es, P->s->arr[P->first_read].name, "st_q");
        fprintf(f, "\n");
    }
    pr_row_pointers(f, P->es, roots, nr, P->E.names, "            ");
    pr_c_block(f, &pc, roots, nr, fm, "            ");
}

/* the x ends of a class's row (its x-interior the planned one, as the
 * interior rows' fast ends): each end point at a fixed i */
static void print_class_ends(FILE *f, const RedPlan *P, int want_v, int want_g, ClassPt c, int right)
{
    const EndsIn in = {P, want_v, want_g, NULL};
    for (long e = 0; e < (right ? ends_right(&in) : ends_left(&in)); ++e) {
        c.xr = right;
        c.xe = e;
        fprintf(f, "            {\n            const ptrdiff_t i = %s%ld;\n", right ? "st_n0 - " : "", right ? 1 + e : e);
        print_class_point(f, P, want_v, want_g, &c, "st_acc += (double)%s;");
        fprintf(f, "            }\n");
    }
}

/* the rows of one class: "if (row) { x ends, x-interior loop, x ends }" */
static void print_class(FILE *f, const RedPlan *P, int want_v, int want_g, const ClassPt *c)
{
    if (c->right) fprintf(f, "            if (%s == st_n%d - %ld) {\n", dimvar(c->d), c->d, 1 + c->e);
    else fprintf(f, "            if (%s == %ld) {\n", dimvar(c->d), c->e);
    print_class_ends(f, P, want_v, want_g, *c, 0);
    /* one loop, not the interior's value strips: the border rows' share
     * is small, their code size is not (the units compile in up to 1.45x
     * the time with those copies: perf/NOTES.md section 25).  Its stores
     * pick alpha*g or beta*G + alpha*g by a bit mask, G read either way
     * (stn_gselect): with a select (?:) GCC 12 ran the loop point by
     * point where it also sums the value, and in
     * periodic mode (a tenth of the Tikhonov gradient's 3D value_grad at
     * 128^3 on AVX2: perf/NOTES.md section 60 item 2); one copy per beta
     * case (stn_unswitch) vectorized too, at 1.07x the test stencil
     * pair.c's compile time (section 61) */
    fprintf(f, "stn_gselect([[            #pragma omp simd%s\n            for (ptrdiff_t i = st_xa; i < st_xb; ++i) {\n",
            want_v ? " reduction(+:st_acc)" : "");
    print_class_point(f, P, want_v, want_g, c, "st_acc += (double)%s;");
    fprintf(f, "            }\n]])");
    print_class_ends(f, P, want_v, want_g, *c, 1);
    fprintf(f, "            st_done = 1;\n            }\n");
}

/* the border rows' classes (3D gradients), per mode, when the grid is at
 * least edge_min along each dimension (rows of the planned x-interior); sets
 * st_done in the rows they take; NULL when a tap reaches too far */
static char *border_classes(const RedPlan *P, int want_v, int want_g)
{
    if (P->D != 3 || !want_g || !edge_fit(P, 0) || !edge_fit(P, 1) || !edge_fit(P, 2)) return NULL;
    Str b;
    str_open(&b);
    FILE *f = b.f;
    fprintf(f, "            if (st_n0 >= %ld && st_n1 >= %ld && st_n2 >= %ld && st_lo0 == 0 && st_xa == %ld && "
               "st_xb == st_n0 - %ld && st_hi0 == st_n0) {\n",
            edge_min(P, want_g, 0), edge_min(P, want_g, 1), edge_min(P, want_g, 2), edge_lo(P, want_g, 0),
            edge_hi(P, want_g, 0));
    fprintf(f, "            switch (st_mode) {\n");
    for (int mm = 1; mm <= 3; ++mm) {
        const int mode = mm % 3;
        fprintf(f, "            %s:\n", mode_case(mode));
        for (int d = 1; d <= 2; ++d) {
            const int o = 3 - d;
            fprintf(f, "            if (%s >= st_ilo%d && %s < st_ihi%d) {\n", dimvar(o), o, dimvar(o), o);
            for (int right = 0; right < 2; ++right)
                for (long e = 0; e < (right ? edge_hi(P, want_g, d) : edge_lo(P, want_g, d)); ++e) {
                    const ClassPt c = {d, right, e, mode, -1, 0};
                    print_class(f, P, want_v, want_g, &c);
                }
            fprintf(f, "            }\n");
        }
        fprintf(f, "            break;\n");
    }
    fprintf(f, "            }\n            }\n");
    return str_close(&b);
}

/* the arrays and parameters the reduction reads, the first array read */
static void plan_inputs(RedPlan *P)
{
    const Stencil *s = P->s;
    for (int a = 0; a < P->N; ++a) {
        P->reads[a] = ex_reads(P->rv.f, a);
        P->diff[a] = P->reads[a] && !s->arr[a].is_const;
    }
    for (int p = 0; p < s->nparam; ++p) P->params[p] = ex_uses_param(P->rv.f, p);
    P->first_read = 0;
    while (P->first_read < P->N - 1 && !P->reads[P->first_read]) ++P->first_read;
}

/* offsets, partials (0, or a gen_error when a tap's is undefined) and the
 * gather sums */
static int plan_taps(RedPlan *P)
{
    const Stencil *s = P->s;
    const Reduce *r = &P->rv;
    Node *taps[MAXTAP];
    int nt = ex_taps(r->f, -1, taps, MAXTAP);
    for (int d = 0; d < 3; ++d) {
        P->omin[d] = P->omax[d] = d < P->D && nt > 0 ? taps[0]->idx[d].c : 0;
        for (int t = 1; t < nt && d < P->D; ++t) {
            if (taps[t]->idx[d].c < P->omin[d]) P->omin[d] = taps[t]->idx[d].c;
            if (taps[t]->idx[d].c > P->omax[d]) P->omax[d] = taps[t]->idx[d].c;
        }
        /* the point itself counts as read (offset 0): with taps only at
         * positive (negative) offsets along d, the valid domain, the
         * gradient's interior and the rolling rows' x range would otherwise
         * reach past the grid's first (last) point */
        if (P->omin[d] > 0) P->omin[d] = 0;
        if (P->omax[d] < 0) P->omax[d] = 0;
        P->minvalid[d] = d < P->D ? P->omax[d] - P->omin[d] + 1 : 1;
    }
    for (int t = 0; t < nt; ++t) {
        const long dy = P->D > 1 ? taps[t]->idx[1].c : 0, dz = P->D > 2 ? taps[t]->idx[2].c : 0;
        if (t == 0 || dz > P->last[2] || (dz == P->last[2] && dy > P->last[1])) P->last[1] = dy, P->last[2] = dz;
    }
    P->ndt = 0;
    for (int t = 0; t < nt; ++t) {
        if (!P->diff[taps[t]->ref]) continue;
        int bad = 0;
        Node *p = ex_diff(r->f, taps[t]->ref, taps[t]->idx, &bad);
        if (!p)
            return gen_error(s->file, r->line,
                             "cannot differentiate reduction '%s' with respect to '%s': %s() is not differentiable "
                             "(declare '%s' const, or write the function with select so its derivative is defined)",
                             r->name, s->arr[taps[t]->ref].name, ex_fn_name[bad - 1], s->arr[taps[t]->ref].name);
        P->dtaps[P->ndt] = taps[t];
        P->part[P->ndt] = ex_recip(p); /* the partials of a point share their divisions */
        ++P->ndt;
    }
    /* gather expression at q for each differentiable array */
    for (int a = 0; a < P->N; ++a) P->gsum[a] = ex_num(0);
    for (int t = 0; t < P->ndt; ++t) {
        long off[3] = {0, 0, 0};
        for (int d = 0; d < P->D; ++d) off[d] = -P->dtaps[t]->idx[d].c;
        P->gsum[P->dtaps[t]->ref] = ex_add(P->gsum[P->dtaps[t]->ref], ex_shift(P->part[t], off));
    }
    for (int a = 0; a < P->N; ++a) P->gsum_g[a] = ex_group_coef(P->gsum[a], 1), P->gsum[a] = ex_group_coef(P->gsum[a], 0);
    return 0;
}

/* the helpers' parameter list, call formats and (void) line; the value
 * domain's bounds (the box's first declarations) */
static void plan_texts(RedPlan *P)
{
    const Stencil *s = P->s;
    const int D = P->D;
    Str h, v, dom;
    str_open(&h);
    fprintf(h.f, "ptrdiff_t i, ptrdiff_t j%s", D == 3 ? ", ptrdiff_t k" : "");
    for (int d = 0; d < D; ++d) fprintf(h.f, ", ptrdiff_t st_n%d", d);
    fprintf(h.f, ", int mode");
    for (int a = 0; a < P->N; ++a)
        if (P->reads[a]) fprintf(h.f, ", const stn_real *stn_restrict %s", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p)
        if (P->params[p]) fprintf(h.f, ", stn_real %s", s->param[p]);
    P->sha = str_close(&h);
    P->shc = helper_call_format(s, P->N, P->reads, P->params);
    str_open(&v);
    for (int a = 0; a < P->N; ++a) if (P->reads[a]) fprintf(v.f, " (void)%s;", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p) if (P->params[p]) fprintf(v.f, " (void)%s;", s->param[p]);
    P->svoid = str_close(&v);
    str_open(&dom);
    for (int d = 0; d < D; ++d)
        fprintf(dom.f, "const ptrdiff_t st_dlo%d = mode == STENC_VALID ? %ld : 0, st_dhi%d = st_n%d - (mode == STENC_VALID ? %ld : 0);\n"
                       "    (void)st_dlo%d; (void)st_dhi%d;\n    ",
                d, -P->omin[d], d, d, P->omax[d], d, d);
    P->sdom = str_close(&dom);
}

static int plan_reduce(const Stencil *s, const Reduce *ru, RedPlan *P)
{
    memset(P, 0, sizeof *P);
    P->s = s;
    P->ru = ru;
    P->rv = *ru;
    P->rv.f = ex_recip(ru->f);
    P->D = s->dims;
    ext_init(&P->E, s, "grad");
    P->es = &P->E.s;
    P->N = P->E.nuser;
    plan_inputs(P);
    if (plan_taps(P)) return -1;
    const int rules = border_rules(s, P->ndt, P->dtaps, P->part, P->diff);
    P->rule = rules & 1 << RULE_ZERO ? RULE_ZERO : rules & 1 << RULE_CLAMP ? RULE_CLAMP : RULE_NONE;
    P->xrule = P->rule && (rules & RULE_XBIT(P->rule));
    P->extend = (rules & 1 << RULE_EXTEND) != 0;
    if (fields_plan(s, P->rv.f, P->N, &P->F) < 0) return gen_error(s->file, ru->line, "out of memory");
    func_base(s, ru->name, P->base, sizeof P->base);
    plan_texts(P);
    return 0;
}

static void plan_free(RedPlan *P)
{
    free(P->sha); free(P->shc); free(P->svoid); free(P->sdom);
}

/* a per-point helper NAME (mval, mpartT, xpartT): ROOT with taps printed by PC */
static void print_point_helper(FILE *f, const RedPlan *P, const char *name, const char *voids, const PrintCtx *pc,
                               Node *root, const char *strides)
{
    fprintf(f, "stn_dev stn_real stenc_h_%s_%dd_%s_[[]]stn_sfx[[]](%s)\n{\n    (void)mode;%s", P->base, P->D, name, P->sha, voids);
    void_point_args(f, P->D);
    fprintf(f, "\n%s", strides);
    const char *fm[1] = {"return %s;"};
    pr_c_block(f, pc, &root, 1, fm, "    ");
    fprintf(f, "}\n");
}

/* the helpers: the mapped value at a point; one per tap, its mapped
 * partial (a border point needs each partial at a few points only, so
 * computing all of them there would cost taps^2); and per tap with only x
 * mapped (the row ends of interior rows, where the y/z preimages are
 * single points and every y/z read is inside) */
static char *print_point_helpers(const RedPlan *P)
{
    const PrintCtx pcm = {P->es, TAP_MAPPED, P->E.names, NULL, NULL, 0}, pcx = {P->es, TAP_MAPPED_X, P->E.names, NULL, NULL, 0};
    Str st, help;
    str_open(&st);
    for (int a = 0; a < P->N; ++a)
        if (P->reads[a]) setup_strides(st.f, P->s, a, P->s->arr[a].name);
    char *strides = str_close(&st);
    str_open(&help);
    print_point_helper(help.f, P, "mval", "", &pcm, P->rv.f, strides);
    char name[32];
    for (int t = 0; t < P->ndt; ++t) {
        snprintf(name, sizeof name, "mpart%d", t);
        print_point_helper(help.f, P, name, P->svoid, &pcm, P->part[t], strides);
    }
    for (int t = 0; t < P->ndt; ++t) {
        snprintf(name, sizeof name, "xpart%d", t);
        print_point_helper(help.f, P, name, P->svoid, &pcx, P->part[t], strides);
    }
    free(strides);
    return str_close(&help);
}

/* The .adj listing of a reduction: R at a point and its partial
 * derivatives by the values it reads, with named intermediates (the
 * subexpressions they share), then each gradient's gather: the partials
 * of the points whose R reads the point.  The generated C evaluates the
 * same expressions (the gather's sum with common factors grouped). */
static void dump_gather(FILE *dump, const RedPlan *P)
{
    const Reduce *r = &P->rv;
    const int D = P->D;
    fprintf(dump, "# reduction '%s' (%dD): R = sum over points of\n#   ", r->name, D);
    pr_stn(dump, P->s, P->ru->f, NULL);
    fprintf(dump, "\n# gradient: at each point %s R and its partial derivatives d1, d2, ...\n"
                  "# by the values it reads; each point gathers the partials of the points\n"
                  "# whose R reads it (interior points; borders: exact enumeration of the\n"
                  "# boundary mode's preimages, see docs/language.md)\n", D == 3 ? "[i,j,k]" : "[i,j]");
    if (P->rule) /* gen/rules.c; tests/adj_listing.py checks the claim */
        fprintf(dump, "# at the faces%s in Neumann mode this gather is exact with the partials\n"
                      "# past a face taken as %s (found when generated)\n", P->xrule ? " (x too)" : " (y and z)",
                P->rule == RULE_CLAMP ? "those of the face point" : "zero");
    if (P->extend) /* the same; the field rows' kernels use it (field_rule) */
        fprintf(dump, "# at every face (x too) in Neumann mode it is also exact with the partials\n"
                      "# past a face evaluated there, their reads clamped to the grid (found when generated)\n");
    fprintf(dump, "kernel %s_grad_%dd {\n", r->name, D);
    Node *roots[MAXTAP + 1];
    char names[MAXTAP + 1][16], *notes[MAXTAP + 1];
    const char *rn[MAXTAP + 1], *nt[MAXTAP + 1];
    roots[0] = r->f, rn[0] = "R", nt[0] = notes[0] = NULL;
    for (int t = 0; t < P->ndt; ++t) {
        Str note;
        str_open(&note);
        fprintf(note.f, "dR/d");
        pr_stn(note.f, P->s, P->dtaps[t], NULL);
        snprintf(names[t + 1], sizeof names[t + 1], "d%d", t + 1);
        notes[t + 1] = str_close(&note);
        roots[t + 1] = P->part[t], rn[t + 1] = names[t + 1], nt[t + 1] = notes[t + 1];
    }
    pr_stn_listing(dump, P->es, P->E.names, roots, rn, nt, P->ndt + 1, "  ");
    for (int t = 1; t <= P->ndt; ++t) free(notes[t]);
    for (int a = 0; a < P->N; ++a) {
        if (!P->diff[a]) continue;
        fprintf(dump, "  all(%s) =", P->E.names[P->N + a]);
        for (int t = 0, first = 1; t < P->ndt; ++t)
            if (P->dtaps[t]->ref == a) {
                fprintf(dump, "%s", first ? " " : " + ");
                pr_stn_ref(dump, D, names[t + 1], P->dtaps[t]->idx, -1);
                first = 0;
            }
        fprintf(dump, "\n");
    }
    fprintf(dump, "}\n\n");
}

/* an entry's comment: KIND 0 value, 1 grad, 2 value_grad */
static void print_reduce_doc(FILE *f, const RedPlan *P, int kind)
{
    const Stencil *s = P->s;
    const int N = P->N;
    fprintf(f, "/* Reduction '%s' of stencil '%s' (%dD), %s:\n *   R = sum over points p of ", P->rv.name, s->name, P->D,
            kind == 0 ? "its value R (accumulated in double)" : kind == 1 ? "its gradient" : "value and gradient in one pass");
    pr_stn(f, s, P->ru->f, NULL);
    fprintf(f, "\n * mode: STENC_VALID (points whose reads are all inside), STENC_NEUMANN\n"
               " * (every point, reads clamped to the edge), STENC_PERIODIC (wrapped).\n");
    if (kind)
        fprintf(f, " * Gradients: G = beta*G + alpha*dR/dX for each differentiable array X\n"
                   " * (beta == 0 overwrites G and never reads it).\n");
    fprintf(f, " * Arrays (all of extent (nx, ny%s)):", P->D == 3 ? ", nz" : "");
    for (int a = 0; a < N; ++a) if (P->reads[a]) fprintf(f, " %s", s->arr[a].name);
    if (kind) for (int a = 0; a < N; ++a) if (P->diff[a]) fprintf(f, " %s", P->E.names[N + a]);
    fprintf(f, "\n * Minimum grid: ");
    for (int d = 0; d < P->D; ++d) fprintf(f, "%s%s >= %ld", d ? ", " : "", dimn(d), P->minvalid[d]);
    fprintf(f, " for STENC_VALID, 1 otherwise.\n * Returns STENC_OK or an error code (stenc_strerror). */");
}

static void print_reduce_args(FILE *f, const RedPlan *P, int want_v, int want_g)
{
    const Stencil *s = P->s;
    args_sizes(f, P->D);
    fprintf(f, ", int mode");
    for (int a = 0; a < P->N; ++a) if (P->reads[a]) fprintf(f, ", const stn_real *stn_restrict %s", s->arr[a].name);
    for (int p = 0; p < s->nparam; ++p) if (P->params[p]) fprintf(f, ", stn_real %s", s->param[p]);
    if (want_v) fprintf(f, ", double *value");
    if (want_g) {
        fprintf(f, ", stn_real alpha, stn_real beta");
        for (int a = 0; a < P->N; ++a) if (P->diff[a]) fprintf(f, ", stn_real *stn_restrict %s", P->E.names[P->N + a]);
    }
}

/* the argument checks: sizes, nulls, counts, gradients overlapping inputs
 * or each other */
static void print_reduce_checks(FILE *f, const RedPlan *P, int want_v, int want_g)
{
    const Stencil *s = P->s;
    const int N = P->N;
    const char *const *nm = P->E.names;
    const long minn[3] = {1, 1, 1};
    setup_sizes(f, P->D);
    checks_sizes(f, P->D, minn, 1, P->minvalid);
    if (want_v) checks_null(f, "value");
    for (int a = 0; a < N; ++a) if (P->reads[a]) { checks_null(f, s->arr[a].name); checks_count(f, s, a, s->arr[a].name); }
    if (!want_g) return;
    for (int a = 0; a < N; ++a)
        if (P->diff[a]) { checks_null(f, nm[N + a]); checks_count(f, s, a, nm[N + a]); }
    for (int a = 0; a < N; ++a) {
        if (!P->diff[a]) continue;
        for (int b = 0; b < N; ++b) {
            if (P->reads[b]) checks_alias(f, nm[N + a], s->arr[b].name);
            if (P->diff[b] && b > a) checks_alias(f, nm[N + a], nm[N + b]);
        }
    }
}

static void print_reduce_setup(FILE *f, const RedPlan *P, int want_g)
{
    for (int a = 0; a < P->N; ++a) {
        if (P->reads[a]) setup_strides(f, P->s, a, P->s->arr[a].name);
        if (want_g && P->diff[a]) setup_strides(f, P->s, a, P->E.names[P->N + a]);
    }
}

/* the loops' box: value-domain bounds, then per dimension the rows' range
 * and interior (a gradient visits every point: the interior is where every
 * tap's preimage is a single point read directly) */
static void print_reduce_box(FILE *f, const RedPlan *P, int want_g)
{
    fprintf(f, "%s", P->sdom);
    for (int d = 0; d < P->D; ++d) {
        const long omin = P->omin[d], omax = P->omax[d];
        if (!want_g) {
            fprintf(f, "const ptrdiff_t st_lo%d = st_dlo%d, st_hi%d = st_dhi%d, st_ilo%d = %ld, st_ihi%d = st_n%d - %ld;\n    ",
                    d, d, d, d, d, -omin, d, d, omax);
        } else {
            long w = omax - omin;
            long ilo = w > -omin ? w : -omin;
            long ihi = w > omax ? w : omax;
            fprintf(f, "const ptrdiff_t st_lo%d = 0, st_hi%d = st_n%d, st_ilo%d = %ld, st_ihi%d = st_n%d - %ld;\n    ",
                    d, d, d, d, ilo, d, d, ihi);
        }
    }
}

/* the body of an interior point: its value (stn_vacc) and the gather sums
 * (stn_gstore), read through the row pointers; in 3D also the CUDA body
 * with a plane cache (*szd, *szb; NULL without one) */
static void print_reduce_interior(FILE *f, const RedPlan *P, int want_v, int want_g, char **szd, char **szb)
{
    const PrintCtx pcr = {P->es, TAP_ROW, P->E.names, NULL, NULL, 0};
    Node *roots[MAXARR + 1];
    char fmbuf[MAXARR + 1][160];
    const char *fm[MAXARR + 1];
    int nr = 0;
    if (want_v) { roots[nr] = P->rv.f; snprintf(fmbuf[nr], sizeof fmbuf[nr], "{ const stn_real st_v = %%s; stn_vacc }"); fm[nr] = fmbuf[nr]; ++nr; }
    if (want_g)
        for (int a = 0; a < P->N; ++a)
            if (P->diff[a]) {
                roots[nr] = want_v ? P->gsum[a] : P->gsum_g[a];
                snprintf(fmbuf[nr], sizeof fmbuf[nr], "{ const stn_real st_gv = %%s; stn_gstore(%s, st_q) }", P->E.names[P->N + a]);
                fm[nr] = fmbuf[nr];
                ++nr;
            }
    Str h;
    str_open(&h);
    if (want_g) { /* all arrays of a reduction share the grid extent, so one index */
        fprintf(h.f, "            ");
        point_index(h.f, P->es, P->s->arr[P->first_read].name, "st_q");
        fprintf(h.f, "\n");
    }
    pr_row_pointers(h.f, P->es, roots, nr, P->E.names, "            ");
    char *head = str_close(&h);
    fprintf(f, "{\n%s", head);
    pr_c_block(f, &pcr, roots, nr, fm, "            ");
    fprintf(f, "        }\n");
    const ZcIn z = {&pcr, roots, nr, fm, 0, head, NULL, 0};
    (void)zc_body(&z, szd, szb);
    free(head);
}


/* the body of a border point: its value when inside the value domain, each
 * tap's partial over its preimages in every dimension */
static void print_border_point(FILE *f, const RedPlan *P, int want_v, int want_g)
{
    const int D = P->D;
    fprintf(f, "{\n");
    if (want_v) {
        char *mv = mval_call(P);
        fprintf(f, "            if (i >= st_dlo0 && i < st_dhi0 && j >= st_dlo1 && j < st_dhi1%s)\n",
                D == 3 ? " && k >= st_dlo2 && k < st_dhi2" : "");
        fprintf(f, "                st_acc += (double)%s;\n", mv);
        free(mv);
    }
    if (want_g) {
        point_sums_open(f, P->es, P->s->arr[P->first_read].name, P->N, P->diff);
        for (int t = 0; t < P->ndt; ++t) print_preimage_sum(f, P, t, 1);
        point_sums_store(f, P->N, P->diff, P->E.names);
    }
    fprintf(f, "        }\n");
}

/* the distributed entry (emit_dist) for the entry B2 of KIND */
static void print_reduce_dist(FILE *out, const RedPlan *P, const char *b2, const char *kname, int want_g, const char *sargs)
{
    char what[200], ent[240];
    snprintf(what, sizeof what, "reduction '%s' of stencil '%s'", P->ru->name, P->s->name);
    snprintf(ent, sizeof ent, "%s_%dd", b2, P->D);
    long need = 1;
    for (int d = 0; d < P->D; ++d) {
        long v = want_g ? P->omax[d] - P->omin[d] : (P->omax[d] > -P->omin[d] ? P->omax[d] : -P->omin[d]);
        if (v > need) need = v;
    }
    emit_dist(out, ent, kname, P->D, sargs, (int)need, P->omin, P->omax, what);
}

/* one entry point, KIND 0 value, 1 grad, 2 value_grad: its pieces, the
 * loop job (border rows, row ends, rolling rows), the distributed entry;
 * rolling rows' functions go to ROLLHELP */
/* whether N holds a costly operation over two taps or more (SEEN: by
 * node id, the nodes looked at); a division's over its divisor's taps (a
 * sum divided by the point's field, Good's gradient, is one division a
 * point whatever the sum reads) */
static int costly_over_taps(Node *n, unsigned char *seen)
{
    if (seen[n->id]) return 0;
    seen[n->id] = 1;
    Node *taps[2];
    if (ex_costly_op(n) && ex_taps(n->kind == E_DIV ? n->a[1] : n, -1, taps, 2) > 1) return 1;
    for (int i = 0; i < n->nargs; ++i)
        if (costly_over_taps(n->a[i], seen)) return 1;
    return 0;
}

/* 1 when every tap of ROOT of an array below NREAL (not a field's row)
 * reads the point itself (offsets 0) */
static int own_point_only(Node *root, int nreal)
{
    Node *taps[MAXTAP];
    const int nt = ex_taps(root, -1, taps, MAXTAP);
    for (int t = 0; t < nt; ++t) {
        if (t >= MAXTAP) return 0;
        for (int d = 0; d < 3 && taps[t]->ref < nreal; ++d)
            if (taps[t]->idx[d].kind != IK_VAR || taps[t]->idx[d].c != 0) return 0;
    }
    return 1;
}

/* whether a 3D job over the field rows G can run every row whole through
 * its interior in Neumann mode: the fields' x reach fits their rows' end
 * copies (STENC_FIELD_XPAD) and its ROOTS read nothing but field rows and
 * the point itself (arrays below NREAL are not field rows).  The fills
 * then read the rows clamped to the grid and copy a row's end points'
 * fields past its ends (fields_print.c, FieldPrint.clamp), and stn_loops
 * takes the whole grid for its rows' interiors (field_rule_bounds): no
 * border rows, no x ends, as in an expert's loop over padded rows.  A
 * value may (Neumann mode reads past a face the face's); a gradient's
 * gather where RULE_EXTEND holds (field_rule: its partials past a face,
 * evaluated there on the clamped data, make it exact) */
enum { FIELD_XPAD = 8 }; /* runtime/stenc_inline.h STENC_FIELD_XPAD */
static int whole_rows(const Fields *G, Node *const *roots, int nr, int nreal)
{
    for (int q = 0; q < G->n; ++q)
        if (G->f[q].lo[0] < -FIELD_XPAD || G->f[q].hi[0] > FIELD_XPAD) return 0;
    for (int r = 0; r < nr; ++r)
        if (!own_point_only(roots[r], nreal)) return 0;
    return 1;
}
static int field_rule(const RedPlan *P, const Fields *G, Node *const *roots, int nr)
{
    return P->D == 3 && P->extend && whole_rows(G, roots, nr, P->es->narr);
}

/* The bounds (ROLL_INIT) by which stn_loops runs every row of such a job
 * whole through its interior in Neumann mode (a gradient's gather: GATHER) */
static char *field_rule_bounds(int gather)
{
    Str b;
    str_open(&b);
    fprintf(b.f, "/* every row runs through the interior in Neumann mode: its field rows past a face and\n"
                 "           past a row's ends hold the face's (%s) */\n"
                 "        const int st_rc = st_mode == STENC_NEUMANN;\n",
            gather ? "gen/rules.c RULE_EXTEND; gen/emit.c field_rule" : "the mode's reads; gen/emit.c whole_rows");
    for (int d = 0; d < 3; ++d)
        fprintf(b.f, "        const ptrdiff_t st_rlo%d = st_rc ? 0 : st_ilo%d, st_rhi%d = st_rc ? st_n%d : st_ihi%d;\n", d, d, d, d, d);
    return str_close(&b);
}

/* Point fields for a gradient's gather (fields.c), the texts of a job's
 * fields (*DECL, *ROWS, *BODY) when they take every costly operation of
 * many taps out of it: Good's gradient reads sqrt(x + eps) at the point and
 * its neighbours, filled once a point into rows of strips (fields_print),
 * and what is left is one division at the point, an expert's loop.  The
 * partials then need no rolling rows (emit_reduce_kind).  Returns 0 and
 * "" texts (*T) when the reduction has no such fields: a root of many taps
 * (TV's) is still evaluated once a point by the rolling rows. */
static int gather_fields(const RedPlan *P, int want_v, Fields *G, FieldText *t, int *clamp)
{
    Node *roots[MAXARR + 1];
    char *fmts[MAXARR + 1];
    int nr = 0;
    if (want_v) roots[nr] = P->rv.f, fmts[nr++] = strdup("{ const stn_real st_v = %s; stn_vacc }");
    for (int a = 0; a < P->N; ++a) {
        if (!P->diff[a]) continue;
        Str t;
        str_open(&t);
        fprintf(t.f, "{ ");
        point_index(t.f, P->es, P->s->arr[P->first_read].name, "st_q");
        fprintf(t.f, " const stn_real st_gv = %%s; stn_gstore(%s, st_q) }", P->E.names[P->N + a]);
        roots[nr] = want_v ? P->gsum[a] : P->gsum_g[a], fmts[nr++] = str_close(&t);
    }
    int n = fields_plan_roots(P->s, roots, nr, P->es->narr, G);
    Node *sub[MAXARR + 1];
    for (int r = 0; r < nr && n > 0; ++r)
        if (!(sub[r] = fields_apply(P->s, G, roots[r], P->es->narr))) n = 0;
    unsigned char *seen = n > 0 ? calloc(ex_count(), 1) : NULL;
    for (int r = 0; r < nr && n > 0; ++r)
        if (!seen || costly_over_taps(sub[r], seen)) n = 0;
    for (int r = 0; r < nr && n > 0; ++r) roots[r] = sub[r];
    free(seen);
    *clamp = n > 0 && field_rule(P, G, roots, nr);
    const FieldPrint fp = {P->es, P->E.names, P->es->narr, G, P->D == 3, *clamp, NULL};
    fields_print_roots(n > 0 ? &fp : NULL, roots, (const char *const *)fmts, nr, t);
    for (int r = 0; r < nr; ++r) free(fmts[r]);
    return n > 0;
}

static void emit_reduce_kind(FILE *out, const RedPlan *P, int kind, FILE *rollhelp)
{
    const int want_v = kind != 1, want_g = kind != 0, D = P->D;
    const char *kname = kind == 0 ? "value" : kind == 1 ? "grad" : "value_grad";
    Str doc, args, chk, set, box, in, bd, xe, xr;
    str_open(&doc); str_open(&args); str_open(&chk); str_open(&set); str_open(&box); str_open(&in); str_open(&bd); str_open(&xe);
    str_open(&xr);
    print_reduce_doc(doc.f, P, kind);
    print_reduce_args(args.f, P, want_v, want_g);
    print_reduce_checks(chk.f, P, want_v, want_g);
    print_reduce_setup(set.f, P, want_g);
    print_reduce_box(box.f, P, want_g);
    char *szd, *szb;
    print_reduce_interior(in.f, P, want_v, want_g, &szd, &szb);
    print_border_point(bd.f, P, want_v, want_g);
    Fields G = {0};
    FieldText ft = {0};
    int fclamp = 0;
    const int gfields = want_g && gather_fields(P, want_v, &G, &ft, &fclamp);
    const int vclamp = !want_g && D == 3 && P->F.n > 0 && whole_rows(&P->F, &P->F.value, 1, P->N);
    char *sfb = fclamp || vclamp ? field_rule_bounds(fclamp) : NULL;
    const FieldPrint vfp = {P->es, P->E.names, P->N, &P->F, D == 3, vclamp, NULL}; /* the value's own fields */
    {
        /* 3D: the interior rows' ends read the planes' fields too (the
         * gradient's gather fields, the value's own): after a row's last
         * strip its box's rows hold every strip's fills (a row function's
         * rows are at most a tile's, st_nr <= st_ty, so no ring row of
         * the call is reused before the ends read it) */
        const FieldPrint gfp = {P->es, P->E.names, P->es->narr, &G, 1, 0, NULL};
        const FieldPrint *efp = D != 3 ? NULL : gfields ? &gfp : !want_g && P->F.n > 0 ? &vfp : NULL;
        const EndsIn ein = {P, want_v, want_g, efp};
        print_row_ends(xe.f, &ein);
        print_row_fast_ends(xr.f, &ein);
    }
    char *sdoc = str_close(&doc), *sargs = str_close(&args), *schk = str_close(&chk), *sset = str_close(&set);
    char *sbox = str_close(&box), *sin = str_close(&in), *sbd = str_close(&bd), *sxe = str_close(&xe), *sxr = str_close(&xr);
    char *scls = border_classes(P, want_v, want_g);
    char *sbr = border_rows(P->s, P->es, &P->E, &P->rv, P->N, P->diff, P->ndt, (Node **)P->dtaps, (Node **)P->part, want_v,
                            want_g, P->first_read, sbd, scls);
    free(scls);
    RollText rt = {0};
    if (want_g && !gfields) {
        char fn[240];
        snprintf(fn, sizeof fn, "stenc_h_%s_%s_%dd", P->base, kname, D);
        char *smv = mval_call(P), *svp = NULL;
        if (want_v) {
            Str vp;
            str_open(&vp);
            print_border_point(vp.f, P, 1, 0);
            svp = str_close(&vp);
        }
        const RollIn rin = {P, want_v, fn, smv, svp, 1};
        roll_body(&rin, rollhelp, &rt, sbr);
        free(smv);
        free(svp);
    }
    if (rt.border) { free(sbr); sbr = rt.border; rt.border = NULL; }
    char b2[200];
    snprintf(b2, sizeof b2, "%s_%s", P->base, kname);
    entry_begin(out, b2, kname, D);
    print_quoted(out, sdoc); fprintf(out, ",\n");
    entry_pieces(out, sargs, schk, sset);
    fprintf(out, ",\n[[");
    char *spf = reduce_prefetch(P, want_g);
    if (!want_g) fields_print(&vfp, "{ const stn_real st_v = %s; stn_vacc }", &ft);
    const JobOpt jo = {sbr, sxe, rt.body ? rt.body : "", rt.init ? rt.init : sfb ? sfb : "", rt.size ? rt.size : "", sxr, szd, szb, 1, rt.state,
                       want_g ? nt_array(P) : "", ft.pf[0] ? ft.pf : spf, ft.decl, ft.rows, ft.body, ft.size,
                       rt.body ? reduce_planes(P, 0) : ft.planes ? ft.planes : reduce_planes(P, want_g)};
    job_opt(out, D, want_v, want_g, sbox, sin, sbd, &jo);
    fprintf(out, "]])\n\n");
    print_reduce_dist(out, P, b2, kname, want_g, sargs);
    free(sbr); free(sxe); free(sxr); roll_text_free(&rt); free(szd); free(szb); free(spf); free(sfb);
    fields_text_free(&ft);
    free(sdoc); free(sargs); free(schk); free(sset); free(sbox); free(sin); free(sbd);
}

/* a reduction's entry points (value, and with differentiable arrays grad
 * and value_grad) to OUT, its gather form to DUMP, its helpers (per-point
 * and rolling rows' functions) to *HELPERS */
static int emit_reduce_entries(FILE *out, FILE *dump, const Stencil *s, const Reduce *ru, char **helpers)
{
    RedPlan *P = malloc(sizeof *P);
    if (!P) return gen_error(s->file, ru->line, "out of memory");
    if (plan_reduce(s, ru, P)) { free(P); return -1; }
    char *shelp = print_point_helpers(P);
    dump_gather(dump, P);
    Str rollhelp; /* the rolling rows' functions (C only), added to the helpers */
    str_open(&rollhelp);
    for (int kind = 0; kind < 3 && (kind == 0 || P->ndt > 0); ++kind) emit_reduce_kind(out, P, kind, rollhelp.f);
    char *srh = str_close(&rollhelp);
    Str all;
    str_open(&all);
    fprintf(all.f, "%s%s", shelp, srh);
    *helpers = str_close(&all);
    free(shelp);
    free(srh);
    plan_free(P);
    free(P);
    return 0;
}

/* One pass over the stencil: the instance file for the backend templates and,
 * from the same expressions, the readable adjoint stencils. */
int emit_stencil(FILE *out, FILE *dump, const Stencil *s)
{
    for (int i = 0; i < s->nk; ++i)
        if (emit_update(out, s, &s->k[i])) return -1;
    for (int i = 0; i < s->nk; ++i)
        if (emit_kernel_adjoint(out, dump, s, &s->k[i])) return -1;
    for (int i = 0; i < s->nr; ++i)
        if (emit_reduce(out, dump, s, &s->r[i])) return -1;
    return 0;
}
