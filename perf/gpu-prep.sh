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
bins="build/bin/stenc-deconv build/bin/stenc-gpu-bench build/tests/test_cuda build/tests/test_deconv_gpu"
[ -x "$(command -v mpicc)" ] && bins="$bins build/tests/mpi/test_dist_cuda"
make -j"$(nproc)" all $bins
# the same GPU test and bench with the 3D loops one block per row
# (STENC_CUDA_ZMARCH=0), and z-marching without the register plane cache
# (STENC_CUDA_ZCACHE=0), for gpu.sh to compare with the default
rows="build/gpu-rows/bin/stenc-gpu-bench build/gpu-rows/tests/test_cuda"
make -j"$(nproc)" BUILD=build/gpu-rows CUDA_DEFS=-DSTENC_CUDA_ZMARCH=0 $rows
l1="build/gpu-l1/bin/stenc-gpu-bench build/gpu-l1/tests/test_cuda"
make -j"$(nproc)" BUILD=build/gpu-l1 CUDA_DEFS=-DSTENC_CUDA_ZCACHE=0 $l1
rm -rf .gpucarry && mkdir -p .gpucarry/deb
stage=$(mktemp -d); mkdir -p "$stage/bin/rows" "$stage/bin/l1"
cp $bins "$stage/bin/"
cp $rows "$stage/bin/rows/"
cp $l1 "$stage/bin/l1/"
strip "$stage"/bin/* "$stage"/bin/rows/* "$stage"/bin/l1/* 2>/dev/null || true
tar -cJf .gpucarry/bin.tar.xz -C "$stage" bin   # ~60 MB of binaries pack to ~12 MB
rm -rf "$stage"
(cd .gpucarry/deb && apt-get download -q libfftw3-double3 liblbfgs0 libpng16-16 libsubunit0 libgomp1 >/dev/null)
du -sh .gpucarry
total=$(du -sm .gpucarry | cut -f1)
[ "$total" -lt 56 ] || { echo "gpu-prep: .gpucarry is ${total} MiB; the device run carries at most 64 MiB with the tree" >&2; exit 1; }
