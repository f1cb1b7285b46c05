#!/usr/bin/env bash
# Run HERE (the development machine, with network), before a device session:
# downloads the Debian packages the build needs that the GPU machine's image
# lacks (m4, Check, FFTW, liblbfgs, libpng) into .devdeps/ (ignored by git).
# Then call the device tool's run with carry [".devdeps"] and the command
# "bash perf/gpu.sh"; gpu.sh unpacks them into /tmp/stenc-deps there.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.devdeps/' .git/info/exclude 2>/dev/null || echo '/.devdeps/' >> .git/info/exclude
mkdir -p .devdeps
cd .devdeps
apt-get download m4 check libsubunit-dev libsubunit0 libfftw3-dev libfftw3-double3 libfftw3-single3 libfftw3-long3 \
  libfftw3-quad3 liblbfgs-dev liblbfgs0 libpng-dev libpng16-16 zlib1g-dev
du -sh .
