#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU: build, run the GPU tests (CUDA
# kernels vs CPU, the CUDA deconvolution solver vs the CPU one), the demo on
# the GPU, and the GPU part of the perf suite; everything lands in one folder
# (${OUT:-build/gpu-out}): build.log, test.log, demo.log, gpu_results.csv,
# gpu_summary.md, bench.log, nvidia-smi.txt.  PERF_QUICK=1 for small sizes.
# Packages missing on the GPU machine come from .devdeps/ (perf/gpu-deps.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-out}
mkdir -p "$out" build/perf
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
if [ -d .devdeps ] && ! command -v m4 >/dev/null; then
  d=/tmp/stenc-deps
  mkdir -p "$d"
  for f in .devdeps/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$f" "$d"
    else (cd "$d" && ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep '^data.tar')" | tar -x -J -f - 2>/dev/null || ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep '^data.tar')" | tar -x --zstd -f -); fi
  done
  lib=$d/usr/lib/x86_64-linux-gnu
  export PATH=$d/usr/bin:$PATH CPATH=$d/usr/include${CPATH:+:$CPATH}
  export LIBRARY_PATH=$lib${LIBRARY_PATH:+:$LIBRARY_PATH} LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
jobs=$(nproc 2>/dev/null || echo 4)
targets="all build/tests/test_cuda build/tests/test_deconv_gpu build/bin/stenc-gpu-bench"
if ! make -j"$jobs" $targets > "$out/build.log" 2>&1; then
  echo "build failed; see $out/build.log"; tail -30 "$out/build.log"; exit 1
fi
echo "== GPU tests"
{ ./build/tests/test_cuda; echo "test_cuda exit $?"; ./build/tests/test_deconv_gpu; echo "test_deconv_gpu exit $?"; } 2>&1 | tee "$out/test.log"
echo "== demo on the GPU"
{ /usr/bin/time -p ./build/bin/stenc-deconv --gpu --quiet --out "$out/demo"; echo "exit $?"; } 2>&1 | tee "$out/demo.log"
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
echo "== GPU benchmarks"
timeout 420 ./build/bin/stenc-gpu-bench $q --csv "$out/gpu_results.csv" 2>&1 | tee "$out/bench.log"
python3 perf/summary.py "$out/gpu_results.csv" > "$out/gpu_summary.md" 2>/dev/null || true
echo "results in $out"
