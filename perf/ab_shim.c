/* One side of perf/ab.sh's comparison: the registry's call of a regularizer
 * entry (bench_kernels.h) under the name AB_RUN.  perf/ab.sh links this
 * unit with one build's kernel objects into one relocatable object and
 * makes that build's stenc_* symbols local to it, so two builds of the
 * same kernels (and a second copy of one, the control) can sit in one
 * program. */
#include "bench_kernels.h"

DEFINE_RUN_REG(ab_run, stenc_, BENCH_CPU_CALL)
int AB_RUN(RegCall *c);
int AB_RUN(RegCall *c) { (void)reg_names; return ab_run(c); }
