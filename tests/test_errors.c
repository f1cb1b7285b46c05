/* Broken stencil files: each tests/bad/NAME.stn starts with a line
 *   # expect: LINE: MESSAGE
 * stenc-gen must exit with status 1, report "tests/bad/NAME.stn:LINE: error: "
 * followed by text containing MESSAGE, and leave no output behind. */
#define _GNU_SOURCE
#include "testproc.h"

#include <dirent.h>
#include <sys/stat.h>

#define GEN STENC_SRCDIR "/build/bin/stenc-gen"
#ifndef STENC_GEN_BIN
#define STENC_GEN_BIN GEN
#endif

/* run stenc-gen on file into outdir; stderr into errbuf; returns exit status */
static int run_gen(const char *file, const char *outdir, char *errbuf, size_t errlen)
{
    const char *argv[] = {STENC_GEN_BIN, "-I", STENC_SRCDIR "/m4", "-o", outdir, file, NULL};
    return run_program(argv, errbuf, errlen);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) ++n;
    closedir(d);
    return n;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

/* path holds a broken stencil whose first line is "# expect: LINE: MESSAGE":
 * stenc-gen must say so at path:LINE, exit 1 and write nothing */
static void check_broken(const char *path)
{
    char expect[512] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(fgets(expect, sizeof expect, f) != NULL, "%s is empty", path);
    fclose(f);
    ck_assert_msg(strncmp(expect, "# expect: ", 10) == 0, "%s lacks its '# expect:' line", path);
    expect[strcspn(expect, "\n")] = 0;
    int line = atoi(expect + 10);
    const char *msg = strchr(expect + 10, ':');
    ck_assert_ptr_nonnull(msg);
    msg += 2;
    char outdir[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(outdir));
    char err[16384];
    int rc = run_gen(path, outdir, err, sizeof err);
    char prefix[4600];
    snprintf(prefix, sizeof prefix, "%s:%d: error: ", path, line);
    ck_assert_msg(rc == 1, "%s: exit status %d, want 1 (stderr: %s)", path, rc, err);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "%s: stderr does not start with '%s':\n%s", path, prefix, err);
    char *nl = strchr(err + strlen(prefix), '\n');
    if (nl) *nl = 0;
    ck_assert_msg(strstr(err + strlen(prefix), msg) != NULL, "%s: message lacks '%s':\n%s", path, msg, err);
    ck_assert_msg(count_entries(outdir) == 0, "%s: left files behind in the output folder", path);
    rm_dir(outdir);
}

/* calls check(path, NAME.stn, ctx) for every tests/bad/NAME.stn; returns how many */
static int each_broken(void (*check)(const char *path, const char *name, const char *ctx), const char *ctx)
{
    DIR *d = opendir("tests/bad");
    ck_assert_msg(d != NULL, "run from the source tree");
    struct dirent *e;
    int checked = 0;
    while ((e = readdir(d))) {
        size_t ln = strlen(e->d_name);
        if (ln < 5 || strcmp(e->d_name + ln - 4, ".stn") != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "tests/bad/%s", e->d_name);
        check(path, e->d_name, ctx);
        ++checked;
    }
    closedir(d);
    return checked;
}

static void check_in_place(const char *path, const char *name, const char *ctx)
{
    (void)name, (void)ctx;
    check_broken(path);
}

START_TEST(broken_stencils)
{
    ck_assert_int_ge(each_broken(check_in_place, NULL), 15);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    ck_assert_msg(a && b, "copy %s to %s", from, to);
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, a)) > 0;) ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

/* the broken stencil, copied into the folder ctx, is reported there as well */
static void check_copied(const char *path, const char *name, const char *ctx)
{
    char copy[4600];
    snprintf(copy, sizeof copy, "%s/%s", ctx, name);
    copy_file(path, copy);
    check_broken(copy);
    unlink(copy);
}

/* folders whose names hold m4's quotes, a comment's end, text that looks like
 * a stenc or m4 macro, a colon (m4's message separator), a quote and a newline:
 * a good stencil there is generated as anywhere else (its banner names the
 * file alone), and each broken one is reported at its own path and line */
static const char *odd_dirs[] = {"q-[[x]]*", "m4_x-stn_y", "a:b:c", "nl\n\"x", "`dnl("};

START_TEST(odd_directory_names)
{
    char base[] = "/tmp/stenc-test-odd-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(base));
    char dir[4200], src[4400], outdir[4400];
    snprintf(dir, sizeof dir, "%s/%s", base, odd_dirs[_i]);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(src, sizeof src, "%s/diffusion.stn", dir);
    copy_file("stencils/diffusion.stn", src);
    snprintf(outdir, sizeof outdir, "%s/out", base);
    char err[16384];
    ck_assert_msg(run_gen(src, outdir, err, sizeof err) == 0, "%s: %s", src, err);
    ck_assert_int_eq(count_entries(outdir), 8);
    char p[4600], first[256] = "";
    snprintf(p, sizeof p, "%s/diffusion.c", outdir);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(first, sizeof first, f));
    fclose(f);
    ck_assert_msg(strstr(first, "Generated by stenc-gen diffusion.stn (stenc)") != NULL, "banner: %s", first);
    rm_dir(outdir);
    unlink(src);
    ck_assert_int_ge(each_broken(check_copied, dir), 15);
    rmdir(dir);
    ck_assert_int_eq(rmdir(base), 0);
}
END_TEST

START_TEST(good_stencil_outputs)
{
    char outdir[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(outdir));
    char err[8192];
    int rc = run_gen("stencils/diffusion.stn", outdir, err, sizeof err);
    ck_assert_msg(rc == 0, "stenc-gen failed: %s", err);
    static const char *files[] = {"diffusion.h", "diffusion.c", "diffusion.cu", "diffusion.dist.c", "diffusion.adj",
                                  "diffusion.2d.stn", "diffusion.3d.stn", "diffusion.inst.m4"};
    for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", outdir, files[i]);
        struct stat sb;
        ck_assert_msg(stat(p, &sb) == 0 && sb.st_size > 0, "missing output %s", files[i]);
    }
    ck_assert_int_eq(count_entries(outdir), (int)(sizeof files / sizeof *files));
    /* the banner names the command and the source */
    char p[4096];
    snprintf(p, sizeof p, "%s/diffusion.c", outdir);
    FILE *f = fopen(p, "r");
    char first[256] = "";
    ck_assert_ptr_nonnull(fgets(first, sizeof first, f));
    fclose(f);
    ck_assert_msg(strstr(first, "Generated by stenc-gen diffusion.stn (stenc)") != NULL, "banner: %s", first);
    rm_dir(outdir);
}
END_TEST

START_TEST(cli_errors)
{
    char err[8192];
    char outdir[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(outdir));
    ck_assert_int_eq(run_gen("tests/bad/does-not-exist.stn", outdir, err, sizeof err), 1);
    ck_assert_msg(strstr(err, "cannot read") != NULL, "%s", err);
    ck_assert_int_eq(run_gen("README.md", outdir, err, sizeof err), 2);
    ck_assert_int_eq(count_entries(outdir), 0);
    rm_dir(outdir);
}
END_TEST

/* write text into DIR/NAME.stn; returns the path (static buffer) */
static const char *write_stn(const char *dir, const char *name, const char *text, size_t len)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s.stn", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* a growing buffer of text */
typedef struct { char *p; size_t n, cap; } buf_t;
static void put(buf_t *b, const char *s, size_t times)
{
    size_t ls = strlen(s);
    while (b->n + ls * times + 1 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4096;
        b->p = realloc(b->p, b->cap);
        ck_assert_ptr_nonnull(b->p);
    }
    for (size_t t = 0; t < times; ++t) { memcpy(b->p + b->n, s, ls); b->n += ls; }
    b->p[b->n] = 0;
}

/* Hostile inputs, made here (too large to keep as files): each must end in
 * "FILE:LINE: error: ..." with status 1, within the time limit, with no
 * output, never a crash; want NULL marks one that is valid (100,000 signs
 * are parsed without recursion) and must generate. */
static const struct { const char *name, *head, *rep, *tail, *want; size_t times; } hostile[] = {
    {"deep_parens", "stencil s\ndims 2\narray x\nreduce r = ", "(", "all(x)", "nested more than", 10000},
    {"many_minus", "stencil s\ndims 2\narray x\nreduce r = ", "-", "all(x)^2", NULL, 100000},
    {"long_sum", "stencil s\ndims 2\narray x\nparam w\nreduce r = all(x)^2", " + w*all(x)", "\n",
     "expression too large", 11000},
    {"long_name", "stencil s\ndims 2\narray ", "x", "\nreduce r = all(x)^2\n", "", 300},
    {"macro_growing", "stencil s\ndims 2\narray x\ndefine([[f]], [[(f)]])\nreduce r = f", "", "\n", "(m4, 2D)", 1},
    {"macro_endless", "stencil s\ndims 2\narray x\ndefine([[f]], [[f]])\nreduce r = f", "", "\n", "CPU time", 1},
    {"macro_nesting", "stencil s\ndims 2\narray x\ndefine([[f]], [[f(f)]])\nreduce r = f", "", "\n", "recursion limit",
     1},
    /* 100,000 warnings: the generator must not wait on a full stderr pipe */
    {"macro_noisy", "stencil s\ndims 2\narray x\ndefine([[w]], [[m4_define([[q]], 1, 2)]])\n"
     "define([[w10]], [[w w w w w w w w w w]])\ndefine([[w1k]], [[w10 w10 w10 w10 w10 w10 w10 w10 w10 w10 "
     "w10 w10 w10 w10 w10 w10 w10 w10 w10 w10]])\n", "w1k ", "\nreduce r = all(x)^2\n", "excess arguments", 500},
    {"too_big", "stencil s\ndims 2\narray x\nreduce r = all(x)^2\n", "# padding padding padding padding\n", "",
     "larger than", 40000},
};

START_TEST(hostile_inputs)
{
    char dir[] = "/tmp/stenc-test-in-XXXXXX", outdir[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_nonnull(mkdtemp(outdir));
    buf_t b = {0};
    put(&b, hostile[_i].head, 1);
    put(&b, hostile[_i].rep, hostile[_i].times);
    if (hostile[_i].rep[0] == '(') put(&b, ")", hostile[_i].times);
    put(&b, hostile[_i].tail, 1);
    const char *path = write_stn(dir, hostile[_i].name, b.p, b.n);
    char err[8192];
    int rc = run_gen(path, outdir, err, sizeof err);
    if (!hostile[_i].want) {
        ck_assert_msg(rc == 0, "%s: exit status %d, want 0 (stderr: %.500s)", hostile[_i].name, rc, err);
        ck_assert_int_eq(count_entries(outdir), 7); /* dims 2: .h .c .cu .dist.c .adj .2d.stn .inst.m4 */
        free(b.p);
        rm_dir(outdir);
        rm_dir(dir);
        return;
    }
    ck_assert_msg(rc == 1, "%s: exit status %d, want 1 (stderr: %.500s)", hostile[_i].name, rc, err);
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s:", path);
    ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, ": error: "),
                  "%s: not a FILE:LINE: error: message:\n%.500s", hostile[_i].name, err);
    ck_assert_msg(strstr(err, hostile[_i].want) != NULL, "%s: message lacks '%s':\n%.500s", hostile[_i].name,
                  hostile[_i].want, err);
    ck_assert_int_eq(count_entries(outdir), 0);
    free(b.p);
    rm_dir(outdir);
    rm_dir(dir);
}
END_TEST

/* a CRLF copy of a shipped stencil generates the same kernels */
START_TEST(crlf_input)
{
    char dir[] = "/tmp/stenc-test-in-XXXXXX", o1[] = "/tmp/stenc-test-out-XXXXXX", o2[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_nonnull(mkdtemp(o1));
    ck_assert_ptr_nonnull(mkdtemp(o2));
    FILE *f = fopen("stencils/tv.stn", "rb");
    ck_assert_ptr_nonnull(f);
    buf_t b = {0};
    for (int c; (c = fgetc(f)) != EOF;) {
        char s[3] = {(char)c, 0, 0};
        if (c == '\n') { s[0] = '\r'; s[1] = '\n'; }
        put(&b, s, 1);
    }
    fclose(f);
    char err[8192];
    ck_assert_msg(run_gen(write_stn(dir, "tv", b.p, b.n), o1, err, sizeof err) == 0, "CRLF: %s", err);
    ck_assert_msg(run_gen("stencils/tv.stn", o2, err, sizeof err) == 0, "%s", err);
    /* the kernels are the same (the banner, its first three lines, is not compared) */
    char p1[4200], p2[4200];
    snprintf(p1, sizeof p1, "%s/tv.c", o1);
    snprintf(p2, sizeof p2, "%s/tv.c", o2);
    FILE *a = fopen(p1, "rb"), *c = fopen(p2, "rb");
    ck_assert(a && c);
    char la[4096], lc[4096];
    int diff = 0, lines = 0;
    while (fgets(la, sizeof la, a)) {
        ck_assert_ptr_nonnull(fgets(lc, sizeof lc, c));
        if (++lines > 3) diff += strcmp(la, lc) != 0;
    }
    fclose(a);
    fclose(c);
    ck_assert_int_eq(diff, 0);
    ck_assert_int_gt(lines, 100);
    free(b.p);
    rm_dir(o1);
    rm_dir(o2);
    rm_dir(dir);
}
END_TEST

/* the command line: --version, a missing value, -o creates its folder */
START_TEST(cli_options)
{
    char err[8192];
    const char *v[] = {STENC_GEN_BIN, "--version", NULL};
    ck_assert_int_eq(run_program(v, err, sizeof err), 0);
    const char *m[] = {STENC_GEN_BIN, "stencils/tv.stn", "-o", NULL};
    ck_assert_int_eq(run_program(m, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "-o needs a value") != NULL, "%s", err);
    char outdir[] = "/tmp/stenc-test-out-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(outdir));
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/new", outdir);
    ck_assert_int_eq(run_gen("stencils/tv.stn", sub, err, sizeof err), 0);
    ck_assert_int_eq(count_entries(sub), 8);
    rm_dir(sub);
    rm_dir(outdir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("generator_errors");
    TCase *tc = tcase_create("all");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, broken_stencils);
    tcase_add_test(tc, good_stencil_outputs);
    tcase_add_loop_test(tc, odd_directory_names, 0, (int)(sizeof odd_dirs / sizeof *odd_dirs));
    tcase_add_test(tc, cli_errors);
    tcase_add_loop_test(tc, hostile_inputs, 0, (int)(sizeof hostile / sizeof *hostile));
    tcase_add_test(tc, crlf_input);
    tcase_add_test(tc, cli_options);
    suite_add_tcase(s, tc);
    return run_suite(s) ? 1 : 0;
}
