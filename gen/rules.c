/* stenc-gen: the border rule of a 3D gradient in Neumann mode, found by
 * evaluating its partials on small grids.
 *
 * A gradient's interior point p gathers, for every differentiable tap t at
 * offset o, the partial G_t at the point p - o.  At a face that sum is not
 * the adjoint: Neumann mode reads a tap past the face at the face (the
 * index clamped), so a point on the face also receives the partials of the
 * taps that were clamped onto it, and the points p - o past the face do not
 * exist.  For many stencils a simple rule about those missing rows makes
 * the interior sum exact all the same:
 *   RULE_ZERO   the partials at points past the face count as zero (forward
 *               differences: the clamped tap's difference is 0 at the face,
 *               and with it its partials, TV's and Huber's);
 *   RULE_CLAMP  the partials at points past the face are those of the face
 *               point (a tap and its mirror with the same partial: the
 *               Laplacian, whose L is symmetric under the clamp);
 *   RULE_EXTEND the partials at points past the face are evaluated there,
 *               every tap they read clamped to the grid, along x too (the
 *               interior gather over rows filled from the clamped rows and
 *               padded with their end points: Good's field rows, whose
 *               differences past a face are those of a point with itself,
 *               0, and their partials with them).
 * Which one holds is a property of the expression, so it is tested here on
 * the expression itself: every partial evaluated in double at every point
 * of small grids (1, 2, 3 and 2r + 3 points along each dimension, every
 * triple), three sets of random data (values near 1, of both signs, and
 * near 0, so that selects and absolute values take each branch), the
 * exact adjoint (each partial scattered to the clamped tap's point)
 * against the rule's gather along y and z (x stays exact, as the rolling
 * kernels' x ends are; RULE_EXTEND's along x too), and again with the
 * rule along x as well (RULE_XBIT: the rolling kernels then run their rows
 * whole, the ring rows padded past the x ends by the rule, gen/emit.c
 * roll_xrule).  A rule counts only
 * when it agrees to 1e-10 of the gradient's scale on every grid and data
 * set that evaluates to finite numbers, at least one does, and every tap
 * index is relative to the point.  The kernels then run their border rows
 * through the interior path (gen/emit.c roll_rule; field_rule for the
 * kernels over field rows), and the test suites compare the result with
 * independent references as for every other kernel. */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    long n[3];              /* the grid */
    double *val[MAXARR];    /* each array's values on it */
    double par[MAXPARAM];
    long q[3];              /* the point the taps are read from */
    double *memo;           /* a node's value at q, by its id, where stamp says so */
    unsigned *stamp, gen;
} Eval;

static long clamp_index(long v, long n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }
static size_t lin(const long *n, const long *p) { return (size_t)(p[0] + n[0] * (p[1] + n[1] * p[2])); }

static double eval_call(int fn, double a, double b)
{
    switch (fn) {
    case F_SQRT: return sqrt(a);
    case F_EXP: return exp(a);
    case F_LOG: return log(a);
    case F_ABS: return fabs(a);
    case F_MIN: return a < b ? a : b;
    case F_MAX: return a > b ? a : b;
    case F_POW: return pow(a, b);
    case F_SIN: return sin(a);
    case F_COS: return cos(a);
    case F_TAN: return tan(a);
    case F_TANH: return tanh(a);
    case F_ATAN: return atan(a);
    case F_SINH: return sinh(a);
    case F_COSH: return cosh(a);
    case F_FLOOR: return floor(a);
    case F_SIGN: return (double)((a > 0) - (a < 0));
    }
    return NAN;
}

static double eval_cmp(int op, double a, double b)
{
    switch (op) {
    case C_LT: return a < b;
    case C_LE: return a <= b;
    case C_GT: return a > b;
    case C_GE: return a >= b;
    case C_EQ: return a == b;
    case C_NE: return a != b;
    }
    return NAN;
}

/* N at point e->q, its taps read with Neumann's clamped indices */
static double eval(Eval *e, const Node *n)
{
    if (e->stamp[n->id] == e->gen) return e->memo[n->id];
    const double a = n->nargs > 0 && n->kind != E_SELECT ? eval(e, n->a[0]) : 0;
    const double b = n->nargs > 1 && n->kind != E_SELECT ? eval(e, n->a[1]) : 0;
    double v = NAN;
    switch (n->kind) {
    case E_NUM: v = n->num; break;
    case E_PARAM: v = e->par[n->ref]; break;
    case E_TAP: {
        long p[3];
        for (int d = 0; d < 3; ++d) p[d] = clamp_index(e->q[d] + n->idx[d].c, e->n[d]);
        v = e->val[n->ref][lin(e->n, p)];
        break;
    }
    case E_ADD: v = a + b; break;
    case E_SUB: v = a - b; break;
    case E_MUL: v = a * b; break;
    case E_DIV: v = a / b; break;
    case E_NEG: v = -a; break;
    case E_POWI: v = pow(a, n->op); break;
    case E_CALL: v = eval_call(n->op, a, b); break;
    case E_SELECT: v = eval(e, n->a[0]) != 0 ? eval(e, n->a[1]) : eval(e, n->a[2]); break;
    case E_CMP: v = eval_cmp(n->op, a, b); break;
    }
    e->stamp[n->id] = e->gen;
    e->memo[n->id] = v;
    return v;
}

/* the nodes of N not yet stamped with e->gen (stamps them) */
static size_t count_nodes(Eval *e, const Node *n)
{
    if (e->stamp[n->id] == e->gen) return 0;
    e->stamp[n->id] = e->gen;
    size_t c = 1;
    for (int a = 0; a < n->nargs; ++a) c += count_nodes(e, n->a[a]);
    return c;
}

/* a deterministic stream of numbers in [lo, hi) */
static double next_uniform(unsigned long long *state, double lo, double hi)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(*state >> 11) / 9007199254740992.0;
}

typedef struct {
    const Stencil *s;
    int ndt;
    Node *const *dtaps, *const *part;
    const int *diff;
} RuleIn;

/* the partial of tap t at point q of the grid, into g[t * npts + lin(q)] */
static int eval_partials(const RuleIn *in, Eval *e, double *g, size_t npts)
{
    long q[3];
    for (q[2] = 0; q[2] < e->n[2]; ++q[2])
        for (q[1] = 0; q[1] < e->n[1]; ++q[1])
            for (q[0] = 0; q[0] < e->n[0]; ++q[0]) {
                memcpy(e->q, q, sizeof q);
                ++e->gen;
                for (int t = 0; t < in->ndt; ++t) {
                    const double v = eval(e, in->part[t]);
                    if (!isfinite(v)) return 0;
                    g[(size_t)t * npts + lin(e->n, q)] = v;
                }
            }
    return 1;
}

/* the partials G gathered by RULE (x exact: each tap's points whose
 * clamped x lands on p's x; XR: x by the rule too, as y and z), or by the
 * exact adjoint (RULE_NONE: every tap scattered to its clamped point), into
 * grad (array a's, all points) */
static void gather_rule(const RuleIn *in, const long *n, const double *g, int a, int rule, int xr, double *grad)
{
    const size_t npts = (size_t)(n[0] * n[1] * n[2]);
    memset(grad, 0, npts * sizeof *grad);
    for (int t = 0; t < in->ndt; ++t) {
        if (in->dtaps[t]->ref != a) continue;
        const Index *o = in->dtaps[t]->idx;
        long p[3], q[3];
        for (p[2] = 0; p[2] < n[2]; ++p[2])
            for (p[1] = 0; p[1] < n[1]; ++p[1])
                for (p[0] = 0; p[0] < n[0]; ++p[0]) {
                    /* along x the source point q (exact), or with XR the target p */
                    q[0] = p[0], q[1] = p[1], q[2] = p[2];
                    long to[3] = {xr ? p[0] : clamp_index(q[0] + o[0].c, n[0]), p[1], p[2]};
                    int past = 0;
                    if (rule == RULE_NONE) /* q = p here: scatter from it */
                        for (int d = 1; d < 3; ++d) to[d] = clamp_index(q[d] + o[d].c, n[d]);
                    else
                        for (int d = xr ? 0 : 1; d < 3; ++d) {
                            q[d] = p[d] - o[d].c;
                            past |= q[d] < 0 || q[d] >= n[d];
                            q[d] = clamp_index(q[d], n[d]);
                        }
                    if (past && rule == RULE_ZERO) continue;
                    grad[lin(n, to)] += g[(size_t)t * npts + lin(n, q)];
                }
    }
}

/* RULE_EXTEND's gather, along x as along y and z (the field rows' kernels
 * pad their rows with the end points' fields, gen/emit.c
 * field_rule_bounds): at every point p each tap's partial at p - o, where
 * that is past a face evaluated there with its taps clamped (eval) */
static void gather_extend(const RuleIn *in, Eval *e, const double *g, int a, double *grad)
{
    const long *n = e->n;
    const size_t npts = (size_t)(n[0] * n[1] * n[2]);
    long p[3], q[3];
    for (p[2] = 0; p[2] < n[2]; ++p[2])
        for (p[1] = 0; p[1] < n[1]; ++p[1])
            for (p[0] = 0; p[0] < n[0]; ++p[0]) {
                double sum = 0;
                for (int t = 0; t < in->ndt; ++t) {
                    if (in->dtaps[t]->ref != a) continue;
                    int past = 0;
                    for (int d = 0; d < 3; ++d) {
                        q[d] = p[d] - in->dtaps[t]->idx[d].c;
                        past |= q[d] < 0 || q[d] >= n[d];
                    }
                    if (!past) {
                        sum += g[(size_t)t * npts + lin(n, q)];
                        continue;
                    }
                    memcpy(e->q, q, sizeof q);
                    ++e->gen;
                    sum += eval(e, in->part[t]);
                }
                grad[lin(n, p)] = sum;
            }
}

/* the rules (bit 1 << rule, RULE_ZERO to RULE_EXTEND) that give every
 * differentiable array's exact gradient on grid n with the data e holds;
 * -1 when not evaluated (not finite).  The partials and the exact adjoint
 * are computed once for every rule. */
static int rules_on_grid(const RuleIn *in, Eval *e)
{
    const size_t npts = (size_t)(e->n[0] * e->n[1] * e->n[2]);
    double *g = malloc((size_t)in->ndt * npts * sizeof *g), *ex = malloc(npts * sizeof *ex),
           *ru = malloc(npts * sizeof *ru);
    int mask = !(g && ex && ru) ? 0 : eval_partials(in, e, g, npts) ? RULES_ALL : -1;
    for (int a = 0; a < in->s->narr && mask > 0; ++a) {
        if (!in->diff[a]) continue;
        gather_rule(in, e->n, g, a, RULE_NONE, 0, ex);
        double scale = 0;
        for (size_t p = 0; p < npts; ++p) scale = fmax(scale, fabs(ex[p]));
        /* each rule at the y and z faces, then RULE_ZERO and RULE_CLAMP at the x faces too (RULE_XBIT) */
        static const struct { int rule, xr; } tried[] = {
            {RULE_ZERO, 0}, {RULE_CLAMP, 0}, {RULE_EXTEND, 0}, {RULE_ZERO, 1}, {RULE_CLAMP, 1}};
        for (size_t t = 0; t < sizeof tried / sizeof tried[0]; ++t) {
            const int r = tried[t].rule, xr = tried[t].xr, bit = xr ? RULE_XBIT(r) : 1 << r;
            if (!(mask & bit)) continue;
            if (r == RULE_EXTEND) gather_extend(in, e, g, a, ru);
            else gather_rule(in, e->n, g, a, r, xr, ru);
            double err = 0;
            for (size_t p = 0; p < npts; ++p) err = fmax(err, fabs(ex[p] - ru[p]));
            if (!(err <= 1e-10 * scale)) mask &= ~bit;
        }
    }
    free(g); free(ex); free(ru);
    return mask;
}

/* the rules that hold on every grid and data set that evaluates (bits as
 * rules_on_grid's; 0 when none evaluates) */
static int rules_holding(const RuleIn *in, Eval *e, long reach)
{
    static const double range[3][2] = {{0.5, 1.5}, {-2, 2}, {-0.01, 0.01}};
    const long sizes[4] = {1, 2, 3, 2 * reach + 3};
    int evaluated = 0, mask = RULES_ALL;
    for (int set = 0; set < 3; ++set)
        for (int x = 0; x < 4; ++x)
            for (int y = 0; y < 4; ++y)
                for (int z = 0; z < 4; ++z) {
                    unsigned long long st = 12345u + 1000u * (unsigned)set + 100u * (unsigned)x + 10u * (unsigned)y + (unsigned)z;
                    e->n[0] = sizes[x], e->n[1] = sizes[y], e->n[2] = sizes[z];
                    const size_t npts = (size_t)(e->n[0] * e->n[1] * e->n[2]);
                    int ok = 1;
                    for (int a = 0; a < in->s->narr && ok; ++a) {
                        e->val[a] = malloc(npts * sizeof(double));
                        ok = e->val[a] != NULL;
                        for (size_t p = 0; ok && p < npts; ++p) e->val[a][p] = next_uniform(&st, range[set][0], range[set][1]);
                    }
                    for (int p = 0; p < in->s->nparam; ++p) e->par[p] = next_uniform(&st, 0.5, 1.5);
                    const int r = ok ? rules_on_grid(in, e) : 0;
                    for (int a = 0; a < in->s->narr; ++a) { free(e->val[a]); e->val[a] = NULL; }
                    if (r < 0) continue;
                    if (!(mask &= r)) return 0;
                    ++evaluated;
                }
    return evaluated > 0 ? mask : 0;
}

/* the nodes of the partials (counted once each: a point evaluates each
 * once), plus each partial's own (a point past a face evaluates one
 * partial alone: RULE_EXTEND), times the points of every grid and data
 * set rules_holding visits */
static double rule_cost(const RuleIn *in, Eval *e, long reach)
{
    size_t nodes = 0;
    ++e->gen;
    for (int t = 0; t < in->ndt; ++t) nodes += count_nodes(e, in->part[t]);
    for (int t = 0; t < in->ndt; ++t) {
        ++e->gen;
        nodes += count_nodes(e, in->part[t]);
    }
    const double side = 1 + 2 + 3 + (double)(2 * reach + 3);
    return (double)nodes * 3 * side * side * side;
}

/* A reduction reaching further, or whose partials cost more to evaluate
 * on every grid (nodes times points), gets no rule: its kernels keep their
 * exact border code, and the generator its time on hostile input (a
 * reach of 2 and a few hundred nodes cost a few million evaluations) */
enum { MAXREACH = 4 };
static const double MAXCOST = 2e7;

int border_rules(const Stencil *s, int ndt, Node *const *dtaps, Node *const *part, const int *diff)
{
    if (s->dims != 3 || ndt == 0) return 0;
    for (int a = 0; a < s->narr; ++a)
        for (int d = 0; d < 3; ++d)
            if (s->arr[a].ext[d] != 0) return 0;
    long reach = 1; /* every tap's, the partials' included: the x grid holds them apart from the faces */
    for (int t = 0; t < ndt; ++t) {
        Node *taps[MAXTAP + 1];
        const int nt = ex_taps(part[t], -1, taps, MAXTAP);
        if (nt > MAXTAP) return 0;
        taps[nt] = dtaps[t];
        for (int u = 0; u <= nt; ++u)
            for (int d = 0; d < 3; ++d) {
                if (taps[u]->idx[d].kind != IK_VAR) return 0;
                reach = labs(taps[u]->idx[d].c) > reach ? labs(taps[u]->idx[d].c) : reach;
            }
    }
    const RuleIn in = {s, ndt, dtaps, part, diff};
    Eval e;
    memset(&e, 0, sizeof e);
    const size_t nn = ex_count();
    e.memo = malloc(nn * sizeof *e.memo);
    e.stamp = calloc(nn, sizeof *e.stamp);
    int mask = 0;
    if (e.memo && e.stamp && reach <= MAXREACH && rule_cost(&in, &e, reach) <= MAXCOST) mask = rules_holding(&in, &e, reach);
    free(e.memo);
    free(e.stamp);
    return mask;
}
