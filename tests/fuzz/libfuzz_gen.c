/* In-process, coverage-guided fuzzing of stenc-gen's parser, analysis and
 * differentiation/emission (everything after the m4 pass), with libFuzzer
 * under ASan + UBSan:
 *     make fuzz-libfuzzer FUZZ_SECONDS=600
 * The input is a normalised stencil, as the m4 pass writes it (the seed
 * corpus is build/gen/NAME.{2d,3d}.stn).  Each input is parsed for 2D and
 * 3D; every accepted one is analysed and emitted into /dev/null.  A crash,
 * sanitizer report, leak or time-out is a finding; error messages are
 * expected (libFuzzer runs with -close_fd_mask=2).  Leaks are not
 * findings: stenc-gen is a one-shot process whose error paths return
 * without freeing (-detect_leaks=0). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

int gen_error(const char *file, int line, const char *fmt, ...)
{
    (void)file; (void)line; (void)fmt;
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static Stencil st;
    for (int dims = 2; dims <= 3 && strlen(text) == size; ++dims) {
        ex_reset();
        memset(&st, 0, sizeof st);
        if (parse_stencil(text, "fuzz.stn", dims, &st) != 0) continue;
        if (!st.name[0]) strcpy(st.name, "f");
        if (analyze(&st) != 0) continue;
        FILE *a = fopen("/dev/null", "w"), *b = fopen("/dev/null", "w");
        if (a && b) emit_stencil(a, b, &st);
        if (a) fclose(a);
        if (b) fclose(b);
    }
    ex_reset();
    free(text);
    return 0;
}
