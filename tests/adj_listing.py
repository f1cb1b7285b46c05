#!/usr/bin/env python3
"""The .adj listings read back: every reduction gradient's listing
(named intermediates, R, its partials d1, d2, ... and the gather line) is
evaluated as written on a small periodic grid of random values, and its
gradient compared with central differences of sum_p R(p) computed from the
listing's own R line.  A wrong partial, a wrong shift in the gather, a
name used before its line or a parenthesis the printer dropped fails it.
Where a 3D gradient's listing says its gather stays exact at the faces in
Neumann mode by a rule (the partials past a face zero, or the face
point's, or evaluated past the face with their reads clamped), each rule
is checked the same way: the gather at face points (of the x faces too
where the listing says "(x too)"), the partials it names past a face
replaced as the rule says, against central differences of sum_p R(p) with
the reads clamped to the grid.
The listings of array-kernel adjoints are read back for their form: each
name defined before its use, each line an expression Python can parse.

usage: adj_listing.py GEN STN...   (GEN: stenc-gen; writes to a temporary
directory).  Prints a Check-style summary line for tests/run.sh. """
import ast
import math
import os
import random
import re
import subprocess
import sys
import tempfile

FUNCS = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "abs": abs, "min": min, "max": max,
    "pow": math.pow, "sin": math.sin, "cos": math.cos, "tan": math.tan, "tanh": math.tanh,
    "atan": math.atan, "sinh": math.sinh, "cosh": math.cosh, "floor": math.floor,
    "sign": lambda v: (v > 0) - (v < 0),
}
GRID = {2: (5, 4), 3: (4, 5, 3)}


def blocks(text):
    """(header comment lines, kernel name, [(name, expr)]) per kernel block"""
    out, head = [], []
    lines = text.splitlines()
    n = 0
    while n < len(lines):
        ln = lines[n]
        m = re.match(r"kernel (\w+) \{$", ln)
        if m:
            body = []
            n += 1
            while lines[n] != "}":
                name, expr = lines[n].strip().split(" = ", 1)
                body.append((name, expr.split("    # ")[0]))
                n += 1
            out.append((head, m.group(1), body))
            head = []
        elif ln.startswith("#"):
            head.append(ln)
        n += 1
    return out


def to_python(expr):
    """EXPR as Python over point functions: A[i+1,j] -> A(i+1,j), a bare
    listing name -> NAME(i,j[,k]), ^ -> **"""
    expr = re.sub(r"(\w+)\[([^\]]*)\]", r"\1(\2)", expr)
    expr = re.sub(r"\b(t\d+|d\d+|R)\b(?!\()", lambda m: m.group(1) + "(*P)", expr)
    return expr.replace("^", "**")


class LazySelect(ast.NodeTransformer):
    """select(c, a, b) as Python's `a if c else b`: the branch not taken is
    not evaluated (the kernels compute it and drop its bits, so a division
    by zero there, 0/0 in Huber's partial on a clamped difference, is no
    error)"""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "select" and len(node.args) == 3:
            return ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2])
        return node


class Listing:
    """a block's lines as Python functions of the point, over arrays ARR"""

    def __init__(self, body, dims, params, arrays):
        self.dims, self.arrays = dims, arrays
        self.env = dict(FUNCS)
        self.env.update(params)
        self.defined = []
        self.exprs = {}
        for name, expr in body:
            if name.startswith("all("):
                name = name[4:-1]
            for used in re.findall(r"\b(t\d+|d\d+|R)\b", expr):
                if used not in self.defined:
                    raise ValueError("%s used before its line (in %s)" % (used, name))
                if name == "R" and used[0] == "d":
                    raise ValueError("R written in terms of its partial %s" % used)
            tree = LazySelect().visit(ast.parse(to_python(expr), mode="eval"))
            self.exprs[name] = compile(ast.fix_missing_locations(tree), name, "eval")
            self.defined.append(name)

    def evaluate(self, name, point, cache):
        key = (name, point)
        if key not in cache:
            local = dict(zip("ijk", point))
            local["P"] = point
            cache[key] = eval(self.exprs[name], self.env, local)
        return cache[key]

    def bind(self, cache):
        n = GRID[self.dims]
        for a, vals in self.arrays.items():
            self.env[a] = (lambda v: lambda *ix: v[tuple(ix[d] % n[d] for d in range(len(n)))])(vals)
        for name in self.defined:
            self.env[name] = (lambda nm: lambda *ix: self.evaluate(nm, tuple(ix), cache))(name)


def points(dims):
    n = GRID[dims]
    if dims == 2:
        return [(i, j) for i in range(n[0]) for j in range(n[1])]
    return [(i, j, k) for i in range(n[0]) for j in range(n[1]) for k in range(n[2])]


def random_arrays(body, pts, rng):
    """values in [0.5, 1.5] at the points PTS for each array the listing
    BODY reads (not its own names, not the gradients it writes)"""
    names = [n for n, _ in body]
    return {a: {p: rng.uniform(0.5, 1.5) for p in pts}
            for a in set(re.findall(r"\b([A-Za-z_]\w*)\[", " ".join(e for _, e in body)))
            if a not in names and not a.endswith("_grad")}


def check_reduction(body, dims, params, arrays, rng):
    """max relative difference of the listed gradient from central
    differences of the listed sum of R, over a few points per array"""
    L = Listing(body, dims, params, arrays)
    grads = [nm[4:-1] for nm, _ in body if nm.startswith("all(")]
    if not grads:
        raise ValueError("no gather line")
    pts = points(dims)

    def total():
        L.bind({})
        return math.fsum(L.env["R"](*p) for p in pts)

    return worst_difference(L, grads, arrays, rng.sample(pts, 4), lambda: L.bind({}), total)


def worst_difference(L, grads, arrays, pts, bind, total):
    """max relative difference of each listed gradient G (bound by BIND)
    at the points PTS from central differences of TOTAL"""
    worst = 0.0
    for g in grads:
        arr = g[: -len("_grad")]
        for p in pts:
            bind()
            listed = L.env[g](*p)
            v = arrays[arr][p]
            h = 1e-6 * max(1.0, abs(v))
            arrays[arr][p] = v + h
            up = total()
            arrays[arr][p] = v - h
            dn = total()
            arrays[arr][p] = v
            fd = (up - dn) / (2 * h)
            worst = max(worst, abs(listed - fd) / max(1.0, abs(fd)))
    return worst


def check_face_rule(body, rule, params, rng, xtoo=False):
    """max relative difference, at points on the y and z faces (x inside;
    on the x faces too for "extend" and with XTOO), of the listed gather
    with RULE applied to its partials past a face (along x too with XTOO)
    from central differences of the Neumann sum of R (reads clamped)"""
    text = " ".join(e for _, e in body)
    reach = max([1] + [int(c) for c in re.findall(r"[ijk][+-](\d+)", text)])
    n = (4 * reach + 2, 5, 4)
    grid = [(i, j, k) for i in range(n[0]) for j in range(n[1]) for k in range(n[2])]
    names = [nm for nm, _ in body]
    arrays = random_arrays(body, grid, rng)
    L = Listing(body, 3, params, arrays)
    clamp = lambda ix: tuple(min(max(ix[d], 0), n[d] - 1) for d in range(3))
    rdims = (0, 1, 2) if xtoo else (1, 2)  # the dimensions whose faces the rule covers

    def bind():
        cache = {}
        for a, vals in arrays.items():
            L.env[a] = (lambda v: lambda *ix: v[clamp(ix)])(vals)
        for name in L.defined:
            plain = (lambda nm: lambda *ix: L.evaluate(nm, tuple(ix), cache))(name)
            if re.match(r"d\d+$", name):
                def ruled(*ix, f=plain):
                    if rule == "extend" or all(0 <= ix[d] < n[d] for d in rdims):
                        return f(*ix)  # past a face under "extend": its reads clamped (the arrays' env)
                    return 0.0 if rule == "zero" else f(*clamp(ix))
                L.env[name] = ruled
            else:
                L.env[name] = plain

    def total():
        bind()
        return math.fsum(L.env["R"](*p) for p in grid)

    on_face = lambda p, dims: any(p[d] in (0, n[d] - 1) for d in dims)
    if rule == "extend" or xtoo:
        faces = [p for p in grid if on_face(p, (0, 1, 2))]
    else:
        faces = [p for p in grid if 2 * reach <= p[0] < n[0] - 2 * reach and on_face(p, (1, 2))]
    grads = [nm[4:-1] for nm in names if nm.startswith("all(")]
    return worst_difference(L, grads, arrays, rng.sample(faces, min(8, len(faces))), bind, total)


def main():
    gen, stns = sys.argv[1], sys.argv[2:]
    rng = random.Random(7)
    checks = fails = 0
    with tempfile.TemporaryDirectory() as out:
        for stn in stns:
            r = subprocess.run([gen, "-o", out, stn], capture_output=True, text=True)
            base = os.path.splitext(os.path.basename(stn))[0]
            checks += 1
            if r.returncode != 0:
                print("%s: stenc-gen failed: %s" % (stn, r.stderr.strip()))
                fails += 1
                continue
            text = open(os.path.join(out, base + ".adj")).read()
            src = open(stn).read()
            pnames = re.findall(r"^param (.*)$", src, re.M)
            params = {p.strip(): rng.uniform(0.5, 1.5) for ln in pnames for p in ln.split(",")}
            for head, kname, body in blocks(text):
                checks += 1
                dims = int(kname[-2])
                try:
                    if "_grad_" in kname:
                        err = check_reduction(body, dims, params, random_arrays(body, points(dims), rng), rng)
                        ok = err < 1e-6
                        print("%s %s: listed gradient against central differences of its R: %.1e%s"
                              % (base, kname, err, "" if ok else "  FAILED"))
                        m = re.search(r"past a face taken as (zero|those of the face point)", " ".join(head))
                        rules = ([] if not m else ["zero" if m.group(1) == "zero" else "clamp"]) + \
                            (["extend"] if re.search(r"past a face evaluated there", " ".join(head)) else [])
                        xtoo = re.search(r"at the faces \(x too\) in Neumann mode", " ".join(head)) is not None
                        for rule in rules:
                            checks += 1
                            ferr = check_face_rule(body, rule, params, rng, xtoo and rule != "extend")
                            fok = ferr < 1e-6
                            fails += not fok
                            print("%s %s: the listed face rule (%s%s) against central differences, Neumann: %.1e%s"
                                  % (base, kname, rule, ", x too" if xtoo and rule != "extend" else "", ferr,
                                     "" if fok else "  FAILED"))
                    else:
                        Listing(body, dims, params, {})
                        ok = True
                except (ValueError, SyntaxError, KeyError, NameError, TypeError) as e:
                    print("%s %s: %s: %s  FAILED" % (base, kname, type(e).__name__, e))
                    ok = False
                fails += not ok
    print("%d%%: Checks: %d, Failures: %d, Errors: 0" % (100 * (checks - fails) // max(checks, 1), checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
