/*
 * LD_PRELOAD library that makes chosen file-system calls of a real process fail, the way a
 * failing disk does: the hub under test runs unchanged, only what the kernel answers differs.
 *
 * The rule is read from the file named by HANDOFF_FAULTS whenever that file changes:
 *     <call> <path-substring> <errno-name> <count>
 * call: fdatasync | fsync | write (pwrite, pwritev, write) | rename. The first <count> matching
 * calls fail with the errno and do nothing; an empty file disarms. How many fired so far is
 * written to the file named by HANDOFF_FAULTS with ".fired" appended.
 *
 * Built by test/helpers/faultShim.ts with the system's cc; Linux and glibc only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char rule_call[32], rule_path[PATH_MAX], rule_errno[32];
static long rule_count, fired;
static struct timespec rule_mtime;
static off_t rule_size = -1;

static int errno_of(const char *name) {
  if (!strcmp(name, "EIO")) return EIO;
  if (!strcmp(name, "ENOSPC")) return ENOSPC;
  if (!strcmp(name, "EROFS")) return EROFS;
  if (!strcmp(name, "EDQUOT")) return EDQUOT;
  if (!strcmp(name, "EACCES")) return EACCES;
  return EIO;
}

/* Re-reads the rule if its file changed; a new rule starts its count from zero. */
static void reload(void) {
  const char *file = getenv("HANDOFF_FAULTS");
  struct stat st;
  if (!file || stat(file, &st) != 0) {
    rule_call[0] = 0;
    return;
  }
  if (st.st_size == rule_size && st.st_mtim.tv_sec == rule_mtime.tv_sec && st.st_mtim.tv_nsec == rule_mtime.tv_nsec) return;
  rule_size = st.st_size;
  rule_mtime = st.st_mtim;
  rule_call[0] = 0;
  fired = 0;
  FILE *f = fopen(file, "r");
  if (!f) return;
  if (fscanf(f, "%31s %4095s %31s %ld", rule_call, rule_path, rule_errno, &rule_count) != 4) rule_call[0] = 0;
  fclose(f);
}

/* Set while the shim does its own I/O, which must not be intercepted (or lock twice). */
static __thread int busy;

static void note_fired(void) {
  const char *file = getenv("HANDOFF_FAULTS");
  char out[PATH_MAX], text[32];
  snprintf(out, sizeof out, "%s.fired", file);
  int n = snprintf(text, sizeof text, "%ld\n", fired);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    if (write(fd, text, n) < 0) { /* nothing to do: the count is for the test's eyes */ }
    close(fd);
  }
}

/* Whether this call on this path fails now; sets errno when it does. */
static int should_fail(const char *call, const char *path) {
  if (!path || busy) return 0;
  int fail = 0, err = 0;
  busy = 1;
  pthread_mutex_lock(&lock);
  reload();
  if (rule_call[0] && !strcmp(rule_call, call) && strstr(path, rule_path) && fired < rule_count) {
    fired++;
    fail = 1;
    err = errno_of(rule_errno);
    note_fired();
  }
  pthread_mutex_unlock(&lock);
  busy = 0;
  if (fail) errno = err;
  return fail;
}

static int fails_on_fd(const char *call, int fd) {
  if (busy || !getenv("HANDOFF_FAULTS")) return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = 0;
  return should_fail(call, path);
}

#define REAL(name) static __typeof__(name) *real_##name; if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

int fdatasync(int fd) {
  REAL(fdatasync);
  if (fails_on_fd("fdatasync", fd)) return -1;
  return real_fdatasync(fd);
}

int fsync(int fd) {
  REAL(fsync);
  if (fails_on_fd("fsync", fd)) return -1;
  return real_fsync(fd);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) {
  REAL(pwrite);
  if (fails_on_fd("write", fd)) return -1;
  return real_pwrite(fd, buf, n, at);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) {
  REAL(pwrite64);
  if (fails_on_fd("write", fd)) return -1;
  return real_pwrite64(fd, buf, n, at);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t at) {
  REAL(pwritev);
  if (fails_on_fd("write", fd)) return -1;
  return real_pwritev(fd, iov, n, at);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t at) {
  REAL(pwritev64);
  if (fails_on_fd("write", fd)) return -1;
  return real_pwritev64(fd, iov, n, at);
}

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write);
  if (fd > 2 && fails_on_fd("write", fd)) return -1;
  return real_write(fd, buf, n);
}

int rename(const char *from, const char *to) {
  REAL(rename);
  if (getenv("HANDOFF_FAULTS") && should_fail("rename", to)) return -1;
  return real_rename(from, to);
}
