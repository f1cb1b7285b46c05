#!/usr/bin/env bash
# Runs the test binaries given as arguments, shows their Check output, and
# ends with one summary line "N passed, N failed" over all suites.
set -u
pass=0; fail=0; skip=0; bad=0
for t in "$@"; do
  echo "== $(basename "$t")"
  out=$(cd "$(dirname "$0")/.." && "$t" 2>&1); rc=$?
  echo "$out"
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -1)
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
