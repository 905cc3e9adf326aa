/*
 * spawner: the main process of every sandbox container (under the init).
 * Under gVisor with --oci-seccomp the OCI seccomp filter covers only the
 * container's init process tree; a `docker exec`'d process runs unfiltered.
 * So no command is started by `docker exec` directly: the host attaches to
 * this process's stdin once and sends requests there (serve_attached), or a
 * relay (run.c, for a plain `docker exec`) hands argv/cwd/env and its fds
 * 0/1/2 over a Unix socket; this process forks and execs the command, which
 * inherits the seccomp filter and no_new_privs. When the command exits,
 * every remaining process of the command tree (detached grandchildren
 * included: orphans come to this process as child subreaper, or to the init
 * where the runtime refuses that) is SIGKILLed and reaped before the status
 * goes back. Same code path on runc and runsc.
 * Between two commands of a warm sandbox the host asks it to settle: kill
 * leftovers and empty /tmp, so every command starts with a /tmp that holds
 * only the image's seed (tmp-seed.h; empty but for the go family).
 * One request at a time; a connection from a process of the command tree
 * (code of a command) or from a process already gone is refused, so a command
 * cannot queue another that would outlive it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spawn-proto.h"
#include "untar.h"
#include "tmp-seed.h"

#define MAX_PROCS 65536

static pid_t self;

static int numeric(const char *s) {
  if (!*s) return 0;
  for (; *s; s++) if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* state letter and parent pid from /proc/PID/stat (fields after the last ')') */
static int proc_stat(int pid, char *state, int *ppid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p || sscanf(p + 2, "%c %d", state, ppid) != 2) return -1;
  return 0;
}

static int pids[MAX_PROCS], ppids[MAX_PROCS];
static char states[MAX_PROCS];

static int snapshot(void) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) && n < MAX_PROCS) {
    if (!numeric(e->d_name)) continue;
    int pid = atoi(e->d_name);
    if (proc_stat(pid, &states[n], &ppids[n]) == 0) pids[n++] = pid;
  }
  if (d) closedir(d);
  return n;
}

/*
 * Is `pid` in the command tree: a (transitive) descendant of this process, or
 * of the init (pid 1)? Orphans come to this process where it could become a
 * child subreaper (runc) and to the init where it could not (gVisor release
 * 20221219 answers PR_SET_CHILD_SUBREAPER with EINVAL); the init's only child
 * of its own is this process. `docker exec`'d processes (the relays) have no
 * parent inside the container (ppid 0) and are never in the tree.
 */
static int is_descendant(int pid, int n) {
  for (int hops = 0; hops < 4096 && pid > 1; hops++) {
    int parent = -1;
    for (int i = 0; i < n; i++) if (pids[i] == pid) { parent = ppids[i]; break; }
    if (parent == self || parent == 1) return pid != self;
    if (parent <= 0 || parent == pid) return 0;
    pid = parent;
  }
  return 0;
}

static void reap(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {}
}

/* SIGKILL every live descendant until none is left; returns how many are still alive */
static int kill_descendants(void) {
  struct timespec pause = {0, 5 * 1000 * 1000};
  for (int round = 0; round < 400; round++) {
    reap();
    int n = snapshot(), live = 0;
    for (int i = 0; i < n; i++) {
      if (pids[i] == self || states[i] == 'Z' || !is_descendant(pids[i], n)) continue;
      kill(pids[i], SIGKILL);
      live++;
    }
    if (live == 0) return 0;
    nanosleep(&pause, NULL);
  }
  reap();
  int n = snapshot(), live = 0;
  for (int i = 0; i < n; i++) if (pids[i] != self && states[i] != 'Z' && is_descendant(pids[i], n)) live++;
  return live;
}

static int dir_empty(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d))) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  return empty;
}

/*
 * Removes everything inside the directory open as `fd`; 0 when all of it went.
 * Everything in it belongs to the sandbox user (there is no other), so a
 * directory a command made unreadable or unwritable (chmod 000, at any depth)
 * is opened up before it is read, and the sticky bit of /tmp does not stand in
 * the way. Processes were killed before. Nesting deeper than the fd limit
 * allows is left, and then the caller's emptiness check fails (the sandbox is
 * not reused).
 */
static int empty_at(int fd) {
  int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    if (dfd >= 0) close(dfd);
    return -1;
  }
  /* names first: removing entries while reading the directory may skip some */
  char **names = NULL;
  size_t n = 0, cap = 0;
  int failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
      if (!grown) { failed = 1; break; }
      names = grown;
    }
    if (!(names[n] = strdup(e->d_name))) { failed = 1; break; }
    n++;
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
      if ((st.st_mode & 0700) != 0700) fchmodat(fd, names[i], (st.st_mode & 07777) | 0700, 0);
      int sub = openat(fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 || empty_at(sub) != 0) failed = 1;
      if (sub >= 0) close(sub);
      if (unlinkat(fd, names[i], AT_REMOVEDIR) != 0) failed = 1;
    } else if (unlinkat(fd, names[i], 0) != 0) {
      failed = 1;
    }
    free(names[i]);
  }
  free(names);
  return failed ? -1 : 0;
}

/* Removes everything below the mount point `dir` (which stays); 1 when it is then empty. */
static int empty_dir(const char *dir) {
  struct stat st;
  /* /workspace is the sandbox user's own: a command may have closed it too */
  if (stat(dir, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0700) != 0700) chmod(dir, (st.st_mode & 07777) | 0700);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  empty_at(fd);
  close(fd);
  return dir_empty(dir);
}

/*
 * A counter of the sandbox's own cgroup (Docker mounts it read-only at
 * /sys/fs/cgroup): the value of `key` in the first readable file of `paths`
 * ("key N" lines), or -1 when none is readable (gVisor has no cgroupfs).
 */
static long cgroup_counter(const char *const paths[], const char *key) {
  size_t kl = strlen(key);
  for (int i = 0; paths[i]; i++) {
    int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
      if (strncmp(line, key, kl) == 0 && line[kl] == ' ') return strtol(line + kl + 1, NULL, 10);
    }
  }
  return -1;
}

/* cgroup v2 first, then v1 */
static const char *const PIDS_EVENTS[] = {"/sys/fs/cgroup/pids.events", "/sys/fs/cgroup/pids/pids.events", NULL};
static const char *const MEMORY_EVENTS[] = {"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control", NULL};

struct limit_counts { long pids_max, oom_kill; };

static struct limit_counts limit_counts(void) {
  struct limit_counts c = {cgroup_counter(PIDS_EVENTS, "max"), cgroup_counter(MEMORY_EVENTS, "oom_kill")};
  return c;
}

static long counted_between(long before, long after) {
  return before < 0 || after < before ? -1 : after - before;
}

/*
 * Fingerprint of /workspace: one record per entry (path, inode, mode, size,
 * mtime, ctime) in walk order. Any create, delete, rename, write, chmod or
 * utimes changes a ctime (the kernel sets it; code cannot choose it), so an
 * equal fingerprint means the tree is as it was.
 */
static char *fp_buf;
static size_t fp_len, fp_cap;
static int fp_failed;
static struct timespec fp_newest;

static int fp_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)flag; (void)ftw;
  size_t pl = strlen(p) + 1, need = pl + 6 * sizeof(uint64_t);
  if (fp_len + need > fp_cap) {
    size_t cap = fp_cap ? fp_cap * 2 : 65536;
    while (cap < fp_len + need) cap *= 2;
    char *nb = realloc(fp_buf, cap);
    if (!nb) { fp_failed = 1; return 1; }
    fp_buf = nb;
    fp_cap = cap;
  }
  uint64_t rec[6] = {(uint64_t)sb->st_ino, (uint64_t)sb->st_mode, (uint64_t)sb->st_size,
                     (uint64_t)sb->st_mtim.tv_sec * 1000000000u + (uint64_t)sb->st_mtim.tv_nsec,
                     (uint64_t)sb->st_ctim.tv_sec * 1000000000u + (uint64_t)sb->st_ctim.tv_nsec, (uint64_t)flag};
  memcpy(fp_buf + fp_len, p, pl);
  memcpy(fp_buf + fp_len + pl, rec, sizeof rec);
  fp_len += need;
  if (sb->st_ctim.tv_sec > fp_newest.tv_sec || (sb->st_ctim.tv_sec == fp_newest.tv_sec && sb->st_ctim.tv_nsec > fp_newest.tv_nsec)) fp_newest = sb->st_ctim;
  return 0;
}

/* fingerprint into a fresh buffer (caller frees); NULL when the walk failed */
static char *fingerprint(size_t *len) {
  fp_buf = NULL; fp_len = fp_cap = 0; fp_failed = 0;
  fp_newest.tv_sec = 0; fp_newest.tv_nsec = 0;
  if (nftw("/workspace", fp_entry, 32, FTW_PHYS) != 0 || fp_failed) {
    free(fp_buf);
    return NULL;
  }
  *len = fp_len;
  return fp_buf ? fp_buf : calloc(1, 1);
}

/* the fingerprint taken when the last command started (NULL: none, or unusable) */
static char *baseline;
static size_t baseline_len;

static void take_baseline(void) {
  free(baseline);
  baseline = fingerprint(&baseline_len);
  if (!baseline) return;
  /* timestamps are set from a coarse clock: wait until it has moved past the newest
   * ctime, so a change the command makes cannot carry the same ctime as before */
  struct timespec now, pause = {0, 1000 * 1000};
  for (int i = 0; i < 50; i++) {
    if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0) { nanosleep(&pause, NULL); continue; }
    if (now.tv_sec > fp_newest.tv_sec || (now.tv_sec == fp_newest.tv_sec && now.tv_nsec > fp_newest.tv_nsec)) return;
    nanosleep(&pause, NULL);
  }
  free(baseline);
  baseline = NULL;
}

static int workspace_unchanged(void) {
  if (!baseline) return 0;
  size_t len;
  char *now = fingerprint(&len);
  int same = now && len == baseline_len && memcmp(now, baseline, len) == 0;
  free(now);
  return same;
}

static void answer(int conn, int status, int leftovers) {
  struct spawn_answer a = {SPAWN_MAGIC, status, (uint32_t)leftovers};
  ssize_t w;
  do w = write(conn, &a, sizeof a); while (w < 0 && errno == EINTR);
}

/* argv[0] without a slash is looked up in the request's PATH, as `docker exec` does */
static void exec_command(char **argv, char **envp) {
  if (strchr(argv[0], '/')) {
    execve(argv[0], argv, envp);
    return;
  }
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **e = envp; *e; e++) if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
  char full[4096];
  int saved = ENOENT;
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t dl = end ? (size_t)(end - p) : strlen(p);
    if (dl > 0 && snprintf(full, sizeof full, "%.*s/%s", (int)dl, p, argv[0]) < (int)sizeof full) {
      execve(full, argv, envp);
      if (errno != ENOENT) saved = errno;
    }
    if (!end) break;
    p = end + 1;
  }
  errno = saved;
}

/* where the answer goes: the relay's connection, or (attached) a marker on stdout and stderr */
struct reply { int conn; const char *nonce; };

/* what the attached marker adds to the status (spawn-proto.h); NO_FACTS where nothing ran */
struct run_facts { int signal; long pids_max, oom_kill; };
static const struct run_facts NO_FACTS = {0, -1, -1};

static void reply_with(struct reply *rp, int status, int leftovers, struct run_facts f) {
  if (rp->conn >= 0) {
    answer(rp->conn, status, leftovers);
    return;
  }
  /* the command's output went to these same pipes before this line: the host reads up to the marker */
  dprintf(1, "%cmini-agent-end:%s:%d:%d:%ld:%ld%c", 0, rp->nonce, status, f.signal, f.pids_max, f.oom_kill, 0);
  dprintf(2, "%cmini-agent-end:%s%c", 0, rp->nonce, 0);
}

/* the fields after a fingerprint record's path: ino, mode, size, mtime, ctime, nftw flag */
static void fp_fields(const char *path, uint64_t f[6]) {
  memcpy(f, path + strlen(path) + 1, 6 * sizeof(uint64_t));
}

static int by_path(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* the record paths of a fingerprint, sorted bytewise (strcmp compares as unsigned char); NULL when out of memory */
static const char **fp_sorted(const char *buf, size_t len, size_t *count) {
  size_t n = 0;
  for (size_t off = 0; off < len; off += strlen(buf + off) + 1 + 6 * sizeof(uint64_t)) n++;
  const char **v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return NULL;
  size_t i = 0;
  for (size_t off = 0; off < len; off += strlen(buf + off) + 1 + 6 * sizeof(uint64_t)) v[i++] = buf + off;
  qsort(v, n, sizeof *v, by_path);
  *count = n;
  return v;
}

/*
 * Was an entry present in both walks changed? A type change always counts. A
 * directory counts only when it was replaced (another inode) or its mode
 * changed: its times move whenever a child is created or deleted, and that
 * child is listed itself. Anything else: any field.
 */
static int entry_changed(const char *was, const char *now) {
  uint64_t a[6], b[6];
  fp_fields(was, a);
  fp_fields(now, b);
  if ((a[1] & S_IFMT) != (b[1] & S_IFMT) || a[5] != b[5]) return 1;
  if (S_ISDIR(a[1])) return a[0] != b[0] || a[1] != b[1];
  return memcmp(a, b, 5 * sizeof(uint64_t)) != 0;
}

/*
 * Is `path` (only in the start walk) below a directory the walk now could not
 * read (FTW_DNR: the command took its read permission)? Then it is hidden, not
 * known to be deleted: the directory is listed (its mode changed), its former
 * children are not claimed gone.
 */
static int hidden_now(const char *path, const char **now, size_t n) {
  char buf[4096];
  size_t len = strlen(path);
  if (len >= sizeof buf) return 0;
  memcpy(buf, path, len + 1);
  for (char *slash = strrchr(buf, '/'); slash && slash > buf; slash = strrchr(buf, '/')) {
    *slash = 0;
    const char *key = buf;
    const char **hit = bsearch(&key, now, n, sizeof *now, by_path);
    if (hit) {
      uint64_t f[6];
      fp_fields(*hit, f);
      return f[5] == FTW_DNR;
    }
  }
  return 0;
}

/* output of a changed list: at most CHANGED_MAX_OUTPUT bytes of hex lines plus the end line */
struct changed_out { char *buf; size_t len; size_t lines, max_lines; int cut; };

static void changed_add(struct changed_out *o, const char *path) {
  static const char hex[] = "0123456789abcdef";
  /* past "/workspace/"; the root itself (chmod'ed or replaced) is "." */
  const char *rel = strcmp(path, "/workspace") == 0 ? "." : path + sizeof "/workspace";
  size_t rl = strlen(rel), need = 2 * rl + 1;
  if (o->cut || o->lines >= o->max_lines || o->len + need > CHANGED_MAX_OUTPUT) {
    o->cut = 1;
    return;
  }
  for (size_t i = 0; i < rl; i++) {
    o->buf[o->len++] = hex[(unsigned char)rel[i] >> 4];
    o->buf[o->len++] = hex[(unsigned char)rel[i] & 15];
  }
  o->buf[o->len++] = '\n';
  o->lines++;
}

static int put_fd(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/*
 * SPAWN_CHANGED: the paths the last command created, modified or deleted under
 * /workspace (spawn-proto.h has the format), from the fingerprint taken when
 * it started and a walk now. Changes nothing: the baseline stays for settle.
 */
static void serve_changed(const char *max_text, int out, int err, struct reply *rp) {
  char *end = NULL;
  errno = 0;
  unsigned long max = strtoul(max_text, &end, 10);
  if (errno != 0 || end == max_text || *end != '\0' || max_text[0] == '-' || max < 1 || max > CHANGED_MAX_PATHS) {
    dprintf(err, "MAXPATHS must be a whole number from 1 to %u\n", CHANGED_MAX_PATHS);
    reply_with(rp, 2, 0, NO_FACTS);
    return;
  }
  if (!baseline) {
    dprintf(err, "no start fingerprint of /workspace (no command ran since the sandbox was emptied, or its tree could not be walked)\n");
    reply_with(rp, CHANGED_UNAVAILABLE, 0, NO_FACTS);
    return;
  }
  size_t now_len, nw = 0, nn = 0;
  char *now = fingerprint(&now_len);
  const char **was = NULL, **is = NULL;
  struct changed_out o = {malloc(CHANGED_MAX_OUTPUT + 64), 0, 0, max, 0};
  if (!now || !o.buf || !(was = fp_sorted(baseline, baseline_len, &nw)) || !(is = fp_sorted(now, now_len, &nn))) {
    dprintf(err, "%s\n", now ? "out of memory while comparing /workspace" : "/workspace could not be walked after the command");
    reply_with(rp, CHANGED_UNAVAILABLE, 0, NO_FACTS);
  } else {
    size_t i = 0, j = 0;
    while (i < nw || j < nn) {
      int c = i == nw ? 1 : j == nn ? -1 : strcmp(was[i], is[j]);
      const char *path = c < 0 ? was[i] : is[j];
      if (c < 0 ? !hidden_now(was[i], is, nn) : c > 0 || entry_changed(was[i], is[j])) changed_add(&o, path);
      if (c <= 0) i++;
      if (c >= 0) j++;
    }
    o.len += (size_t)snprintf(o.buf + o.len, 64, "end %zu %d\n", o.lines, o.cut);
    if (put_fd(out, o.buf, o.len) != 0) {
      dprintf(err, "the list could not be written\n");
      reply_with(rp, CHANGED_UNAVAILABLE, 0, NO_FACTS);
    } else {
      reply_with(rp, 0, 0, NO_FACTS);
    }
  }
  free(was);
  free(is);
  free(now);
  free(o.buf);
}

static void serve(struct spawn_header h, char *buf, int fds[3], struct reply *rp, char **merge_env);

static void handle(int conn) {
  struct ucred cred;
  socklen_t cl = sizeof cred;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) return;
  int n = snapshot();
  if (kill(cred.pid, 0) != 0 || is_descendant(cred.pid, n)) return;

  struct spawn_header h;
  int fds[3] = {-1, -1, -1};
  char cbuf[CMSG_SPACE(sizeof fds)];
  struct iovec iov = {&h, sizeof h};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  ssize_t r;
  do r = recvmsg(conn, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL); while (r < 0 && errno == EINTR);
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof fds)) memcpy(fds, CMSG_DATA(c), sizeof fds);
  }
  char *buf = NULL;
  if (r == (ssize_t)sizeof h && h.magic == SPAWN_MAGIC && h.length >= 9 && h.length <= SPAWN_MAX_PAYLOAD && fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 &&
      (buf = malloc(h.length + 1)) != NULL && read_all(conn, buf, h.length) == 0) {
    buf[h.length] = 0;
    struct reply rp = {conn, NULL};
    serve(h, buf, fds, &rp, NULL);
  }
  for (int i = 0; i < 3; i++) if (fds[i] >= 0) close(fds[i]);
  free(buf);
}

/* env of the request, then every name of `base` it does not set (what `docker exec` does with the container's env) */
static char **merged_env(char **req, uint32_t n, char **base) {
  size_t nb = 0;
  for (char **e = base; e && *e; e++) nb++;
  char **out = calloc(n + nb + 1, sizeof *out);
  if (!out) return NULL;
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) out[k++] = req[i];
  for (char **e = base; e && *e; e++) {
    size_t nl = strcspn(*e, "=");
    int set = 0;
    for (uint32_t i = 0; i < n && !set; i++) set = strncmp(req[i], *e, nl) == 0 && req[i][nl] == '=';
    if (!set) out[k++] = *e;
  }
  return out;
}

/* whether /tmp holds the image's seed since it was last emptied (tmp-seed.h) */
static int tmp_seeded;

static void serve(struct spawn_header h, char *buf, int fds[3], struct reply *rp, char **merge_env) {
  int settle = h.type == SPAWN_SETTLE;
  if (settle) {
    int left = kill_descendants();
    if (left) {
      dprintf(fds[2], "mini-agent-spawner: %d processes could not be killed\n", left);
      reply_with(rp, 1, left, NO_FACTS);
      return;
    }
    tmp_seeded = 0;
    if (!empty_dir("/tmp")) {
      dprintf(fds[2], "mini-agent-spawner: /tmp could not be emptied\n");
      reply_with(rp, 1, 0, NO_FACTS);
      return;
    }
    if (workspace_unchanged()) {
      reply_with(rp, 0, 0, NO_FACTS);
      return;
    }
    h.type = SPAWN_CLEAR;
  }
  if (h.type == SPAWN_CLEAR) {
    free(baseline);
    baseline = NULL;
    int left = kill_descendants();
    int empty = empty_dir("/workspace");
    int tmp_empty = empty_dir("/tmp");
    tmp_seeded = 0;
    if (!empty) dprintf(fds[2], "mini-agent-spawner: /workspace could not be emptied\n");
    if (!tmp_empty) dprintf(fds[2], "mini-agent-spawner: /tmp could not be emptied\n");
    if (left) dprintf(fds[2], "mini-agent-spawner: %d processes could not be killed\n", left);
    reply_with(rp, left == 0 && empty && tmp_empty ? (settle ? SETTLE_CLEARED : 0) : 1, left, NO_FACTS);
    return;
  }
  if (h.type == SPAWN_CHANGED) {
    /* payload: {argc, envc} cwd then argv[0] = MAXPATHS (buf is NUL-terminated at h.length) */
    uint32_t argc;
    memcpy(&argc, buf, 4);
    char *cwd_end = buf + 8 + strlen(buf + 8) + 1;
    serve_changed(argc == 1 && cwd_end < buf + h.length ? cwd_end : "", fds[1], fds[2], rp);
    return;
  }
  if (h.type != SPAWN_RUN) return;

  uint32_t argc, envc;
  memcpy(&argc, buf, 4);
  memcpy(&envc, buf + 4, 4);
  if (argc == 0 || argc > h.length || envc > h.length) return;
  char **argv = calloc(argc + 1, sizeof *argv), **envp = calloc(envc + 1, sizeof *envp);
  if (!argv || !envp) return;
  char *p = buf + 8, *end = buf + h.length;
  char *cwd = p;
  p += strlen(p) + 1;
  for (uint32_t i = 0; i < argc + envc; i++) {
    if (p >= end) { free(argv); free(envp); return; }
    if (i < argc) argv[i] = p; else envp[i - argc] = p;
    p += strlen(p) + 1;
  }

  char **use_env = envp;
  if (merge_env) {
    use_env = merged_env(envp, envc, merge_env);
    if (!use_env) { free(argv); free(envp); return; }
  }
  if (!tmp_seeded) {
    /* a command without its seed still runs (a go build from an empty cache), and is told why it is slow */
    if (seed_tmp() != 0) dprintf(fds[2], "mini-agent-spawner: /tmp could not be seeded from %s: %s\n", TMP_SEED, strerror(errno));
    tmp_seeded = 1;
  }
  take_baseline();
  struct limit_counts before = limit_counts();
  pid_t child = fork();
  if (child == 0) {
    /* own session and process group, default signals, the relay's fds as 0/1/2 */
    setsid();
    umask(022);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int i = 0; i < 3; i++) if (dup2(fds[i], i) < 0) _exit(126);
    if (chdir(cwd) != 0) {
      dprintf(2, "mini-agent-spawner: chdir %s: %s\n", cwd, strerror(errno));
      _exit(126);
    }
    exec_command(argv, use_env);
    int err = errno;
    dprintf(2, "mini-agent-spawner: exec %s: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  if (use_env != envp) free(use_env);
  free(argv);
  free(envp);
  for (int i = 0; i < 3; i++) { close(fds[i]); fds[i] = -1; }
  if (child < 0) {
    reply_with(rp, 126, 0, NO_FACTS);
    return;
  }
  int status = 0;
  for (;;) {
    pid_t w = waitpid(-1, &status, 0);
    if (w == child) break;
    if (w < 0 && errno != EINTR) { status = 0; break; }
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 126;
  int left = kill_descendants();
  /* read after the sweep: whatever the command's tree ran into is counted by now */
  struct limit_counts after = limit_counts();
  struct run_facts facts = {WIFSIGNALED(status) ? WTERMSIG(status) : 0, counted_between(before.pids_max, after.pids_max),
                            counted_between(before.oom_kill, after.oom_kill)};
  reply_with(rp, code, left, facts);
}

/* the nonce that opens an attached request's payload; -1 when it is not 32 hex digits */
static int read_nonce(char nonce[33]) {
  if (read_all(0, nonce, 32) != 0) return -1;
  nonce[32] = 0;
  for (int i = 0; i < 32; i++) if (!isxdigit((unsigned char)nonce[i])) return -1;
  return 0;
}

/*
 * SPAWN_PUT: the workspace's tar, read from stdin and extracted here, as the
 * sandbox user inside the sandbox, instead of by the engine (root, outside):
 * dockerd's putArchive re-executes itself per call, most of a pooled run's
 * overhead (sandbox-image/README.md). Returns -1 when the channel is out of step.
 */
static int serve_put(struct spawn_header h) {
  char nonce[33];
  if (h.length != 32 || read_nonce(nonce) != 0) return -1;
  struct reply rp = {-1, nonce};
  char why[512];
  int root = open("/workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int ok = root >= 0 && untar(0, root, why, sizeof why) == 0;
  if (root < 0) snprintf(why, sizeof why, "cannot open /workspace (%s)", strerror(errno));
  if (root >= 0) close(root);
  if (!ok) dprintf(2, "mini-agent-spawner: workspace archive refused: %s\n", why);
  reply_with(&rp, ok ? 0 : PUT_REFUSED, 0, NO_FACTS);
  return ok ? 0 : -1;
}

/*
 * The host's command channel: it attached to this process's stdin once and
 * sends requests there (the same framing, type SPAWN_RUN, payload prefixed by
 * a 32-character nonce); the command writes straight into this process's
 * stdout/stderr (the attach stream) with /dev/null as stdin, and the end is a
 * NUL-framed marker carrying the nonce (and the status, on stdout). Commands
 * cannot forge it: they never see the nonce (this process is not dumpable and
 * its stdin is not theirs). Saves a `docker exec` per command.
 * Returns -1 when stdin is closed or out of step (then it is not read again).
 */
static int serve_attached(void) {
  struct spawn_header h;
  if (read_all(0, &h, sizeof h) != 0 || h.magic != SPAWN_MAGIC) return -1;
  if (h.type == SPAWN_PUT) return serve_put(h);
  if (h.type != SPAWN_RUN || h.length < 32 + 9 || h.length > SPAWN_MAX_PAYLOAD) return -1;
  char *buf = malloc(h.length + 1);
  if (!buf || read_all(0, buf, h.length) != 0) { free(buf); return -1; }
  buf[h.length] = 0;
  char nonce[33];
  memcpy(nonce, buf, 32);
  nonce[32] = 0;
  for (int i = 0; i < 32; i++) if (!isxdigit((unsigned char)nonce[i])) { free(buf); return -1; }
  int fds[3] = {open("/dev/null", O_RDONLY | O_CLOEXEC), fcntl(1, F_DUPFD_CLOEXEC, 3), fcntl(2, F_DUPFD_CLOEXEC, 3)};
  struct reply rp = {-1, nonce};
  h.length -= 32;
  extern char **environ;
  if (fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0) serve(h, buf + 32, fds, &rp, environ);
  else reply_with(&rp, 126, 0, NO_FACTS);
  for (int i = 0; i < 3; i++) if (fds[i] >= 0) close(fds[i]);
  free(buf);
  return 0;
}

/*
 * The kill sweep covers every child of pid 1: only sane inside the sandbox's
 * own PID namespace. Refuse to run anywhere else (as root, or not directly
 * under Docker's init), so a spawner started by mistake on a host can never
 * signal the host's processes.
 */
static int inside_sandbox(void) {
  char buf[256];
  int fd = open("/proc/1/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  return geteuid() != 0 && getuid() != 0 && getppid() == 1 && strcmp(buf, "/sbin/docker-init") == 0;
}

int main(void) {
  if (!inside_sandbox()) {
    fprintf(stderr, "mini-agent-spawner: runs only as a sandbox container's main process (non-root, under /sbin/docker-init as pid 1)\n");
    return 1;
  }
  self = getpid();
  /* best effort: where it fails, orphans go to the init and is_descendant still covers them */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  umask(077);
  /* abstract: no file in /tmp for a command to remove or replace, and nothing to keep when /tmp is emptied */
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr;
  socklen_t alen = spawn_address(&addr);
  if (s < 0 || bind(s, (struct sockaddr *)&addr, alen) != 0 || listen(s, 16) != 0) {
    perror("mini-agent-spawner: listen");
    return 1;
  }
  /* SIGTERM (docker stop) ends the container */
  int attached = 1;
  for (;;) {
    struct pollfd pf[2] = {{s, POLLIN, 0}, {0, POLLIN, 0}};
    if (poll(pf, attached ? 2 : 1, -1) < 0) continue;
    if (attached && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      /* the host's channel on stdin: stdin closed, or a request that does not parse, ends that way */
      if (serve_attached() != 0) attached = 0;
      reap();
      continue;
    }
    if (!(pf[0].revents & POLLIN)) continue;
    int conn = accept4(s, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      perror("mini-agent-spawner: accept");
      return 1;
    }
    /* a relay sends its request at once: never let a silent peer hold the spawner */
    struct timeval tv = {10, 0};
    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    handle(conn);
    close(conn);
    reap();
  }
}
