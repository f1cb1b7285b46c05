/* stenc-gen: shared declarations of the generator (parser, expression DAG,
 * analysis, differentiation, emission). */
#ifndef STENC_GEN_H
#define STENC_GEN_H

#include <stddef.h>
#include <stdio.h>

#define MAXNAME 64
#define MAXARR 32
#define MAXPARAM 32
#define MAXSTMT 16
#define MAXKERN 128
#define MAXRED 16
#define MAXTAP 128
/* limits on one expression (docs/language.md, "Limits") */
#define MAXNEST 200        /* nested parentheses, calls and powers */
#define MAXDEPTH 1000      /* depth of the expression tree (a sum of N terms is N deep) */
#define MAXNODES 500000    /* distinct subexpressions of one stencil pass */

/* One index of a tap, per dimension. */
enum { IK_VAR = 0, IK_CONST = 1, IK_END = 2 };
typedef struct { int kind; long c; } Index; /* VAR: i+c; CONST: c; END: n+c */

enum {
    E_NUM, E_PARAM, E_TAP, E_ADD, E_SUB, E_MUL, E_DIV, E_NEG, E_POWI, E_CALL,
    E_SELECT, E_CMP
};
enum { F_SQRT, F_EXP, F_LOG, F_ABS, F_MIN, F_MAX, F_POW, F_SIN, F_COS, F_TAN,
       F_TANH, F_ATAN, F_SINH, F_COSH, F_FLOOR, F_SIGN, F_COUNT };
enum { C_LT, C_LE, C_GT, C_GE, C_EQ, C_NE };

typedef struct Node {
    int kind;
    int op;           /* E_CALL: F_*; E_CMP: C_*; E_POWI: exponent */
    double num;       /* E_NUM */
    int ref;          /* E_PARAM: parameter; E_TAP: array */
    Index idx[3];     /* E_TAP */
    int nargs;
    int depth;        /* 1 + the deepest argument's depth */
    struct Node *a[3];
    unsigned hash;
    int id;
    struct Node *chain;
    /* scratch for traversals */
    int mark, uses, tmp;
    struct Node *memo; int memo_tag;
} Node;

typedef struct {
    char name[MAXNAME];
    int line;
    long ext[3];      /* extent along d is n_d + ext[d] */
    int is_const;     /* not differentiated */
} Array;

typedef struct {
    int arr;          /* written array */
    Index lhs[3];
    Node *rhs;
    int line;
    int loop[3];      /* 1 if dimension d is looped */
    long hi[3];       /* looped: p_d in [0, n_d + hi[d]); not looped: single point */
} Stmt;

typedef struct {
    char name[MAXNAME];
    int line;
    Stmt st[MAXSTMT];
    int nst;
    long kmin[3];     /* extra minimum grid sizes (fixed indices kept apart) */
} Kernel;

typedef struct {
    char name[MAXNAME];
    int line;
    Node *f;
} Reduce;

typedef struct {
    char name[MAXNAME];
    const char *file;       /* user's .stn path (for messages) */
    int dims;
    Array arr[MAXARR];
    int narr;
    char param[MAXPARAM][MAXNAME];
    int nparam;
    Kernel k[MAXKERN];
    int nk;
    Reduce r[MAXRED];
    int nr;
    int quiet;              /* no warnings (a second dimension count) */
} Stencil;

/* error reporting: "FILE:LINE: error: ..." to stderr; returns -1 */
int gen_error(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "FILE:LINE: warning: ..." to stderr (generation goes on) */
void gen_warning(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- expressions (expr.c) ---- */
void ex_reset(void);
Node *ex_num(double v);
Node *ex_param(int p);
Node *ex_tap(int arr, const Index idx[3]);
Node *ex_bin(int kind, Node *a, Node *b);
Node *ex_add(Node *a, Node *b);
Node *ex_sub(Node *a, Node *b);
Node *ex_mul(Node *a, Node *b);
Node *ex_div(Node *a, Node *b);
Node *ex_neg(Node *a);
Node *ex_powi(Node *a, int n);
Node *ex_call(int fn, int nargs, Node **args);
Node *ex_select(Node *c, Node *a, Node *b);
Node *ex_cmp(int op, Node *a, Node *b);
int ex_is_num(const Node *n, double v);
/* number of distinct nodes made since ex_reset */
size_t ex_count(void);
/* 1 if a constant folded to infinity or NaN since the last call (then clears) */
int ex_take_nonfinite(void);
extern const char *const ex_fn_name[F_COUNT];
extern const int ex_fn_arity[F_COUNT];
int ex_fn_lookup(const char *name);

/* d n / d tap(arr, idx); returns NULL and sets *bad to the offending
 * function when n uses a non-differentiable function on the path. */
Node *ex_diff(Node *n, int arr, const Index idx[3], int *bad);
/* n with every VAR tap index shifted by off[d] (only dims with loop[d]). */
Node *ex_shift(Node *n, const long off[3]);
/* N evaluated at the point x = (from_n ? n : 0) + c: every x offset o of a
 * tap becomes the absolute index c + o, mapped by the boundary mode (0
 * valid, 1 neumann, 2 periodic) */
Node *ex_pin_x(Node *n, int mode, int from_n, long c);
/* the same along dimension d (0 x, 1 y, 2 z) */
Node *ex_pin(Node *n, int d, int mode, int from_n, long c);
/* n with every tap's pinned index along d at the point (offset 0) */
Node *ex_unpin(Node *n, int d);
/* n with every division by a non-constant y written as a product with 1/y,
 * so that partials sharing a denominator (a/s, b/s, ...) share one division
 * (costs at most one rounding more per quotient) */
Node *ex_recip(Node *n);
/* ROOTS rewritten in place: w*d^2 as (w*d)*d, c*(d*q) as (c*d)*q with q a
 * division or call, so a square and its partial share w*d */
void ex_share_weights(Node **roots, int n);
/* the sum n with its additive terms grouped by their tap-free factor:
 * c*(r1 + r2 - ...) for every distinct c (a loop invariant); the rests are
 * kept as derived (differences stay differences), or with COLLECT, a
 * group's terms that repeat collected ((a - b) - (c - a) as ((a + a) - b)
 * - c: for code that does not compute the differences for a value too) */
Node *ex_group_coef(Node *n, int collect);
/* n as a sum of terms coef[t] * rest[t]: coef free of taps, rest a
 * canonical product of factors with taps (equal products are one node).
 * Products distribute over sums, except sums that are subexpressions of
 * within (the reduction: its intermediates stay factors).  neg[t] is 0
 * (signs live in coef).  Returns the count, -1 past max terms. */
int ex_factor_terms(Node *n, Node *within, Node **coef, Node **rest, int *neg, int max);
/* n with each node from[t] (by identity) replaced by to[t] */
Node *ex_substitute(Node *n, Node *const *from, Node *const *to, int count);
/* collect distinct taps of n (all arrays, or one array when arr >= 0) */
int ex_taps(Node *n, int arr, Node **out, int max);
/* does n hold a call (other than abs, min, max, floor, sign) or a division
 * by something not a number or parameter? (rolling rows, point fields) */
int ex_costly(Node *n);
/* whether N itself is a costly operation (a call of a root, exp, ...; a
 * division by an expression) */
int ex_costly_op(const Node *n);
/* does n read array arr? */
int ex_reads(Node *n, int arr);
/* does n use parameter p? */
int ex_uses_param(Node *n, int p);

/* ---- border rules (rules.c) ---- */
/* which rules make a 3D gradient's interior gather exact at the faces in
 * Neumann mode (bit 1 << rule each): the partials at points past a face
 * taken as zero (RULE_ZERO), as the face point's (RULE_CLAMP), or evaluated
 * past the face with their taps clamped to the grid (RULE_EXTEND); 0 for
 * none; found by evaluating the partials PART of the taps DTAPS on small
 * grids (DIFF: the arrays differentiated).  RULE_ZERO and RULE_CLAMP are
 * about the y and z faces; bit RULE_XBIT(rule) says that the rule holds at
 * the x faces too (RULE_EXTEND's bit covers all three) */
enum { RULE_NONE, RULE_ZERO, RULE_CLAMP, RULE_EXTEND };
#define RULE_XBIT(rule) (1 << (4 + (rule)))
#define RULES_ALL (1 << RULE_ZERO | 1 << RULE_CLAMP | 1 << RULE_EXTEND | RULE_XBIT(RULE_ZERO) | RULE_XBIT(RULE_CLAMP))
int border_rules(const Stencil *s, int ndt, Node *const *dtaps, Node *const *part, const int *diff);

/* ---- printing (print.c) ---- */
/* How taps are written in C. */
/* how a tap's indices are printed: direct, all mapped by the boundary mode
 * (mode), y/z mapped (st_mode, in border rows), x mapped (mode, in the
 * helpers for the row ends of interior rows) */
enum { TAP_DIRECT, TAP_MAPPED, TAP_STN, TAP_MAPPED_YZ, TAP_MAPPED_X, TAP_HOISTED_YZ, TAP_ROW, TAP_AHEAD };
/* TAP_HOISTED_YZ: like TAP_MAPPED_YZ, with each mapped y/z index read from a
 * variable declared before the loop (pr_hoisted_yz): the index maps' branches
 * inside an x loop keep GCC from vectorising it.
 * TAP_ROW: like TAP_DIRECT, relative to the row pointer st_row_NAME of the point's
 * row (pr_row_pointers): in an interior loop GCC then addresses the x
 * neighbours by displacements and keeps every row in a register.
 * TAP_AHEAD: the same relative to st_next_NAME, the row of the point after
 * the point's in a z-marching CUDA interior (gen/zcache.c) */
typedef struct {
    const Stencil *s;
    int tapmode;
    const char *const *arrname;   /* name to print for array index (NULL: s->arr) */
    const char *const *vars;      /* loop variable names per dimension (NULL: i, j, k) */
    const char *const *xorg;      /* TAP_ROW: per array, NULL or the name of the x index its
                                   * row starts at (a point field's strip, fields.c) */
    int rowfrom;                  /* > 0: the arrays from rowfrom on are rows whatever the
                                   * mode, read as TAP_ROW reads (the rolling rows'
                                   * point fields, emit.c roll_fields) */
} PrintCtx;

/* the parameter-only subexpressions a loop body's roots share with the code
 * before the loop (pr_c_invariants), and their temporaries' numbers */
#define MAXPIN (MAXTAP + 64) /* every slot of a ring, and invariants */
typedef struct {
    int n;
    Node *node[MAXPIN];
    int tmp[MAXPIN];
} Pins;
void pr_c_invariants(FILE *f, const PrintCtx *pc, Node **roots, int nroots, const char *indent, Pins *p);
void pr_c_block_pinned(FILE *f, const PrintCtx *pc, Node **roots, int nroots, const char *const *fmts,
                       const char *indent, const Pins *p);
void pr_c_pin_read(FILE *f, Pins *p, Node *n, const char *read, const char *indent);
/* Print the roots as C: temporaries "const stn_real tN = ...;" followed by
 * each root assigned via fmt (a printf format with one %s for the
 * expression), one per root; indent prefixes every line. */
void pr_c_block(FILE *f, const PrintCtx *pc, Node **roots, int nroots,
                const char *const *fmts, const char *indent);
/* Print one expression in the stencil language (no temporaries), with the
 * parentheses its precedence and its order of evaluation need. */
void pr_stn(FILE *f, const Stencil *s, const Node *n, const char *const *arrname);
/* Print the roots as lines "IND NAME = EXPR[    # NOTE]" in the stencil
 * language, each subexpression they use more than once (not a read, a
 * number or a parameter) first as its own line "IND tK = EXPR" and by its
 * name after it (the .adj listing's named intermediates; at most MAXNAMED
 * names, the rest spelt out) */
#define MAXNAMED 256
/* NAME[i+c,j,k] in the stencil language, the point variables' offsets
 * times SIGN (1, or -1: the point that reads NAME's point from there) */
void pr_stn_ref(FILE *f, int dims, const char *name, const Index *idx, int sign);
void pr_stn_listing(FILE *f, const Stencil *s, const char *const *arrname, Node *const *roots,
                    const char *const *rootname, const char *const *note, int nroots, const char *ind);
void pr_tap_c(FILE *f, const PrintCtx *pc, const Node *t);
/* the first of N new temporaries' consecutive numbers (printed t<N>) */
int pr_new_tmps(int n);
/* declarations of the mapped y/z indices the taps of the roots read, for
 * TAP_HOISTED_YZ; vars: the y/z point variables (vars[1], vars[2]).
 * Returns 0 (and prints nothing) when an offset is too large to hoist. */
int pr_hoisted_yz(FILE *f, const Stencil *s, Node **roots, int nroots, const char *const *vars, const char *ind);
/* declarations of the row pointers st_row_NAME (row (j, k) of each array the
 * roots read) for TAP_ROW */
void pr_row_pointers(FILE *f, const Stencil *s, Node **roots, int nroots, const char *const *arrname, const char *ind);

/* ---- point fields of a value, an update or an adjoint gather (fields.c) ---- */
#define MAXFIELD 4
#define MAXFROW 12 /* the row arrays of all fields */
typedef struct {
    Node *g;             /* the field at the point: a costly function of one tap at offset 0
                          * (a cell field: of several taps, the least at offset 0) */
    long lo[3], hi[3];   /* the offsets the value reads it at */
    int row0;            /* its first row array (rows by z, then y) */
    int arr;             /* the array its tap reads (-1: a cell field's taps, several arrays) */
    Node *fill;          /* what its fill evaluates: g, or a cell field's g reading its
                          * inner field's rows (Fields.inr), or NULL for g */
    int inner;           /* read by a cell field's fill alone: no row arrays of its own */
} Field;
#define MAXINR 8
typedef struct {
    int n, nrow;
    Field f[MAXFIELD];
    Node *value;         /* the value, each field read from a row array: array base + row */
    int rowf[MAXFROW];   /* each row array's field, y and z offset */
    long rowy[MAXFROW], rowz[MAXFROW];
    int ninr;            /* the rows of an inner field that a cell field's fill reads (its
                          * pseudo-arrays from base + nrow): the field, and the y and z
                          * offset from the fill's row */
    int inrf[MAXINR];
    long inry[MAXINR], inrz[MAXINR];
} Fields;
/* the point fields of VALUE (an expression over S's arrays; their row arrays
 * numbered from BASE): every costly subexpression of one tap that it reads
 * at two offsets or more, at most MAXFIELD, their rows at most MAXFROW.
 * Returns their count (0: none, F->value is VALUE), -1 out of memory */
int fields_plan(const Stencil *s, Node *value, int base, Fields *F);
/* the same with cell fields too (Field.arr -1): costly subexpressions of
 * several taps that VALUE reads at two offsets or more (an update
 * adjoint's cell factors, gen/emit.c cell_factor_terms) */
int fields_plan_cells(const Stencil *s, Node *value, int base, Fields *F);
/* the same plan over several roots (F->value unset), and one root (of
 * those planned over) with its fields read from their row arrays (NULL out
 * of memory) */
int fields_plan_roots(const Stencil *s, Node *const *roots, int nroots, int base, Fields *F);
Node *fields_apply(const Stencil *s, const Fields *F, Node *root, int base);
/* the same for an end point's ROOT, whose x indices may be pinned: each
 * pinned read from that place of its field's row where the row's fills
 * cover it (the 3D planes' rows hold what the strips of the interior
 * [L, n - R) filled, rows of NMIN points or more), else as written */
Node *fields_apply_ends(const Stencil *s, const Fields *F, Node *root, int base, long L, long R, long nmin);
/* each field's points where its fill evaluates it (C expressions: lo and
 * hi along x, y, z; NULL: all), zero written elsewhere */
typedef struct {
    const char *b[MAXFIELD][6];
} FieldClip;
/* what fields_print prints from: ES the stencil (with any gradient arrays),
 * NAMES its N arrays' names, F the plan (row arrays from N on) */
typedef struct {
    const Stencil *es;
    const char *const *names;
    int N;
    const Fields *F;
    int planes;          /* 3D: planes of field rows in the job's per-thread buffer */
    int clamp;           /* 3D planes: the fills read the rows clamped to the grid (a
                          * row or plane past a face holds the face's: RULE_EXTEND) */
    const FieldClip *clip; /* where each field is evaluated, zero elsewhere; or NULL */
} FieldPrint;
/* the texts of a job's fields (backend_c.m4 stn_job's FDECL, FROW, FBODY,
 * FSIZE; PF, the job's prefetches in 3D), each allocated, "" without
 * fields */
typedef struct {
    char *decl, *rows, *body, *size, *pf;
    int planes;          /* with field planes (SIZE): the arrays their fills read, a plane each */
} FieldText;
/* (fields_print.c) a row function's fields for backend_c.m4
 * stn_rowfn_fields, each text allocated: the declarations *DECL, row j's
 * fills and row pointers *ROWS, the interior point *BODY, its statement FMT
 * (one %s: F->value, the fields read from their rows); all "" when P is
 * NULL or plans no field */
void fields_print(const FieldPrint *P, const char *fmt, FieldText *t);
void fields_text_free(FieldText *t);
/* the same for the NR ROOTS (at most MAXARR + 1; their fields read from
 * their rows: fields_apply), each with its statement FMTS */
void fields_print_roots(const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr, FieldText *t);
/* the statements FMTS of the NR ROOTS (fields read from their rows, by
 * fields_apply or fields_apply_ends) at indent IND, where P's row pointers
 * are in scope */
void fields_print_block(FILE *f, const FieldPrint *P, Node *const *roots, const char *const *fmts, int nr, const char *ind);
/* the field that fills field Q's rows with its own in one loop: the first
 * of Q's array and offsets (their shared subexpressions evaluated once:
 * Good's root and its reciprocal) */
int fields_leader(const Fields *F, int q);
/* the body of a fill of rows tagged with the grid row and x range they
 * hold (runtime stenc_ftag_*): leader Q's fields' rows (ROW prints member
 * M's row pointer from CTX) for grid row J and plane K (C expressions) over
 * x in [A, B), skipped ("continue") where the leader's tag covers it */
typedef struct {
    const Stencil *es;
    const char *const *names;
    const Fields *F;
    int q;
    const char *j, *k, *a, *b;
    void (*row)(FILE *f, const void *ctx, int m);
    const void *ctx;
    const char *sj, *sk; /* the grid row the fill reads (NULL: J, K) */
    const char *tag;     /* where the tag sits in a row (NULL: at st_n0) */
    long xlo, xhi;       /* copies of the row's end points past its ends (where the fill reaches them) */
    const char *fresh;   /* a C condition under which the row is not filled yet (its tag not read), or NULL */
    const char *const *clip; /* the leader's clip (FieldClip; the fill's points outside it zero), or NULL */
    int nreal;           /* the arrays of NAMES the fills read from memory (the rest: field
                          * rows, their pointers declared before), 0 all */
} TaggedFill;
void fields_print_tagged_fill(FILE *f, const TaggedFill *t);

/* ---- parsing (parse.c) ---- */
/* Parse m4-expanded text (with #line directives) into s. */
int parse_stencil(const char *text, const char *file, int dims, Stencil *s);

/* ---- names (names.c) ---- */
/* why name cannot name an array or parameter, or NULL when it can */
const char *name_problem_var(const char *name);
/* why name cannot name a kernel or reduction, or NULL when it can */
const char *name_problem_entry(const char *name);

/* ---- analysis (analyze.c) ---- */
int analyze(Stencil *s);
const char *dimvar(int d);   /* "i","j","k" */
const char *dimn(int d);     /* "nx","ny","nz" */

/* ---- text buffers (emit.c, emit_dist.c) ---- */
typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} Str;
static inline void str_open(Str *s) { s->buf = NULL; s->len = 0; s->f = open_memstream(&s->buf, &s->len); }
static inline char *str_close(Str *s) { fclose(s->f); return s->buf; }

/* ---- the CUDA kernels' plane cache along z (zcache.c) ---- */
/* A 3D interior body: the roots printed with fmts (one block, or one block
 * per root with per_root), after head (the point's index, row pointers);
 * the arrays in written (the job writes them) are not cached. */
typedef struct {
    const PrintCtx *pc;
    Node **roots;
    int nr;
    const char *const *fmts;
    int per_root;
    const char *head;
    const int *written;
    int nwritten;
} ZcIn;
/* The body with a register plane cache (m4/backend_cuda.m4 stn_zmarch's
 * ZBODY) and its registers' declarations (ZDECL), both malloc'd; both NULL
 * when no column of taps reads two planes.  Returns 0, or -1 out of memory
 * (both NULL: the caller's plain interior serves). */
int zc_body(const ZcIn *in, char **decl, char **body);

/* ---- distributed entry points (emit_dist.c) ---- */
/* stn_dist_proto and stn_dist for entry ENTRY (e.g. "tv_value_2d") of kind
 * update, adjoint, value, grad or value_grad, from its ARGS; need: the ghost
 * width; omin/omax: a reduction's read offsets (NULL for kernels) */
void emit_dist(FILE *out, const char *entry, const char *kind, int D, const char *args, int need, const long *omin,
               const long *omax, const char *what);

/* the update ENTRY with its halo update, communication hidden behind the
 * interior (nothing is emitted when the kernel cannot run in windows) */
void emit_dist_hide(FILE *out, const char *entry, int D, const char *args, int need, const char *what,
                    const Stencil *s, const Kernel *k);

/* ---- emission (emit.c) ---- */
/* instance file (for the backend templates) and readable adjoints, one pass */
int emit_stencil(FILE *inst, FILE *adj, const Stencil *s);

#endif
