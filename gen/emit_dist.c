/* stenc-gen: the distributed entry points (NAME.dist.c, NAME.h).
 *
 * For every generated entry point E (an update, an adjoint, a reduction's
 * value, grad or value_grad) a wrapper stenc_dist_E takes a distributed
 * grid (runtime/stenc_dist.h) instead of the sizes:
 *   - updates and adjoints check the ghost width against the kernel's reach
 *     and run E on the whole local block (the halo update is the caller's:
 *     ImplicitGlobalGrid's pattern);
 *   - a reduction's value runs E in valid mode on the box of the owned
 *     points and their reads (the global boundary's mode applied by the
 *     box: clamped reads for neumann) and sums over the processes;
 *   - its gradient runs E on the box of every point whose partials reach
 *     an owned point and writes G = beta*G + alpha*dR/dx on the owned points.
 * The wrapper's argument list is E's own, read from the entry's ARGS: this
 * file only plans (which argument is what) and prints. */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

enum { A_SIZE, A_MODE, A_READ, A_PARAM, A_VALUE, A_ALPHA, A_BETA, A_GRAD, A_WRITE };
#define MAXITEM (2 * MAXARR + MAXPARAM + 8)

typedef struct {
    int n;
    char decl[MAXITEM][MAXNAME + 48];
    char name[MAXITEM][MAXNAME + 8];
    int role[MAXITEM];
} ArgList;

/* split "size_t nx, ..., const stn_real *stn_restrict x, stn_real wx" into
 * declarations, names and roles */
static void plan_args(const char *args, int D, ArgList *L)
{
    L->n = 0;
    for (const char *p = args; *p && L->n < MAXITEM;) {
        const char *e = strchr(p, ',');
        if (!e) e = p + strlen(p);
        while (*p == ' ') ++p;
        size_t len = (size_t)(e - p);
        int i = L->n++;
        snprintf(L->decl[i], sizeof L->decl[i], "%.*s", (int)len, p);
        const char *b = e;
        while (b > p && (b[-1] == '_' || (b[-1] >= 'a' && b[-1] <= 'z') || (b[-1] >= 'A' && b[-1] <= 'Z') ||
                         (b[-1] >= '0' && b[-1] <= '9')))
            --b;
        snprintf(L->name[i], sizeof L->name[i], "%.*s", (int)(e - b), b);
        const char *d = L->decl[i];
        L->role[i] = i < D                               ? A_SIZE
                     : !strcmp(d, "int mode")            ? A_MODE
                     : !strncmp(d, "const stn_real *", 16) ? A_READ
                     : !strncmp(d, "double *", 8)        ? A_VALUE
                     : !strcmp(L->name[i], "alpha")      ? A_ALPHA
                     : !strcmp(L->name[i], "beta")       ? A_BETA
                     : !strncmp(d, "stn_real *", 10)     ? (strstr(L->name[i], "_grad") ? A_GRAD : A_WRITE)
                                                         : A_PARAM;
        p = *e ? e + 1 : e;
    }
}

static int count_role(const ArgList *L, int role)
{
    int c = 0;
    for (int i = 0; i < L->n; ++i) c += L->role[i] == role;
    return c;
}

/* "int stenc_dist_[cuda_]E_[[]]stn_sfx[[]](struct stenc_grid *g, ARGS w/o
 * sizes[, struct CUstream_st *stream])" */
static void print_head_for(FILE *f, const char *entry, const ArgList *L, int cuda)
{
    fprintf(f, "int stenc_dist_%s%s_[[]]stn_sfx[[]](struct stenc_grid *g", cuda ? "cuda_" : "", entry);
    for (int i = 0; i < L->n; ++i)
        if (L->role[i] != A_SIZE) fprintf(f, ", %s", L->decl[i]);
    fprintf(f, cuda ? ", struct CUstream_st *stream)" : ")");
}
static void print_head(FILE *f, const char *entry, const ArgList *L) { print_head_for(f, entry, L, 0); }

/* the local entry's call: sizes from the box (or the block), arguments
 * replaced per role by what the wrapper passes */
static void print_call(FILE *f, const char *entry, const ArgList *L, int boxed)
{
    fprintf(f, "stenc_%s_[[]]stn_sfx[[]](", entry);
    int r = 0, gi = 0;
    for (int i = 0; i < L->n; ++i) {
        if (i) fprintf(f, ", ");
        switch (boxed ? L->role[i] : (L->role[i] == A_SIZE ? A_SIZE : -1)) {
        case A_SIZE: fprintf(f, boxed ? "st_b.m[%d]" : "st_n[%d]", i); break;
        case A_MODE: fprintf(f, "STENC_VALID"); break;
        case A_READ: fprintf(f, "(const stn_real *)st_t[%d]", r++); break;
        case A_VALUE: fprintf(f, "&st_v"); break;
        case A_ALPHA: fprintf(f, "1"); break;
        case A_BETA: fprintf(f, "0"); break;
        case A_GRAD: fprintf(f, "(stn_real *)st_tg[%d]", gi++); break;
        default: fprintf(f, "%s", L->name[i]);
        }
    }
    fprintf(f, ")");
}

static void print_offsets(FILE *f, const long *omin, const long *omax)
{
    fprintf(f, "    static const int st_omin[3] = {%ld, %ld, %ld}, st_omax[3] = {%ld, %ld, %ld};\n", omin[0], omin[1],
            omin[2], omax[0], omax[1], omax[2]);
}

/* pack the reads into the box (grad: the gradient's box); st_t[] */
static void print_pack(FILE *f, const ArgList *L, int grad)
{
    int nr = count_role(L, A_READ);
    fprintf(f, "    const void *st_in[%d] = {", nr);
    for (int i = 0, c = 0; i < L->n; ++i)
        if (L->role[i] == A_READ) fprintf(f, "%s%s", c++ ? ", " : "", L->name[i]);
    fprintf(f, "};\n    void *st_t[%d] = {0};\n    stenc_dist_box st_b;\n", nr);
    fprintf(f, "    if (st_rc == STENC_OK) st_rc = stenc_dist_pack(g, mode, %d, st_omin, st_omax, sizeof(stn_real), %d, "
               "st_in, st_t, &st_b);\n", grad, nr);
}

static void dist_value(FILE *f, const char *entry, const ArgList *L, int D, int need, const char *what,
                       const long *omin, const long *omax)
{
    fprintf(f, "\n{\n");
    print_offsets(f, omin, omax);
    fprintf(f, "    int st_rc = stenc_dist_check(g, %d, %d, \"%s (value)\");\n", D, need, what);
    fprintf(f, "    double st_v = 0;\n");
    print_pack(f, L, 0);
    fprintf(f, "    if (st_rc == STENC_OK) st_rc = ");
    print_call(f, entry, L, 1);
    fprintf(f, ";\n    stenc_dist_release(%d, st_t);\n", count_role(L, A_READ));
    fprintf(f, "    return stenc_grid_sum(g, st_rc, st_v, value);\n}\n");
}

static void dist_grad(FILE *f, const char *entry, const ArgList *L, int D, int need, const char *what,
                      const long *omin, const long *omax)
{
    int ng = count_role(L, A_GRAD), nr = count_role(L, A_READ);
    fprintf(f, "\n{\n");
    print_offsets(f, omin, omax);
    fprintf(f, "    int st_rc = stenc_dist_check(g, %d, %d, \"%s (gradient)\");\n", D, need, what);
    print_pack(f, L, 1);
    fprintf(f, "    void *st_tg[%d] = {0};\n", ng);
    fprintf(f, "    if (st_rc == STENC_OK) st_rc = stenc_dist_alloc(st_b.count, sizeof(stn_real), %d, st_tg);\n", ng);
    fprintf(f, "    if (st_rc == STENC_OK) st_rc = ");
    print_call(f, entry, L, 1);
    fprintf(f, ";\n");
    for (int i = 0, gi = 0; i < L->n; ++i)
        if (L->role[i] == A_GRAD)
            fprintf(f, "    if (st_rc == STENC_OK) st_rc = stenc_dist_unpack_grad_[[]]stn_sfx[[]](g, &st_b, "
                       "(const stn_real *)st_tg[%d], alpha, beta, %s);\n", gi++, L->name[i]);
    fprintf(f, "    stenc_dist_release(%d, st_t);\n    stenc_dist_release(%d, st_tg);\n    return st_rc;\n}\n", nr, ng);
}

/* value_grad = the distributed value, then the distributed gradient */
static void dist_value_grad(FILE *f, const char *vname, const char *gname, const ArgList *L)
{
    fprintf(f, "\n{\n    int st_rc = stenc_dist_%s_[[]]stn_sfx[[]](g", vname);
    for (int i = 0; i < L->n; ++i)
        if (L->role[i] == A_MODE || L->role[i] == A_READ || L->role[i] == A_PARAM || L->role[i] == A_VALUE)
            fprintf(f, ", %s", L->name[i]);
    fprintf(f, ");\n    if (st_rc == STENC_OK) st_rc = stenc_dist_%s_[[]]stn_sfx[[]](g", gname);
    for (int i = 0; i < L->n; ++i)
        if (L->role[i] != A_SIZE && L->role[i] != A_VALUE) fprintf(f, ", %s", L->name[i]);
    fprintf(f, ");\n    return st_rc;\n}\n");
}

static void dist_kernel(FILE *f, const char *entry, const ArgList *L, int D, int need, const char *what)
{
    fprintf(f, "\n{\n    int st_rc = stenc_dist_check(g, %d, %d, \"%s\");\n", D, need, what);
    fprintf(f, "    if (st_rc != STENC_OK) return st_rc;\n    size_t st_n[3];\n    stenc_dist_local(g, st_n);\n");
    fprintf(f, "    return ");
    print_call(f, entry, L, 0);
    fprintf(f, ";\n}\n");
}

/* "stenc_cuda_E_[[]]stn_sfx[[]](st_n[0], ..., ARGS, stream)": the CUDA entry on the whole block */
static void print_cuda_call(FILE *f, const char *entry, const ArgList *L)
{
    static const char *sz[3] = {"st_n[0]", "st_n[1]", "st_n[2]"};
    fprintf(f, "stenc_cuda_%s_[[]]stn_sfx[[]](", entry);
    for (int i = 0; i < L->n; ++i) fprintf(f, i ? ", %s" : "%s", L->role[i] == A_SIZE ? sz[i] : L->name[i]);
    fprintf(f, ", stream)");
}

/* the same on device arrays: the CUDA entry on the local block, queued on
 * stream (built with -DSTENC_DIST_CUDA, where the CUDA kernels exist) */
static void dist_cuda_kernel(FILE *out, const char *entry, const ArgList *L, int D, int need, const char *what)
{
    Str proto;
    str_open(&proto);
    print_head_for(proto.f, entry, L, 1);
    char *sp = str_close(&proto);
    fprintf(out, "stn_dist_proto([[/* %s on a distributed grid of device arrays, queued on stream (ghost width >= %d; "
                 "builds with CUDA): runtime/stenc_dist.h */\n%s;\n]])\n", what, need, sp);
    fprintf(out, "stn_dist([[#ifdef STENC_DIST_CUDA\n%s\n{\n", sp);
    fprintf(out, "    int st_rc = stenc_dist_check(g, %d, %d, \"%s\");\n", D, need, what);
    fprintf(out, "    if (st_rc != STENC_OK) return st_rc;\n    size_t st_n[3];\n    stenc_dist_local(g, st_n);\n");
    fprintf(out, "    return ");
    print_cuda_call(out, entry, L);
    fprintf(out, ";\n}\n#endif\n]])\n\n");
    free(sp);
}

/* The outermost dimension's write window of a kernel: every statement must
 * write planes [c, n + hi + c) with the same c and hi (a VAR index along
 * that dimension); returns 0 when the kernel cannot run in windows.  (The
 * halo update refuses, at run time, a written array whose stagger the ghost
 * width cannot take.) */
static int hide_window(const Stencil *s, const Kernel *k, long *c, long *hi, long *smax)
{
    const int d = s->dims - 1;
    *smax = -1;
    for (int i = 0; i < k->nst; ++i) {
        const Stmt *st = &k->st[i];
        if (!st->loop[d] || st->lhs[d].kind != IK_VAR) return 0;
        if (i == 0) { *c = st->lhs[d].c; *hi = st->hi[d]; }
        else if (st->lhs[d].c != *c || st->hi[d] != *hi) return 0;
        if (s->arr[st->arr].ext[d] > *smax) *smax = s->arr[st->arr].ext[d];
    }
    return 1;
}

static int find_arr(const Stencil *s, const char *name)
{
    for (int a = 0; a < s->narr; ++a)
        if (!strcmp(s->arr[a].name, name)) return a;
    return -1;
}

static void print_window_call(FILE *f, const char *pfx, const char *entry, const ArgList *L, int D, const Stencil *s,
                              const char *q, const char *stream);
static int print_fields(FILE *f, const ArgList *L, int D, const Stencil *s);

/* a hidden-exchange entry's start: the ghost check, the local extent, the
 * written arrays as halo fields (returns their count) and the plan */
static int print_hide_prologue(FILE *f, int D, int need, const char *what, const ArgList *L, const Stencil *s, long c,
                               long hi, long smax)
{
    fprintf(f, "\n{\n    int st_rc = stenc_dist_check(g, %d, %d, \"%s\");\n", D, need, what);
    fprintf(f, "    if (st_rc != STENC_OK) return st_rc;\n    size_t st_n[3];\n    stenc_dist_local(g, st_n);\n");
    const int nw = print_fields(f, L, D, s);
    fprintf(f, "    stenc_dist_hide st_h;\n    stenc_dist_hide_plan(g, %ld, %ld, %ld, &st_h);\n", c, hi, smax);
    return nw;
}

/* the update with its halo exchange hidden behind the interior (runtime:
 * stenc_dist_hide_*); falls back to kernel + halo update when the plan says
 * nothing can be hidden */
static void dist_hide(FILE *f, const char *entry, const ArgList *L, int D, int need, const char *what,
                      const Stencil *s, long c, long hi, long smax)
{
    const int nw = print_hide_prologue(f, D, need, what, L, s, c, hi, smax);
    fprintf(f, "    if (!st_h.ok) {\n        st_rc = ");
    print_call(f, entry, L, 0);
    fprintf(f, ";\n        int st_r2 = stenc_halo_update(g, %d, st_f);\n        return st_rc != STENC_OK ? st_rc : st_r2;\n    }\n", nw);
    fprintf(f, "    for (int st_q = 0; st_q < 3; ++st_q) {\n");
    fprintf(f, "        if (st_q == 2) { int st_r2 = stenc_dist_hide_start(g, %d, st_f, &st_h); if (st_rc == STENC_OK) st_rc = st_r2; }\n", nw);
    fprintf(f, "        if (st_rc == STENC_OK) st_rc = ");
    print_window_call(f, "", entry, L, D, s, "st_q", NULL);
    fprintf(f, ";\n    }\n    return stenc_dist_hide_finish(g, %d, st_f, &st_h, st_rc);\n}\n", nw);
}

/* the kernel on window Q of the plan (planes [w0, w0 + nw) along the
 * outermost dimension): sizes and array offsets; STREAM: the CUDA stream
 * argument (NULL: the C entry) */
static void print_window_call(FILE *f, const char *pfx, const char *entry, const ArgList *L, int D, const Stencil *s,
                              const char *q, const char *stream)
{
    fprintf(f, "stenc_%s%s_[[]]stn_sfx[[]](", pfx, entry);
    for (int i = 0; i < L->n; ++i) {
        if (i) fprintf(f, ", ");
        if (L->role[i] == A_SIZE) {
            if (i == D - 1) fprintf(f, "st_h.nw[%s]", q);
            else fprintf(f, "st_n[%d]", i);
        } else if (L->role[i] == A_WRITE || L->role[i] == A_READ) {
            const Array *A = &s->arr[find_arr(s, L->name[i])];
            fprintf(f, "%s + st_h.w0[%s] * (ptrdiff_t)(", L->name[i], q);
            if (D == 2) fprintf(f, "st_n[0] + %ld)", A->ext[0]);
            else fprintf(f, "(st_n[0] + %ld) * (st_n[1] + %ld))", A->ext[0], A->ext[1]);
        } else fprintf(f, "%s", L->name[i]);
    }
    fprintf(f, stream ? ", %s)" : ")", stream);
}

/* the written arrays as halo fields: "stenc_field st_f[] = {...};", their count */
static int print_fields(FILE *f, const ArgList *L, int D, const Stencil *s)
{
    int nw = 0;
    fprintf(f, "    stenc_field st_f[] = {");
    for (int i = 0; i < L->n; ++i)
        if (L->role[i] == A_WRITE) {
            const Array *A = &s->arr[find_arr(s, L->name[i])];
            fprintf(f, "%s{%s, (int)sizeof(stn_real), {%ld, %ld, %ld}}", nw++ ? ", " : "", L->name[i], A->ext[0],
                    A->ext[1], D == 3 ? A->ext[2] : 0L);
        }
    fprintf(f, "};\n");
    return nw;
}

/* the device version (builds with CUDA): boundary windows on stream, the
 * interior on inner while the outermost exchange runs (runtime:
 * stenc_dist_hide_cuda_*); kernel + device halo update when nothing can be
 * hidden */
static void dist_cuda_hide(FILE *f, const char *entry, const ArgList *L, int D, int need, const char *what,
                           const Stencil *s, long c, long hi, long smax)
{
    const int nw = print_hide_prologue(f, D, need, what, L, s, c, hi, smax);
    fprintf(f, "    if (!st_h.ok) {\n        st_rc = ");
    print_cuda_call(f, entry, L);
    fprintf(f, ";\n        int st_r2 = stenc_halo_update_cuda(g, %d, st_f, stream);\n"
               "        return st_rc != STENC_OK ? st_rc : st_r2;\n    }\n", nw);
    /* what stream has queued (the inputs) is done before inner starts */
    fprintf(f, "    st_rc = stenc_cuda_stream_synchronize(stream);\n");
    fprintf(f, "    for (int st_q = 0; st_q < 2 && st_rc == STENC_OK; ++st_q) st_rc = ");
    print_window_call(f, "cuda_", entry, L, D, s, "st_q", "stream");
    fprintf(f, ";\n    if (st_rc == STENC_OK) st_rc = ");
    print_window_call(f, "cuda_", entry, L, D, s, "2", "inner");
    fprintf(f, ";\n    st_rc = stenc_dist_hide_cuda_exchange(g, %d, st_f, &st_h, st_rc, stream);\n", nw);
    fprintf(f, "    return stenc_dist_hide_cuda_finish(g, %d, st_f, &st_h, st_rc, stream, inner);\n}\n", nw);
}

void emit_dist_hide(FILE *out, const char *entry, int D, const char *args, int need, const char *what,
                    const Stencil *s, const Kernel *k)
{
    long c = 0, hi = 0, smax = 0;
    if (!hide_window(s, k, &c, &hi, &smax)) return;
    ArgList L;
    plan_args(args, D, &L);
    for (int i = 0; i < L.n; ++i)
        if ((L.role[i] == A_WRITE || L.role[i] == A_READ) && find_arr(s, L.name[i]) < 0) return;
    char hname[240]; /* NAME_Dd -> NAME_hide_Dd */
    size_t el = strlen(entry);
    snprintf(hname, sizeof hname, "%.*s_hide%s", (int)(el - 3), entry, entry + el - 3);
    Str proto;
    str_open(&proto);
    print_head(proto.f, hname, &L);
    char *sp = str_close(&proto);
    fprintf(out, "stn_dist_proto([[/* %s on a distributed grid, then the halo update of what it writes, with the "
                 "exchange along the outermost dimension hidden behind the interior: runtime/stenc_dist.h */\n%s;\n]])\n",
            what, sp);
    fprintf(out, "stn_dist([[%s", sp);
    dist_hide(out, entry, &L, D, need, what, s, c, hi, smax);
    fprintf(out, "]])\n\n");
    free(sp);
    /* and on device arrays */
    str_open(&proto);
    print_head_for(proto.f, hname, &L, 1);
    sp = str_close(&proto);
    /* the inner stream after the stream argument */
    sp = realloc(sp, strlen(sp) + 40);
    if (!sp) return;
    sp[strlen(sp) - 1] = 0;
    strcat(sp, ", struct CUstream_st *inner)");
    fprintf(out, "stn_dist_proto([[/* %s on a distributed grid of device arrays, then the device halo update of what it "
                 "writes, the exchange along the outermost dimension hidden behind the interior (run on inner; builds "
                 "with CUDA): runtime/stenc_dist.h */\n%s;\n]])\n", what, sp);
    fprintf(out, "stn_dist([[#ifdef STENC_DIST_CUDA\n%s", sp);
    dist_cuda_hide(out, entry, &L, D, need, what, s, c, hi, smax);
    fprintf(out, "#endif\n]])\n\n");
    free(sp);
}

void emit_dist(FILE *out, const char *entry, const char *kind, int D, const char *args, int need, const long *omin,
               const long *omax, const char *what)
{
    ArgList L;
    plan_args(args, D, &L);
    Str proto;
    str_open(&proto);
    print_head(proto.f, entry, &L);
    char *sp = str_close(&proto);
    fprintf(out, "stn_dist_proto([[/* %s on a distributed grid (ghost width >= %d): runtime/stenc_dist.h */\n%s;\n]])\n",
            what, need, sp);
    fprintf(out, "stn_dist([[%s", sp);
    if (!strcmp(kind, "value")) dist_value(out, entry, &L, D, need, what, omin, omax);
    else if (!strcmp(kind, "grad")) dist_grad(out, entry, &L, D, need, what, omin, omax);
    else if (!strcmp(kind, "value_grad")) {
        char vname[200], gname[200];
        const char *at = strstr(entry, "_value_grad_");
        snprintf(vname, sizeof vname, "%.*s_value_%s", (int)(at - entry), entry, at + 12);
        snprintf(gname, sizeof gname, "%.*s_grad_%s", (int)(at - entry), entry, at + 12);
        dist_value_grad(out, vname, gname, &L);
    } else dist_kernel(out, entry, &L, D, need, what);
    fprintf(out, "]])\n\n");
    free(sp);
    if (!strcmp(kind, "update") || !strcmp(kind, "adjoint")) dist_cuda_kernel(out, entry, &L, D, need, what);
}
