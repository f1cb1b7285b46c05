#!/bin/bash
# perf/ab.sh REV DIMS N [REG...]: the regularizer entries of git revision REV
# (old) against the working tree's build (new), f32 (AB_PREC=f64: double), in one process per link
# order, with a control (a second copy of the new build).  Builds REV's
# kernels without CUDA into build/ab/tree-old (about a minute, once per REV),
# the working tree's with make.  Both sides use the working tree's runtime
# library and benchmark registry (perf/bench_kernels.h): REV must have the
# same regularizers and runtime calls.  A result is a new/old ratio that
# holds in both link orders, well outside the control/new ratios' spread
# (perf/NOTES.md section 20: the call order and the code's placement alone
# move a ratio by up to 10% on the development VM).  Environment: AB_REPS,
# AB_WHAT, AB_PREC, AB_MODE (perf/ab.c).
set -euo pipefail
if [ $# -lt 3 ]; then echo "usage: perf/ab.sh REV DIMS N [REG...]" >&2; exit 2; fi
rev=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
w=build/ab
sha=$(git rev-parse --verify "$rev^{commit}")
mkdir -p $w
if [ "$(cat $w/tree-old.rev 2>/dev/null)" != "$sha" ]; then
    rm -rf $w/tree-old $w/tree-old.rev
    mkdir -p $w/tree-old
    git archive "$sha" | tar -x -C $w/tree-old
    make -C $w/tree-old -j2 NVCC= build/lib/libstenc_kernels.a build/lib/libstenc.a >/dev/null
    echo "$sha" > $w/tree-old.rev
fi
make -j2 build/lib/libstenc_kernels.a build/lib/libstenc.a >/dev/null
cc=${CC:-cc}
flags="-std=c11 -Wall -Wextra -Werror -O3 -march=native -fopenmp -fno-math-errno"
# side NAME TREE: TREE's kernel objects (no CUDA units) and the shim as
# one object, ab_run_NAME its only global stenc_/ab_ definition
side() {
    local d=$w/side-$1
    rm -rf "$d" && mkdir -p "$d"
    (cd "$d" && ar x "$root/$2/build/lib/libstenc_kernels.a" && rm -f ./*.cu.o)
    $cc $flags -I"$2/runtime" -I"$2/build/gen" -Iperf -DAB_RUN=ab_run_$1 -c perf/ab_shim.c -o "$d/shim.o"
    ld -r -o $w/$1.o "$d"/*.o
    nm -g --defined-only $w/$1.o | awk '$3 ~ /^stenc_/ {print $3}' > "$d/local"
    objcopy --localize-symbols="$d/local" $w/$1.o
}
side old $w/tree-old
side new .
side ctl .
for order in "old new ctl" "ctl new old"; do
    objs=$(for s in $order; do echo -n "$w/$s.o "; done)
    $cc $flags -Iruntime -Ibuild/gen -Iperf -o $w/ab perf/ab.c $objs build/lib/libstenc.a -lm
    echo "link order: $order"
    $w/ab "$@"
done
