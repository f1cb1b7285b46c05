#!/usr/bin/env bash
# One call on a machine with an NVIDIA GPU, after perf/gpu-prep.sh here:
#   run(command="bash perf/gpu.sh", carry=[".gpucarry"])
# Runs the GPU tests (CUDA kernels vs the CPU kernels, the CUDA solver vs the
# CPU one), the demo on the GPU and the GPU benchmarks with the binaries that
# gpu-prep.sh built, and packs every result into ONE archive,
# ${OUT:-build/gpu-out}/gpu-results.tar.gz (test.log, demo.log, demo/,
# gpu_results.csv, gpu_summary.md, bench.log, nvidia-smi.txt; and for each
# variant NAME that gpu-prep.sh built, gpu_results_NAME.csv and
# gpu_summary_NAME.md: its benchmarks, and the default's time over its;
# gpu_compare.md: every variant against the default, perf/gpu_compare.py;
# profile.txt: Nsight Compute's view of three kernels, where ncu exists).
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
{ nvidia-smi; echo; lscpu 2>/dev/null || grep -m1 "model name" /proc/cpuinfo; } > "$res/nvidia-smi.txt" 2>&1 || true
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
{ timeout 240 "$bin/test_cuda"; echo "test_cuda exit $?"; timeout 120 "$bin/test_deconv_gpu"; echo "test_deconv_gpu exit $?"; } 2>&1 | tee "$res/test.log"
if [ -x "$bin/test_dist_cuda" ] && command -v mpirun >/dev/null && ! ldd "$bin/test_dist_cuda" | grep -q "not found"; then
  echo "== device halo updates under MPI (1 and 2 ranks on one GPU)"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for np in 1 2; do timeout 120 mpirun --oversubscribe -np $np "$bin/test_dist_cuda"; echo "test_dist_cuda np=$np exit $?"; done 2>&1 | tee -a "$res/test.log"
else
  echo "== device halo updates: skipped (no mpirun or no MPI library on this machine)" | tee -a "$res/test.log"
fi
pack
echo "== demo on the GPU"
{ timeout 120 /usr/bin/time -p "$bin/stenc-deconv" --gpu --quiet --out "$res/demo"; echo "exit $?"; } 2>&1 | tee "$res/demo.log"
rm -f "$res"/demo/*.png
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
pack
echo "== GPU benchmarks"
timeout "${GPU_BENCH_TIMEOUT:-300}" "$bin/stenc-gpu-bench" $q --csv "$res/gpu_results.csv" 2>&1 | tee "$res/bench.log"
python3 perf/summary.py "$res/gpu_results.csv" > "$res/gpu_summary.md" 2>/dev/null || true
pack
# variant NAME: a variant's build (bin/NAME, gpu-prep.sh; bin/NAME/flags
# says how it differs): its GPU test and benchmarks (the 3D grids only
# unless GPU_VARIANT_2D=1), and the default's time over its, per entry, in
# gpu_summary_NAME.md
variant() {
  local b="$bin/$1"
  [ -x "$b/stenc-gpu-bench" ] || return 1
  local only="--3d"; [ "${GPU_VARIANT_2D:-0}" = "1" ] && only=""
  echo "== variant $1 ($(cat "$b/flags" 2>/dev/null)): tests, then the benchmarks"
  { timeout 240 "$b/test_cuda"; echo "test_cuda ($1) exit $?"; } 2>&1 | tee -a "$res/test.log"
  timeout "${GPU_BENCH_TIMEOUT:-300}" "$b/stenc-gpu-bench" $q $only --csv "$res/gpu_results_$1.csv" 2>&1 | tee "$res/bench_$1.log"
  python3 perf/summary.py "$res/gpu_results.csv" "$res/gpu_results_$1.csv" > "$res/gpu_summary_$1.md" 2>/dev/null || true
  pack
}
for d in "$bin"/*/; do variant "$(basename "$d")"; done
# every variant against the default in one table (perf/gpu_compare.py)
cmp=()
for c in "$res"/gpu_results_*.csv; do [ -f "$c" ] && n=${c##*/gpu_results_} && cmp+=("${n%.csv}=$c"); done
python3 perf/gpu_compare.py "$res/gpu_results.csv" "${cmp[@]}" > "$res/gpu_compare.md" 2>/dev/null || true
pack
# Nsight Compute, where the machine has it (GPU_PROFILE=0 skips): the TV
# gradient 3D f32 (stenc's and the hand-written one) and the Hessian
# gradient 3D f32, their first launch at 384^3, into profile.txt (speed of
# light, occupancy, warp stalls, instruction mix)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
if [ "${GPU_PROFILE:-1}" = "1" ] && [ -n "$ncu" ]; then
  echo "== profiles ($ncu)"
  for k in tv:"k[0-9]+_tv_grad_3d_f32" tv:hand_tv3_grad hessian:"k[0-9]+_hessian_grad_3d_f32"; do
    echo "=== ${k#*:}"
    timeout 120 "$ncu" -k "regex:${k#*:}" -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats \
      "$bin/stenc-gpu-bench" --3d --only "${k%%:*}" --csv /dev/null 2>&1 | grep -v "^==PROF==" | tail -120
  done > "$res/profile.txt" 2>&1
  tail -5 "$res/profile.txt"
  pack
else
  echo "== profiles: skipped (no ncu here, or GPU_PROFILE=0)"
fi
echo "results in $out/gpu-results.tar.gz"
