/*
 * untar: the sandbox's own extractor for the workspace tar (SPAWN_PUT in
 * spawn-proto.h). It runs inside the sandbox as the sandbox user (uid 65534,
 * no capabilities, seccomp, no_new_privs), so an entry that got past it could
 * still only touch what that user may touch. It accepts exactly what the
 * host's packer (daemon/src/sandbox/workspace-tar.ts packExport) writes:
 * ustar headers for regular files, directories and symlinks, pax "path" and
 * "linkpath" records for long or non-ASCII names, and the end-of-archive
 * blocks. Everything else is refused, and the extraction stops at the first
 * refusal: absolute paths, empty, "." or ".." components, hard links,
 * devices, fifos, unknown entry types or pax keys, setuid/setgid/sticky modes,
 * base-256 sizes, a file larger than the space left on the target's
 * filesystem, an entry that already exists, a bad checksum. A symlink's target
 * must be relative, at most MAX_LINK bytes, and stay inside the root when read
 * from the link's folder (its ".." never climbs above the root); the host
 * writes targets through real folders only (daemon/src/workspace/export-links.ts),
 * so the text is what resolves. Parents are opened one component at a time
 * with O_NOFOLLOW and files are created O_EXCL|O_NOFOLLOW, so no symlink is
 * ever followed: an entry written beneath or over a link the archive made
 * earlier is refused, never written through it. What the host may send is
 * decided on the host (listExport); this only keeps the stream honest.
 * O_NOFOLLOW is not trusted alone (open_dir_nofollow says why).
 *
 * Header-only (static): the image build compiles each helper from one file.
 */
#ifndef MINI_AGENT_UNTAR_H
#define MINI_AGENT_UNTAR_H
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define BLOCK 512
#define MAX_NAME 4096
#define MAX_PAX (64 * 1024)
#define MAX_DIRS 200000
/* the longest symlink target taken (export-links.ts MAX_LINK_TARGET) */
#define MAX_LINK 1024

/* the whole of n bytes or -1 (EINTR retried); also the spawner's read of its requests (spawner.c includes this file) */
static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int untar_refuse(char *why, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
  return -1;
}

/* an octal field (NUL or space terminated); -1 when it is not one (base-256 included) */
static long long octal(const unsigned char *f, size_t n) {
  long long v = 0;
  size_t i = 0;
  while (i < n && f[i] == ' ') i++;
  if (i == n || f[i] < '0' || f[i] > '7') return -1;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
    if (v > (1LL << 50)) return -1;
    v = v * 8 + (f[i] - '0');
  }
  for (; i < n; i++) if (f[i] != ' ' && f[i] != 0) return -1;
  return v;
}

static int all_zero(const unsigned char *b) {
  for (int i = 0; i < BLOCK; i++) if (b[i]) return 0;
  return 1;
}

static int checksum_ok(const unsigned char *b) {
  long long want = octal(b + 148, 8);
  long long sum = 0;
  for (int i = 0; i < BLOCK; i++) sum += (i >= 148 && i < 156) ? ' ' : b[i];
  return want == sum;
}

/* relative, no empty, "." or ".." component; one trailing slash (a directory) is dropped */
static int clean_path(char *p, char *why, size_t wl) {
  size_t n = strlen(p);
  if (n > 1 && p[n - 1] == '/') p[--n] = 0;
  if (n == 0) return untar_refuse(why, wl, "an entry has an empty name");
  if (p[0] == '/') return untar_refuse(why, wl, "absolute path refused: %s", p);
  for (char *c = p; c;) {
    char *slash = strchr(c, '/');
    size_t cl = slash ? (size_t)(slash - c) : strlen(c);
    if (cl == 0 || (cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.'))
      return untar_refuse(why, wl, "path with an empty, \".\" or \"..\" component refused: %s", p);
    c = slash ? slash + 1 : NULL;
  }
  return 0;
}

/*
 * The directory `name` in `dir`, never through a symlink. O_NOFOLLOW alone is
 * not enough: gVisor (runsc) follows a symlink that openat opens with
 * O_DIRECTORY|O_NOFOLLOW (a link-then-write archive wrote beneath its link
 * there), so the entry must be a directory by lstat and the opened one must
 * be that very directory (device and inode).
 */
static int open_dir_nofollow(int dir, const char *name) {
  struct stat want, got;
  if (fstatat(dir, name, &want, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (!S_ISDIR(want.st_mode)) { errno = S_ISLNK(want.st_mode) ? ELOOP : ENOTDIR; return -1; }
  int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &got) != 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
    close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}

/* the directory holding `path` below root, each component opened without following links; its fd, and the last name */
static int open_parent(int root, char *path, char **leaf) {
  int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
  char *c = path;
  for (char *slash = strchr(c, '/'); fd >= 0 && slash; slash = strchr(c, '/')) {
    *slash = 0;
    int next = open_dir_nofollow(fd, c);
    *slash = '/';
    close(fd);
    fd = next;
    c = slash + 1;
  }
  *leaf = c;
  return fd;
}

/* pax records "LEN key=value\n": only path and linkpath are known; anything else is refused */
static int pax_path(char *buf, size_t len, char *out, char *link, char *why, size_t wl) {
  size_t off = 0;
  out[0] = 0;
  link[0] = 0;
  while (off < len) {
    char *end;
    errno = 0;
    unsigned long rl = strtoul(buf + off, &end, 10);
    if (errno || end == buf + off || *end != ' ' || rl == 0 || off + rl > len || buf[off + rl - 1] != '\n')
      return untar_refuse(why, wl, "malformed pax record");
    char *kv = end + 1, *eq = memchr(kv, '=', (size_t)(buf + off + rl - 1 - kv));
    if (!eq) return untar_refuse(why, wl, "malformed pax record");
    size_t kl = (size_t)(eq - kv), vl = (size_t)(buf + off + rl - 1 - (eq + 1));
    int is_link = kl == 8 && memcmp(kv, "linkpath", 8) == 0;
    if (!is_link && (kl != 4 || memcmp(kv, "path", 4) != 0))
      return untar_refuse(why, wl, "pax key %.*s refused (only path and linkpath are accepted)", (int)(kl > 64 ? 64 : kl), kv);
    if (vl >= (is_link ? MAX_LINK + 1 : MAX_NAME) || memchr(eq + 1, 0, vl)) return untar_refuse(why, wl, "pax %s too long or with a NUL byte", is_link ? "linkpath" : "path");
    memcpy(is_link ? link : out, eq + 1, vl);
    (is_link ? link : out)[vl] = 0;
    off += rl;
  }
  return 0;
}

/* a file's `size` bytes and the padding to the next block */
static int untar_body(int in, int fd, size_t size, const char *name, char *why, size_t wl) {
  static char buf[64 * 1024];
  size_t left = size, pad = (BLOCK - size % BLOCK) % BLOCK;
  while (left > 0) {
    size_t n = left < sizeof buf ? left : sizeof buf;
    if (read_all(in, buf, n) != 0) return untar_refuse(why, wl, "the archive ended inside %.200s", name);
    if (write_all(fd, buf, n) != 0) return untar_refuse(why, wl, "cannot write %.200s (%s)", name, strerror(errno));
    left -= n;
  }
  if (pad && read_all(in, buf, pad) != 0) return untar_refuse(why, wl, "the archive ended inside %.200s", name);
  return 0;
}

/*
 * A symlink target read from the link's folder (`name`'s parent) must stay
 * below the root: relative, ".." only as a leading run and never more of them
 * than the folder is deep, then plain names (no empty, "." or ".."
 * component; a lone "." is the folder itself). The leading ".." climb real
 * folders this extraction made (O_NOFOLLOW), and a name that is itself a link
 * resolves below the root by the same rule, so no chain of such links leads
 * out: "a/up -> .." with "esc -> a/up/.." would, and is refused. The host
 * writes every target in this form (export-links.ts, path.relative).
 */
static int link_target_ok(const char *name, const char *target, char *why, size_t wl) {
  size_t tl = strlen(target);
  if (tl == 0 || tl > MAX_LINK) return untar_refuse(why, wl, "symlink %.200s: empty target or over %d bytes", name, MAX_LINK);
  if (target[0] == '/') return untar_refuse(why, wl, "symlink %.200s: absolute target refused", name);
  if (strcmp(target, ".") == 0) return 0;
  long depth = 0;
  int named = 0;
  for (const char *c = name; (c = strchr(c, '/')); c++) depth++;
  for (const char *c = target; c;) {
    const char *slash = strchr(c, '/');
    size_t cl = slash ? (size_t)(slash - c) : strlen(c);
    if (cl == 0 || (cl == 1 && c[0] == '.')) return untar_refuse(why, wl, "symlink %.200s: target with an empty or \".\" component refused", name);
    if (cl == 2 && c[0] == '.' && c[1] == '.') {
      if (named) return untar_refuse(why, wl, "symlink %.200s: target with \"..\" after a name refused", name);
      if (--depth < 0) return untar_refuse(why, wl, "symlink %.200s: target leaves the workspace", name);
    } else {
      named = 1;
    }
    c = slash ? slash + 1 : NULL;
  }
  return 0;
}

struct dir_time { char *path; struct timespec mtime; };

/* Extracts the tar on `in` below the directory open as `root`; 0, or -1 with the reason in `why`. */
static int untar(int in, int root, char *why, size_t wl) {
  unsigned char h[BLOCK];
  char pax[MAX_NAME] = "", pax_link[MAX_LINK + 1] = "";
  int have_pax = 0;
  struct dir_time *dirs = NULL;
  size_t ndirs = 0, capdirs = 0;
  int rc = -1;
  why[0] = 0;
  for (;;) {
    if (read_all(in, h, BLOCK) != 0) { untar_refuse(why, wl, "the archive ended before its end blocks"); goto out; }
    if (all_zero(h)) {
      if (have_pax) { untar_refuse(why, wl, "a pax header is followed by the end of the archive"); goto out; }
      if (read_all(in, h, BLOCK) != 0 || !all_zero(h)) { untar_refuse(why, wl, "the archive's end is not two zero blocks"); goto out; }
      break;
    }
    if (!checksum_ok(h)) { untar_refuse(why, wl, "header checksum mismatch"); goto out; }
    if (memcmp(h + 257, "ustar\0" "00", 8) != 0) { untar_refuse(why, wl, "not a ustar header"); goto out; }
    char type = (char)h[156];
    long long size = octal(h + 124, 12), mode = octal(h + 100, 8), mtime = octal(h + 136, 12);
    if (size < 0 || mode < 0 || mtime < 0) { untar_refuse(why, wl, "a size, mode or mtime field is not octal (base-256 sizes are refused)"); goto out; }
    if (type == 'x') {
      if (have_pax || size <= 0 || size > MAX_PAX) { untar_refuse(why, wl, "pax header refused (repeated, empty or over %d bytes)", MAX_PAX); goto out; }
      size_t padded = ((size_t)size + BLOCK - 1) / BLOCK * BLOCK;
      char *p = malloc(padded);
      if (!p || read_all(in, p, padded) != 0) { free(p); untar_refuse(why, wl, "the archive ended inside a pax header"); goto out; }
      int ok = pax_path(p, (size_t)size, pax, pax_link, why, wl);
      free(p);
      if (ok != 0) goto out;
      have_pax = 1;
      continue;
    }
    char name[MAX_NAME];
    if (have_pax && pax[0]) {
      snprintf(name, sizeof name, "%s", pax);
    } else {
      char n100[101], pre[156];
      memcpy(n100, h, 100); n100[100] = 0;
      memcpy(pre, h + 345, 155); pre[155] = 0;
      snprintf(name, sizeof name, "%s%s%s", pre, pre[0] ? "/" : "", n100);
    }
    char target[MAX_LINK + 1];
    if (have_pax && pax_link[0]) {
      snprintf(target, sizeof target, "%s", pax_link);
    } else {
      char l100[101];
      memcpy(l100, h + 157, 100); l100[100] = 0;
      snprintf(target, sizeof target, "%s", l100);
    }
    int had_pax_link = have_pax && pax_link[0];
    have_pax = 0;
    pax[0] = pax_link[0] = 0;
    if (type != '0' && type != 0 && type != '5' && type != '2') {
      untar_refuse(why, wl, "entry type '%c' refused for %.200s (only regular files, directories and symlinks)", type >= 32 && type < 127 ? type : '?', name);
      goto out;
    }
    if (type != '2' && had_pax_link) { untar_refuse(why, wl, "a pax linkpath on an entry that is not a symlink: %.200s", name); goto out; }
    if (clean_path(name, why, wl) != 0) goto out;
    if (mode & 07000) { untar_refuse(why, wl, "setuid, setgid or sticky mode refused: %.200s", name); goto out; }
    if ((type == '5' || type == '2') && size != 0) { untar_refuse(why, wl, "a directory or symlink entry with a size: %.200s", name); goto out; }
    if (type == '2' && link_target_ok(name, target, why, wl) != 0) goto out;
    char *leaf;
    int dfd = open_parent(root, name, &leaf);
    if (dfd < 0) { untar_refuse(why, wl, "the parent of %.200s is not a directory here (%s)", name, strerror(errno)); goto out; }
    struct timespec times[2] = {{(time_t)mtime, 0}, {(time_t)mtime, 0}};
    if (type == '5') {
      if (mkdirat(dfd, leaf, 0700) != 0) {
        struct stat st;
        if (errno != EEXIST || fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
          untar_refuse(why, wl, "cannot make directory %.200s (%s)", name, strerror(errno));
          close(dfd);
          goto out;
        }
      }
      int ok = fchmodat(dfd, leaf, (mode_t)mode, 0);
      close(dfd);
      if (ok != 0) { untar_refuse(why, wl, "cannot set the mode of %.200s (%s)", name, strerror(errno)); goto out; }
      /* a directory's mtime moves while it is filled: set once everything is in */
      if (ndirs == capdirs) {
        if (capdirs >= MAX_DIRS) { untar_refuse(why, wl, "more than %d directories", MAX_DIRS); goto out; }
        struct dir_time *g = realloc(dirs, (capdirs = capdirs ? capdirs * 2 : 64) * sizeof *dirs);
        if (!g) { untar_refuse(why, wl, "out of memory"); goto out; }
        dirs = g;
      }
      if (!(dirs[ndirs].path = strdup(name))) { untar_refuse(why, wl, "out of memory"); goto out; }
      dirs[ndirs++].mtime = times[1];
      continue;
    }
    if (type == '2') {
      /* symlinkat never replaces: a name the archive already made is refused (EEXIST), as for files */
      int ok = symlinkat(target, dfd, leaf) == 0;
      int e = errno;
      if (ok) ok = utimensat(dfd, leaf, times, AT_SYMLINK_NOFOLLOW) == 0, e = errno;
      close(dfd);
      if (!ok) { untar_refuse(why, wl, "cannot make symlink %.200s (%s)", name, strerror(e)); goto out; }
      continue;
    }
    struct statvfs vs;
    if (fstatvfs(dfd, &vs) == 0 && (unsigned long long)size > (unsigned long long)vs.f_bavail * vs.f_frsize) {
      close(dfd);
      untar_refuse(why, wl, "%.200s (%lld bytes) is larger than the space left in the sandbox", name, size);
      goto out;
    }
    int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) { untar_refuse(why, wl, "cannot create %.200s (%s)", name, strerror(errno)); close(dfd); goto out; }
    /* a file cut short is taken out again: nothing half-written stays */
    if (untar_body(in, fd, (size_t)size, name, why, wl) != 0) {
      close(fd);
      unlinkat(dfd, leaf, 0);
      close(dfd);
      goto out;
    }
    close(dfd);
    int ok = fchmod(fd, (mode_t)mode) == 0 && futimens(fd, times) == 0;
    int e = errno;
    close(fd);
    if (!ok) { untar_refuse(why, wl, "cannot set the mode or time of %.200s (%s)", name, strerror(e)); goto out; }
  }
  /* deepest first (entries come parents first), so setting one never moves another */
  for (size_t i = ndirs; i-- > 0;) {
    char *leaf;
    int dfd = open_parent(root, dirs[i].path, &leaf);
    struct timespec t[2] = {dirs[i].mtime, dirs[i].mtime};
    if (dfd < 0 || utimensat(dfd, leaf, t, AT_SYMLINK_NOFOLLOW) != 0) {
      if (dfd >= 0) close(dfd);
      untar_refuse(why, wl, "cannot set the time of %.200s", dirs[i].path);
      goto out;
    }
    close(dfd);
  }
  rc = 0;
out:
  for (size_t i = 0; i < ndirs; i++) free(dirs[i].path);
  free(dirs);
  return rc;
}
#endif
