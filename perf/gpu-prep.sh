#!/usr/bin/env bash
# Run HERE (the development machine: nvcc, no GPU) before a device session.
# Builds everything the GPU run needs (CUDA objects, the GPU test binaries,
# the solver, the GPU bench), fetches the Debian runtime libraries a bare
# GPU machine lacks, and puts both into .gpucarry/ (ignored by git), which
# the device run carries, so that the GPU machine only runs:
#   run(command="bash perf/gpu.sh", carry=[".gpucarry"])
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "gpu-prep: nvcc is not on the PATH; the GPU objects cannot be built" >&2; exit 1; }
grep -qx '/.gpucarry/' .git/info/exclude 2>/dev/null || echo '/.gpucarry/' >> .git/info/exclude
# The GPU machine's host processor is not this one: the host code is built
# for x86-64-v3 (AVX2, FMA), which any machine an H100/H200 sits in runs,
# not -march=native (GPU_ARCHFLAGS overrides), in build dirs of its own.
arch=${GPU_ARCHFLAGS:--march=x86-64-v3}
# prep DIR CUDA_DEFS TARGETS...: build TARGETS in DIR; a DIR built before
# with other host or device flags is emptied first (make does not track
# flags: objects, libraries and binaries would mix the two builds)
prep() {
  local dir=$1 defs=$2; shift 2
  if [ "$(cat "$dir/.flags" 2>/dev/null)" != "$arch | $defs" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "$arch | $defs" > "$dir/.flags"
  fi
  make -j"$(nproc)" BUILD="$dir" ARCHFLAGS="$arch" CUDA_DEFS="$defs" "$@"
}
bins="build/gpu/bin/stenc-deconv build/gpu/bin/stenc-gpu-bench build/gpu/tests/test_cuda build/gpu/tests/test_deconv_gpu"
[ -x "$(command -v mpicc)" ] && bins="$bins build/gpu/tests/mpi/test_dist_cuda"
prep build/gpu "" $bins
# variants: the same GPU test and bench built with other device flags, for
# gpu.sh to compare with the default in the same run.  GPU_VARIANTS is a
# space-separated list of NAME=FLAGS (FLAGS: nvcc flags, commas for
# spaces); the default: the open questions of perf/NOTES.md section 40,
# costly subexpressions computed at every point (nodes0) and at most 128
# registers a thread so that two blocks fit a multiprocessor (mb2).
# Measured before: rows=-DSTENC_CUDA_ZMARCH=0 (one block per row),
# l1=-DSTENC_CUDA_ZCACHE=0, nopipe=-DSTENC_CUDA_ZPIPE=0, fast=-use_fast_math;
# open but left out: u1=-DSTENC_CUDA_UNROLL=1.  Each variant adds about
# 11 MiB to the carry (two: 43 MiB); three and the default come to 56 MiB,
# over the limit below.  GPU_VARIANTS= builds none.
variants=${GPU_VARIANTS-nodes0=-DSTENC_CUDA_ZNODES=0 mb2=-DSTENC_CUDA_MINBLOCKS=2}
for v in $variants; do
  name=${v%%=*} flags=${v#*=}
  prep "build/gpu-$name" "${flags//,/ }" "build/gpu-$name/bin/stenc-gpu-bench" "build/gpu-$name/tests/test_cuda"
done
rm -rf .gpucarry && mkdir -p .gpucarry/deb
stage=$(mktemp -d); mkdir -p "$stage/bin"
cp $bins "$stage/bin/"
for v in $variants; do
  name=${v%%=*}
  mkdir -p "$stage/bin/$name"
  cp "build/gpu-$name/bin/stenc-gpu-bench" "build/gpu-$name/tests/test_cuda" "$stage/bin/$name/"
  echo "${v#*=}" > "$stage/bin/$name/flags"
done
# GPU_OLD=DIR: a bin/ of an earlier carry (its stenc-gpu-bench, test_cuda),
# benchmarked as the variant "old" (before/after in one run)
if [ -n "${GPU_OLD:-}" ]; then mkdir -p "$stage/bin/old"; cp "$GPU_OLD/stenc-gpu-bench" "$GPU_OLD/test_cuda" "$stage/bin/old/"; echo "(an earlier build)" > "$stage/bin/old/flags"; fi
find "$stage/bin" -type f ! -name flags -exec strip {} + 2>/dev/null || true
tar -cJf .gpucarry/bin.tar.xz -C "$stage" bin   # ~60 MB of binaries pack to ~12 MB
rm -rf "$stage"
(cd .gpucarry/deb && apt-get download -q libfftw3-double3 liblbfgs0 libpng16-16 libsubunit0 libgomp1 >/dev/null)
du -sh .gpucarry
total=$(du -sm .gpucarry | cut -f1)
[ "$total" -lt 56 ] || { echo "gpu-prep: .gpucarry is ${total} MiB; the device run carries at most 64 MiB with the tree" >&2; exit 1; }
