#!/usr/bin/env bash
# The .adj listings read back (tests/adj_listing.py): every reduction's
# listed gradient against central differences of its listed R, every
# listing's names defined before use.  ADJ_LISTING_GEN: the generator to run
# (default build/bin/stenc-gen).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
exec python3 tests/adj_listing.py "${ADJ_LISTING_GEN:-build/bin/stenc-gen}" stencils/*.stn tests/stencils/*.stn
