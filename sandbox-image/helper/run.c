/*
 * run: requests to the spawner over its socket. For a warm sandbox the host
 * execs `--settle` / `--clear` between two commands. `run -- ARGV` is the
 * relay for a plain `docker exec` (the daemon itself sends commands over its
 * attach to the spawner's stdin instead): it runs no candidate code, hands
 * argv, cwd, environment and its own fds 0/1/2 to the spawner (the
 * container's main process, inside the tree the runtime's seccomp filter
 * covers; under gVisor an exec'd process is NOT filtered), waits for the
 * exit status and exits with it.
 *   run -- ARGV...  run a command (cwd and env are this process's own)
 *   run --clear     kill leftovers, empty /tmp and /workspace (warm sandbox)
 *   run --settle    kill leftovers, empty /tmp; keep /workspace if no command changed it, else empty it
 *   run --changed MAXPATHS
 *                   what the last command created, modified or deleted under /workspace (asked
 *                   after it ended and before --settle, which may empty /workspace): hex-encoded
 *                   relative paths, one a line, sorted, at most MAXPATHS, then "end N CUT"; exit
 *                   CHANGED_UNAVAILABLE with the reason on stderr when there is no usable start
 *                   fingerprint. Changes nothing; see spawn-proto.h.
 *   run --read-report PATH MAXBYTES
 *                   the report file a test command wrote (e.g. JUnit XML in /tmp, a tmpfs the
 *                   Engine's archive API cannot read, also under gVisor) as bytes on stdout. Runs
 *                   no command and asks nothing of the spawner. Only a regular file is read, the
 *                   last path component is never followed (O_NOFOLLOW), a FIFO cannot block the
 *                   open (O_NONBLOCK), and at most MAXBYTES+1 bytes are read: exit 0 (read),
 *                   REPORT_MISSING, REPORT_TOO_LARGE (size on stderr) or REPORT_UNREADABLE
 *                   (why on stderr); see spawn-proto.h.
 * If the spawner cannot be reached or drops the connection without an
 * answer, it prints "mini-agent-run: spawner lost" on stderr and exits
 * RELAY_LOST.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "spawn-proto.h"

extern char **environ;

static void lost(const char *why) {
  dprintf(2, "mini-agent-run: spawner lost (%s: %s)\n", why, strerror(errno));
  _exit(RELAY_LOST);
}

static void write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) lost("write");
    p += w;
    n -= (size_t)w;
  }
}

/* write_all for --read-report: a failed write is the read-back's failure, not a lost spawner */
static int put_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_report(const char *path, const char *max_text) {
  char *end = NULL;
  errno = 0;
  unsigned long long max = strtoull(max_text, &end, 10);
  if (path[0] != '/' || errno != 0 || end == max_text || *end != '\0' || max_text[0] == '-' || max > (1ull << 30)) {
    dprintf(2, "usage: run --read-report /ABSOLUTE/PATH MAXBYTES (at most 1 GiB)\n");
    return 2;
  }
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return REPORT_MISSING;
    /* O_NOFOLLOW on a symlink: ELOOP (EMLINK on some kernels) */
    if (errno == ELOOP || errno == EMLINK) { dprintf(2, "a symbolic link, not a regular file\n"); return REPORT_UNREADABLE; }
    dprintf(2, "open: %s\n", strerror(errno));
    return REPORT_UNREADABLE;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) { dprintf(2, "fstat: %s\n", strerror(errno)); return REPORT_UNREADABLE; }
  if (!S_ISREG(st.st_mode)) { dprintf(2, "not a regular file\n"); return REPORT_UNREADABLE; }
  if ((unsigned long long)st.st_size > max) { dprintf(2, "%lld\n", (long long)st.st_size); return REPORT_TOO_LARGE; }
  /* the size may change under us (a leftover writer): read MAX+1 at most and decide on what was read */
  size_t cap = (size_t)max + 1, got = 0;
  char *buf = malloc(cap > 0 ? cap : 1);
  if (!buf) { dprintf(2, "out of memory\n"); return REPORT_UNREADABLE; }
  while (got < cap) {
    ssize_t r = read(fd, buf + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { dprintf(2, "read: %s\n", strerror(errno)); return REPORT_UNREADABLE; }
    if (r == 0) break;
    got += (size_t)r;
  }
  if (got > max) { dprintf(2, "%zu\n", got); return REPORT_TOO_LARGE; }
  if (put_all(1, buf, got) != 0) { dprintf(2, "write: %s\n", strerror(errno)); return REPORT_UNREADABLE; }
  return 0;
}

int main(int argc, char **argv) {
  /* same uid as candidate code: not dumpable, so it cannot be written through /proc/PID/mem */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (argc >= 2 && strcmp(argv[1], "--read-report") == 0) {
    if (argc != 4) {
      dprintf(2, "usage: run --read-report /ABSOLUTE/PATH MAXBYTES\n");
      return 2;
    }
    return read_report(argv[2], argv[3]);
  }
  int settle = argc == 2 && strcmp(argv[1], "--settle") == 0;
  int clear = settle || (argc == 2 && strcmp(argv[1], "--clear") == 0);
  /* the spawner checks MAXPATHS itself: it is the one that bounds the list */
  int changed = argc == 3 && strcmp(argv[1], "--changed") == 0;
  if (!clear && !changed && (argc < 3 || strcmp(argv[1], "--") != 0)) {
    dprintf(2, "usage: run -- ARGV... | run --clear | run --settle | run --changed MAXPATHS | run --read-report PATH MAXBYTES\n");
    return 2;
  }
  for (int fd = 0; fd < 3; fd++) {
    if (fcntl(fd, F_GETFD) < 0) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) { dup2(n, fd); close(n); }
    }
  }
  uint32_t type = settle ? SPAWN_SETTLE : clear ? SPAWN_CLEAR : changed ? SPAWN_CHANGED : SPAWN_RUN;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "/");
  /* --changed: argv[2] (MAXPATHS) is the one argument, as for a command */
  uint32_t nargs = clear ? 0 : changed ? 1 : (uint32_t)(argc - 2), nenv = 0;
  size_t len = 8 + strlen(cwd) + 1;
  for (uint32_t i = 0; i < nargs; i++) len += strlen(argv[2 + i]) + 1;
  for (char **e = environ; e && *e; e++, nenv++) len += strlen(*e) + 1;
  if (len > SPAWN_MAX_PAYLOAD) {
    dprintf(2, "mini-agent-run: argv and environment too large\n");
    return 2;
  }
  char *buf = malloc(len), *p = buf;
  if (!buf) return 2;
  memcpy(p, &nargs, 4); memcpy(p + 4, &nenv, 4); p += 8;
  p = stpcpy(p, cwd) + 1;
  for (uint32_t i = 0; i < nargs; i++) p = stpcpy(p, argv[2 + i]) + 1;
  for (char **e = environ; e && *e; e++) p = stpcpy(p, *e) + 1;

  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) lost("socket");
  struct sockaddr_un addr;
  socklen_t alen = spawn_address(&addr);
  /* the spawner binds its socket right after the container starts: wait for it, bounded */
  struct timespec pause = {0, 5 * 1000 * 1000};
  for (int i = 0;; i++) {
    if (connect(s, (struct sockaddr *)&addr, alen) == 0) break;
    if (i >= 2000 || (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)) lost("connect");
    nanosleep(&pause, NULL);
  }
  struct spawn_header h = {SPAWN_MAGIC, type, (uint32_t)len};
  int fds[3] = {0, 1, 2};
  char cbuf[CMSG_SPACE(sizeof fds)];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec iov = {&h, sizeof h};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t sent;
  do sent = sendmsg(s, &m, 0); while (sent < 0 && errno == EINTR);
  if (sent != (ssize_t)sizeof h) lost("sendmsg");
  write_all(s, buf, len);
  struct spawn_answer a;
  size_t got = 0;
  while (got < sizeof a) {
    ssize_t r = read(s, (char *)&a + got, sizeof a - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { errno = r == 0 ? ECONNRESET : errno; lost("read"); }
    got += (size_t)r;
  }
  if (a.magic != SPAWN_MAGIC) { errno = EPROTO; lost("answer"); }
  return a.status & 0xff;
}
