#!/usr/bin/env bash
# PNG bar chart (gnuplot) of the ratio to the ceiling, per kernel/entry, for
# the largest 2D float size in the CSV.
set -euo pipefail
csv=$1; png=$2
tmp=$(mktemp)
python3 - "$csv" > "$tmp" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['backend'] == 'stenc' and r['precision'] == 'f32']
if not rows:
    sys.exit(0)
big = max(int(r['nx']) * int(r['ny']) * int(r['nz']) for r in rows if r['dims'] == '2')
for r in rows:
    if r['dims'] == '2' and int(r['nx']) * int(r['ny']) == big:
        print(f"{r['kernel']}:{r['entry']} {float(r['ratio']):.3f}")
PY
gnuplot <<EOF2
set terminal pngcairo size 1400,600 noenhanced
set output "$png"
set style data histograms
set style fill solid 0.8
set boxwidth 0.8
set yrange [0:1.2]
set ylabel "T_eff / ceiling (same run)"
set title "stenc CPU kernels, largest 2D float grid: ratio to the read-only-sum (value) or copy (grad) ceiling"
set xtics rotate by -60 font ",8"
set grid y
plot "$tmp" using 2:xtic(1) notitle
EOF2
rm -f "$tmp"
