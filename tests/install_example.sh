#!/usr/bin/env bash
# Builds examples/ (its own Makefile, its own .stn) against the stenc that
# `make check-install` put in build/install-test, runs it, and reports in
# Check's summary format.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/build/install-test"
work=$(mktemp -d)
cp "$root"/examples/Makefile "$root"/examples/*.stn "$root"/examples/*.c "$work"/
if out=$(MAKEFLAGS= make -s -C "$work" STENC_PREFIX="$prefix" run 2>&1); then
  echo "$out"; echo "100%: Checks: 1, Failures: 0, Errors: 0"; rc=0
else
  echo "$out"; echo "0%: Checks: 1, Failures: 1, Errors: 0"; rc=1
fi
rm -rf "$work"
exit $rc
