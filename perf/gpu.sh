#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU: build, run the GPU tests, run the
# GPU part of the perf suite, and leave everything in one folder
# (${OUT:-build/gpu-out}): build.log, test.log, gpu_results.csv, bench.log,
# nvidia-smi.txt.  Well under 10 minutes on an H200 (PERF_QUICK=1: ~1 min).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-out}
mkdir -p "$out" build/perf
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
command -v m4 >/dev/null || { apt-get install -y -qq m4 check pkg-config >/dev/null 2>&1 || true; }
jobs=$(nproc 2>/dev/null || echo 4)
if ! make -j"$jobs" all build/tests/test_cuda build/bin/stenc-gpu-bench > "$out/build.log" 2>&1; then
  echo "build failed; see $out/build.log"; tail -30 "$out/build.log"; exit 1
fi
echo "== GPU tests"
./build/tests/test_cuda 2>&1 | tee "$out/test.log"
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
echo "== GPU benchmarks"
timeout 480 ./build/bin/stenc-gpu-bench $q --csv "$out/gpu_results.csv" 2>&1 | tee "$out/bench.log"
python3 perf/summary.py "$out/gpu_results.csv" > "$out/gpu_summary.md" 2>/dev/null || true
echo "results in $out"
