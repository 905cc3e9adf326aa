/*
 * reset: runs inside a warm sandbox after every exec. SIGKILLs every process
 * except PID 1 (the init), the keepalive and itself, so detached grandchildren
 * of a test run cannot outlive it; with --clear it also empties /workspace so
 * the next sync makes it mirror the host exactly (deletions included).
 * Static C rather than a Node script: it starts in a millisecond, which keeps
 * the clean-up between two test runs short.
 * Prints one JSON line {"killed":N,"remaining":N,"cleared":true|false}; exit 0
 * only when nothing is left (and, with --clear, the workspace is empty).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEEPALIVE "/opt/mini-agent/keepalive.mjs"

static int numeric(const char *s) {
  if (!*s) return 0;
  for (; *s; s++) if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* state letter and parent pid from /proc/PID/stat (fields after the last ')') */
static int proc_stat(int pid, char *state, int *ppid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p || sscanf(p + 2, "%c %d", state, ppid) != 2) return -1;
  return 0;
}

static int runs_keepalive(int pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1) {
    buf[n] = 0;
    if (strcmp(buf + i, KEEPALIVE) == 0) return 1;
  }
  return 0;
}

/* The keepalive is the oldest child of PID 1 running keepalive.mjs; a look-alike
 * started later has a higher pid (pids only grow until pid_max wraps). */
static int keepalive_pid(void) {
  DIR *d = opendir("/proc");
  int best = -1;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!numeric(e->d_name)) continue;
    int pid = atoi(e->d_name), ppid;
    char st;
    if (pid > 1 && proc_stat(pid, &st, &ppid) == 0 && ppid == 1 && runs_keepalive(pid) && (best < 0 || pid < best)) best = pid;
  }
  if (d) closedir(d);
  return best;
}

/* one pass over /proc: SIGKILL every other live process; returns how many were signalled */
static int kill_round(int self, int keep) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!numeric(e->d_name)) continue;
    int pid = atoi(e->d_name), ppid;
    char st;
    if (pid == 1 || pid == self || pid == keep) continue;
    if (proc_stat(pid, &st, &ppid) != 0 || st == 'Z') continue;
    if (kill(pid, SIGKILL) == 0) n++;
  }
  if (d) closedir(d);
  return n;
}

static int open_dirs(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_D || flag == FTW_DNR) chmod(p, (sb->st_mode & 07777) | 0700);
  return 0;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb; (void)flag;
  if (ftw->level > 0) remove(p);
  return 0;
}

static int workspace_empty(void) {
  DIR *d = opendir("/workspace");
  if (!d) return 0;
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d))) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  return empty;
}

int main(int argc, char **argv) {
  int clear = argc > 1 && strcmp(argv[1], "--clear") == 0;
  int self = getpid(), keep = keepalive_pid(), killed = 0, remaining = 0;
  struct timespec pause = {0, 10 * 1000 * 1000};
  for (int round = 0; round < 100; round++) {
    int n = kill_round(self, keep);
    if (n == 0) break;
    killed += n;
    nanosleep(&pause, NULL);
  }
  /* count what is still alive (not yet reaped zombies do not count) */
  DIR *d = opendir("/proc");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!numeric(e->d_name)) continue;
    int pid = atoi(e->d_name), ppid;
    char st;
    if (pid != 1 && pid != self && pid != keep && proc_stat(pid, &st, &ppid) == 0 && st != 'Z') remaining++;
  }
  if (d) closedir(d);
  int cleared = 0;
  if (clear) {
    /* a test may have made directories unreadable; open them up first, then remove depth-first */
    nftw("/workspace", open_dirs, 32, FTW_PHYS);
    nftw("/workspace", remove_entry, 32, FTW_PHYS | FTW_DEPTH);
    cleared = workspace_empty();
  }
  printf("{\"killed\":%d,\"remaining\":%d,\"cleared\":%s}\n", killed, remaining, cleared ? "true" : "false");
  return remaining == 0 && (!clear || cleared) ? 0 : 1;
}
