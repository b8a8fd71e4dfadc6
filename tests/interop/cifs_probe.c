// SPDX-License-Identifier: Apache-2.0
// cifs_probe.c - what an ordinary program does to files, run by the guest on
// a cifs mount of ndk-smbd (tests/interop/smb_cifs_cases.sh, cifs_posix):
// every system call's outcome is checked (data by content, failures by
// errno name) and printed as one line per check:
//   ok NAME [detail]        the documented outcome
//   FAIL NAME: detail       anything else
// Built on the host (Debian 12 like the guest), handed over on the share.
// Usage: cifs_probe DIR MANY  (DIR: a directory on the mount holding only
// many/, MANY files named f<number>... that the host made)
// Exit status: the number of failed checks (capped at 100).
#define _GNU_SOURCE
#include "cifs_probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int failures;
char dir[4096];

void ok(const char* name, const char* fmt, ...) {
  printf("ok %s", name);
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    putchar(' ');
    vprintf(fmt, ap);
    va_end(ap);
  }
  putchar('\n');
  fflush(stdout);
}

void fail(const char* name, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL %s: ", name);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  ++failures;
}

const char* en(int e) {
  const char* n = strerrorname_np(e);
  return n ? n : "?";
}

char* path(const char* leaf) {
  static char b[8][8192];
  static int i;
  char* p = b[i++ % 8];
  snprintf(p, sizeof b[0], "%s/%s", dir, leaf);
  return p;
}

void fill(uint8_t* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (uint8_t)(i * 131 + seed + (i >> 9));
}

int write_all(int fd, const void* p, size_t n, off_t at) {
  size_t put = 0;
  while (put < n) {
    ssize_t k = pwrite(fd, (const char*)p + put, n - put, at + (off_t)put);
    if (k <= 0) return -1;
    put += (size_t)k;
  }
  return 0;
}

ssize_t read_all(int fd, void* p, size_t n, off_t at) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, (char*)p + got, n - got, at + (off_t)got);
    if (k < 0) return -1;
    if (k == 0) break;
    got += (size_t)k;
  }
  return (ssize_t)got;
}

// A file of `n` bytes of pattern `seed`; 0 or -1 (errno).
int make_file(const char* p, size_t n, unsigned seed) {
  uint8_t* b = malloc(n ? n : 1);
  fill(b, n, seed);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int r = fd < 0 || write_all(fd, b, n, 0) != 0 ? -1 : 0;
  int e = errno;
  if (fd >= 0) close(fd);
  free(b);
  errno = e;
  return r;
}

// The file holds exactly `n` bytes of pattern `seed`.
int has_pattern(const char* p, size_t n, unsigned seed) {
  uint8_t* want = malloc(n + 1);
  uint8_t* got = malloc(n + 1);
  fill(want, n, seed);
  int fd = open(p, O_RDONLY);
  ssize_t k = fd < 0 ? -1 : read_all(fd, got, n + 1, 0);
  if (fd >= 0) close(fd);
  int r = k == (ssize_t)n && memcmp(want, got, n) == 0;
  free(want);
  free(got);
  return r;
}

// Expects `r` < 0 with errno `want`.
static void expect_errno(const char* name, int r, int want, const char* what) {
  if (r >= 0)
    fail(name, "%s succeeded, expected %s", what, en(want));
  else if (errno != want)
    fail(name, "%s: %s, expected %s", what, en(errno), en(want));
  else
    ok(name, "%s", en(want));
}

static void t_create_excl_missing(void) {
  if (make_file(path("exists"), 10, 1) != 0) return fail("create", "%s", en(errno));
  ok("create", NULL);
  int fd = open(path("exists"), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) close(fd);
  expect_errno("o_excl_existing", fd, EEXIST, "open(O_CREAT|O_EXCL) of an existing file");
  fd = open(path("no-such-file"), O_RDONLY);
  expect_errno("open_missing", fd, ENOENT, "open of a missing file");
  fd = open(path("no-such-dir/f"), O_RDONLY);
  expect_errno("open_missing_dir", fd, ENOENT, "open below a missing directory");
  struct stat st;
  expect_errno("stat_missing", stat(path("no-such-file"), &st), ENOENT, "stat");
}

static void t_truncate(void) {
  const char* p = path("trunc");
  if (make_file(p, 10000, 2) != 0) return fail("truncate_shrink", "create: %s", en(errno));
  if (truncate(p, 4000) != 0) return fail("truncate_shrink", "truncate: %s", en(errno));
  struct stat st;
  if (stat(p, &st) != 0 || st.st_size != 4000)
    return fail("truncate_shrink", "size %lld", (long long)st.st_size);
  if (!has_pattern(p, 4000, 2)) return fail("truncate_shrink", "content after truncate");
  ok("truncate_shrink", NULL);
  if (truncate(p, 1 << 20) != 0) return fail("truncate_extend", "truncate: %s", en(errno));
  int fd = open(p, O_RDONLY);
  static uint8_t b[1 << 20];
  ssize_t k = fd < 0 ? -1 : read_all(fd, b, sizeof b, 0);
  if (fd >= 0) close(fd);
  if (k != (ssize_t)sizeof b) return fail("truncate_extend", "read %zd of %zu", k, sizeof b);
  for (size_t i = 4000; i < sizeof b; ++i)
    if (b[i]) return fail("truncate_extend", "byte %zu of the extension is %u", i, b[i]);
  ok("truncate_extend", "1 MiB, the extension reads as zeros");
  fd = open(p, O_RDWR);
  if (fd < 0 || ftruncate(fd, 12345) != 0 || fstat(fd, &st) != 0 || st.st_size != 12345)
    fail("ftruncate", "%s size %lld", en(errno), (long long)st.st_size);
  else
    ok("ftruncate", NULL);
  if (fd >= 0) close(fd);
}

static void t_sparse_append_fsync(void) {
  const char* p = path("sparse");
  int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
  uint8_t b[4096], z[4096];
  fill(b, sizeof b, 3);
  const off_t at = 8 << 20;
  if (fd < 0 || write_all(fd, b, sizeof b, at) != 0) {
    fail("sparse_write", "%s", en(errno));
  } else {
    struct stat st;
    fstat(fd, &st);
    ssize_t k = read_all(fd, z, sizeof z, 4 << 20);
    int zero = k == (ssize_t)sizeof z;
    for (size_t i = 0; zero && i < sizeof z; ++i) zero = z[i] == 0;
    ssize_t k2 = read_all(fd, z, sizeof z, at);
    if (st.st_size != at + 4096 || !zero || k2 != 4096 || memcmp(z, b, 4096))
      fail("sparse_write", "size %lld hole-zero %d data %zd", (long long)st.st_size, zero, k2);
    else
      ok("sparse_write", "4 KiB at 8 MiB: size 8 MiB + 4 KiB, the hole reads as zeros");
    if (fsync(fd) != 0)
      fail("fsync", "%s", en(errno));
    else if (fdatasync(fd) != 0)
      fail("fsync", "fdatasync: %s", en(errno));
    else
      ok("fsync", NULL);
  }
  if (fd >= 0) close(fd);

  p = path("append");
  if (make_file(p, 100, 4) != 0) return fail("append", "create: %s", en(errno));
  int a1 = open(p, O_WRONLY | O_APPEND), a2 = open(p, O_WRONLY | O_APPEND);
  const char* parts[] = {"first-", "second-", "third"};
  int bad = a1 < 0 || a2 < 0;
  for (int i = 0; !bad && i < 3; ++i)
    bad = write(i % 2 ? a2 : a1, parts[i], strlen(parts[i])) != (ssize_t)strlen(parts[i]);
  if (a1 >= 0) close(a1);
  if (a2 >= 0) close(a2);
  char got[200] = {0};
  fd = open(p, O_RDONLY);
  ssize_t k = fd < 0 ? -1 : read_all(fd, got, sizeof got, 0);
  if (fd >= 0) close(fd);
  if (bad || k != 118 || memcmp(got + 100, "first-second-third", 18))
    fail("append", "%s read %zd tail '%.18s'", bad ? en(errno) : "", k, k > 100 ? got + 100 : "");
  else
    ok("append", "two O_APPEND descriptors, 118 bytes in order");
}

static void t_times_mode_stat(void) {
  const char* p = path("times");
  if (make_file(p, 5000, 5) != 0) return fail("utimes", "create: %s", en(errno));
  struct timespec ts[2] = {{981173106, 0}, {981173106, 0}};  // 2001-02-03 04:05:06 UTC
  ts[0].tv_sec += 3600;
  if (utimensat(AT_FDCWD, p, ts, 0) != 0) return fail("utimes", "%s", en(errno));
  struct stat st;
  if (stat(p, &st) != 0 || st.st_mtime != 981173106 || st.st_atime != 981173106 + 3600)
    fail("utimes", "mtime %lld atime %lld", (long long)st.st_mtime, (long long)st.st_atime);
  else
    ok("utimes", "mtime and atime as set");
  if (st.st_size != 5000 || st.st_nlink != 1 || !S_ISREG(st.st_mode) || st.st_blocks < 8)
    fail("stat_fields", "size %lld nlink %lu mode %o blocks %lld", (long long)st.st_size,
         (unsigned long)st.st_nlink, st.st_mode, (long long)st.st_blocks);
  else
    ok("stat_fields", "size 5000, nlink 1, regular, %lld blocks", (long long)st.st_blocks);
  struct stat st2;
  if (stat(p, &st2) != 0 || st2.st_ino != st.st_ino)
    fail("stat_inode", "inode %llu then %llu", (unsigned long long)st.st_ino,
         (unsigned long long)st2.st_ino);
  else
    ok("stat_inode", "the same inode number twice (%llu)", (unsigned long long)st.st_ino);
  // Without unix extensions cifs keeps chmod's mode bits to itself but maps
  // "no write bit" to FILE_ATTRIBUTE_READONLY on the server (the host
  // checks the file "ro" afterwards) and shows the file without write
  // bits. (Back with 0644 cifs sends the attribute only if its cached
  // attributes already hold READONLY, i.e. after an attribute refresh:
  // covered by the server's unit test, not here.)
  if (make_file(path("ro"), 10, 15) != 0) return fail("chmod", "create: %s", en(errno));
  if (chmod(path("ro"), 0444) != 0) return fail("chmod", "chmod 0444: %s", en(errno));
  if (stat(path("ro"), &st) != 0) return fail("chmod", "stat: %s", en(errno));
  if (st.st_mode & 0222)
    fail("chmod", "after 0444: mode %o", st.st_mode & 07777);
  else
    ok("chmod", "0444: mode %o", st.st_mode & 07777);
}

static void t_dirs(void) {
  const char* d = path("dir");
  if (mkdir(d, 0755) != 0) return fail("mkdir", "%s", en(errno));
  ok("mkdir", NULL);
  expect_errno("mkdir_existing", mkdir(d, 0755), EEXIST, "mkdir of an existing directory");
  if (make_file(path("dir/inner"), 1, 6) != 0) return fail("rmdir_nonempty", "%s", en(errno));
  expect_errno("rmdir_nonempty", rmdir(d), ENOTEMPTY, "rmdir of a non-empty directory");
  expect_errno("unlink_dir", unlink(d), EISDIR, "unlink of a directory");
  if (unlink(path("dir/inner")) != 0 || rmdir(d) != 0) return fail("rmdir", "%s", en(errno));
  struct stat st;
  expect_errno("rmdir", stat(d, &st), ENOENT, "stat after rmdir");
}

static void t_rename(void) {
  const char* a = path("ren-a");
  const char* b = path("ren-b");
  if (make_file(a, 3000, 7) != 0 || make_file(b, 17, 8) != 0)
    return fail("rename_over", "create: %s", en(errno));
  struct stat st;
  if (rename(a, b) != 0) return fail("rename_over", "%s", en(errno));
  if (!has_pattern(b, 3000, 7) || stat(a, &st) == 0)
    fail("rename_over", "target content or source still there");
  else
    ok("rename_over", "the existing target replaced");

  // Rename of an open file: the open descriptor keeps working.
  const char* c = path("ren-open");
  const char* e = path("ren-opened");
  int fd = open(c, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "hello ", 6) != 6) return fail("rename_open", "%s", en(errno));
  if (rename(c, e) != 0) {
    fail("rename_open", "rename: %s", en(errno));
  } else if (write(fd, "world", 5) != 5 || fsync(fd) != 0) {
    fail("rename_open", "write after rename: %s", en(errno));
  } else {
    char got[16] = {0};
    int g = open(e, O_RDONLY);
    ssize_t k = g < 0 ? -1 : read_all(g, got, sizeof got, 0);
    if (g >= 0) close(g);
    if (k != 11 || memcmp(got, "hello world", 11) || stat(c, &st) == 0)
      fail("rename_open", "read %zd '%.11s'", k, got);
    else
      ok("rename_open", "written before and after the rename");
  }
  close(fd);

  // A directory with a file in it renamed.
  if (mkdir(path("rdir"), 0755) != 0 || make_file(path("rdir/f"), 9, 9) != 0 ||
      rename(path("rdir"), path("rdir2")) != 0 || !has_pattern(path("rdir2/f"), 9, 9))
    fail("rename_dir", "%s", en(errno));
  else
    ok("rename_dir", NULL);
}

// Unlink of an open file. SMB2 without POSIX extensions has no "name gone,
// file still open": cifs finds the name through its open handle until the
// last close (Windows: delete pending), so what is checked is what any
// SMB2 server gives: unlink succeeds, the open descriptor reads all the
// data, and after its close the name is gone and free for a new file.
static void t_unlink_open(void) {
  const char* p = path("unlink-open");
  if (make_file(p, 70000, 10) != 0) return fail("unlink_open", "create: %s", en(errno));
  int fd = open(p, O_RDONLY);
  if (fd < 0) return fail("unlink_open", "open: %s", en(errno));
  struct stat st;
  if (unlink(p) != 0) {
    fail("unlink_open", "unlink: %s", en(errno));
  } else {
    static uint8_t b[70000], w[70000];
    fill(w, sizeof w, 10);
    ssize_t k = read_all(fd, b, sizeof b, 0);
    if (k != (ssize_t)sizeof b || memcmp(b, w, sizeof b))
      fail("unlink_open", "read through the open descriptor: %zd (%s)", k, en(errno));
    else
      ok("unlink_open", "the open descriptor still reads the data");
  }
  close(fd);
  if (stat(p, &st) == 0)
    fail("unlink_open_recreate", "the name is still there after the last close");
  else if (make_file(p, 5, 11) != 0 || !has_pattern(p, 5, 11))
    fail("unlink_open_recreate", "a new file of that name: %s", en(errno));
  else
    ok("unlink_open_recreate", "the name gone after the last close, then free");
}

static void t_links(void) {
  const char* p = path("linked");
  if (make_file(p, 33, 12) != 0) return fail("hardlink", "create: %s", en(errno));
  struct stat st;
  if (link(p, path("linked2")) != 0) {
    // A clear refusal is acceptable; a hang is not (the caller's timeout).
    if (errno == EOPNOTSUPP || errno == EPERM)
      ok("hardlink", "refused: %s", en(errno));
    else
      fail("hardlink", "%s", en(errno));
  } else if (stat(path("linked2"), &st) != 0 || st.st_nlink != 2 ||
             !has_pattern(path("linked2"), 33, 12)) {
    fail("hardlink", "nlink %lu", (unsigned long)st.st_nlink);
  } else {
    ok("hardlink", "nlink 2, same content");
  }
  int r = symlink("linked", path("sym"));
  if (r == 0)
    ok("symlink", "created");
  else if (errno == EOPNOTSUPP || errno == EPERM)
    ok("symlink", "refused: %s", en(errno));
  else
    fail("symlink", "%s", en(errno));
}

static void t_locks(void) {
  const char* p = path("locked");
  if (make_file(p, 4096, 13) != 0) return fail("flock", "create: %s", en(errno));
  int fd = open(p, O_RDWR), fd2 = open(p, O_RDWR);
  if (fd < 0 || fd2 < 0) return fail("flock", "open: %s", en(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    fail("flock", "LOCK_EX|LOCK_NB: %s", en(errno));
  } else {
    int r = flock(fd2, LOCK_EX | LOCK_NB);
    int e = errno;
    if (r == 0)
      fail("flock", "a second LOCK_EX on another open file description was granted");
    else if (e != EWOULDBLOCK && e != EACCES)
      fail("flock", "second LOCK_EX: %s", en(e));
    else if (flock(fd, LOCK_UN) != 0 || flock(fd2, LOCK_EX | LOCK_NB) != 0 || flock(fd2, LOCK_UN))
      fail("flock", "after unlock: %s", en(errno));
    else
      ok("flock", "exclusive, the second refused with %s, granted after LOCK_UN", en(e));
  }
  close(fd2);

  struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
  if (fcntl(fd, F_SETLK, &l) != 0) {
    fail("fcntl_lock", "F_SETLK write lock: %s", en(errno));
    close(fd);
    return;
  }
  // A second process: its overlapping lock is refused, F_GETLK names a
  // write lock, a range beside it is granted; after our unlock its lock is
  // granted. Two pipes order the steps (no sleeps).
  int up[2], down[2];
  if (pipe(up) != 0 || pipe(down) != 0) return fail("fcntl_lock", "pipe");
  pid_t child = fork();
  if (child == 0) {
    int c = open(p, O_RDWR);
    struct flock m = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 100};
    int r1 = fcntl(c, F_SETLK, &m), e1 = errno;
    struct flock g = m;
    int r2 = fcntl(c, F_GETLK, &g);
    struct flock beside = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 200, .l_len = 10};
    int r3 = fcntl(c, F_SETLK, &beside);
    char go = 'x';
    if (write(up[1], &go, 1) != 1 || read(down[0], &go, 1) != 1) _exit(9);
    int r4 = fcntl(c, F_SETLK, &m), e4 = errno;
    printf(
        "  child: overlapping F_SETLK %d (%s), F_GETLK %d type %d, beside %d, after unlock %d "
        "(%s)\n",
        r1, en(e1), r2, g.l_type, r3, r4, r4 ? en(e4) : "-");
    fflush(stdout);
    _exit(r1 != 0 && (e1 == EAGAIN || e1 == EACCES) && r2 == 0 && g.l_type == F_WRLCK && r3 == 0 &&
                  r4 == 0
              ? 0
              : 1);
  }
  char go;
  int status = 0;
  if (read(up[0], &go, 1) != 1) {
    fail("fcntl_lock", "the child died before its checks");
  } else {
    struct flock un = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100};
    if (fcntl(fd, F_SETLK, &un) != 0) fail("fcntl_lock", "F_UNLCK: %s", en(errno));
    if (write(down[1], &go, 1) != 1) fail("fcntl_lock", "pipe");
  }
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    ok("fcntl_lock", "conflict refused in another process, granted after F_UNLCK");
  else
    fail("fcntl_lock", "the other process's checks (status %d)", status);
  close(fd);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr,
            "usage: %s DIR MANY\n  DIR: an empty directory; DIR/many: MANY files f0000...\n",
            argv[0]);
    return 100;
  }
  snprintf(dir, sizeof dir, "%s", argv[1]);
  t_bigdir(atoi(argv[2]));
  t_create_excl_missing();
  t_truncate();
  t_sparse_append_fsync();
  t_times_mode_stat();
  t_dirs();
  t_rename();
  t_unlink_open();
  t_links();
  t_locks();
  t_statfs();
  t_mmap();
  t_two_writers();
  t_names();
  return failures > 100 ? 100 : failures;
}
