/* Running a program from a test: argv[0] is the path; stdout is discarded,
 * stderr goes into err (or is discarded when err is NULL).  Returns the exit
 * status, or -1 if the program did not exit normally.  Needs POSIX: include
 * after defining _GNU_SOURCE (or _POSIX_C_SOURCE). */
#ifndef STENC_TESTPROC_H
#define STENC_TESTPROC_H

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static inline int run_program(const char *const argv[], char *err, size_t errlen)
{
    char errpath[] = "/tmp/stenc-test-err-XXXXXX";
    int efd = -1;
    if (err) {
        efd = mkstemp(errpath);
        ck_assert_int_ge(efd, 0);
    }
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        dup2(efd >= 0 ? efd : devnull, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (err) {
        lseek(efd, 0, SEEK_SET);
        ssize_t n = read(efd, err, errlen - 1);
        err[n > 0 ? n : 0] = 0;
        close(efd);
        unlink(errpath);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
