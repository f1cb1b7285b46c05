#!/usr/bin/env bash
# Runs the distributed-grid test under mpirun with 1 to 4 processes (more
# than the cores: --oversubscribe), each bounded by a timeout so that a
# deadlock fails instead of hanging; prints each run's Check-style summary
# line for tests/run.sh.  Open MPI refuses to start as root unless told.
set -u
bin=${1:-build/tests/mpi/test_dist}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
rc=0; tc=0; tf=0
for np in 1 2 3 4; do
  out=$(timeout 300 mpirun --oversubscribe -np "$np" "$bin" 2>&1); r=$?
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
  if [ "$r" -ne 0 ] || [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -20
    [ "$r" -eq 124 ] && echo "test_dist with $np processes: timed out (deadlock?)"
    echo "0%: Checks: 1, Failures: 1, Errors: 0   (test_dist, $np process(es), exit $r)"
    rc=1; tc=$((tc + 1)); tf=$((tf + 1))
  else
    echo "$line"
    tc=$((tc + $(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')))
    tf=$((tf + $(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')))
  fi
done
echo "$(( tc ? 100 * (tc - tf) / tc : 0 ))%: Checks: $tc, Failures: $tf, Errors: 0   (test_dist, 1 to 4 processes)"
exit $rc
