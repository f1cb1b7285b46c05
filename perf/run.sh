#!/usr/bin/env bash
# make perf: runs the CPU suite (and the peers when installed), writes
# build/perf/results.csv, build/perf/summary.md and build/perf/ratio.png.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/perf
q=""; [ "${PERF_QUICK:-0}" = "1" ] && q="--quick"
build/bin/stenc-bench $q --csv build/perf/results.csv
if python3 -c 'import numpy' 2>/dev/null; then
  python3 perf/peers.py $q >> build/perf/results.csv || echo "peers: numpy/torch run failed (see above)"
else
  echo "peers: numpy not installed, NumPy/PyTorch peers skipped (pip install numpy torch)"
fi
python3 perf/summary.py build/perf/results.csv > build/perf/summary.md
cat build/perf/summary.md
if command -v gnuplot >/dev/null; then
  bash perf/chart.sh build/perf/results.csv build/perf/ratio.png && echo "chart: build/perf/ratio.png"
else
  echo "chart: gnuplot not installed, no PNG"
fi
