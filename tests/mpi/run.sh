#!/usr/bin/env bash
# Runs the distributed-grid test (1, 2, 3, 4 and 8 processes) and the
# distributed adjoint-state Taylor test (1, 2, 4, 8) under mpirun (more
# processes than cores: --oversubscribe), each bounded by a timeout so that a
# deadlock fails instead of hanging; prints each run's Check-style summary
# line for tests/run.sh.  Open MPI refuses to start as root unless told.
# One OpenMP thread per process: with more processes than cores, OpenMP's
# spinning threads slow an oversubscribed run down 50-fold.
set -u
bin=${1:-build/tests/mpi/test_dist}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMP_NUM_THREADS=1
rc=0; tc=0; tf=0
# add one Check-style summary line to the totals
tally() {
  tc=$((tc + $(echo "$1" | sed -E 's/.*Checks: ([0-9]+).*/\1/')))
  tf=$((tf + $(echo "$1" | sed -E 's/.*Failures: ([0-9]+).*/\1/')))
}
for np in 1 2 3 4 8; do
  out=$(timeout 300 mpirun --oversubscribe -np "$np" "$bin" 2>&1); r=$?
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
  if [ "$r" -ne 0 ] || [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -20
    [ "$r" -eq 124 ] && echo "test_dist with $np processes: timed out (deadlock?)"
    echo "0%: Checks: 1, Failures: 1, Errors: 0   (test_dist, $np process(es), exit $r)"
    rc=1; tc=$((tc + 1)); tf=$((tf + 1))
  else
    echo "$line"
    tally "$line"
  fi
done
# the device halo updates (skipped without a GPU: exit 77), and the same
# test with the CUDA units emulated on the host (tests/emu: never skips)
dev=${3:-build/tests/mpi/test_dist_cuda}
for devbin in "$dev" "${dev}_emu"; do
  [ -x "$devbin" ] || continue
  for np in 1 2; do
    out=$(timeout 300 mpirun --oversubscribe -np "$np" "$devbin" 2>&1); r=$?
    if [ "$r" -eq 77 ] || printf '%s\n' "$out" | grep -q 'SKIP'; then
      printf '%s\n' "$out" | grep SKIP | head -1; break
    fi
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
    echo "$line"
    if [ "$r" -ne 0 ] || [ -z "$line" ]; then printf '%s\n' "$out" | tail -5; tc=$((tc + 1)); tf=$((tf + 1)); rc=1; continue; fi
    tally "$line"
  done
done
# the distributed adjoint-state gradient: its Taylor test at 1, 2, 4 and 8
# processes, and the same J and <g, dK> at every process count (1e-12)
wave=${2:-build/bin/stenc-wave-adjoint}
ref_j=""; ref_g=""
for np in 1 2 4 8; do
  out=$(timeout 300 mpirun --oversubscribe -np "$np" "$wave" 2>&1); r=$?
  j=$(printf '%s\n' "$out" | sed -n 's/^J = //p'); gd=$(printf '%s\n' "$out" | sed -n 's/^<g, dK> = //p')
  printf '%s\n' "$out" | grep -E '^(grid|J =|<g|taylor)'
  tc=$((tc + 2))
  if [ "$r" -ne 0 ] || [ -z "$j" ]; then
    echo "stenc-wave-adjoint with $np processes failed (exit $r)"; printf '%s\n' "$out" | tail -5; tf=$((tf + 2)); rc=1; continue
  fi
  if [ -z "$ref_j" ]; then ref_j=$j; ref_g=$gd; continue; fi
  if ! python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:]); sys.exit(0 if abs(a-b)<=1e-12*abs(b) and abs(c-d)<=1e-12*abs(d) else 1)" "$j" "$ref_j" "$gd" "$ref_g"; then
    echo "stenc-wave-adjoint: $np processes give J = $j, <g,dK> = $gd; 1 process: $ref_j, $ref_g"; tf=$((tf + 1)); rc=1
  fi
done
echo "$(( tc ? 100 * (tc - tf) / tc : 0 ))%: Checks: $tc, Failures: $tf, Errors: 0   (distributed grids, 1 to 8 processes)"
exit $rc
