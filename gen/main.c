/* stenc-gen: the generator driver.
 *
 *   stenc-gen [-I M4DIR] [-o OUTDIR] [--m4 PROGRAM] FILE.stn
 *
 * Runs the stencil file through m4 with the stencil language (one pass per
 * dimension count named by its 'dims' line), parses and checks the result,
 * derives the adjoints, and writes into OUTDIR (default: the current
 * directory), for FILE.stn with stem NAME:
 *   NAME.h  NAME.c  NAME.cu       the kernels (second m4 pass, backend templates)
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
#include <sys/wait.h>
#include <unistd.h>

#ifndef STENC_M4DIR
#define STENC_M4DIR "m4"
#endif

int gen_error(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: error: ", file ? file : "<input>", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return -1;
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

/* Run argv; stdout into *out (malloc'd); stderr passes through. */
static int run_capture(char *const argv[], char **out)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "stenc-gen: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) { cap *= 2; buf = realloc(buf, cap); }
        ssize_t r = read(fd[0], buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd[0]);
    buf[n] = 0;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    *out = buf;
    if (!WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
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
    fprintf(f, "usage: stenc-gen [-I M4DIR] [-o OUTDIR] [--m4 PROGRAM] FILE.stn\n"
               "Generates NAME.h, NAME.c (C11/OpenMP) and NAME.cu (CUDA) with the kernels,\n"
               "their adjoints and reductions defined in FILE.stn.  See docs/language.md.\n");
}

int main(int argc, char **argv)
{
    const char *m4dir = getenv("STENC_M4DIR") ? getenv("STENC_M4DIR") : STENC_M4DIR;
    const char *outdir = ".";
    const char *m4prog = getenv("M4") ? getenv("M4") : "m4";
    const char *file = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-I") == 0 && i + 1 < argc) m4dir = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) outdir = argv[++i];
        else if (strcmp(argv[i], "--m4") == 0 && i + 1 < argc) m4prog = argv[++i];
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) { usage(stdout); return 0; }
        else if (argv[i][0] == '-') { fprintf(stderr, "stenc-gen: unknown option %s\n", argv[i]); usage(stderr); return 2; }
        else if (!file) file = argv[i];
        else { fprintf(stderr, "stenc-gen: one stencil file at a time\n"); return 2; }
    }
    if (!file) { usage(stderr); return 2; }
    size_t len;
    char *src = read_file(file, &len);
    if (!src) { fprintf(stderr, "stenc-gen: cannot read %s: %s\n", file, strerror(errno)); return 1; }
    if (strlen(src) != len) return gen_error(file, 1, "the file contains a NUL byte"), 1;

    /* stem */
    const char *slash = strrchr(file, '/');
    char stem[MAXNAME];
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : file);
    char *dot = strrchr(stem, '.');
    if (!dot || strcmp(dot, ".stn") != 0) { fprintf(stderr, "stenc-gen: %s: stencil files end in .stn\n", file); return 2; }
    *dot = 0;
    for (char *c = stem; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return gen_error(file, 1, "the file name must be a C identifier followed by .stn"), 1;

    /* the dims line (read before m4 runs, since the FD macros depend on it) */
    int dimsv[2], ndims = 0, dline = 0, line = 1;
    for (const char *p = src; *p;) {
        const char *q = p;
        while (*q == ' ' || *q == '\t') ++q;
        if (strncmp(q, "dims", 4) == 0 && (q[4] == ' ' || q[4] == '\t')) {
            if (dline) return gen_error(file, line, "second 'dims' line (the first is at line %d)", dline), 1;
            dline = line;
            q += 4;
            for (;;) {
                while (*q == ' ' || *q == '\t') ++q;
                if (*q == '2' || *q == '3') {
                    int d = *q - '0';
                    for (int k = 0; k < ndims; ++k)
                        if (dimsv[k] == d) return gen_error(file, line, "dimension %d listed twice", d), 1;
                    if (ndims == 2) return gen_error(file, line, "dims lists at most 2 and 3"), 1;
                    dimsv[ndims++] = d;
                    ++q;
                    continue;
                }
                break;
            }
            if (*q && *q != '\n' && *q != '#')
                return gen_error(file, line, "'dims' takes 2, 3 or both (e.g. dims 2 3)"), 1;
            if (!ndims) return gen_error(file, line, "'dims' takes 2, 3 or both (e.g. dims 2 3)"), 1;
        }
        while (*p && *p != '\n') ++p;
        if (*p == '\n') { ++p; ++line; }
    }
    if (!ndims) return gen_error(file, 1, "missing 'dims' line (dims 2, dims 3 or dims 2 3)"), 1;


    char *inst = NULL;
    size_t instlen = 0;
    FILE *instf = open_memstream(&inst, &instlen);
    char *adj = NULL;
    size_t adjlen = 0;
    FILE *adjf = open_memstream(&adj, &adjlen);
    fprintf(adjf, "# Adjoint stencils of %s, written by stenc-gen (readable form; the\n"
                  "# generated C and CUDA are made from the same expressions).\n\n", file);
    char cmdline[2048];
    snprintf(cmdline, sizeof cmdline, "stenc-gen %s", file);
    char sname[MAXNAME] = "";
    static Stencil st;
    static char *norm[2];
    for (int di = 0; di < ndims; ++di) {
        char ddef[32], stenc_m4[1024], lang_m4[1024];
        snprintf(ddef, sizeof ddef, "-DSTENC_DIMS=%d", dimsv[di]);
        snprintf(stenc_m4, sizeof stenc_m4, "%s/stenc.m4", m4dir);
        snprintf(lang_m4, sizeof lang_m4, "%s/lang.m4", m4dir);
        char *av[] = {(char *)m4prog, "-P", "-s", ddef, stenc_m4, lang_m4, (char *)file, NULL};
        char *text = NULL;
        int rc = run_capture(av, &text);
        if (rc != 0) {
            free(text);
            if (rc > 0 && rc != 127) fprintf(stderr, "%s: stencil language (m4) pass failed for %dD\n", file, dimsv[di]);
            return 1;
        }
        norm[di] = text;
        ex_reset();
        memset(&st, 0, sizeof st);
        if (parse_stencil(text, file, dimsv[di], &st) != 0) return 1;
        if (!st.name[0]) snprintf(st.name, sizeof st.name, "%s", stem);
        if (analyze(&st) != 0) return 1;
        if (emit_stencil(instf, adjf, &st) != 0) return 1;
        snprintf(sname, sizeof sname, "%s", st.name);
    }
    fclose(instf);
    fclose(adjf);

    /* instance file with its unit header */
    char *full = NULL;
    if (asprintf(&full, "stn_unit([[%s]], [[%s]], [[%s]])\n%s", sname, cmdline, stem, inst) < 0) return 1;
    atexit(cleanup);
    char name[256];
    snprintf(name, sizeof name, "%s.inst.m4", stem);
    if (write_text(outdir, name, full)) return 1;
    char *inst_path = tmp_paths[nout - 1];
    for (int di = 0; di < ndims; ++di) {
        snprintf(name, sizeof name, "%s.%dd.stn", stem, dimsv[di]);
        if (write_text(outdir, name, norm[di])) return 1;
    }
    snprintf(name, sizeof name, "%s.adj", stem);
    if (write_text(outdir, name, adj)) return 1;

    static const char *backends[][2] = {{"backend_h.m4", "h"}, {"backend_c.m4", "c"}, {"backend_cuda.m4", "cu"}};
    for (int b = 0; b < 3; ++b) {
        char be[1024];
        snprintf(be, sizeof be, "%s/%s", m4dir, backends[b][0]);
        char *av[] = {(char *)m4prog, "-P", "-I", (char *)m4dir, be, inst_path, NULL};
        char *text = NULL;
        int rc = run_capture(av, &text);
        if (rc != 0) { free(text); fprintf(stderr, "%s: backend template %s failed\n", file, backends[b][0]); return 1; }
        snprintf(name, sizeof name, "%s.%s", stem, backends[b][1]);
        if (check_leaks(name, text)) return 1;
        if (write_text(outdir, name, text)) return 1;
        free(text);
    }
    /* everything succeeded: publish (files whose content did not change keep
     * their time stamps, so a build recompiles only what changed) */
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
