m4_divert(-1)
# stenc m4 core: loaded first by every m4 pass (stencil language and backends).
#
# Conventions (chosen once for the whole library):
#   * m4 runs with -P, so every builtin carries the m4_ prefix;
#   * quotes are [[ and ]];
#   * every stenc macro starts with stn_ (user-facing FD macros excepted);
#   * errors go through stn_fail: "FILE:LINE: error: MESSAGE", exit status 1.

m4_changequote([[,]])

# stn_fail(MESSAGE)
#   Report an error at the current input position and stop m4 with status 1.
m4_define([[stn_fail]],
  [[m4_errprint(m4___file__[[:]]m4___line__[[: error: $1
]])m4_m4exit(1)]])

# stn_rb: a literal closing bracket (a bare one would end a quote).
m4_define([[stn_rb]], m4_format([[%c]], 93))

# stn_arity(NAME, GOT, WANT, FIRSTARG)
#   Fail unless macro NAME was called with WANT arguments (and, for WANT=1,
#   a non-empty first argument).  Expands to nothing.
m4_define([[stn_arity]],
  [[m4_ifelse([[$2]], [[$3]],
     [[m4_ifelse([[$3$4]], [[1]],
        [[stn_fail([[$1 expects $3 argument(s), got an empty argument]])]])]],
     [[m4_ifelse([[$2]], [[0]],
        [[stn_fail([[$1 is a macro and needs an argument list: $1(...)]])]],
        [[stn_fail([[$1 expects $3 argument(s), got $2]])]])]])]])

# stn_ifdims(N, TEXT)
#   TEXT when the stencil is being instantiated for N dimensions, else nothing.
m4_define([[stn_ifdims]], [[m4_ifelse(STENC_DIMS, [[$1]], [[$2]])]])

# The variants a unit is generated for (stenc-gen --precision, --backend):
# STENC_PRECISIONS lists the wanted suffixes ("f32:f64", "f32" or "f64"),
# STENC_CUDA is 1 when CUDA entry points are generated.
m4_ifdef([[STENC_PRECISIONS]], [[]], [[m4_define([[STENC_PRECISIONS]], [[f32:f64]])]])
m4_ifdef([[STENC_CUDA]], [[]], [[m4_define([[STENC_CUDA]], [[1]])]])

# stn_prec(TYPE, SUFFIX, TEXT)
#   TEXT with stn_real = TYPE and stn_sfx = SUFFIX, or nothing when the unit
#   is generated without that precision.  The text sits inside
#   #ifndef STENC_NO_SUFFIX, so that one generated file compiles into a
#   float and a double object in parallel (the build's NAME.f32.o and
#   NAME.f64.o; a program that uses one precision waits for that half only).
m4_define([[stn_prec]],
  [[m4_ifelse(m4_index(STENC_PRECISIONS, [[$2]]), -1, [[]],
    [[m4_pushdef([[stn_real]], [[$1]])m4_pushdef([[stn_sfx]], [[$2]])
[[#]]ifndef STENC_NO_$2
$3[[]]
[[#]]endif
m4_popdef([[stn_real]])m4_popdef([[stn_sfx]])]])]])

# stn_pguard_open, stn_pguard_close: the same #ifndef STENC_NO_SUFFIX lines,
#   for text that a template moves into another diversion (CUDA kernels).
m4_define([[stn_pguard_open]], [[
[[#]]ifndef STENC_NO_[[]]stn_sfx
]])
m4_define([[stn_pguard_close]], [[
[[#]]endif
]])

# stn_entry_push(BASE, KIND, DIMS, DOC, ARGS, CALL, SIZES, CHECKS, SETUP, JOBS)
#   The entry point's pieces, for the functions its jobs write beside it
#   (CUDA kernels, C row functions): stn_e_base (BASE), stn_e_args (ARGS),
#   stn_e_call (CALL), stn_e_pre (SIZES then SETUP).  stn_entry_pop: undone.
m4_define([[stn_entry_push]], [[m4_pushdef([[stn_e_base]], [[$1]])m4_pushdef([[stn_e_args]], [[$5]])m4_pushdef([[stn_e_call]], [[$6]])m4_pushdef([[stn_e_pre]], [[$7$9]])]])
m4_define([[stn_entry_pop]], [[m4_popdef([[stn_e_base]])m4_popdef([[stn_e_args]])m4_popdef([[stn_e_call]])m4_popdef([[stn_e_pre]])]])

# stn_given(NAME): 1 when the macro NAME (a template's named argument) is not
# empty; its text is not expanded (a body holds commas)
m4_define([[stn_given]], [[m4_ifelse(m4_defn([[$1]]), [[]], 0, 1)]])

# stn_ifcuda(TEXT): TEXT when CUDA entry points are generated.
m4_define([[stn_ifcuda]], [[m4_ifelse(STENC_CUDA, [[1]], [[$1]])]])

m4_divert(0)m4_dnl
