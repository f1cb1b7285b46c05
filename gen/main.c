/* stenc-gen: the generator driver.
 *
 *   stenc-gen [-I M4DIR] [-o OUTDIR] [--m4 PROGRAM] FILE.stn
 *
 * Runs the stencil file through m4 with the stencil language (one pass per
 * dimension count named by its 'dims' line), parses and checks the result,
 * derives the adjoints, and writes into OUTDIR (default: the current
 * directory), for FILE.stn with stem NAME:
 *   NAME.h  NAME.c  NAME.cu       the kernels (second m4 pass, backend templates)
 *   NAME.dist.c                   their entry points on distributed grids (MPI)
 *   NAME.2d.stn / NAME.3d.stn     the normalised stencils (taps explicit)
 *   NAME.adj                      the adjoint stencils, readable
 *   NAME.inst.m4                  the instance file the templates expanded
 * All outputs are written to temporary files and renamed only when every
 * step succeeded: a broken stencil leaves no partial output behind.
 * Errors are reported as FILE:LINE: error: MESSAGE, with exit status 1. */
#define _GNU_SOURCE
#include "gen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef STENC_M4DIR
#define STENC_M4DIR "m4"
#endif
#ifndef STENC_VERSION
#define STENC_VERSION "0.4.0"
#endif

/* stenc-gen is a one-shot process whose error paths return without freeing
 * what the exit reclaims anyway: under AddressSanitizer (make check-sanitize,
 * the fuzzer) leaks are not findings; every other check stays on. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static void vreport(const char *file, int line, const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s:%d: %s: ", file ? file : "<input>", line, kind);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
}

int gen_error(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(file, line, "error", fmt, ap);
    va_end(ap);
    return -1;
}

void gen_warning(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(file, line, "warning", fmt, ap);
    va_end(ap);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Limits on what one m4 child may take (docs/language.md, "Limits"):
 * CPU seconds, address space, and bytes of output.  A macro that calls
 * itself without end hits one of them instead of hanging the build. */
#define M4_CPU_SECONDS 5
#define M4_MEM_BYTES (2048UL << 20)
#define M4_MAX_OUTPUT ((size_t)64 << 20)
#define MAX_INPUT_BYTES ((size_t)1 << 20)

/* read all of fd into a malloc'd, NUL-terminated buffer of at most max
 * bytes; returns NULL past max (*over set) or on allocation failure */
static char *read_all(int fd, size_t max, int *over)
{
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    *over = 0;
    if (!buf) return NULL;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            char *nb = cap * 2 > max + 4096 + 1 ? NULL : realloc(buf, cap * 2);
            if (!nb) { *over = 1; free(buf); return NULL; }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    return buf;
}

/* Run argv under the m4 limits; stdout into *out, stderr into *err (both
 * malloc'd, NUL-terminated).  Returns the exit status, or -SIGNAL when the
 * child was killed (-SIGXCPU: out of CPU time), or -1000 when the output
 * passed M4_MAX_OUTPUT. */
static int run_capture(char *const argv[], char **out, char **err)
{
    int fo[2];
    *out = *err = NULL;
    /* stderr goes to a scratch file, not a pipe: a child that fills a
     * stderr pipe while this process waits on stdout would never finish */
    FILE *ef = tmpfile();
    if (!ef) return -1;
    if (pipe(fo) != 0) { fclose(ef); return -1; }
    pid_t pid = fork();
    if (pid < 0) { fclose(ef); return -1; }
    if (pid == 0) {
        close(fo[0]);
        dup2(fo[1], 1);
        dup2(fileno(ef), 2);
        struct rlimit cpu = {M4_CPU_SECONDS, M4_CPU_SECONDS + 1}, mem = {M4_MEM_BYTES, M4_MEM_BYTES};
        setrlimit(RLIMIT_CPU, &cpu);
        setrlimit(RLIMIT_AS, &mem);
        execvp(argv[0], argv);
        fprintf(stderr, "stenc-gen: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fo[1]);
    int over = 0;
    *out = read_all(fo[0], M4_MAX_OUTPUT, &over);
    if (over) kill(pid, SIGKILL);
    close(fo[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    rewind(ef);
    const size_t emax = (size_t)1 << 20; /* the first MiB of messages is enough */
    *err = malloc(emax + 1);
    size_t en = *err ? fread(*err, 1, emax, ef) : 0;
    if (*err) (*err)[en] = 0;
    fclose(ef);
    if (!*out) *out = calloc(1, 1);
    if (!*err) *err = calloc(1, 1);
    if (over) return -1000;
    if (WIFSIGNALED(st)) return -WTERMSIG(st);
    if (!WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* the line of the last "#line N" directive in m4's (partial) output */
static int last_sync_line(const char *text)
{
    int line = 1;
    for (const char *p = text; (p = strstr(p, "#line ")) != NULL; p += 6)
        if (p == text || p[-1] == '\n') line = atoi(p + 6);
    return line;
}

/* Pass m4's diagnostics on as "FILE:LINE: error: ..." (or warning):
 * stenc's own stn_fail messages already have that form; m4's own
 * "m4:FILE:LINE: MESSAGE" and location-less "m4: MESSAGE" are rewritten,
 * the latter placed at the user's file and the last line m4 reached. */
static int report_m4_stderr(const char *err, const char *file, int line)
{
    int nerr = 0, nline = 0, quiet = 0;
    size_t lf = strlen(file);
    for (const char *p = err; *p;) {
        /* a message's line ends after the source's name, which may hold a newline */
        size_t skip = strncmp(p, file, lf) == 0 && p[lf] == ':' ? lf
                      : strncmp(p, "m4:", 3) == 0 && strncmp(p + 3, file, lf) == 0 && p[3 + lf] == ':' ? 3 + lf : 0;
        const char *e = strchr(p + skip, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char ln[8192];
        snprintf(ln, sizeof ln, "%.*s", (int)(n < 8000 ? n : 8000), p);
        p += n + (e ? 1 : 0);
        if (!ln[0]) continue;
        if (++nline > 20) { /* a macro in a loop can say the same thing 100,000 times */
            nerr += strstr(ln, "Warning:") == NULL || strstr(ln, "define'") != NULL;
            ++quiet;
            continue;
        }
        if (strncmp(ln, "m4:", 3) != 0 || ln[3] == ' ') {
            if (strncmp(ln, "m4: ", 4) == 0)
                fprintf(stderr, "%s:%d: error: stencil language (m4): %s\n", file, line, ln + 4);
            else
                fprintf(stderr, "%s\n", ln);
            nerr += strstr(ln, "error") != NULL;
            continue;
        }
        /* m4:FILE:LINE: MESSAGE (FILE may hold colons: the source's name is matched whole) */
        char *f = ln + 3, *c1 = strncmp(f, file, lf) == 0 && f[lf] == ':' ? f + lf : strchr(f, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || !c2) { fprintf(stderr, "%s:%d: error: stencil language (m4): %s\n", file, line, ln + 3); ++nerr; continue; }
        *c1 = 0;
        *c2 = 0;
        const char *msg = c2 + 1;
        while (*msg == ' ') ++msg;
        int warn = strncmp(msg, "Warning: ", 9) == 0;
        if (warn) msg += 9;
        if (strncmp(msg, "ERROR: ", 7) == 0) msg += 7;
        if (warn && strstr(msg, "excess arguments to builtin `") && strstr(msg, "define'")) {
            /* the comma pitfall: define(f, a, b) keeps only a */
            fprintf(stderr, "%s:%s: error: excess arguments to define: a comma outside parentheses ends the "
                            "macro body; quote the body: define(NAME, [[BODY]])\n", f, c1 + 1);
            ++nerr;
            continue;
        }
        if (strstr(msg, "recursion limit of"))
            msg = "macro calls nested more than 1000 deep: recursion limit exceeded (a macro that calls itself?)";
        fprintf(stderr, "%s:%s: %s: %s\n", f, c1 + 1, warn ? "warning" : "error", msg);
        nerr += !warn;
    }
    if (quiet) fprintf(stderr, "%s:%d: note: %d more messages of the stencil language (m4) not shown\n", file, line, quiet);
    return nerr;
}

/* one m4 pass; on failure reports it (FILE:LINE: error: ...) and returns -1 */
static int run_m4(char *const argv[], const char *file, const char *what, char **out)
{
    char *err = NULL;
    int rc = run_capture(argv, out, &err);
    int line = last_sync_line(*out);
    int nerr = report_m4_stderr(err, file, line);
    free(err);
    if (rc == 0 && nerr == 0) return 0;
    if (rc == -SIGXCPU || rc == -SIGKILL)
        gen_error(file, line, "%s did not finish within %d s of CPU time (a macro that calls itself without end?)",
                  what, M4_CPU_SECONDS);
    else if (rc == -1000)
        gen_error(file, line, "%s produced more than %zu MiB of text (a macro that grows without end?)", what,
                  M4_MAX_OUTPUT >> 20);
    else if (rc < 0 && rc != -1)
        gen_error(file, line, "%s was stopped by signal %d (out of memory? at most %lu MiB)", what, -rc,
                  M4_MEM_BYTES >> 20);
    else if (rc == 127 || rc == -1)
        gen_error(file, 1, "%s: could not run m4 (install GNU m4, or pass --m4 PROGRAM)", what);
    else if (nerr == 0)
        gen_error(file, line, "%s failed (m4 exit status %d)", what, rc);
    free(*out);
    *out = NULL;
    return -1;
}

#define MAXOUT 16
static char *tmp_paths[MAXOUT], *final_paths[MAXOUT];
static int nout;

static void cleanup(void)
{
    if (getenv("STENC_GEN_KEEP")) return; /* debugging: keep the temporaries */
    for (int i = 0; i < nout; ++i) { unlink(tmp_paths[i]); free(tmp_paths[i]); free(final_paths[i]); }
    nout = 0;
}

static FILE *open_out(const char *dir, const char *name)
{
    char *fin, *tmp;
    if (asprintf(&fin, "%s/%s", dir, name) < 0) return NULL;
    if (asprintf(&tmp, "%s/.%s.tmp%ld", dir, name, (long)getpid()) < 0) return NULL;
    FILE *f = fopen(tmp, "w");
    if (!f) { fprintf(stderr, "stenc-gen: cannot write %s: %s\n", tmp, strerror(errno)); free(fin); free(tmp); return NULL; }
    tmp_paths[nout] = tmp;
    final_paths[nout] = fin;
    ++nout;
    return f;
}

static int write_text(const char *dir, const char *name, const char *text)
{
    FILE *f = open_out(dir, name);
    if (!f) return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* a leaked macro name in generated code is an internal error */
static int check_leaks(const char *path, const char *text)
{
    static const char *bad[] = {"stn_", "m4_", "[[", "]]"};
    int line = 1;
    for (const char *p = text; *p; ++p) {
        if (*p == '\n') ++line;
        for (int b = 0; b < 4; ++b) {
            size_t n = strlen(bad[b]);
            if (strncmp(p, bad[b], n) == 0 &&
                (b >= 2 || p == text || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9')))) {
                fprintf(stderr, "%s:%d: error: internal: unexpanded template text '%s' in generated code\n", path, line, bad[b]);
                return -1;
            }
        }
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: stenc-gen [-I M4DIR] [-o OUTDIR] [--m4 PROGRAM] [--dims 2|3] [--precision f32|f64]\n"
               "                 [--backend c|all] FILE.stn\n"
               "       stenc-gen --version | --help\n"
               "Generates NAME.h, NAME.c (C11/OpenMP) and NAME.cu (CUDA) with the kernels,\n"
               "their adjoints and reductions defined in FILE.stn, in OUTDIR (created if\n"
               "missing; default: the current directory).  By default every dims of the file,\n"
               "both precisions and both backends; --dims, --precision and --backend c (no\n"
               "NAME.cu, no CUDA prototypes) generate only what a program uses, which\n"
               "compiles several times faster.  See docs/language.md.\n"
               "Exit status: 0 done, 1 the stencil has an error (FILE:LINE: error: ...,\n"
               "nothing written), 2 a usage or system error.\n");
}

/* the directory holding this executable (for finding the m4 library) */
static int exe_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *sl = strrchr(buf, '/');
    if (!sl) return -1;
    *sl = 0;
    return 0;
}

static int has_m4lib(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/lang.m4", dir);
    return access(p, R_OK) == 0;
}

/* The m4 library: -I, else $STENC_M4DIR, else the install-time directory,
 * else beside the executable (EXE/../share/stenc/m4 when installed,
 * EXE/../../m4 in the build tree).  NULL (with a message saying where it
 * looked) when none holds lang.m4. */
static const char *find_m4dir(const char *given, char *buf, size_t len)
{
    if (given) return given;
    if (getenv("STENC_M4DIR")) return getenv("STENC_M4DIR");
    if (has_m4lib(STENC_M4DIR)) return STENC_M4DIR;
    char exe[4096];
    const char *rel[] = {"/../share/stenc/m4", "/../../m4"};
    if (exe_dir(exe, sizeof exe) == 0)
        for (int r = 0; r < 2; ++r) {
            snprintf(buf, len, "%s%s", exe, rel[r]);
            if (has_m4lib(buf)) return buf;
        }
    fprintf(stderr, "stenc-gen: cannot find the m4 library (lang.m4); looked in %s, %s/../share/stenc/m4 and "
                    "%s/../../m4.\nPass its directory with -I M4DIR or set STENC_M4DIR.\n",
            STENC_M4DIR, exe, exe);
    return NULL;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *c = p + 1;; ++c) {
        if (*c == '/' || !*c) {
            char save = *c;
            *c = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
            *c = save;
            if (!save) break;
        }
    }
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

/* the command line */
typedef struct {
    const char *m4given, *outdir, *m4prog, *file;
    int want_dims, cuda;   /* default: every dims of the file (0), C and CUDA (1) */
    const char *precisions; /* default f32:f64 */
    char variant[128];      /* the variant options, for the banner */
} Options;

/* one variant option (--dims, --precision, --backend) and its value; 0, or 2 (a usage error) */
static int variant_option(Options *o, const char *opt, const char *v)
{
    if (!strcmp(opt, "--dims") && (!strcmp(v, "2") || !strcmp(v, "3"))) o->want_dims = v[0] - '0';
    else if (!strcmp(opt, "--precision") && (!strcmp(v, "f32") || !strcmp(v, "f64"))) o->precisions = v;
    else if (!strcmp(opt, "--backend") && (!strcmp(v, "c") || !strcmp(v, "all"))) o->cuda = !strcmp(v, "all");
    else {
        fprintf(stderr, "stenc-gen: invalid value '%s' for %s (valid: %s)\n", v, opt,
                !strcmp(opt, "--dims") ? "2 or 3" : !strcmp(opt, "--precision") ? "f32 or f64" : "c or all");
        return 2;
    }
    char *e = o->variant + strlen(o->variant);
    snprintf(e, sizeof o->variant - (size_t)(e - o->variant), " %s %s", opt, v);
    return 0;
}

/* the options and the stencil file; -1 to go on, else the exit status */
static int parse_cli(int argc, char **argv, Options *o)
{
    *o = (Options){.outdir = ".", .m4prog = getenv("M4") ? getenv("M4") : "m4", .cuda = 1, .precisions = "f32:f64"};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int valued = !strcmp(a, "-I") || !strcmp(a, "-o") || !strcmp(a, "--m4") || !strcmp(a, "--dims") ||
                     !strcmp(a, "--precision") || !strcmp(a, "--backend");
        if (valued && i + 1 >= argc) { fprintf(stderr, "stenc-gen: option %s needs a value\n", a); usage(stderr); return 2; }
        if (valued) {
            const char *v = argv[++i];
            if (!strcmp(a, "-I")) o->m4given = v;
            else if (!strcmp(a, "-o")) o->outdir = v;
            else if (!strcmp(a, "--m4")) o->m4prog = v;
            else if (variant_option(o, a, v)) return 2;
        }
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); return 0; }
        else if (strcmp(a, "--version") == 0) { printf("stenc-gen %s\n", STENC_VERSION); return 0; }
        else if (a[0] == '-') { fprintf(stderr, "stenc-gen: unknown option %s\n", a); usage(stderr); return 2; }
        else if (!o->file) o->file = a;
        else { fprintf(stderr, "stenc-gen: one stencil file at a time\n"); return 2; }
    }
    if (!o->file) { usage(stderr); return 2; }
    return -1;
}

/* FILE is [DIR/]NAME.stn: NAME into stem, an identifier that is not
 * reserved; -1 to go on, else the exit status */
static int file_stem(const char *file, char *stem, size_t len)
{
    const char *slash = strrchr(file, '/');
    snprintf(stem, len, "%s", slash ? slash + 1 : file);
    char *dot = strrchr(stem, '.');
    if (!dot || strcmp(dot, ".stn") != 0) { fprintf(stderr, "stenc-gen: %s: stencil files end in .stn\n", file); return 2; }
    *dot = 0;
    for (char *c = stem; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return gen_error(file, 1, "the file name must be a C identifier followed by .stn"), 1;
    if (name_problem_entry(stem))
        return gen_error(file, 1, "the file name '%s' %s; rename the file", stem, name_problem_entry(stem)), 1;
    return -1;
}

/* the numbers of one dims line at q (past "dims") into dimsv; 0, or 1 after an error */
static int dims_numbers(const char *q, const char *file, int line, int *dimsv, int *ndims)
{
    for (;;) {
        while (*q == ' ' || *q == '\t') ++q;
        if (*q != '2' && *q != '3') break;
        int d = *q++ - '0';
        for (int k = 0; k < *ndims; ++k)
            if (dimsv[k] == d) return gen_error(file, line, "dimension %d listed twice", d), 1;
        if (*ndims == 2) return gen_error(file, line, "dims lists at most 2 and 3"), 1;
        dimsv[(*ndims)++] = d;
    }
    while (*q == ' ' || *q == '\t' || *q == '\r') ++q; /* CRLF files too */
    if ((*q && *q != '\n' && *q != '#') || !*ndims) return gen_error(file, line, "'dims' takes 2, 3 or both (e.g. dims 2 3)"), 1;
    return 0;
}

/* The dims line, read before m4 runs (the FD macros depend on it), narrowed
 * to --dims when given: dimsv[0..ndims).  0, or 1 after an error. */
static int read_dims(const char *src, const char *file, int want_dims, int *dimsv, int *ndims)
{
    int dline = 0, line = 1;
    *ndims = 0;
    for (const char *p = src; *p;) {
        const char *q = p;
        while (*q == ' ' || *q == '\t') ++q;
        if (strncmp(q, "dims", 4) == 0 && (q[4] == ' ' || q[4] == '\t')) {
            if (dline) return gen_error(file, line, "second 'dims' line (the first is at line %d)", dline), 1;
            dline = line;
            if (dims_numbers(q + 4, file, line, dimsv, ndims)) return 1;
        }
        while (*p && *p != '\n') ++p;
        if (*p == '\n') { ++p; ++line; }
    }
    if (!*ndims) return gen_error(file, 1, "missing 'dims' line (dims 2, dims 3 or dims 2 3)"), 1;
    if (want_dims) {
        if (dimsv[0] != want_dims && (*ndims < 2 || dimsv[1] != want_dims))
            return gen_error(file, dline, "--dims %d: the stencil is not defined for %dD (its dims line)", want_dims,
                             want_dims), 1;
        dimsv[0] = want_dims;
        *ndims = 1;
    }
    return 0;
}

/* What the passes make of the stencil: the instance file (its unit header
 * first), the adjoint listing, the stencil language's output per dims */
typedef struct {
    char *inst, *adj, *norm[2];
} Passes;

/* Per dims: the stencil language (m4), parse, analysis, emission.  0, or 1
 * after an error. */
static int run_passes(const Options *o, const char *m4dir, const char *stem, const int *dimsv, int ndims, Passes *P)
{
    const char *file = o->file, *slash = strrchr(file, '/');
    char *inst = NULL;
    size_t instlen = 0, adjlen = 0;
    FILE *instf = open_memstream(&inst, &instlen), *adjf = open_memstream(&P->adj, &adjlen);
    fprintf(adjf, "# Adjoint stencils of %s, written by stenc-gen (readable form; the\n"
                  "# generated C and CUDA are made from the same expressions).\n\n", slash ? slash + 1 : file);
    char sname[MAXNAME] = "";
    static Stencil st;
    for (int di = 0; di < ndims; ++di) {
        char ddef[32], stenc_m4[4400], lang_m4[4400];
        snprintf(ddef, sizeof ddef, "-DSTENC_DIMS=%d", dimsv[di]);
        snprintf(stenc_m4, sizeof stenc_m4, "%s/stenc.m4", m4dir);
        snprintf(lang_m4, sizeof lang_m4, "%s/lang.m4", m4dir);
        char *av[] = {(char *)o->m4prog, "-P", "-s", "-L", "1000", ddef, stenc_m4, lang_m4, (char *)file, NULL};
        char *text = NULL, what[64];
        snprintf(what, sizeof what, "the stencil language pass (m4, %dD)", dimsv[di]);
        if (run_m4(av, file, what, &text) != 0) return 1;
        P->norm[di] = text;
        ex_reset();
        memset(&st, 0, sizeof st);
        if (parse_stencil(text, file, dimsv[di], &st) != 0) return 1;
        if (!st.name[0]) snprintf(st.name, sizeof st.name, "%s", stem);
        st.quiet = di > 0; /* warnings once, not once per dimension count */
        if (analyze(&st) != 0) return 1;
        if (emit_stencil(instf, adjf, &st) != 0) return 1;
        snprintf(sname, sizeof sname, "%s", st.name);
    }
    fclose(instf);
    fclose(adjf);
    /* the banner names the source by its base name alone: the stem was checked
     * to be an identifier, while a directory may hold any bytes (m4 quotes, a
     * comment's end, text that looks like a leaked macro) */
    char cmdline[2048];
    snprintf(cmdline, sizeof cmdline, "stenc-gen%s %s.stn", o->variant, stem);
    int rc = asprintf(&P->inst, "stn_unit([[%s]], [[%s]], [[%s]])\n%s", sname, cmdline, stem, inst);
    free(inst);
    return rc < 0;
}

/* The outputs, as temporaries beside their final names: the instance file,
 * the language output per dims, the adjoint listing, then each backend's
 * file, the instance file run through its template.  0, or 1 after an
 * error. */
static int write_outputs(const Options *o, const char *m4dir, const char *stem, const int *dimsv, int ndims,
                         const Passes *P)
{
    const char *outdir = o->outdir;
    char name[256];
    snprintf(name, sizeof name, "%s.inst.m4", stem);
    if (write_text(outdir, name, P->inst)) return 1;
    char *inst_path = tmp_paths[nout - 1];
    for (int di = 0; di < ndims; ++di) {
        snprintf(name, sizeof name, "%s.%dd.stn", stem, dimsv[di]);
        if (write_text(outdir, name, P->norm[di])) return 1;
    }
    snprintf(name, sizeof name, "%s.adj", stem);
    if (write_text(outdir, name, P->adj)) return 1;

    static const char *backends[][2] = {
        {"backend_h.m4", "h"}, {"backend_c.m4", "c"}, {"backend_dist.m4", "dist.c"}, {"backend_cuda.m4", "cu"}};
    char dprec[64], dcuda[32];
    snprintf(dprec, sizeof dprec, "-DSTENC_PRECISIONS=%s", o->precisions);
    snprintf(dcuda, sizeof dcuda, "-DSTENC_CUDA=%d", o->cuda);
    for (int b = 0; b < (o->cuda ? 4 : 3); ++b) {
        char be[4400];
        snprintf(be, sizeof be, "%s/%s", m4dir, backends[b][0]);
        char *av[] = {(char *)o->m4prog, "-P", dprec, dcuda, "-I", (char *)m4dir, be, inst_path, NULL};
        char *text = NULL, what[128];
        snprintf(what, sizeof what, "internal: the backend template %s", backends[b][0]);
        if (run_m4(av, o->file, what, &text) != 0) return 1;
        snprintf(name, sizeof name, "%s.%s", stem, backends[b][1]);
        if (check_leaks(name, text)) return 1;
        if (write_text(outdir, name, text)) return 1;
        free(text);
    }
    return 0;
}

/* everything succeeded: the temporaries take their final names (files whose
 * content did not change keep their time stamps, so a build recompiles only
 * what changed).  0, or 1 after an error. */
static int publish(void)
{
    for (int i = 0; i < nout; ++i) {
        size_t la, lb;
        char *a = read_file(tmp_paths[i], &la), *b = read_file(final_paths[i], &lb);
        int same = a && b && la == lb && memcmp(a, b, la) == 0;
        free(a);
        free(b);
        if (same) { unlink(tmp_paths[i]); continue; }
        if (rename(tmp_paths[i], final_paths[i]) != 0) {
            fprintf(stderr, "stenc-gen: cannot rename %s: %s\n", tmp_paths[i], strerror(errno));
            return 1;
        }
    }
    nout = 0;
    return 0;
}

int main(int argc, char **argv)
{
    Options o;
    int rc = parse_cli(argc, argv, &o);
    if (rc >= 0) return rc;
    const char *file = o.file;
    char m4buf[4200];
    const char *m4dir = find_m4dir(o.m4given, m4buf, sizeof m4buf);
    if (!m4dir) return 2;
    struct stat fsb;
    if (stat(file, &fsb) == 0 && (size_t)fsb.st_size > MAX_INPUT_BYTES)
        return gen_error(file, 1, "the file is larger than %zu KiB (the limit for a stencil file)", MAX_INPUT_BYTES >> 10), 1;
    size_t len;
    char *src = read_file(file, &len);
    if (!src) { fprintf(stderr, "stenc-gen: cannot read %s: %s\n", file, strerror(errno)); return 1; }
    if (strlen(src) != len) return gen_error(file, 1, "the file contains a NUL byte"), 1;
    char stem[MAXNAME];
    if ((rc = file_stem(file, stem, sizeof stem)) >= 0) return rc;
    int dimsv[2], ndims;
    if (read_dims(src, file, o.want_dims, dimsv, &ndims)) return 1;
    static Passes P;
    if (run_passes(&o, m4dir, stem, dimsv, ndims, &P)) return 1;
    atexit(cleanup);
    if (make_dirs(o.outdir) != 0) {
        fprintf(stderr, "stenc-gen: cannot create the output directory %s: %s\n", o.outdir, strerror(errno));
        return 2;
    }
    if (write_outputs(&o, m4dir, stem, dimsv, ndims, &P)) return 1;
    return publish();
}
