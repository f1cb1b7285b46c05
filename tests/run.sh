#!/usr/bin/env bash
# Runs the tests given as arguments, shows their Check output, and ends with
# one summary line "N passed, N failed, N skipped" over all suites.
#
# usage: tests/run.sh TEST...
#   TEST is a test binary, a binary with a shard "BIN#K/N" (run with
#   STENC_TEST_SHARD=K/N: the suite runs its K-th of N parts; a suite that
#   is named with shards must take them, see tests/testutil.h), or a script
#   (*.sh).  Binaries and shards run side by side, TEST_JOBS at a time
#   (default: the number of cores), their output shown in the order given;
#   the scripts (the install example, the MPI tests) run after them, one at
#   a time.  Exit status 77 from a test means "skipped".
set -u
cd "$(dirname "$0")/.."
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# the suites run side by side, each with its OpenMP threads: more threads than
# cores, so a thread that spins at a barrier holds a core another suite
# needs.  Waiting threads sleep instead (the sanitized suites' run took
# 0.91-0.97 of its time, perf/NOTES.md section 64); the caller's setting wins.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stenc-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run_one N TEST: TEST's output into $tmp/N.out, its exit status into $tmp/N.rc
run_one() {
  local n=$1 t=$2 bin=$2 shard=""
  case "$t" in *'#'*) bin=${t%%#*}; shard=${t#*#} ;; esac
  if [ -n "$shard" ]; then
    STENC_TEST_SHARD=$shard "$bin" >"$tmp/$n.out" 2>&1
  else
    "$bin" >"$tmp/$n.out" 2>&1
  fi
  echo $? >"$tmp/$n.rc"
}

n=0; running=0; scripts=()
for t in "$@"; do
  case "$t" in *.sh) scripts+=("$t"); continue ;; esac
  n=$((n + 1)); echo "$t" >"$tmp/$n.name"
  run_one "$n" "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for s in "${scripts[@]+"${scripts[@]}"}"; do
  n=$((n + 1)); echo "$s" >"$tmp/$n.name"
  run_one "$n" "$s"
done

pass=0; fail=0; skip=0; bad=0
for i in $(seq 1 "$n"); do
  t=$(cat "$tmp/$i.name"); rc=$(cat "$tmp/$i.rc")
  echo "== $(basename "$t")"
  cat "$tmp/$i.out"
  line=$(grep -E '^[0-9]+%: Checks: ' "$tmp/$i.out" | tail -1)
  if [ "$rc" -eq 77 ]; then
    skip=$((skip + 1)); continue
  fi
  if [ -n "$line" ]; then
    c=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
    f=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
    e=$(echo "$line" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
    pass=$((pass + c - f - e)); fail=$((fail + f + e))
  else
    fail=$((fail + 1))
  fi
  [ "$rc" -ne 0 ] && bad=1
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$bad" -eq 0 ]
