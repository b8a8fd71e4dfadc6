// SPDX-License-Identifier: Apache-2.0
// cifs_probe.h - what the two parts of cifs_probe (cifs_probe.c: files,
// locks, links; cifs_probe_more.c: statfs, mmap, writers, names, a big
// directory) share: the result lines and the file helpers.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

extern int failures;
extern char dir[4096];

void ok(const char* name, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void fail(const char* name, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
const char* en(int e);                           // "ENOENT"
char* path(const char* leaf);                    // DIR/leaf (8 rotating buffers)
void fill(uint8_t* p, size_t n, unsigned seed);  // the pattern of `seed`
int write_all(int fd, const void* p, size_t n, off_t at);
ssize_t read_all(int fd, void* p, size_t n, off_t at);  // to n bytes or EOF
int make_file(const char* p, size_t n, unsigned seed);  // 0 or -1 (errno)
int has_pattern(const char* p, size_t n, unsigned seed);

void t_statfs(void);
void t_mmap(void);
void t_two_writers(void);
void t_names(void);
void t_bigdir(int count);
