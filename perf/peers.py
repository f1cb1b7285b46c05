#!/usr/bin/env python3
"""Peers for the perf suite, measured on the same sizes as stenc-bench: isotropic
TV (2D, float, neumann, eps = 1e-3) value and gradient with NumPy, and with
PyTorch eager + autograd when installed.  Prints CSV rows (no header) with the
ceilings taken from build/perf/results.csv (same run)."""
import csv
import statistics
import sys
import time

quick = "--quick" in sys.argv
sizes = [1024] if quick else [4096, 10000]
ceil = {}
for r in csv.DictReader(open("build/perf/results.csv")):
    if r["backend"] == "c" and r["dims"] == "2" and r["precision"] == "f32":
        ceil[(int(r["nx"]), r["ceiling"])] = float(r["ceiling_gbs"])


def med(fn, reps=5):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def emit(backend, entry, n, t, nbytes, c):
    teff = nbytes / t / 1e9
    cg = ceil.get((n, c), float("nan"))
    print(f"tv,{entry},{backend},2,{n},{n},1,f32,{t:.6e},{nbytes:.0f},{teff:.3f},{c},{cg:.3f},{teff/cg:.3f}")
    print(f"  peer {backend:6s} tv {entry:5s} {n}^2: {1e3*t:.2f} ms, {teff:.2f} GB/s", file=sys.stderr)


try:
    import numpy as np
except ImportError:
    np = None
    print("peers: numpy not installed, skipped", file=sys.stderr)

if np is not None:
    eps = np.float32(1e-3)

    def np_value(x):
        dx = np.diff(x, axis=1, append=x[:, -1:])
        dy = np.diff(x, axis=0, append=x[-1:, :])
        return np.sqrt(dx * dx + dy * dy + eps).sum(dtype=np.float64)

    def np_grad(x):
        dx = np.diff(x, axis=1, append=x[:, -1:])
        dy = np.diff(x, axis=0, append=x[-1:, :])
        r = 1 / np.sqrt(dx * dx + dy * dy + eps)
        gx, gy = dx * r, dy * r
        g = -(gx + gy)
        g[:, 1:] += gx[:, :-1]
        g[1:, :] += gy[:-1, :]
        return g

    for n in sizes:
        x = np.random.default_rng(1).random((n, n), dtype=np.float32)
        emit("numpy", "value", n, med(lambda: np_value(x)), 4.0 * n * n, "sum")
        emit("numpy", "grad", n, med(lambda: np_grad(x)), 8.0 * n * n, "copy")

try:
    import torch
except ImportError:
    torch = None
    print("peers: PyTorch not installed, skipped (pip install torch)", file=sys.stderr)

if torch is not None:
    for n in sizes:
        x = torch.rand((n, n), dtype=torch.float32)

        def tv(x):
            dx = torch.diff(x, dim=1, append=x[:, -1:])
            dy = torch.diff(x, dim=0, append=x[-1:, :])
            return torch.sqrt(dx * dx + dy * dy + 1e-3).sum(dtype=torch.float64)

        def value():
            with torch.no_grad():
                tv(x)

        def grad():
            xr = x.detach().requires_grad_(True)
            tv(xr).backward()

        emit("torch", "value", n, med(value), 4.0 * n * n, "sum")
        emit("torch", "grad", n, med(grad), 8.0 * n * n, "copy")
