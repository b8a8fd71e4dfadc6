// SPDX-License-Identifier: Apache-2.0
// cifs_probe_more.c - the second part of cifs_probe (cifs_probe.c): statfs,
// mmap read and write, two writers at once, long and non-ASCII names, and
// the big directory the host made.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cifs_probe.h"

void t_statfs(void) {
  struct statfs s;
  if (statfs(dir, &s) != 0) return fail("statfs", "%s", en(errno));
  if (s.f_blocks == 0 || s.f_bsize == 0 || s.f_bavail > s.f_blocks || s.f_namelen < 255)
    fail("statfs", "blocks %llu bsize %ld avail %llu namelen %ld", (unsigned long long)s.f_blocks,
         (long)s.f_bsize, (unsigned long long)s.f_bavail, (long)s.f_namelen);
  else
    ok("statfs", "%llu blocks of %ld, %llu available, names up to %ld",
       (unsigned long long)s.f_blocks, (long)s.f_bsize, (unsigned long long)s.f_bavail,
       (long)s.f_namelen);
}

void t_mmap(void) {
  const char* p = path("mapped");
  const size_t n = (1 << 20) + 123;
  if (make_file(p, n, 14) != 0) return fail("mmap_read", "create: %s", en(errno));
  int fd = open(p, O_RDWR);
  uint8_t* m = fd < 0 ? MAP_FAILED : mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    fail("mmap_read", "%s", en(errno));
    if (fd >= 0) close(fd);
    return;
  }
  uint8_t* w = malloc(n);
  fill(w, n, 14);
  if (memcmp(m, w, n))
    fail("mmap_read", "the mapping differs from the file");
  else
    ok("mmap_read", NULL);
  // Every 4 KiB page touched, and the partial last page.
  for (size_t i = 0; i < n; i += 4096) m[i] ^= 0xFF, w[i] ^= 0xFF;
  m[n - 1] ^= 0x55;
  w[n - 1] ^= 0x55;
  int r = msync(m, n, MS_SYNC);
  munmap(m, n);
  close(fd);
  free(w);
  if (r != 0) return fail("mmap_write", "msync: %s", en(errno));
  // Read back through a fresh descriptor with O_DIRECT: from the server,
  // not from this client's page cache.
  fd = open(p, O_RDONLY | O_DIRECT);
  uint8_t* b = NULL;
  if (fd < 0 || posix_memalign((void**)&b, 4096, n + 4096) != 0)
    return fail("mmap_write", "O_DIRECT open: %s", en(errno));
  ssize_t k = read_all(fd, b, (n + 4095) & ~(size_t)4095, 0);
  close(fd);
  w = malloc(n);
  fill(w, n, 14);
  for (size_t i = 0; i < n; i += 4096) w[i] ^= 0xFF;
  w[n - 1] ^= 0x55;
  if (k != (ssize_t)n || memcmp(b, w, n))
    fail("mmap_write", "read back %zd bytes, %s", k, k == (ssize_t)n ? "content differs" : "");
  else
    ok("mmap_write", "msync'd pages read back equal with O_DIRECT");
  free(w);
  free(b);
}

void t_two_writers(void) {
  const size_t n = 4 << 20;
  pid_t kids[2];
  for (int i = 0; i < 2; ++i) {
    kids[i] = fork();
    if (kids[i] == 0) {
      char name[32];
      snprintf(name, sizeof name, "writer-%d", i);
      uint8_t* b = malloc(n);
      fill(b, n, 20 + i);
      int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int bad = fd < 0;
      for (size_t off = 0; !bad && off < n; off += 65536) bad = write_all(fd, b + off, 65536, off);
      bad = bad || fsync(fd) != 0 || close(fd) != 0;
      _exit(bad);
    }
  }
  int bad = 0;
  for (int i = 0; i < 2; ++i) {
    int st = 0;
    waitpid(kids[i], &st, 0);
    bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  }
  if (bad || !has_pattern(path("writer-0"), n, 20) || !has_pattern(path("writer-1"), n, 21))
    fail("two_writers", "a writer failed or a file differs");
  else
    ok("two_writers", "two processes, 4 MiB each, both files equal");
}

// Names: long, spaces, non-ASCII (2-, 3- and 4-byte UTF-8; the 4-byte ones
// are UTF-16 surrogate pairs on the wire).
void t_names(void) {
  char longname[256];
  memset(longname, 'L', 255);
  longname[255] = 0;
  char longutf8[256];  // 63 x U+00E9 (2 bytes) + 'x': 127 bytes, 64 UTF-16 units
  size_t at = 0;
  for (int i = 0; i < 63; ++i) longutf8[at++] = (char)0xC3, longutf8[at++] = (char)0xA9;
  longutf8[at++] = 'x';
  longutf8[at] = 0;
  const char* names[] = {
      longname,
      longutf8,
      "name with  spaces ",
      "caf\xC3\xA9 na\xC3\xAFve \xE2\x82\xAC",    // café naïve €
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",     // 日本語
      "emoji-\xF0\x9F\x98\x80-\xF0\x9F\x8E\xB5",  // U+1F600, U+1F3B5
      "\xF0\x9D\x84\x9E clef",                    // U+1D11E
      "brackets [a] {b} #c% &d; 'e' !f~",
  };
  const int count = (int)(sizeof names / sizeof names[0]);
  int bad = 0;
  for (int i = 0; i < count; ++i) {
    char sub[512];
    snprintf(sub, sizeof sub, "names/%s", names[i]);
    if (i == 0) mkdir(path("names"), 0755);
    if (make_file(path(sub), (size_t)i + 1, 30 + i) != 0) {
      fail("names_create", "'%s': %s", names[i], en(errno));
      bad = 1;
      continue;
    }
    if (!has_pattern(path(sub), (size_t)i + 1, 30 + i)) {
      fail("names_create", "'%s': content", names[i]);
      bad = 1;
    }
  }
  if (!bad) ok("names_create", "%d names created, each read back by name", count);
  DIR* d = opendir(path("names"));
  int seen[16] = {0}, extra = 0;
  struct dirent* e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    int found = 0;
    for (int i = 0; i < count; ++i)
      if (!strcmp(e->d_name, names[i])) seen[i]++, found = 1;
    if (!found) {
      printf("  unexpected entry '%s'\n", e->d_name);
      extra++;
    }
  }
  if (d) closedir(d);
  int missing = 0;
  for (int i = 0; i < count; ++i) missing += seen[i] != 1;
  if (!d || missing || extra)
    fail("names_readdir", "%d names not listed exactly once, %d unexpected", missing, extra);
  else
    ok("names_readdir", "every name listed once, byte for byte");
  // A name in a name: a subdirectory with non-ASCII characters, renamed.
  char from[512], to[512];
  snprintf(from, sizeof from, "names/%s", names[5]);
  snprintf(to, sizeof to, "names/%s", names[6]);
  if (rename(path(from), path(to)) != 0 || !has_pattern(path(to), 6, 35))
    fail("names_rename", "%s", en(errno));
  else
    ok("names_rename", "surrogate-pair name renamed over another");
}

// The directory of `count` files the host made (many/fNNNN...): readdir
// finds each once (QUERY_DIRECTORY continuation).
void t_bigdir(int count) {
  DIR* d = opendir(path("many"));
  if (!d) return fail("bigdir_readdir", "opendir: %s", en(errno));
  char* seen = calloc((size_t)count, 1);
  int n = 0, dup = 0, odd = 0;
  struct dirent* e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    ++n;
    int i;
    if (sscanf(e->d_name, "f%d", &i) == 1 && i >= 0 && i < count)
      dup += seen[i]++ != 0;
    else
      ++odd;
  }
  closedir(d);
  int missing = 0;
  for (int i = 0; i < count; ++i) missing += !seen[i];
  free(seen);
  if (n != count || dup || odd || missing)
    fail("bigdir_readdir", "%d entries, %d twice, %d unknown, %d missing", n, dup, odd, missing);
  else
    ok("bigdir_readdir", "%d entries, each once", n);
}
