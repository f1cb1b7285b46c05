#!/usr/bin/env bash
# make perf: runs the CPU suite (and the peers when installed), writes
# build/perf/results.csv, build/perf/summary.md and build/perf/ratio.png.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/perf
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
build/bin/stenc-bench $q --csv build/perf/results.csv --duels build/perf/duels.csv
if python3 -c 'import numpy' 2>/dev/null; then
  python3 perf/peers.py $q >> build/perf/results.csv || echo "peers: numpy/torch run failed (see above)"
else
  echo "peers: numpy not installed, NumPy/PyTorch peers skipped (pip install numpy torch)"
fi
python3 perf/summary.py build/perf/results.csv --duels build/perf/duels.csv > build/perf/summary.md
cat build/perf/summary.md
if command -v gnuplot >/dev/null; then
  bash perf/chart.sh build/perf/results.csv build/perf/ratio.png && echo "chart: build/perf/ratio.png"
else
  echo "chart: gnuplot not installed, no PNG"
fi

# distributed grids: the 3D mini-apps at 1 and 2 processes (weak scaling,
# local 128^3; the cores are shared out: OMP_NUM_THREADS = cores / processes)
if [ -x build/bin/stenc-miniapp-mpi ] && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  cores=$(nproc 2>/dev/null || echo 2); n=128; [ "${PERF_QUICK:-0}" = "1" ] && n=64
  {
    echo "## Distributed grids (MPI), local ${n}^3 per process, ghost width 1 (stokes3d: 2)"
    for app in diffusion3d acoustic3d stokes3d; do
      for cfg in "1" "2" "2 --split-z" "2 --split-z --hide"; do
        set -- $cfg; np=$1; shift
        t=$(( cores / np > 0 ? cores / np : 1 ))
        OMP_NUM_THREADS=$t timeout 600 mpirun --oversubscribe -np $np -x OMP_NUM_THREADS \
          build/bin/stenc-miniapp-mpi $app -n $n -t 20 "$@" | sed 's/^/    /'
      done
    done
  } | tee build/perf/mpi.txt
else
  echo "mpi: stenc-miniapp-mpi or mpirun missing, the distributed section is skipped"
fi
