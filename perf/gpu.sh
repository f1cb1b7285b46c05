#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU, after perf/gpu-prep.sh here:
#   run(command="bash perf/gpu.sh", carry=[".gpucarry"])
# Runs the GPU tests (CUDA kernels vs the CPU kernels, the CUDA solver vs the
# CPU one), the demo on the GPU and the GPU benchmarks with the binaries that
# gpu-prep.sh built, and packs every result into ONE archive,
# ${OUT:-build/gpu-out}/gpu-results.tar.gz (test.log, demo.log, demo/,
# gpu_results.csv, gpu_summary.md, bench.log, nvidia-smi.txt; with the
# rows variant that gpu-prep.sh builds, gpu_results_rows.csv and
# gpu_summary_rows.md: the same benchmarks with STENC_CUDA_ZMARCH=0; with
# the l1 variant, gpu_results_l1.csv and gpu_summary_zcache.md: the 3D
# benchmarks with STENC_CUDA_ZCACHE=0, and the default's time over theirs).
# Without .gpucarry it builds here first (needs m4, Check, FFTW, liblbfgs).
# PERF_QUICK=1 for small sizes; GPU_BENCH_TIMEOUT (default 300 s).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu-out}
res=$(mktemp -d)
mkdir -p "$out"
# the archive, rewritten after each stage: a run cut short by the device's
# time limit still returns every stage it finished
pack() { tar -czf "$out/gpu-results.tar.gz" -C "$res" .; }
nvidia-smi > "$res/nvidia-smi.txt" 2>&1 || true
if [ -d .gpucarry ]; then
  tar -xJf .gpucarry/bin.tar.xz -C .gpucarry
  bin=.gpucarry/bin
  d=/tmp/stenc-deps; mkdir -p "$d"
  for f in .gpucarry/deb/*.deb; do dpkg-deb -x "$f" "$d" 2>/dev/null || true; done
  export LD_LIBRARY_PATH=$d/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  bin=build/bins-gpu; mkdir -p "$bin"
  t="build/bin/stenc-deconv build/bin/stenc-gpu-bench build/tests/test_cuda build/tests/test_deconv_gpu"
  if ! make -j"$(nproc)" all $t > "$res/build.log" 2>&1; then
    echo "build failed"; tail -30 "$res/build.log"; pack; exit 1
  fi
  cp $t "$bin/"
fi
export STENC_DECONV_BIN=$PWD/$bin/stenc-deconv
echo "== GPU tests"
{ "$bin/test_cuda"; echo "test_cuda exit $?"; "$bin/test_deconv_gpu"; echo "test_deconv_gpu exit $?"; } 2>&1 | tee "$res/test.log"
if [ -x "$bin/test_dist_cuda" ] && command -v mpirun >/dev/null && ! ldd "$bin/test_dist_cuda" | grep -q "not found"; then
  echo "== device halo updates under MPI (1 and 2 ranks on one GPU)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for np in 1 2; do timeout 120 mpirun --oversubscribe -np $np "$bin/test_dist_cuda"; echo "test_dist_cuda np=$np exit $?"; done 2>&1 | tee -a "$res/test.log"
else
  echo "== device halo updates: skipped (no mpirun or no MPI library on this machine)" | tee -a "$res/test.log"
fi
pack
echo "== demo on the GPU"
{ /usr/bin/time -p "$bin/stenc-deconv" --gpu --quiet --out "$res/demo"; echo "exit $?"; } 2>&1 | tee "$res/demo.log"
rm -f "$res"/demo/*.png
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
pack
echo "== GPU benchmarks"
timeout "${GPU_BENCH_TIMEOUT:-300}" "$bin/stenc-gpu-bench" $q --csv "$res/gpu_results.csv" 2>&1 | tee "$res/bench.log"
python3 perf/summary.py "$res/gpu_results.csv" > "$res/gpu_summary.md" 2>/dev/null || true
pack
# variant NAME WHAT COMPARE: a variant's build (bin/NAME, gpu-prep.sh):
# its tests and 3D benchmarks, and the default's time over its, per 3D
# entry, into COMPARE; fails when the carry has no such build
variant() {
  local b="$bin/$1"
  [ -x "$b/stenc-gpu-bench" ] || return 1
  echo "== $2: tests, then the 3D benchmarks"
  { "$b/test_cuda"; echo "test_cuda ($1) exit $?"; } 2>&1 | tee -a "$res/test.log"
  timeout "${GPU_BENCH_TIMEOUT:-300}" "$b/stenc-gpu-bench" $q --3d --csv "$res/gpu_results_$1.csv" 2>&1 | tee "$res/bench_$1.log"
  python3 perf/summary.py "$res/gpu_results.csv" "$res/gpu_results_$1.csv" > "$res/$3" 2>/dev/null || true
  pack
}
variant l1 "z-marching without the register plane cache (STENC_CUDA_ZCACHE=0)" gpu_summary_zcache.md
if variant rows "the 3D loops one block per row (STENC_CUDA_ZMARCH=0)" gpu_summary.md; then
  python3 perf/summary.py "$res/gpu_results_rows.csv" > "$res/gpu_summary_rows.md" 2>/dev/null || true
fi
pack
echo "results in $out/gpu-results.tar.gz"
