/* A fresh directory under $TMPDIR (or /tmp) per test, removed with everything in it afterwards.
 * Shared by the C and C++ tests (tests/meson.build puts tests/common/ on their include path). */
#ifndef TW_TESTS_SCRATCH_DIR_H
#define TW_TESTS_SCRATCH_DIR_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct scratch_dir {
  char path[256]; /* mkdtemp's result: short, so that "<path>/<name>" fits the tests' buffers */
} scratch_dir;

static inline int scratch_dir_create(scratch_dir *dir) {
  const char *base = getenv("TMPDIR");
  snprintf(dir->path, sizeof(dir->path), "%s/twckpt-XXXXXX", base != NULL && base[0] != '\0' ? base : "/tmp");
  return mkdtemp(dir->path) != NULL ? 0 : -1;
}

static inline int scratch_dir_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static inline void scratch_dir_destroy(const scratch_dir *dir) {
  nftw(dir->path, scratch_dir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* "<dir>/<name>" into out (static size is enough for the tests). */
static inline const char *scratch_dir_join(const scratch_dir *dir, const char *name, char *out, size_t size) {
  snprintf(out, size, "%s/%s", dir->path, name);
  return out;
}

/* Entries of the directory whose name starts with `prefix` ("" counts all but . and ..). */
static inline int scratch_dir_count_entries(const scratch_dir *dir, const char *prefix) {
  DIR *d = opendir(dir->path);
  int count = 0;
  struct dirent *e;
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++count;
  }
  closedir(d);
  return count;
}

/* Temporary files of interrupted writes (".<name>.tw-tmp-<pid>-<n>"); the directory's lock file
 * ".trainwatch.lock" is not one. */
static inline int scratch_dir_count_temporary(const scratch_dir *dir) {
  DIR *d = opendir(dir->path);
  int count = 0;
  struct dirent *e;
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) {
    if (strstr(e->d_name, ".tw-tmp-") != NULL) ++count;
  }
  closedir(d);
  return count;
}

#ifdef __cplusplus
/* C++: a scratch directory for one scope, removed with everything in it when the scope ends; path() is
 * empty when it could not be made. */
class ScratchDir {
 public:
  ScratchDir() {
    if (scratch_dir_create(&dir_) != 0) dir_.path[0] = '\0';
  }
  ~ScratchDir() {
    if (dir_.path[0] != '\0') scratch_dir_destroy(&dir_);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const char *path() const { return dir_.path; }

 private:
  scratch_dir dir_;
};
#endif

#endif /* TW_TESTS_SCRATCH_DIR_H */
