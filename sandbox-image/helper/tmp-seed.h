/*
 * /tmp seed: what the image keeps under TMP_SEED (the go family: a build cache
 * of the standard library, sandbox-image/go-seed.ts) is copied into /tmp before
 * a command runs, once per emptying of /tmp. So every command starts with /tmp
 * holding exactly the image's seed, as its own writable copy: a command can
 * change or delete it, and the next command gets a fresh copy after the settle
 * that empties /tmp. A sandbox handed over (fresh or pooled) still has an empty
 * /tmp until its first command. An image without the folder has no seed.
 * Included by spawner.c after untar.h (read_all/write_all).
 */
#define TMP_SEED "/opt/mini-agent/tmp-seed"

/* copies the regular files and folders below the open folder `src` into the open folder `dst`; 0 when all of it went */
static int seed_copy_at(int src, int dst) {
  int dfd = fcntl(src, F_DUPFD_CLOEXEC, 3);
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    if (dfd >= 0) close(dfd);
    return -1;
  }
  int failed = 0;
  struct dirent *e;
  static char buf[65536];
  while (!failed && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(src, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) { failed = 1; break; }
    /* the copy is the sandbox user's: writable by it, whatever the image's owner */
    mode_t mode = (st.st_mode & 0755) | 0600;
    if (S_ISDIR(st.st_mode)) {
      if (mkdirat(dst, e->d_name, mode | 0700) != 0) { failed = 1; break; }
      int s = openat(src, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int t = openat(dst, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (s < 0 || t < 0 || seed_copy_at(s, t) != 0) failed = 1;
      if (s >= 0) close(s);
      if (t >= 0) close(t);
    } else if (S_ISREG(st.st_mode)) {
      int s = openat(src, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      int t = openat(dst, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (s < 0 || t < 0) failed = 1;
      for (ssize_t n; !failed && (n = read(s, buf, sizeof buf)) != 0;) {
        if (n < 0) {
          if (errno != EINTR) failed = 1;
        } else if (write_all(t, buf, (size_t)n) != 0) {
          failed = 1;
        }
      }
      if (s >= 0) close(s);
      if (t >= 0 && close(t) != 0) failed = 1;
    }
    /* nothing else belongs in a seed: skipped */
  }
  closedir(d);
  return failed ? -1 : 0;
}

/* 0 when /tmp now holds the seed (or the image has none); -1 with errno otherwise */
static int seed_tmp(void) {
  int src = open(TMP_SEED, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0) return errno == ENOENT ? 0 : -1;
  int dst = open("/tmp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int r = dst < 0 ? -1 : seed_copy_at(src, dst);
  int saved = errno;
  close(src);
  if (dst >= 0) close(dst);
  errno = saved;
  return r;
}
