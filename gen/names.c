/* stenc-gen: which names a stencil may use.  Array and parameter names
 * become C (and CUDA C++) identifiers in the generated code; kernel and
 * reduction names become parts of function names.  A name is refused when
 * it would collide with a keyword, with an identifier or macro that the
 * generated code or its headers use, or with a name the generator itself
 * makes.  docs/language.md ("Names") lists the rules. */
#include "gen.h"

#include <ctype.h>
#include <string.h>

/* C11 and C++ keywords (the CUDA units are C++), and the words of the
 * stencil language */
static const char *const keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char16_t", "char32_t",
    "class", "compl", "concept", "const_cast", "constexpr", "decltype", "delete", "dynamic_cast", "explicit",
    "export", "false", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
    "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires",
    "static_assert", "static_cast", "template", "this", "thread_local", "throw", "true", "try", "typeid",
    "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
    "stencil", "dims", "array", "param", "kernel", "reduce", "select", NULL};

/* identifiers and macros of C, libm (<tgmath.h> pulls in <complex.h>: I,
 * complex), OpenMP and CUDA that generated code or its headers use or may
 * see, and the generated code's own fixed names */
static const char *const c_names[] = {
    "NULL", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "EOF", "errno", "assert", "offsetof", "I", "complex",
    "imaginary", "SIZE_MAX", "PTRDIFF_MAX", "PTRDIFF_MIN", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX",
    "LONG_MIN", "CHAR_BIT", "FLT_MAX", "DBL_MAX", "FLT_MIN", "DBL_MIN", "FLT_EPSILON", "DBL_EPSILON", "M_PI",
    "M_E", "stdin", "stdout", "stderr", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "malloc", "calloc", "realloc", "free",
    "memcpy", "memset", "abort", "exit", "main", "printf", "fprintf", "isfinite", "isnan", "isinf", "signbit",
    "fpclassify", "fabs", "fabsf", "fmin", "fminf", "fmax", "fmaxf", "fma", "fmaf", "sqrtf", "expf", "logf",
    "powf", "sinf", "cosf", "tanf", "tanhf", "atanf", "sinhf", "coshf", "floorf", "ceil", "ceilf", "round",
    "trunc", "copysign", "copysignf", "hypot", "cbrt", "exp2", "expm1", "log2", "log10", "log1p", "asin",
    "acos", "atan2", "asinh", "acosh", "atanh", "erf", "erfc", "tgamma", "lgamma", "fmod", "remainder", "rint",
    "lrint", "nearbyint", "ldexp", "frexp", "modf", "scalbn", "ilogb", "logb", "nextafter", "fdim", "cabs",
    "carg", "conj", "creal", "cimag", "rsqrt", "rsqrtf",
    "omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads",
    "stream", "cudaStream_t", "cudaError_t", "blockIdx", "blockDim", "threadIdx", "gridDim", "warpSize", "dim3",
    "atomicAdd", "float2", "float4", "double2", "double4",
    "i", "j", "k", "nx", "ny", "nz", "mode", "alpha", "beta", "value", "grad", "real", NULL};

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; ++i)
        if (strcmp(list[i], name) == 0) return 1;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

static int starts_with_ci(const char *s, const char *pre)
{
    for (; *pre; ++s, ++pre)
        if (tolower((unsigned char)*s) != *pre) return 0;
    return 1;
}

/* reasons shared by every kind of name; NULL when none applies */
static const char *common_problem(const char *name)
{
    if (strlen(name) > 40) return "is too long (at most 40 characters)";
    if (in_list(keywords, name)) return "is a keyword of C, CUDA C++ or the stencil language";
    if (starts_with_ci(name, "stenc_") || starts_with_ci(name, "stn_") || strncmp(name, "m4_", 3) == 0)
        return "starts with a prefix reserved for stenc (stenc_, STENC_, stn_, m4_)";
    if (name[0] == '_' || strncmp(name, "cuda", 4) == 0 || strncmp(name, "CU", 2) == 0)
        return "starts with _, cuda or CU, which C, CUDA and the compilers reserve";
    return NULL;
}

const char *name_problem_var(const char *name)
{
    const char *why = common_problem(name);
    if (why) return why;
    if (in_list(c_names, name))
        return "is an identifier or macro of C, libm, OpenMP or CUDA, or of the generated code's own arguments";
    if (ex_fn_lookup(name) >= 0) return "is a function of the stencil language";
    if ((name[0] == 't' && isdigit((unsigned char)name[1])) || strncmp(name, "st_", 3) == 0)
        return "looks like a generated temporary (t<digit>..., st_...)";
    size_t ln = strlen(name);
    if (ends_with(name, "_bar") || ends_with(name, "_grad") ||
        (ln > 3 && name[ln - 3] == '_' && name[ln - 2] == 's' && isdigit((unsigned char)name[ln - 1])))
        return "ends like a generated name (_bar, _grad, _s<digit>)";
    return NULL;
}

const char *name_problem_entry(const char *name)
{
    const char *why = common_problem(name);
    if (why) return why;
    if (ends_with(name, "_adjoint") || ends_with(name, "_value") || ends_with(name, "_grad") ||
        strcmp(name, "adjoint") == 0 || strcmp(name, "value") == 0 || strcmp(name, "grad") == 0)
        return "ends like a generated entry point (_adjoint, _value, _grad): stenc_S_r_value_grad would be both "
               "r's value_grad and r_value's grad";
    return NULL;
}
