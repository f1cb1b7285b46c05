#!/usr/bin/env python3
"""Fuzzing harness of stenc-gen (the stencil generator).

Every input must end in one of two ways:
  * exit 0, and the generated C compiles under -Wall -Wextra -Werror (and,
    with --nvcc-every N, every N-th accepted input's CUDA under nvcc
    -Werror all-warnings), or
  * exit 1, stderr starting "FILE:LINE: " (warnings may precede the error)
    with a "FILE:LINE: error: " line, and no output left behind;
never a signal, a sanitizer report, another exit status or a time-out.

Inputs: first every file of the regression corpus (tests/fuzz/corpus) and
of the error tests (tests/bad), then
--count inputs from a fixed --seed, alternating between
  * mutations of the shipped and test stencils, taken in groups of at most
    two definitions (split_seed), by byte flips, truncation, line deletion
    and duplication, bracket damage, name swaps, token insertion, and
  * random valid stencils generated from the grammar (every FD macro,
    function, operator, select, staggered extents, kernels, reductions).
A failing input is copied to --save-dir (default build/fuzz-found) so it
can join the corpus.  The last line is "fuzz: N passed, N failed".
"""
import argparse, concurrent.futures, os, random, re, shutil, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

FD2 = ["all", "inn", "inn_x", "inn_y", "d_xa", "d_ya", "d_xi", "d_yi", "d2_xa", "d2_ya", "d2_xi", "d2_yi",
       "av", "av_xa", "av_ya", "av_xi", "av_yi", "harm", "harm_xa", "harm_ya", "maxloc", "minloc"]
FD3 = ["all", "inn", "inn_x", "inn_y", "inn_z", "inn_xy", "inn_xz", "inn_yz", "d_xa", "d_ya", "d_za", "d_xi",
       "d_yi", "d_zi", "d2_xi", "d2_yi", "d2_zi", "av", "av_xa", "av_ya", "av_za", "av_xi", "av_yi", "av_zi",
       "av_xya", "av_xyi", "harm_xa", "maxloc", "minloc"]
FN1 = ["sqrt", "exp", "log", "abs", "sin", "cos", "tanh", "atan", "sinh", "cosh"]
FN2 = ["min", "max", "pow"]
LHS2 = ["all", "inn", "inn_x", "inn_y"]
LHS3 = ["all", "inn", "inn_x", "inn_y", "inn_z"]


def gen_expr(r, arrays, params, fds, depth):
    """a random expression; positive-ish arguments where functions need them"""
    if depth <= 0 or r.random() < 0.25:
        k = r.random()
        if k < 0.5:
            return "%s(%s)" % (r.choice(fds), r.choice(arrays))
        if k < 0.8 and params:
            return r.choice(params)
        return r.choice(["1", "2", "0.5", "3.25", "1e-3", "7"])
    k = r.randrange(9)
    a = lambda: gen_expr(r, arrays, params, fds, depth - 1)
    if k == 0:
        return "(%s %s %s)" % (a(), r.choice("+-*"), a())
    if k == 1:
        return "%s/(1 + %s^2)" % (a(), a())
    if k == 2:
        return "%s(%s)" % (r.choice(FN1), "1 + " + a() + "^2" if r.random() < 0.7 else a())
    if k == 3:
        return "%s(%s, %s)" % (r.choice(FN2[:2]), a(), a())
    if k == 4:
        return "(%s)^%d" % (a(), r.randrange(-2, 4))
    if k == 5:
        return "select(%s %s %s, %s, %s)" % (a(), r.choice(["<", ">", "<=", ">=", "==", "!="]), a(), a(), a())
    if k == 6:
        return "-%s" % a()
    if k == 7:
        return "sqrt(%s + %s^2)" % (r.choice(params) if params else "1e-2", a())
    return "%s*%s" % (a(), a())


def gen_stencil(r, idx):
    """a random stencil that the generator should accept"""
    dims = r.choice([[2], [3], [2, 3]])
    fds = FD2 if dims == [2] else FD3 if dims == [3] else [f for f in FD2 if f in FD3 and f not in ("maxloc",)]
    nar = r.randrange(1, 4)
    arrays = ["a%d" % q for q in range(nar)]
    params = ["p%d" % q for q in range(r.randrange(0, 4))]
    out = ["stencil g%d" % idx, "dims " + " ".join(map(str, dims)), "array " + ", ".join(arrays)]
    if params:
        out.append("param " + ", ".join(params))
    if r.random() < 0.5 or nar < 2:
        out.append("reduce r = " + gen_expr(r, arrays, params, fds, r.randrange(0, 4)))
    else:
        lhs = LHS2 if dims == [2] else LHS3 if dims == [3] else LHS2
        dst, src = arrays[0], arrays[1:]
        out.append("kernel k {")
        out.append("  %s(%s) = %s" % (r.choice(lhs), dst, gen_expr(r, src, params, ["all", "inn", "d_xa", "av"] if dims != [2] else fds, r.randrange(0, 3))))
        out.append("}")
    return "\n".join(out) + "\n"


def mutate(r, text, names):
    b = bytearray(text.encode())
    k = r.randrange(7)
    if k == 0 and b:  # byte flips
        for _ in range(r.randrange(1, 4)):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
    elif k == 1 and b:  # truncation
        b = b[: r.randrange(len(b))]
    elif k in (2, 3):  # line deletion / duplication
        lines = bytes(b).split(b"\n")
        q = r.randrange(len(lines))
        if k == 2:
            del lines[q]
        else:
            lines.insert(q, lines[q])
        b = bytearray(b"\n".join(lines))
    elif k == 4 and b:  # bracket damage
        pos = [i for i, c in enumerate(b) if chr(c) in "()[]{},"]
        if pos:
            p = r.choice(pos)
            b[p : p + 1] = r.choice([b"", b"(", b")", b"[[", b"]]", b"{", b"}", b",", b",,"])
    elif k == 5:  # name swap
        s = bytes(b).decode(errors="replace")
        ids = sorted(set(re.findall(r"\b[A-Za-z_]\w*\b", s)))
        if ids:
            a = r.choice(ids)
            s = re.sub(r"\b%s\b" % re.escape(a), r.choice(names + ids), s, count=r.randrange(1, 3))
        b = bytearray(s.encode())
    else:  # token insertion
        tok = r.choice(["^-1", "/0", "(", ")", "$1", "define", "[[", "]]", "\r", "#", "nx+1", "i+2", "0^-1",
                        "NAN", "stream", "STENC_OK", "m4_syscmd(true)", "1e400", "x[i,j]", "x[2*i,j]", ",", "\n"])
        p = r.randrange(len(b) + 1)
        b[p:p] = tok.encode()
    return bytes(b)


def check_one(gen, path, data, cc, nvcc, asan_log):
    """run the generator on data; returns None (accepted, compiles), False
    (rejected as it should be) or a failure description"""
    work = tempfile.mkdtemp(prefix="stenc-fuzz-")
    try:
        stn = os.path.join(work, os.path.basename(path))
        with open(stn, "wb") as f:
            f.write(data)
        out = os.path.join(work, "out")
        os.mkdir(out)
        try:
            p = subprocess.run([gen, "-I", os.path.join(ROOT, "m4"), "-o", out, stn], capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "time-out (60 s)"
        err = p.stderr.decode(errors="replace")
        if "Sanitizer" in err or "runtime error:" in err:
            return "sanitizer report:\n" + err[:2000]
        if p.returncode == 1:
            # warnings may come first (as from a C compiler); an error must follow
            first = err.splitlines()[0] if err else ""
            if not re.match(re.escape(stn) + r":\d+: (error|warning): ", first) or \
                    not re.search("^" + re.escape(stn) + r":\d+: error: ", err, re.M):
                return "exit 1 without FILE:LINE: error: first line: %r" % first[:300]
            if os.listdir(out):
                return "exit 1 but left outputs: %s" % os.listdir(out)
            return False
        if p.returncode != 0:
            return "exit status %d\n%s" % (p.returncode, err[:2000])
        stem = os.path.basename(path)[:-4]
        c = os.path.join(out, stem + ".c")
        q = subprocess.run(cc + ["-c", c, "-o", os.devnull], capture_output=True)
        if q.returncode != 0:
            return "accepted, but the C does not compile:\n" + q.stderr.decode(errors="replace")[:3000]
        if nvcc:
            q = subprocess.run(nvcc + ["-c", os.path.join(out, stem + ".cu"), "-o", os.devnull], capture_output=True)
            if q.returncode != 0:
                return "accepted, but the CUDA does not compile:\n" + q.stderr.decode(errors="replace")[:3000]
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def split_seed(text, most=2):
    """TEXT's definitions (reduce, kernel) in groups of at most MOST, each
    group with every other line of TEXT (stencil, dims, array, param,
    define, comments): the seeds the mutations start from.  A whole test
    stencil of seven reductions compiled for 80 s at -O1, two such
    mutations in a run were two fifths of the fuzz's compile time
    (perf/NOTES.md section 61); a group of two keeps each construct and
    definitions side by side."""
    def aside(line):  # a comment or a blank line
        return line.startswith("#") or line.strip() == ""

    head, defs = [], []
    for line in text.splitlines(keepends=True):
        top = not aside(line) and line[:1] not in (" ", "\t", "}")
        if top and re.match(r"(reduce|kernel)\b", line):
            defs.append([line])
        elif defs and not top and not aside(line):
            defs[-1].append(line)  # a continuation line or a kernel's closing brace
        else:
            head.append((len(defs), line))
    if len(defs) <= most:
        return [text]
    out = []
    for g in range(0, len(defs), most):
        keep = set(range(g, g + most))
        body = []
        for d in range(len(defs) + 1):
            # the lines before definition d: declarations always, comments
            # where d is kept (or the file's first lines)
            body += [l for (at, l) in head if at == d and (d == 0 or d in keep or not aside(l))]
            if d in keep and d < len(defs):
                body += defs[d]
        out.append("".join(body))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen", default=os.path.join(ROOT, "build/bin/stenc-gen"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nvcc-every", type=int, default=0, help="compile every N-th accepted input's CUDA too")
    ap.add_argument("--save-dir", default=os.path.join(ROOT, "build/fuzz-found"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="inputs checked side by side (default: cores)")
    a = ap.parse_args()
    cc = [os.environ.get("CC", "gcc"), "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fopenmp",
          "-I" + os.path.join(ROOT, "runtime")]
    nvcc_bin = shutil.which("nvcc")
    nv = [nvcc_bin, "-std=c++17", "-O0", "-Xcompiler", "-Wall,-Wextra", "-Werror", "all-warnings",
          "-I" + os.path.join(ROOT, "runtime")] if nvcc_bin and a.nvcc_every > 0 else None
    seeds = [os.path.join(ROOT, "stencils", f) for f in sorted(os.listdir(os.path.join(ROOT, "stencils")))]
    seeds += [os.path.join(ROOT, "tests/stencils", f) for f in sorted(os.listdir(os.path.join(ROOT, "tests/stencils")))]
    texts = [t for s in seeds for t in split_seed(open(s).read())]
    names = sorted(set(re.findall(r"\b[A-Za-z_]\w*\b", "".join(texts))))
    corpus_dir = os.path.join(ROOT, "tests/fuzz/corpus")
    cases = []  # the regression corpus and the broken stencils of the error tests
    for d in (corpus_dir, os.path.join(ROOT, "tests/bad")):
        cases += [(os.path.join(d, f), open(os.path.join(d, f), "rb").read()) for f in sorted(os.listdir(d))
                  if f.endswith(".stn")]
    r = random.Random(a.seed)
    for n in range(a.count):
        if n % 3 == 2:
            cases.append(("fz%d.stn" % n, gen_stencil(r, n).encode()))
        else:
            q = r.randrange(len(texts))
            data = texts[q].encode()
            for _ in range(r.randrange(1, 3)):
                data = mutate(r, data.decode(errors="replace"), names)
            cases.append(("fz%d.stn" % n, data))
    passed = failed = accepted = 0

    def check_case(i):
        path, data = cases[i]
        use_nv = nv if (nv and a.nvcc_every and i % a.nvcc_every == 0) else None
        # the stem must be a valid file name for the generator: mutate only the content
        return check_one(a.gen, os.path.basename(path), data, cc, use_nv, None)

    # each check is a few subprocesses: threads keep the cores busy; results in input order
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        verdicts = list(ex.map(check_case, range(len(cases))))
    for (path, data), why in zip(cases, verdicts):
        name = os.path.basename(path)
        if why is None or why is False:
            passed += 1
            accepted += why is None
        else:
            failed += 1
            os.makedirs(a.save_dir, exist_ok=True)
            with open(os.path.join(a.save_dir, name), "wb") as f:
                f.write(data)
            print("FAIL %s (saved to %s): %s" % (name, a.save_dir, why))
    print("fuzz: %d inputs (%d from the corpus), seed %d; %d accepted and compiled, %d rejected cleanly"
          % (len(cases), len([c for c in cases if not c[0].startswith("fz")]), a.seed, accepted, passed - accepted))
    print("fuzz: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
