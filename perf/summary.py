#!/usr/bin/env python3
"""Markdown summary of build/perf/results.csv: per kernel, T_eff and the ratio
to the ceiling measured in the same run, and stenc's speed-up over the peers.
  summary.py RESULTS.csv [BASELINE.csv] [--duels DUELS.csv]
With DUELS (stenc-bench's second CSV) also the two ratios issue 14 sets
targets for as measured in duels: the median of the ratios of alternated
pairs of calls, with its quartiles.
With BASELINE (another build's run, e.g. perf/gpu.sh's gpu_results_rows.csv:
the CUDA 3D loops one block per row) also the time of each entry of RESULTS
over its time in BASELINE, for the entries both have."""
import csv
import sys
from collections import defaultdict

args = sys.argv[1:]
duelpath = None
if '--duels' in args:
    i = args.index('--duels')
    duelpath = args[i + 1]
    del args[i:i + 2]
rows = list(csv.DictReader(open(args[0])))
print("# stenc performance summary\n")
print("T_eff = bytes that must move / median time; ratio = T_eff / ceiling measured in the same run")
print("(read-only sum for values, copy for gradients and updates; the row ceiling_copy_nt is the copy")
print("with streamed stores, which large gradients use, as a ratio to the plain copy).\n")
print("| kernel | entry | backend | dims | size | prec | median ms | T_eff GB/s | ceiling | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    size = f"{r['nx']}x{r['ny']}" + (f"x{r['nz']}" if r['dims'] == '3' else "")
    print(f"| {r['kernel']} | {r['entry']} | {r['backend']} | {r['dims']}D | {size} | {r['precision']} | "
          f"{1e3*float(r['median_s']):.3f} | {float(r['teff_gbs']):.2f} | {r['ceiling']} {float(r['ceiling_gbs']):.1f} | "
          f"{float(r['ratio']):.2f} |")
# speed-ups over peers (same kernel, entry, size, precision)
key = lambda r: (r['kernel'], r['entry'], r['dims'], r['nx'], r['ny'], r['nz'], r['precision'])
by = defaultdict(dict)
for r in rows:
    by[key(r)][r['backend']] = float(r['median_s'])
def cells(k):
    """kernel, entry, size and precision cells of a comparison row"""
    return f"| {k[0]} | {k[1]} | {k[3]}x{k[4]}{'x'+k[5] if k[2]=='3' else ''} | {k[6]} |"

def table(title, columns, lines):
    if lines:
        print(f"\n## {title}\n")
        print("| kernel | entry | size | prec | " + " | ".join(columns) + " |")
        print("|---|---|---|---|" + "---|" * len(columns))
        print("\n".join(lines))

table("Speed-up of stenc over peers (peer time / stenc time)", ["peer", "speed-up"],
      [f"{cells(k)} {peer} | {t/d['stenc']:.1f}x |" for k, d in sorted(by.items()) if 'stenc' in d
       for peer, t in d.items() if peer != 'stenc'])
# stenc against the expert hand-written loops (perf/hand.h): stenc time / hand time
table("stenc against expert hand-written C (stenc time / hand time; 1.05 is the target)", ["stenc / hand"],
      [f"{cells(k)} {d['stenc']/d['handc']:.2f} |" for k, d in sorted(by.items()) if 'stenc' in d and 'handc' in d])
# the same on the GPU (perf/gpu_hand.cu): stenc's CUDA time / the hand-written kernel's
table("stenc CUDA against expert hand-written CUDA (stenc time / hand time)", ["stenc / hand"],
      [f"{cells(k)} {d['cuda']/d['handcuda']:.2f} |" for k, d in sorted(by.items()) if 'cuda' in d and 'handcuda' in d])
def cached(nx, ny, nz):
    """a grid of at most 2^21 points (128^3: 8 MiB a float array; the quick
    sizes 1024^2 and 128^3), in the benchmark machines' L3: not a size issue
    14 sets targets for"""
    return int(nx) * int(ny) * int(nz) <= 1 << 21
# value_grad vs grad, the sizes apart from the cached ones
vg = ([], [])
for k, d in by.items():
    if k[1] == 'value_grad' and 'stenc' in d:
        g = by.get((k[0], 'grad') + k[2:], {}).get('stenc')
        if g:
            vg[cached(*k[3:6])].append(d['stenc'] / g)
for v, where in zip(vg, ("the issue's sizes", "in cache (grids of 2^21 points or fewer)")):
    if v:
        v.sort()
        print(f"\nvalue_grad / grad time, {where}: median {v[len(v)//2]:.2f}, max {v[-1]:.2f} over {len(v)} kernels.")
# against a baseline run (another build): time / baseline time, same entry
if len(args) > 1:
    base = {key(r) + (r['backend'],): float(r['median_s']) for r in csv.DictReader(open(args[1]))}
    table(f"Against {args[1]} (time / its time)", ["backend", "ratio"],
          [f"{cells(k)} {b} | {t/base[k + (b,)]:.2f} |" for k, d in sorted(by.items()) for b, t in d.items()
           if k + (b,) in base and b != 'c'])
# the duels: alternated pairs of calls, median of the pairs' ratios
if duelpath:
    duels = list(csv.DictReader(open(duelpath)))
    def dcells(d):
        entry = d['pair'].split(' ')[-1] if d['pair'].startswith('stenc/hand') else 'value_grad'
        return cells((d['kernel'], entry, d['dims'], d['nx'], d['ny'], d['nz'], d['precision']))
    def ratio(d):
        return f" {float(d['median']):.2f} | {float(d['q1']):.2f}-{float(d['q3']):.2f} | {d['pairs']} |"
    hand = [d for d in duels if d['pair'].startswith('stenc/hand')]
    table("stenc against expert hand-written C in duels (stenc time / hand time, median of alternated pairs; 1.05 is the target)",
          ["stenc / hand", "quartiles", "pairs"], [dcells(d) + ratio(d) for d in hand])
    def counts(ds, what):
        """the count of WHAT(d) over the issue's sizes, then over the cached ones"""
        big = [d for d in ds if not cached(d['nx'], d['ny'], d['nz'])]
        small = [d for d in ds if cached(d['nx'], d['ny'], d['nz'])]
        parts = ([f"{sum(map(what, big))} of {len(big)}"] if big else []) + \
                ([f"in cache (grids of 2^21 points or fewer) {sum(map(what, small))} of {len(small)}"] if small else [])
        return "; ".join(parts)
    if hand:
        print(f"\nWithin 1.05 of the hand loop in duels: {counts(hand, lambda d: float(d['median']) <= 1.05)}.")
    vgd = [d for d in duels if d['pair'] == 'value_grad/grad']
    if vgd:
        m = sorted(float(d['median']) for d in vgd if not cached(d['nx'], d['ny'], d['nz']))
        above = [d for d in vgd if float(d['median']) > 1.15]
        spread = f"median {m[len(m)//2]:.2f}, max {m[-1]:.2f} over the issue's sizes; " if m else ""
        print(f"\nvalue_grad / grad in duels: {spread}above 1.15: {counts(vgd, lambda d: float(d['median']) > 1.15)}.")
        table("value_grad / grad above 1.15 in duels", ["value_grad / grad", "quartiles", "pairs"],
              [dcells(d) + ratio(d) for d in above])
