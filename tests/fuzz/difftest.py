#!/usr/bin/env python3
"""Differential test of generated reductions (a developer's tool, not part
of make check: `make difftest`, DIFF_COUNT cases from DIFF_SEED).

Random reductions of one array in 2D and 3D (square roots, logarithms,
reciprocals and products of taps at offsets -2..2, on one side of the point
or both) go through stenc-gen; each is compiled with AddressSanitizer and
its f64 value and value_grad's value are compared, in all three boundary
modes on a random grid, with a direct loop of the same formula written by
this script (indices mapped by the mode; the valid mode's points those
whose taps all lie inside).  The tolerance is 1e-11 of the sum of the
terms' magnitudes.  Found, in session 35: values of rows whose taps leave
the grid along y or z counted wrongly by 3D value_grads, and reductions
with taps on one side of the point reading past the grid, and (odd
cases) rolling rows below a reach of 2 reading row -1 in plane order."""
import os, random, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = r'''
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "stenc.h"
#include "dt.h"
static long n0 = %(n0)d, n1 = %(n1)d, n2 = %(n2)d;
static int mode;
static const double *xg;
static long mp(long p, long o, long n)
{
    long v = p + o;
    if (mode == STENC_PERIODIC) return ((v %% n) + n) %% n;
    if (mode == STENC_NEUMANN) return v < 0 ? 0 : v >= n ? n - 1 : v;
    return v;
}
#define X(a, b, c) xg[mp(i, a, n0) + n0 * (mp(j, b, n1) + n1 * mp(k, c, n2))]
int main(void)
{
    const size_t N = (size_t)(n0 * n1 * n2);
    double *x = malloc(N * sizeof *x), *g = malloc(N * sizeof *g);
    const double eps = 1e-2;
    int bad = 0;
    srand(5);
    for (size_t q = 0; q < N; ++q) x[q] = 2.0 * rand() / RAND_MAX - 1;
    xg = x;
    const long lo[3] = {%(lo0)d, %(lo1)d, %(lo2)d}, hi[3] = {%(hi0)d, %(hi1)d, %(hi2)d};
    for (mode = 0; mode < 3; ++mode) {
        const int v0 = mode == STENC_VALID;
        double s = 0, sa = 0;
        for (long k = v0 ? lo[2] : 0; k < n2 - (v0 ? hi[2] : 0); ++k)
            for (long j = v0 ? lo[1] : 0; j < n1 - (v0 ? hi[1] : 0); ++j)
                for (long i = v0 ? lo[0] : 0; i < n0 - (v0 ? hi[0] : 0); ++i) {
                    const double t[] = {%(terms)s};
                    for (size_t u = 0; u < sizeof t / sizeof t[0]; ++u) s += t[u], sa += fabs(t[u]);
                }
        double v = 0, w = 0;
        const int r1 = stenc_dt_r_value_%(D)dd_f64(%(sizes)s, mode, x%(eps)s, &v);
        const int r2 = stenc_dt_r_value_grad_%(D)dd_f64(%(sizes)s, mode, x%(eps)s, &w, 1, 0, g);
        if (r1 == STENC_ERR_GRID && r2 == STENC_ERR_GRID) continue;
        if (r1 || r2 || fabs(v - s) > 1e-11 * sa || fabs(w - s) > 1e-11 * sa) {
            printf("mode %%d: reference %%.15g, value %%.15g (%%d), value_grad %%.15g (%%d)\n", mode, s, v, r1, w, r2);
            bad = 1;
        }
    }
    free(x); free(g);
    return bad;
}
'''

def tap(rg, D):
    o = [rg.randint(-2, 2) for _ in range(3)]
    if rg.random() < 0.5: o = [max(-1, min(1, v)) for v in o]
    if D == 2: o[2] = 0
    return o

def term(rg, D):
    """a term: (stencil language, C over X(a, b, c), its offsets)"""
    a, b = tap(rg, D), tap(rg, D)
    while b == a: b = tap(rg, D)  # f(a) - f(a) folds to 0 and its taps drop out of the valid domain
    sa, sb = 'at(x,%d,%d,%d)' % tuple(a), 'at(x,%d,%d,%d)' % tuple(b)
    ca, cb = 'X(%d,%d,%d)' % tuple(a), 'X(%d,%d,%d)' % tuple(b)
    k = rg.randint(0, 4)
    if k == 0: t = ('sqrt(eps + (%s - %s)^2)' % (sa, sb), 'sqrt(eps + (%s - %s) * (%s - %s))' % (ca, cb, ca, cb))
    elif k == 1: t = ('%s*%s' % (sa, sb), '%s * %s' % (ca, cb))
    elif k == 2: t = ('1/(eps + %s^2)' % sa, '1 / (eps + %s * %s)' % (ca, ca)); b = a
    elif k == 3: t = ('log(eps + %s^2)*%s' % (sa, sb), 'log(eps + %s * %s) * %s' % (ca, ca, cb))
    else:
        t = ('(sqrt(eps + %s^2) - sqrt(eps + %s^2))^2' % (sa, sb),
             '(sqrt(eps + %s * %s) - sqrt(eps + %s * %s)) * (sqrt(eps + %s * %s) - sqrt(eps + %s * %s))' % (ca, ca, cb, cb, ca, ca, cb, cb))
    return t[0], t[1], [a, b]

def one(rg, work, case):
    D = rg.choice([2, 3, 3])
    ts = [term(rg, D) for _ in range(rg.randint(1, 3))]
    stn = 'stencil dt\ndims %d\narray x\nparam eps\nreduce r = %s\n' % (D, ' + '.join(t[0] for t in ts))
    d = os.path.join(work, 'c%d' % case)
    os.makedirs(d)
    open(os.path.join(d, 'dt.stn'), 'w').write(stn)
    g = subprocess.run([os.path.join(ROOT, 'build/bin/stenc-gen'), '-I', os.path.join(ROOT, 'm4'), '-o', d, os.path.join(d, 'dt.stn')],
                       capture_output=True, text=True)
    if g.returncode: return None  # rejected (cleanly: the fuzz harness checks that)
    offs = [o for t in ts for o in t[2]]
    n = [rg.randint(3, 40), rg.randint(3, 40), rg.randint(3, 12) if D == 3 else 1]
    keys = dict(n0=n[0], n1=n[1], n2=n[2], D=D, terms=', '.join(t[1] for t in ts),
                sizes='n0, n1, n2' if D == 3 else 'n0, n1', eps=', eps' if 'eps' in stn.split('reduce')[1] else '')
    for dd in range(3):
        keys['lo%d' % dd] = max(0, -min(o[dd] for o in offs))
        keys['hi%d' % dd] = max(0, max(o[dd] for o in offs))
    open(os.path.join(d, 'drv.c'), 'w').write(DRIVER % keys)
    exe = os.path.join(d, 'drv')
    # odd cases: the other rolling order and the sanitizer build's small tiles and strips (GNUmakefile SAN_TILES)
    small = ['-DSTENC_ROLL_PLANES=1', '-DSTENC_TILE_BYTES=16384', '-DSTENC_RING_TILE_BYTES=16384', '-DSTENC_RSTRIP=32',
             '-DSTENC_VSTRIP=16', '-DSTENC_FIELD_BYTES=128'] if case % 2 else []
    c = subprocess.run(['gcc', '-std=c11', '-O1', '-g', '-fsanitize=address,undefined', '-fopenmp', '-fno-math-errno'] + small + [
                        '-I' + os.path.join(ROOT, 'runtime'), '-I' + d, os.path.join(d, 'dt.c'), os.path.join(d, 'drv.c'),
                        os.path.join(ROOT, 'build/lib/libstenc.a'), '-lm', '-o', exe], capture_output=True, text=True)
    if c.returncode: return 'compile: ' + c.stderr[:400]
    r = subprocess.run([exe], capture_output=True, text=True, env=dict(os.environ, ASAN_OPTIONS='detect_leaks=0'))
    if r.returncode: return 'D %d grid %s: %s\n%s%s' % (D, n, stn.splitlines()[-1], r.stdout, r.stderr[:600])
    return ''

def main():
    count = int(os.environ.get('DIFF_COUNT', '40'))
    rg = random.Random(int(os.environ.get('DIFF_SEED', '1')))
    failed = checked = 0
    with tempfile.TemporaryDirectory(prefix='stenc-diff-') as work:
        for case in range(count):
            res = one(rg, work, case)
            if res is None: continue
            checked += 1
            if res:
                failed += 1
                print('FAIL case %d: %s' % (case, res))
    print('difftest: %d checked, %d passed, %d failed' % (checked, checked - failed, failed))
    return 1 if failed else 0

if __name__ == '__main__':
    sys.exit(main())
