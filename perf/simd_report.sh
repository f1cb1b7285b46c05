#!/usr/bin/env bash
# perf/simd_report.sh [FILE.c ...]: the `#pragma omp simd` loops of generated
# kernel units that GCC reports as not vectorized, per precision (the unit
# compiled as the build does, with -fopt-info-vec).  Default: every shipped
# stencil's unit in build/gen.  A loop GCC unrolls whole before vectorizing
# (a line's 16 points) is not reported either way: read the assembly there
# (perf/NOTES.md section 60).  Needs `make` first (build/gen).
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    for s in stencils/*.stn; do files+=("build/gen/$(basename "$s" .stn).c"); done
fi
# the kernels' compile flags from GNUmakefile, with the rolling order and
# tile budget it picks for this machine (ROLL_PLANES, TILE_BUDGET or CFLAGS
# in the environment override them, as they do for make)
flags=$(printf 'stenc-print-flags: ; @echo $(CFLAGS_BASE) $(CFLAGS) $(CPPFLAGS_BASE)\n' |
        make -s --no-print-directory -f GNUmakefile -f - stenc-print-flags)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for f in "${files[@]}"; do
    for p in f32 f64; do
        skip=$([ $p = f32 ] && echo f64 || echo f32)
        # shellcheck disable=SC2086
        ${CC:-cc} $flags -DSTENC_NO_$skip -c -o "$tmp/x.o" "$f" \
            -fopt-info-vec-optimized -fopt-info-vec-missed 2> "$tmp/vec.txt"
        n=$(python3 - "$f" "$tmp/vec.txt" <<'PYEOF'
import re, sys, collections
src = open(sys.argv[1]).read().split('\n')
# the loop after each pragma: GCC names its line or the line after
loops = [i + 2 for i, l in enumerate(src) if '#pragma omp simd' in l]
vec, miss = set(), collections.defaultdict(set)
for l in open(sys.argv[2]):
    m = re.match(r'.*\.c:(\d+):\d+: (optimized|missed): (.*)', l)
    if not m:
        continue
    n = int(m.group(1))
    if m.group(2) == 'optimized' and 'loop vectorized' in m.group(3):
        vec.add(n)
    elif 'not vectorized' in m.group(3):
        miss[n].add(m.group(3).strip())
bad = [n for n in loops if (miss[n] or miss[n + 1]) and n not in vec and n + 1 not in vec]
for n in bad:
    print('  %s:%d: %s' % (sys.argv[1], n, '; '.join(sorted(miss[n] | miss[n + 1]))), file=sys.stderr)
print(len(bad))
PYEOF
)
        echo "$f $p: $n simd loop(s) not vectorized"
        bad=$((bad + n))
    done
done
exit $((bad > 0))
