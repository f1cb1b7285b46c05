m4_include(backend_cuda.m4)m4_dnl
/* The CUDA template's loop nests (m4/backend_cuda.m4: [[stn_zmarch]],
 * [[stn_rowloop]]), expanded from tests/zmarch.m4 with a visit for each body, for
 * tests/test_zmarch.c to run one block and thread at a time on the host.
 * ZLOOP_LOCALS declares what a kernel has at that point (the box, the
 * thread's indices); ZVISIT(WHICH) records point (i, j, k) and the body
 * that ran: 0 interior, 1 border, 2 x end of an interior row. */

/* 3D, z-marching, with an x-end body */
static void zloop_march3(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
#undef STENC_CUDA_ZMARCH
#define STENC_CUDA_ZMARCH 1
stn_zmarch([[ZVISIT(0)]], [[ZVISIT(1)]], [[ZVISIT(2)]])m4_dnl
}

/* 3D, z-marching, no x-end body (the border body takes the x ends) */
static void zloop_march3_noxend(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
stn_zmarch([[ZVISIT(0)]], [[ZVISIT(1)]], [[]])m4_dnl
}

/* 3D, z-marching with a plane cache: interior points must run ZBODY (a
 * visit of INTERIOR, 9, is wrong), in runs that go up one plane at a time
 * from the plane where ZDECL loaded the registers (ZCACHED,
 * tests/test_zmarch.c) */
static void zloop_march3_zcache(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
#undef STENC_CUDA_ZMARCH
#define STENC_CUDA_ZMARCH 1
stn_zmarch([[ZVISIT(9)]], [[ZVISIT(1)]], [[ZVISIT(2)]], [[                ptrdiff_t st_zlast = k - 1;
]], [[ZCACHED]])m4_dnl
}

/* 3D, one block per row (STENC_CUDA_ZMARCH 0) */
static void zloop_rows3(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
#undef STENC_CUDA_ZMARCH
#define STENC_CUDA_ZMARCH 0
stn_zmarch([[ZVISIT(0)]], [[ZVISIT(1)]], [[ZVISIT(2)]])m4_dnl
}

/* 2D rows with a pipelined interior: interior points of an interior row
 * must run ZBODY (ZPIPED, tests/test_zmarch.c), one block width apart from
 * the point where ZDECL ran, below the run's end st_ie */
static void zloop_rows2_pipe(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
    const ptrdiff_t k = 0;
stn_rowloop(2, [[ZVISIT(9)]], [[ZVISIT(1)]], [[ZVISIT(2)]], [[                ptrdiff_t st_xlast = i - (ptrdiff_t)blockDim.x;
]], [[ZPIPED]])m4_dnl
}

/* 2D rows (k is 0) */
static void zloop_rows2(ZLOOP_PARAMS)
{
    ZLOOP_LOCALS
    const ptrdiff_t k = 0;
stn_rowloop(2, [[ZVISIT(0)]], [[ZVISIT(1)]], [[ZVISIT(2)]])m4_dnl
}
