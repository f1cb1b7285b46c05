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

m4_divert(0)m4_dnl
