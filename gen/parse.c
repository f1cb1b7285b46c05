/* stenc-gen: tokenizer and parser of the (m4-expanded) stencil language.
 * Grammar: docs/language.md. */
#include "gen.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { T_EOF, T_NL, T_ID, T_NUM, T_OP };

typedef struct {
    const char *p;
    const char *file;   /* current file per #line */
    const char *main;   /* the source file: its name may hold any byte, even a newline or a quote */
    char filebuf[512];
    int line;
    int depth;          /* () [] nesting: newlines inside are ignored */
    int nest;           /* parser recursion: nested expressions (limit MAXNEST) */
    /* current token */
    int tok;
    char text[MAXNAME * 2];
    double num;
    int tline;
    Stencil *s;
    int dims;
} Lex;

static int lerr(Lex *L, const char *fmt, const char *a)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a);
    return gen_error(L->file, L->tline, "%s", msg);
}

static void next(Lex *L)
{
    for (;;) {
        const char *p = L->p;
        while (*p == ' ' || *p == '\t' || *p == '\r' || (*p == '\n' && L->depth > 0)) {
            if (*p == '\n') L->line++;
            ++p;
        }
        if (*p == '#') {
            /* #line N "file" from m4 -s, else a comment */
            if (strncmp(p, "#line ", 6) == 0) {
                char *end;
                long n = strtol(p + 6, &end, 10);
                const char *q = end;
                while (*q == ' ') ++q;
                size_t lm = strlen(L->main);
                if (*q == '"' && strncmp(q + 1, L->main, lm) == 0 && q[1 + lm] == '"') {
                    L->file = L->main;
                    p = q + 2 + lm;
                } else if (*q == '"') {
                    const char *e = strchr(q + 1, '"');
                    if (e && (size_t)(e - q - 1) < sizeof L->filebuf) {
                        memcpy(L->filebuf, q + 1, (size_t)(e - q - 1));
                        L->filebuf[e - q - 1] = 0;
                        L->file = L->filebuf;
                    }
                }
                while (*p && *p != '\n') ++p;
                if (*p == '\n') ++p;
                L->line = (int)n;
                L->p = p;
                continue;
            }
            while (*p && *p != '\n') ++p;
            if (*p == '\n' && L->depth > 0) { L->p = p; continue; } /* newlines in brackets are blanks */
        }
        L->p = p;
        break;
    }
    const char *p = L->p;
    L->tline = L->line;
    if (!*p) { L->tok = T_EOF; return; }
    if (*p == '\n') {
        L->p = p + 1;
        L->line++;
        L->tok = T_NL;
        return;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        size_t n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_') ++n;
        if (n >= sizeof L->text) n = sizeof L->text - 1;
        memcpy(L->text, p, n);
        L->text[n] = 0;
        while (isalnum((unsigned char)*p) || *p == '_') ++p;
        L->p = p;
        L->tok = T_ID;
        return;
    }
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        char *end;
        L->num = strtod(p, &end);
        size_t n = (size_t)(end - p);
        if (n >= sizeof L->text) n = sizeof L->text - 1;
        memcpy(L->text, p, n);
        L->text[n] = 0;
        L->p = end;
        /* accept C float suffixes */
        if (*L->p == 'f' || *L->p == 'F') L->p++;
        L->tok = T_NUM;
        return;
    }
    static const char *two[] = {"<=", ">=", "==", "!=", "&&", "||"};
    for (size_t i = 0; i < sizeof two / sizeof *two; ++i)
        if (p[0] == two[i][0] && p[1] == two[i][1]) {
            memcpy(L->text, p, 2);
            L->text[2] = 0;
            L->p = p + 2;
            L->tok = T_OP;
            return;
        }
    L->text[0] = *p;
    L->text[1] = 0;
    L->p = p + 1;
    L->tok = T_OP;
    if (*p == '(' || *p == '[') L->depth++;
    if ((*p == ')' || *p == ']') && L->depth > 0) L->depth--;
}

static int is_op(Lex *L, const char *op) { return L->tok == T_OP && strcmp(L->text, op) == 0; }
static int is_id(Lex *L, const char *id) { return L->tok == T_ID && strcmp(L->text, id) == 0; }

static const char *tokdesc(Lex *L)
{
    static char buf[160];
    switch (L->tok) {
    case T_EOF: return "end of file";
    case T_NL: return "end of line";
    default: snprintf(buf, sizeof buf, "'%s'", L->text); return buf;
    }
}

static int expect(Lex *L, const char *op)
{
    if (!is_op(L, op)) {
        char m[256];
        snprintf(m, sizeof m, "expected '%s' but found %s", op, tokdesc(L));
        return lerr(L, "%s", m);
    }
    next(L);
    return 0;
}

static void skip_nl(Lex *L) { while (L->tok == T_NL) next(L); }

static int find_array(const Stencil *s, const char *name)
{
    for (int i = 0; i < s->narr; ++i)
        if (strcmp(s->arr[i].name, name) == 0) return i;
    return -1;
}

static int find_param(const Stencil *s, const char *name)
{
    for (int i = 0; i < s->nparam; ++i)
        if (strcmp(s->param[i], name) == 0) return i;
    return -1;
}

static int check_name(Lex *L, const char *name)
{
    const char *why = name_problem_var(name);
    if (why) {
        char m[512];
        snprintf(m, sizeof m, "'%s' cannot name an array or parameter: it %s; choose another name (e.g. %s_)", name, why,
                 name);
        return lerr(L, "%s", m);
    }
    if (find_array(L->s, name) >= 0 || find_param(L->s, name) >= 0)
        return lerr(L, "'%s' is declared twice", name);
    return 0;
}

/* kernel and reduction names become parts of C function names */
static int check_fname(Lex *L, const char *name)
{
    const char *why = name_problem_entry(name);
    if (!why) return 0;
    char m[512];
    snprintf(m, sizeof m, "'%s' cannot name a kernel or reduction: it %s; choose another name", name, why);
    return lerr(L, "%s", m);
}

/* after each statement: no constant folded to inf/NaN, and the stencil
 * stays within the size limit */
static int check_rhs(Lex *L, int line)
{
    if (ex_take_nonfinite())
        return gen_error(L->file, line, "a constant folds to infinity or NaN here, or an expression is divided by zero "
                         "(such as 0^-1, x/0 or exp(1000)); C has no literal for it");
    if (ex_count() > MAXNODES)
        return gen_error(L->file, line, "the stencil is too large (more than %d distinct subexpressions)", MAXNODES);
    return 0;
}

/* ---- expressions ---- */

static Node *parse_expr(Lex *L);
static int enter(Lex *L);

static int dim_of_var(const char *s)
{
    if (strcmp(s, "i") == 0) return 0;
    if (strcmp(s, "j") == 0) return 1;
    if (strcmp(s, "k") == 0) return 2;
    return -1;
}

static int dim_of_n(const char *s)
{
    if (strcmp(s, "nx") == 0) return 0;
    if (strcmp(s, "ny") == 0) return 1;
    if (strcmp(s, "nz") == 0) return 2;
    return -1;
}

/* index along dimension d: i+c | c | nx+c */
static int parse_index(Lex *L, int d, Index *ix)
{
    long sign = 1;
    if (is_op(L, "-")) { sign = -1; next(L); }
    if (L->tok == T_NUM) {
        if (L->num != (long)L->num || sign < 0)
            return lerr(L, "index %s must be a non-negative integer", L->text);
        ix->kind = IK_CONST;
        ix->c = (long)L->num;
        next(L);
        if (is_op(L, "*") || is_op(L, "/"))
            return lerr(L, "an index is i+C, C or nx-C (a fixed offset from the point); scaled indices such as 2*i or "
                        "i%s2 are not stencils", L->text);
        return 0;
    }
    if (L->tok != T_ID || sign < 0)
        return lerr(L, "expected an index such as i, i+1, 0 or nx-1, found %s", tokdesc(L));
    int dv = dim_of_var(L->text), dn = dim_of_n(L->text);
    const char *want[] = {"i", "j", "k"};
    const char *wantn[] = {"nx", "ny", "nz"};
    if (dv < 0 && dn < 0)
        return lerr(L, "expected an index such as i, i+1, 0 or nx-1, found '%s'", L->text);
    if ((dv >= 0 && dv != d) || (dn >= 0 && dn != d)) {
        char m[512];
        snprintf(m, sizeof m, "index position %d must use %s or %s, not '%s'", d + 1, want[d], wantn[d], L->text);
        return lerr(L, "%s", m);
    }
    if (dv >= L->dims || dn >= L->dims)
        return lerr(L, "'%s' does not exist in this stencil's dimension count", L->text);
    ix->kind = dv >= 0 ? IK_VAR : IK_END;
    ix->c = 0;
    next(L);
    if (is_op(L, "+") || is_op(L, "-")) {
        long sg = is_op(L, "+") ? 1 : -1;
        next(L);
        if (L->tok != T_NUM || L->num != (long)L->num)
            return lerr(L, "expected an integer offset, found %s", tokdesc(L));
        ix->c = sg * (long)L->num;
        next(L);
    }
    if (is_op(L, "*") || is_op(L, "/"))
        return lerr(L, "an index is i+C, C or nx-C (a fixed offset from the point); scaled indices such as 2*i or i%s2 "
                    "are not stencils", L->text);
    return 0;
}

static Node *parse_tap_rest(Lex *L, int arr)
{
    /* after "NAME[" */
    Index idx[3];
    memset(idx, 0, sizeof idx);
    for (int d = 0; d < L->dims; ++d) {
        if (d > 0 && is_op(L, "]")) {
            char m[256];
            snprintf(m, sizeof m, "array '%s' is read with %d index(es) in a %dD stencil: give one per dimension, "
                     "e.g. %s[i,j%s]", L->s->arr[arr].name, d, L->dims, L->s->arr[arr].name, L->dims == 3 ? ",k" : "");
            lerr(L, "%s", m);
            return NULL;
        }
        if (d > 0 && expect(L, ",")) return NULL;
        if (parse_index(L, d, &idx[d])) return NULL;
    }
    if (is_op(L, ",")) {
        char m[160];
        snprintf(m, sizeof m, "too many indices for array '%s' in a %dD stencil", L->s->arr[arr].name, L->dims);
        lerr(L, "%s", m);
        return NULL;
    }
    if (expect(L, "]")) return NULL;
    return ex_tap(arr, idx);
}

static Node *parse_primary(Lex *L)
{
    if (L->tok == T_NUM) {
        Node *n = ex_num(L->num);
        next(L);
        return n;
    }
    if (is_op(L, "(")) {
        next(L);
        Node *n = parse_expr(L);
        if (!n || expect(L, ")")) return NULL;
        return n;
    }
    if (L->tok == T_ID) {
        char name[sizeof L->text];
        strcpy(name, L->text);
        int line = L->tline;
        next(L);
        int a = find_array(L->s, name);
        if (a >= 0) {
            if (!is_op(L, "[")) {
                gen_error(L->file, line, "array '%s' must be read at a point: write %s[i,j%s] or use an FD macro such as all(%s)",
                          name, name, L->dims == 3 ? ",k" : "", name);
                return NULL;
            }
            next(L);
            return parse_tap_rest(L, a);
        }
        int p = find_param(L->s, name);
        if (p >= 0) return ex_param(p);
        if (is_op(L, "(")) {
            if (strcmp(name, "select") != 0 && ex_fn_lookup(name) < 0) {
                gen_error(L->file, line, "unknown function or macro '%s' (see docs/language.md for the FD macros and functions)", name);
                return NULL;
            }
            next(L);
            Node *args[3] = {NULL, NULL, NULL};
            int n = 0;
            if (!is_op(L, ")")) {
                for (;;) {
                    if (n == 3) { lerr(L, "too many arguments to '%s'", name); return NULL; }
                    args[n] = parse_expr(L);
                    if (!args[n]) return NULL;
                    ++n;
                    if (is_op(L, ",")) { next(L); continue; }
                    break;
                }
            }
            if (expect(L, ")")) return NULL;
            if (strcmp(name, "select") == 0) {
                if (n != 3) { gen_error(L->file, line, "select expects 3 arguments (condition, then, else), got %d", n); return NULL; }
                if (args[0]->kind != E_CMP) { gen_error(L->file, line, "the first argument of select must be a comparison such as a < b"); return NULL; }
                return ex_select(args[0], args[1], args[2]);
            }
            int fn = ex_fn_lookup(name);
            if (fn < 0) {
                gen_error(L->file, line, "unknown function or macro '%s' (see docs/language.md for the FD macros and functions)", name);
                return NULL;
            }
            if (n != ex_fn_arity[fn]) {
                gen_error(L->file, line, "%s expects %d argument(s), got %d", name, ex_fn_arity[fn], n);
                return NULL;
            }
            for (int i = 0; i < n; ++i)
                if (args[i]->kind == E_CMP) { gen_error(L->file, line, "a comparison can only be the condition of select or ?:"); return NULL; }
            return ex_call(fn, n, args);
        }
        gen_error(L->file, line, "unknown name '%s': not a declared array or parameter", name);
        return NULL;
    }
    lerr(L, "expected an expression, found %s", tokdesc(L));
    return NULL;
}

static Node *parse_unary(Lex *L);

static Node *parse_power(Lex *L)
{
    Node *b = parse_primary(L);
    if (!b) return NULL;
    if (is_op(L, "^")) {
        next(L);
        /* right associative; exponent: unary */
        if (enter(L)) return NULL;
        Node *e = parse_unary(L);
        L->nest--;
        if (!e) return NULL;
        if (e->kind == E_NUM && e->num == (double)(int)e->num && e->num >= -64 && e->num <= 64)
            return ex_powi(b, (int)e->num);
        Node *args[2] = {b, e};
        return ex_call(F_POW, 2, args);
    }
    return b;
}

static Node *parse_unary(Lex *L)
{
    int neg = 0; /* a run of signs, counted without recursion */
    for (; is_op(L, "-") || is_op(L, "+"); next(L)) neg ^= is_op(L, "-");
    Node *a = parse_power(L);
    return a && neg ? ex_neg(a) : a;
}

static Node *parse_mul(Lex *L)
{
    Node *a = parse_unary(L);
    while (a && (is_op(L, "*") || is_op(L, "/"))) {
        int k = is_op(L, "*") ? E_MUL : E_DIV;
        next(L);
        skip_nl(L);
        Node *b = parse_unary(L);
        if (!b) return NULL;
        a = ex_bin(k, a, b);
    }
    return a;
}

static Node *parse_add(Lex *L)
{
    Node *a = parse_mul(L);
    while (a && (is_op(L, "+") || is_op(L, "-"))) {
        int k = is_op(L, "+") ? E_ADD : E_SUB;
        next(L);
        skip_nl(L);
        Node *b = parse_mul(L);
        if (!b) return NULL;
        a = ex_bin(k, a, b);
    }
    return a;
}

static Node *parse_cmp(Lex *L)
{
    Node *a = parse_add(L);
    static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
    for (int i = 0; a && i < 6; ++i)
        if (is_op(L, ops[i])) {
            next(L);
            Node *b = parse_add(L);
            if (!b) return NULL;
            return ex_cmp(i, a, b);
        }
    return a;
}

/* every recursive entry into an expression passes here: parentheses,
 * arguments, ?: branches, exponents */
static int enter(Lex *L)
{
    if (++L->nest <= MAXNEST) return 0;
    char m[128];
    snprintf(m, sizeof m, "expression nested more than %d levels deep (parentheses, calls, powers)", MAXNEST);
    return lerr(L, "%s", m);
}

static Node *parse_cond(Lex *L);

static Node *parse_expr(Lex *L)
{
    if (enter(L)) return NULL;
    Node *n = parse_cond(L);
    L->nest--;
    if (n && n->depth > MAXDEPTH) {
        char m[160];
        snprintf(m, sizeof m, "expression too large: its tree is %d levels deep (at most %d; a sum of N terms is N "
                 "deep): split it with define or a helper kernel", n->depth, MAXDEPTH);
        lerr(L, "%s", m);
        return NULL;
    }
    return n;
}

static Node *parse_cond(Lex *L)
{
    Node *c = parse_cmp(L);
    if (c && is_op(L, "?")) {
        if (c->kind != E_CMP) { lerr(L, "the condition of ?: must be a comparison such as a < b%s", ""); return NULL; }
        next(L);
        Node *a = parse_expr(L);
        if (!a || expect(L, ":")) return NULL;
        Node *b = parse_expr(L);
        if (!b) return NULL;
        return ex_select(c, a, b);
    }
    return c;
}

/* ---- declarations ---- */

static int parse_extent(Lex *L, Array *a)
{
    /* after '(' */
    for (int d = 0; d < L->dims; ++d) {
        if (d > 0 && is_op(L, ")")) {
            char m[256];
            snprintf(m, sizeof m, "array '%s' has %d extent(s) but the stencil is %dD: give one per dimension, e.g. "
                     "(nx+1, ny%s)", a->name, d, L->dims, L->dims == 3 ? ", nz" : "");
            return lerr(L, "%s", m);
        }
        if (d > 0 && expect(L, ",")) return -1;
        if (L->tok != T_ID || dim_of_n(L->text) != d) {
            const char *wantn[] = {"nx", "ny", "nz"};
            char m[512];
            snprintf(m, sizeof m, "extent %d of array '%s' must be %s, %s+C or %s-C, found %s",
                     d + 1, a->name, wantn[d], wantn[d], wantn[d], tokdesc(L));
            return lerr(L, "%s", m);
        }
        next(L);
        a->ext[d] = 0;
        if (is_op(L, "+") || is_op(L, "-")) {
            long sg = is_op(L, "+") ? 1 : -1;
            next(L);
            if (L->tok != T_NUM || L->num != (long)L->num || L->num > 1000)
                return lerr(L, "expected a small integer in the extent, found %s", tokdesc(L));
            a->ext[d] = sg * (long)L->num;
            next(L);
        }
        if (is_op(L, "*") || is_op(L, "/"))
            return lerr(L, "an extent is nx, nx+C or nx-C; a scaled extent such as nx%s2 is not supported", L->text);
    }
    if (is_op(L, ","))
        return lerr(L, "array '%s' has more extents than the stencil has dimensions", a->name);
    return expect(L, ")");
}

static int end_of_decl(Lex *L)
{
    if (L->tok != T_NL && L->tok != T_EOF && !is_op(L, ";"))
        return lerr(L, "unexpected %s at the end of the declaration", tokdesc(L));
    if (is_op(L, ";")) next(L);
    return 0;
}

static int parse_kernel(Lex *L)
{
    Stencil *s = L->s;
    if (s->nk == MAXKERN) return lerr(L, "too many kernels (at most %s)", "128");
    Kernel *k = &s->k[s->nk];
    memset(k, 0, sizeof *k);
    k->line = L->tline;
    if (L->tok != T_ID) return lerr(L, "expected a kernel name, found %s", tokdesc(L));
    if (check_fname(L, L->text)) return -1;
    for (int i = 0; i < s->nk; ++i)
        if (strcmp(s->k[i].name, L->text) == 0) return lerr(L, "kernel '%s' is defined twice", L->text);
    strcpy(k->name, L->text);
    next(L);
    if (expect(L, "{")) return -1;
    skip_nl(L);
    while (!is_op(L, "}")) {
        if (L->tok == T_EOF) return lerr(L, "kernel '%s' is missing its closing '}'", k->name);
        if (k->nst == MAXSTMT) return lerr(L, "too many statements in kernel '%s'", k->name);
        Stmt *st = &k->st[k->nst];
        memset(st, 0, sizeof *st);
        st->line = L->tline;
        /* LHS: a tap, possibly parenthesised (as FD macros expand) */
        int parens = 0;
        while (is_op(L, "(")) { next(L); ++parens; }
        if (L->tok != T_ID)
            return lerr(L, "a statement must start with the array it writes, e.g. inn(T2) = ..., found %s", tokdesc(L));
        int a = find_array(s, L->text);
        if (a < 0) return lerr(L, "'%s' is not a declared array", L->text);
        next(L);
        if (!is_op(L, "[")) return lerr(L, "the written array '%s' needs an index or an FD macro such as all(...)", s->arr[a].name);
        next(L);
        Node *t = parse_tap_rest(L, a);
        if (!t) return -1;
        while (parens-- > 0) if (expect(L, ")")) return -1;
        st->arr = a;
        for (int d = 0; d < 3; ++d) st->lhs[d] = t->idx[d];
        if (expect(L, "=")) return -1;
        skip_nl(L);
        st->rhs = parse_expr(L);
        if (!st->rhs || check_rhs(L, st->line)) return -1;
        if (st->rhs->kind == E_CMP) return lerr(L, "a comparison can only be the condition of select or ?:%s", "");
        if (L->tok != T_NL && !is_op(L, ";") && !is_op(L, "}"))
            return lerr(L, "unexpected %s after the statement", tokdesc(L));
        if (is_op(L, ";")) next(L);
        k->nst++;
        skip_nl(L);
    }
    next(L);
    if (k->nst == 0) return gen_error(L->file, k->line, "kernel '%s' has no statements", k->name);
    s->nk++;
    return end_of_decl(L);
}

static int parse_reduce(Lex *L)
{
    Stencil *s = L->s;
    if (s->nr == MAXRED) return lerr(L, "too many reductions%s", "");
    Reduce *r = &s->r[s->nr];
    memset(r, 0, sizeof *r);
    r->line = L->tline;
    if (L->tok != T_ID) return lerr(L, "expected a reduction name, found %s", tokdesc(L));
    if (check_fname(L, L->text)) return -1;
    for (int i = 0; i < s->nr; ++i)
        if (strcmp(s->r[i].name, L->text) == 0) return lerr(L, "reduction '%s' is defined twice", L->text);
    for (int i = 0; i < s->nk; ++i)
        if (strcmp(s->k[i].name, L->text) == 0) return lerr(L, "'%s' already names a kernel", L->text);
    strcpy(r->name, L->text);
    next(L);
    if (expect(L, "=")) return -1;
    skip_nl(L);
    r->f = parse_expr(L);
    if (!r->f || check_rhs(L, r->line)) return -1;
    if (r->f->kind == E_CMP) return lerr(L, "a comparison can only be the condition of select or ?:%s", "");
    s->nr++;
    return end_of_decl(L);
}

int parse_stencil(const char *text, const char *file, int dims, Stencil *s)
{
    Lex L;
    memset(&L, 0, sizeof L);
    L.p = text;
    L.file = L.main = file;
    L.line = 1;
    L.s = s;
    L.dims = dims;
    s->dims = dims;
    s->file = file;
    next(&L);
    for (;;) {
        skip_nl(&L);
        if (L.tok == T_EOF) break;
        if (L.tok != T_ID)
            return lerr(&L, "expected a declaration (stencil, dims, array, param, kernel, reduce), found %s", tokdesc(&L));
        if (is_id(&L, "stencil")) {
            next(&L);
            if (L.tok != T_ID) return lerr(&L, "expected a stencil name, found %s", tokdesc(&L));
            if (check_fname(&L, L.text)) return -1;
            strcpy(s->name, L.text);
            next(&L);
            if (end_of_decl(&L)) return -1;
        } else if (is_id(&L, "dims")) {
            /* handled by the driver before m4; just skip */
            next(&L);
            while (L.tok == T_NUM) next(&L);
            if (end_of_decl(&L)) return -1;
        } else if (is_id(&L, "array")) {
            next(&L);
            for (;;) {
                if (L.tok != T_ID) return lerr(&L, "expected an array name, found %s", tokdesc(&L));
                if (s->narr == MAXARR) return lerr(&L, "too many arrays%s", "");
                if (check_name(&L, L.text)) return -1;
                Array *a = &s->arr[s->narr];
                memset(a, 0, sizeof *a);
                strcpy(a->name, L.text);
                a->line = L.tline;
                next(&L);
                if (is_op(&L, "(")) { next(&L); if (parse_extent(&L, a)) return -1; }
                if (is_id(&L, "const")) { a->is_const = 1; next(&L); }
                s->narr++;
                if (is_op(&L, ",")) { next(&L); continue; }
                break;
            }
            if (end_of_decl(&L)) return -1;
        } else if (is_id(&L, "param")) {
            next(&L);
            for (;;) {
                if (L.tok != T_ID) return lerr(&L, "expected a parameter name, found %s", tokdesc(&L));
                if (s->nparam == MAXPARAM) return lerr(&L, "too many parameters%s", "");
                if (check_name(&L, L.text)) return -1;
                strcpy(s->param[s->nparam++], L.text);
                next(&L);
                if (is_op(&L, ",")) { next(&L); continue; }
                break;
            }
            if (end_of_decl(&L)) return -1;
        } else if (is_id(&L, "kernel")) {
            next(&L);
            if (parse_kernel(&L)) return -1;
        } else if (is_id(&L, "reduce")) {
            next(&L);
            if (parse_reduce(&L)) return -1;
        } else {
            return lerr(&L, "unknown declaration '%s' (expected stencil, dims, array, param, kernel or reduce)", L.text);
        }
    }
    if (s->nk == 0 && s->nr == 0)
        return gen_error(file, L.line, "the stencil defines no kernel and no reduction%s", "");
    return 0;
}
