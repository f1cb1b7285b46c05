#!/usr/bin/env python3
"""Compare GPU benchmark CSVs of one run (perf/gpu.sh writes them):
    gpu_compare.py DEFAULT.csv [NAME=VARIANT.csv ...]
prints, per dimension, the geometric mean of each variant's time over the
default's and how many entries are faster or slower by more than 5%, then
a table of the largest sizes (2D 16384^2, 3D 640^3): the default's time and
ratio to its ceiling, f32 and f64, and each variant's f32 time over the
default's; then stenc's time over the hand-written kernels' (perf/gpu_hand.cu,
backend handcuda) in the default build."""
import csv
import math
import sys


def load(path):
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["kernel"], r["entry"], r["dims"], r["nx"], r["precision"])
            if r["backend"] == "handcuda":
                key = ("hand",) + key
            out[key] = (float(r["median_s"]) * 1e3, float(r["ratio"]))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    base = load(argv[1])
    variants = [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in argv[2:]]
    if variants:
        print("| variant | dims | geometric mean, its time / default's | faster / slower than the default by >5% | entries |")
        print("|---|---|---|---|---|")
        for name, v in variants:
            for d in ("2", "3"):
                r = [v[k][0] / base[k][0] for k in base
                     if k[2] == d and k in v and not k[0].startswith("ceiling") and k[0] != "hand"]
                if not r:
                    continue
                g = math.exp(sum(map(math.log, r)) / len(r))
                print("| %s | %sD | %.3f | %d / %d | %d |" % (name, d, g, sum(x < 0.95 for x in r),
                                                           sum(x > 1.05 for x in r), len(r)))
        print()
    largest = {"2": "16384", "3": "640"}
    head = "| kernel | entry | size | f32 ms | f32 ratio | f64 ms | f64 ratio |"
    head += "".join(" f32 %s/default |" % n for n, _ in variants)
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for k, (ms, ratio) in base.items():
        if k[0] == "hand" or k[4] != "f32" or largest.get(k[2]) != k[3]:
            continue
        ms64, ratio64 = base.get(k[:4] + ("f64",), (float("nan"), float("nan")))
        size = k[3] + ("²" if k[2] == "2" else "³")
        row = "| %s | %s | %s | %.3f | %.2f | %.3f | %.2f |" % (k[0], k[1], size, ms, ratio, ms64, ratio64)
        for _, v in variants:
            row += " %s |" % ("%.2f" % (v[k][0] / ms) if k in v else "")
        print(row)
    hand = [(k[1:], ms, ratio) for k, (ms, ratio) in base.items() if k[0] == "hand" and k[1:] in base]
    if hand:
        print()
        print("| kernel | entry | size | prec | stenc ms | hand ms | hand ratio to its ceiling | stenc / hand |")
        print("|---|---|---|---|---|---|---|---|")
        for k, ms, ratio in hand:
            print("| %s | %s | %s%s | %s | %.3f | %.3f | %.2f | %.2f |" % (k[0], k[1], k[3], "²" if k[2] == "2" else "³",
                                                                       k[4], base[k][0], ms, ratio, base[k][0] / ms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
