m4_divert(-1)
# stenc stencil language: the finite-difference macros of ParallelStencil,
# 0-based, expanded into explicit tap reads A[i+a,j+b(,k+c)].
#
# Needs m4/stenc.m4 first, and STENC_DIMS defined (2 or 3) on the m4 command
# line; stenc-gen does both.  A point is (i,j[,k]); "a" in a macro's name
# means all points in the other dimensions, "i" inner points (+1) there.
# Every FD macro takes exactly one argument, an array name:
#     NAME(A)
# and expands to a parenthesised expression of taps of A.

m4_ifelse(STENC_DIMS, 2, [[]], STENC_DIMS, 3, [[]],
  [[m4_errprint([[stenc: STENC_DIMS must be 2 or 3
]])m4_m4exit(1)]])

# --- user-facing helpers ----------------------------------------------------

# define(NAME, BODY): m4's define, for helper macros inside stencil files.
m4_define([[define]], m4_defn([[m4_define]]))
# ifelse(A, B, THEN, ELSE): m4's ifelse.
m4_define([[ifelse]], m4_defn([[m4_ifelse]]))
# ifdims(N, TEXT): TEXT when generating for N dimensions, else nothing.
m4_define([[ifdims]], m4_defn([[stn_ifdims]]))
# sum_d(BODY): BODY with $1 replaced by x, y (and z in 3D), joined by +, in
#   parentheses.  Example: sum_d([[w$1*d_$1a(u)^2]]).
m4_define([[sum_d]],
  [[stn_arity([[sum_d]], $#, 1, [[$1]])m4_pushdef([[stn_body]], [[$1]])(stn_body(x)+stn_body(y)stn_ifdims(3, [[+stn_body(z)]]))m4_popdef([[stn_body]])]])

# at(A, DX, DY[, DZ]): the tap of A at integer offset (DX, DY[, DZ]) from the
#   point, e.g. at(x, -1, 0, 0) is x[i-1,j,k].  DZ must be 0 (or absent) in 2D.
m4_define([[at]],
  [[m4_ifelse(m4_eval([[$#]] < 3 || [[$#]] > 4), 1, [[stn_fail([[at expects 3 or 4 arguments: at(A, dx, dy[, dz])]])]])m4_ifelse(STENC_DIMS, 2, [[m4_ifelse([[$4]], [[]], [[]], [[$4]], [[0]], [[]], [[stn_fail([[at: a z offset in a 2D stencil]])]])]])(stn_t([[$1]], $2, $3, m4_ifelse([[$4]], [[]], 0, [[$4]])))]])

# --- taps -------------------------------------------------------------------

# stn_ix(VAR, OFFSET): VAR, VAR+OFFSET or VAR-|OFFSET|.
m4_define([[stn_ix]],
  [[m4_ifelse([[$2]], [[0]], [[$1]], m4_eval([[$2]] > 0), 1, [[$1+$2]], [[$1$2]])]])

# stn_t(A, DX, DY, DZ): the tap of A at offset (DX, DY[, DZ]) from the point.
m4_define([[stn_t]],
  [[$1[stn_ix(i, $2),stn_ix(j, $3)[[]]stn_ifdims(3, [[,stn_ix(k, $4)]])[[]]stn_rb[[]]]])

# stn_fd(NAME, NARGS, ARG, DIMS): argument check of an FD macro; DIMS = 3
#   marks a macro that exists only for 3D stencils.
m4_define([[stn_fd]],
  [[stn_arity([[$1]], [[$2]], 1, [[$3]])m4_ifelse([[$4]], [[3]],
    [[m4_ifelse(STENC_DIMS, 3, [[]],
      [[stn_fail([[$1 is a 3D macro, but this stencil is being generated for 2D]])]])]])]])

# stn_shift5(ARGS...): ARGS without the first five.
m4_define([[stn_shift5]], [[m4_shift(m4_shift(m4_shift(m4_shift(m4_shift($@)))))]])
# stn_terms(PREFIX, A, DX,DY,DZ, ...): PREFIX tap + PREFIX tap + ... over the
#   offset triples.
m4_define([[stn_terms]],
  [[$1[[]]stn_t([[$2]],$3,$4,$5)[[]]m4_ifelse(m4_eval([[$#]] > 5), 1, [[+stn_terms([[$1]], [[$2]], stn_shift5($@))]])]])
# stn_mean(A, N, triples...) and stn_harm(A, N, triples...): arithmetic and
#   harmonic means of the N taps.
m4_define([[stn_mean]],
  [[((stn_terms([[]], [[$1]], m4_shift(m4_shift($@))))*m4_ifelse([[$2]], 2, 0.5, [[$2]], 4, 0.25, 0.125))]])
m4_define([[stn_harm]],
  [[($2.0/(stn_terms([[1.0/]], [[$1]], m4_shift(m4_shift($@)))))]])
# stn_ext(FN, A, triples...): FN(t1, FN(t2, ...)) over the taps (max / min).
m4_define([[stn_ext]],
  [[m4_ifelse(m4_eval([[$#]] > 5), 1, [[$1(stn_t([[$2]],$3,$4,$5), stn_ext([[$1]], [[$2]], stn_shift5($@)))]], [[stn_t([[$2]],$3,$4,$5)]])]])

# --- point selection ---------------------------------------------------------
# all(A) A[i,j,k]; inn(A) A[i+1,j+1,k+1]; inn_x(A) A[i+1,j,k]; inn_xy(A) A[i+1,j+1,k] ...
m4_define([[all]], [[stn_fd([[all]], $#, [[$1]], 2)(stn_t($1,0,0,0))]])
m4_define([[inn]], [[stn_fd([[inn]], $#, [[$1]], 2)(stn_t($1,1,1,1))]])
m4_define([[inn_x]], [[stn_fd([[inn_x]], $#, [[$1]], 2)(stn_t($1,1,0,0))]])
m4_define([[inn_y]], [[stn_fd([[inn_y]], $#, [[$1]], 2)(stn_t($1,0,1,0))]])
m4_define([[inn_z]], [[stn_fd([[inn_z]], $#, [[$1]], 3)(stn_t($1,0,0,1))]])
m4_define([[inn_xy]], [[stn_fd([[inn_xy]], $#, [[$1]], 3)(stn_t($1,1,1,0))]])
m4_define([[inn_xz]], [[stn_fd([[inn_xz]], $#, [[$1]], 3)(stn_t($1,1,0,1))]])
m4_define([[inn_yz]], [[stn_fd([[inn_yz]], $#, [[$1]], 3)(stn_t($1,0,1,1))]])

# --- first differences: d_xa(A) A[i+1,j]-A[i,j]; d_xi(A) A[i+1,j+1]-A[i,j+1] ...
m4_define([[d_xa]], [[stn_fd([[d_xa]], $#, [[$1]], 2)(stn_t($1,1,0,0)-stn_t($1,0,0,0))]])
m4_define([[d_xi]], [[stn_fd([[d_xi]], $#, [[$1]], 2)(stn_t($1,1,1,1)-stn_t($1,0,1,1))]])
m4_define([[d_ya]], [[stn_fd([[d_ya]], $#, [[$1]], 2)(stn_t($1,0,1,0)-stn_t($1,0,0,0))]])
m4_define([[d_yi]], [[stn_fd([[d_yi]], $#, [[$1]], 2)(stn_t($1,1,1,1)-stn_t($1,1,0,1))]])
m4_define([[d_za]], [[stn_fd([[d_za]], $#, [[$1]], 3)(stn_t($1,0,0,1)-stn_t($1,0,0,0))]])
m4_define([[d_zi]], [[stn_fd([[d_zi]], $#, [[$1]], 3)(stn_t($1,1,1,1)-stn_t($1,1,1,0))]])

# --- second differences: d2_xa(A) A[i+2,j]-2A[i+1,j]+A[i,j]; d2_xi at j+1 ...
m4_define([[d2_xa]], [[stn_fd([[d2_xa]], $#, [[$1]], 2)(stn_t($1,2,0,0)-2*stn_t($1,1,0,0)+stn_t($1,0,0,0))]])
m4_define([[d2_xi]], [[stn_fd([[d2_xi]], $#, [[$1]], 2)(stn_t($1,2,1,1)-2*stn_t($1,1,1,1)+stn_t($1,0,1,1))]])
m4_define([[d2_ya]], [[stn_fd([[d2_ya]], $#, [[$1]], 2)(stn_t($1,0,2,0)-2*stn_t($1,0,1,0)+stn_t($1,0,0,0))]])
m4_define([[d2_yi]], [[stn_fd([[d2_yi]], $#, [[$1]], 2)(stn_t($1,1,2,1)-2*stn_t($1,1,1,1)+stn_t($1,1,0,1))]])
m4_define([[d2_za]], [[stn_fd([[d2_za]], $#, [[$1]], 3)(stn_t($1,0,0,2)-2*stn_t($1,0,0,1)+stn_t($1,0,0,0))]])
m4_define([[d2_zi]], [[stn_fd([[d2_zi]], $#, [[$1]], 3)(stn_t($1,1,1,2)-2*stn_t($1,1,1,1)+stn_t($1,1,1,0))]])

# --- means: av/harm over the cell (4 points in 2D, 8 in 3D), 2-point means along
# one dimension placed like d_ macros, 4-point means in a plane (3D) ...
m4_define([[av]], [[stn_fd([[av]], $#, [[$1]], 2)stn_ifdims(2, [[stn_mean($1, 4, 0,0,0, 1,0,0, 0,1,0, 1,1,0)]])stn_ifdims(3, [[stn_mean($1, 8, 0,0,0, 1,0,0, 0,1,0, 1,1,0, 0,0,1, 1,0,1, 0,1,1, 1,1,1)]])]])
m4_define([[harm]], [[stn_fd([[harm]], $#, [[$1]], 2)stn_ifdims(2, [[stn_harm($1, 4, 0,0,0, 1,0,0, 0,1,0, 1,1,0)]])stn_ifdims(3, [[stn_harm($1, 8, 0,0,0, 1,0,0, 0,1,0, 1,1,0, 0,0,1, 1,0,1, 0,1,1, 1,1,1)]])]])
m4_define([[av_xa]], [[stn_fd([[av_xa]], $#, [[$1]], 2)stn_ifdims(2, [[stn_mean($1, 2, 0,0,0, 1,0,0)]])stn_ifdims(3, [[stn_mean($1, 2, 0,0,0, 1,0,0)]])]])
m4_define([[harm_xa]], [[stn_fd([[harm_xa]], $#, [[$1]], 2)stn_ifdims(2, [[stn_harm($1, 2, 0,0,0, 1,0,0)]])stn_ifdims(3, [[stn_harm($1, 2, 0,0,0, 1,0,0)]])]])
m4_define([[av_xi]], [[stn_fd([[av_xi]], $#, [[$1]], 2)stn_ifdims(2, [[stn_mean($1, 2, 0,1,0, 1,1,0)]])stn_ifdims(3, [[stn_mean($1, 2, 0,1,1, 1,1,1)]])]])
m4_define([[harm_xi]], [[stn_fd([[harm_xi]], $#, [[$1]], 2)stn_ifdims(2, [[stn_harm($1, 2, 0,1,0, 1,1,0)]])stn_ifdims(3, [[stn_harm($1, 2, 0,1,1, 1,1,1)]])]])
m4_define([[av_ya]], [[stn_fd([[av_ya]], $#, [[$1]], 2)stn_ifdims(2, [[stn_mean($1, 2, 0,0,0, 0,1,0)]])stn_ifdims(3, [[stn_mean($1, 2, 0,0,0, 0,1,0)]])]])
m4_define([[harm_ya]], [[stn_fd([[harm_ya]], $#, [[$1]], 2)stn_ifdims(2, [[stn_harm($1, 2, 0,0,0, 0,1,0)]])stn_ifdims(3, [[stn_harm($1, 2, 0,0,0, 0,1,0)]])]])
m4_define([[av_yi]], [[stn_fd([[av_yi]], $#, [[$1]], 2)stn_ifdims(2, [[stn_mean($1, 2, 1,0,0, 1,1,0)]])stn_ifdims(3, [[stn_mean($1, 2, 1,0,1, 1,1,1)]])]])
m4_define([[harm_yi]], [[stn_fd([[harm_yi]], $#, [[$1]], 2)stn_ifdims(2, [[stn_harm($1, 2, 1,0,0, 1,1,0)]])stn_ifdims(3, [[stn_harm($1, 2, 1,0,1, 1,1,1)]])]])
m4_define([[av_za]], [[stn_fd([[av_za]], $#, [[$1]], 3)stn_mean($1, 2, 0,0,0, 0,0,1)]])
m4_define([[harm_za]], [[stn_fd([[harm_za]], $#, [[$1]], 3)stn_harm($1, 2, 0,0,0, 0,0,1)]])
m4_define([[av_zi]], [[stn_fd([[av_zi]], $#, [[$1]], 3)stn_mean($1, 2, 1,1,0, 1,1,1)]])
m4_define([[harm_zi]], [[stn_fd([[harm_zi]], $#, [[$1]], 3)stn_harm($1, 2, 1,1,0, 1,1,1)]])
m4_define([[av_xya]], [[stn_fd([[av_xya]], $#, [[$1]], 3)stn_mean($1, 4, 0,0,0, 1,0,0, 0,1,0, 1,1,0)]])
m4_define([[harm_xya]], [[stn_fd([[harm_xya]], $#, [[$1]], 3)stn_harm($1, 4, 0,0,0, 1,0,0, 0,1,0, 1,1,0)]])
m4_define([[av_xyi]], [[stn_fd([[av_xyi]], $#, [[$1]], 3)stn_mean($1, 4, 0,0,1, 1,0,1, 0,1,1, 1,1,1)]])
m4_define([[harm_xyi]], [[stn_fd([[harm_xyi]], $#, [[$1]], 3)stn_harm($1, 4, 0,0,1, 1,0,1, 0,1,1, 1,1,1)]])
m4_define([[av_xza]], [[stn_fd([[av_xza]], $#, [[$1]], 3)stn_mean($1, 4, 0,0,0, 1,0,0, 0,0,1, 1,0,1)]])
m4_define([[harm_xza]], [[stn_fd([[harm_xza]], $#, [[$1]], 3)stn_harm($1, 4, 0,0,0, 1,0,0, 0,0,1, 1,0,1)]])
m4_define([[av_xzi]], [[stn_fd([[av_xzi]], $#, [[$1]], 3)stn_mean($1, 4, 0,1,0, 1,1,0, 0,1,1, 1,1,1)]])
m4_define([[harm_xzi]], [[stn_fd([[harm_xzi]], $#, [[$1]], 3)stn_harm($1, 4, 0,1,0, 1,1,0, 0,1,1, 1,1,1)]])
m4_define([[av_yza]], [[stn_fd([[av_yza]], $#, [[$1]], 3)stn_mean($1, 4, 0,0,0, 0,1,0, 0,0,1, 0,1,1)]])
m4_define([[harm_yza]], [[stn_fd([[harm_yza]], $#, [[$1]], 3)stn_harm($1, 4, 0,0,0, 0,1,0, 0,0,1, 0,1,1)]])
m4_define([[av_yzi]], [[stn_fd([[av_yzi]], $#, [[$1]], 3)stn_mean($1, 4, 1,0,0, 1,1,0, 1,0,1, 1,1,1)]])
m4_define([[harm_yzi]], [[stn_fd([[harm_yzi]], $#, [[$1]], 3)stn_harm($1, 4, 1,0,0, 1,1,0, 1,0,1, 1,1,1)]])

# --- maxloc / minloc: over the 5-point (2D) or 7-point (3D) cross at the inner point
m4_define([[maxloc]], [[stn_fd([[maxloc]], $#, [[$1]], 2)stn_ifdims(2, [[stn_ext(max, $1, 1,1,0, 0,1,0, 2,1,0, 1,0,0, 1,2,0)]])stn_ifdims(3, [[stn_ext(max, $1, 1,1,1, 0,1,1, 2,1,1, 1,0,1, 1,2,1, 1,1,0, 1,1,2)]])]])
m4_define([[minloc]], [[stn_fd([[minloc]], $#, [[$1]], 2)stn_ifdims(2, [[stn_ext(min, $1, 1,1,0, 0,1,0, 2,1,0, 1,0,0, 1,2,0)]])stn_ifdims(3, [[stn_ext(min, $1, 1,1,1, 0,1,1, 2,1,1, 1,0,1, 1,2,1, 1,1,0, 1,1,2)]])]])

# --- a closed shell ---------------------------------------------------------
# A stencil file is untrusted input: building someone else's stencil must not
# run commands or read other files.  The builtins that reach the shell or the
# file system, and m4_builtin and m4_indir, which could call them by name, are
# removed before the user's file is read (docs/language.md, "Security").
m4_undefine([[m4_syscmd]])m4_undefine([[m4_esyscmd]])m4_undefine([[m4_sysval]])
m4_undefine([[m4_include]])m4_undefine([[m4_sinclude]])m4_undefine([[m4_undivert]])
m4_undefine([[m4_maketemp]])m4_undefine([[m4_mkstemp]])m4_undefine([[m4_debugfile]])
m4_undefine([[m4_debugmode]])m4_undefine([[m4_traceon]])m4_undefine([[m4_traceoff]])
m4_undefine([[m4_changeword]])m4_undefine([[m4_builtin]])m4_undefine([[m4_indir]])

m4_divert(0)m4_dnl
