#!/bin/sh
# cuda_emu.sh IN.cu OUT.cpp: a CUDA unit of stenc (generated, or the
# runtime's) as host C++ for the emulation (cuda_emu.h): cuda_runtime.h
# replaced by the emulation, kernel launches by EMU_LAUNCH, the grid sums
# by emu_grid_sum.  Fails if a launch or a grid sum is left unconverted.
set -e
# a launch K<<<NB, NT, 0, S>>>(ARGS); may span lines (K may be a template)
perl -0pe 's|#include <cuda_runtime.h>|#include "cuda_emu.h"|;
           s{(\w+(?:<\w+>)?)<<<\s*([^,]+?),\s*([^,]+?),\s*0,\s*\w+>>>\((.*?)\);}{EMU_LAUNCH($2, $3, $1($4));}gs;
           s{^( *)stenc_grid_sum\(st_acc, st_ws, st_cnt\);}{$1emu_grid_sum(st_acc, st_ws, st_cnt);}gm' "$1" > "$2.tmp"
if grep -n '<<<\|^ *stenc_grid_sum(' "$2.tmp"; then
  echo "cuda_emu.sh: $1: a launch or grid sum the emulation does not know" >&2; rm -f "$2.tmp"; exit 1
fi
mv "$2.tmp" "$2"
