/*
 * syscall-probe: tries syscalls that Node cannot issue itself and that the
 * default seccomp profile must deny for an unprivileged container, then prints
 * one JSON object {name: {ret, errno, error}} on stdout. Static so it needs
 * nothing from the image. Every call is made with harmless arguments: if a
 * call unexpectedly succeeds, nothing on the host changes (new namespaces die
 * with this process, the mount target does not exist, fds are closed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <signal.h>
#include <linux/sched.h>
#include <sys/wait.h>

static int first = 1;

static void report(const char *name, long ret, int err) {
  printf("%s\"%s\":{\"ret\":%ld,\"errno\":%d,\"error\":\"%s\"}", first ? "" : ",", name, ret,
         ret < 0 ? err : 0, ret < 0 ? strerrorname_np(err) ? strerrorname_np(err) : "UNKNOWN" : "OK");
  first = 0;
  /* only these three return a file descriptor on success */
  if (ret >= 0 && (!strcmp(name, "bpf") || !strcmp(name, "io_uring_setup") || !strcmp(name, "userfaultfd"))) close((int)ret);
}

/*
 * `syscall-probe forkbomb`: forks until the kernel refuses (the pids cgroup
 * limit), children just sleep; prints {"forked":N,"errno":E,"error":"..."}.
 * The container is killed afterwards, which takes the children with it.
 */
static int forkbomb(void) {
  long n = 0;
  int err = 0;
  for (;;) {
    pid_t p = fork();
    if (p == 0) { sleep(300); _exit(0); }
    if (p < 0) { err = errno; break; }
    if (++n >= 100000) break;
  }
  printf("{\"forked\":%ld,\"errno\":%d,\"error\":\"%s\"}\n", n, err, err ? strerrorname_np(err) : "OK");
  fflush(stdout);
  return 0;
}

/*
 * `syscall-probe memory`: allocates and touches 16 MiB at a time until the memory
 * cgroup kills it (the probe expects an OOM kill, never a return).
 * `syscall-probe stubborn`: ignores SIGTERM and waits forever (only SIGKILL ends it).
 * Here rather than in a language runtime, so the resource probes run in every family.
 */
static int memory(void) {
  for (;;) {
    char *p = malloc(16 << 20);
    if (!p) { printf("{\"error\":\"ENOMEM\"}\n"); fflush(stdout); return 1; }
    memset(p, 1, 16 << 20);
  }
}

static int stubborn(void) {
  signal(SIGTERM, SIG_IGN);
  for (;;) pause();
  return 0;
}

int main(int argc, char **argv) {
  long r;
  if (argc > 1 && strcmp(argv[1], "forkbomb") == 0) return forkbomb();
  if (argc > 1 && strcmp(argv[1], "memory") == 0) return memory();
  if (argc > 1 && strcmp(argv[1], "stubborn") == 0) return stubborn();
  printf("{");
  /* KEYCTL_GET_KEYRING_ID (0) of the session keyring (-3), create=0 */
  errno = 0; r = syscall(SYS_keyctl, 0, -3, 0); report("keyctl", r, errno);
  errno = 0; r = unshare(CLONE_NEWUSER); report("unshare", r, errno);
  errno = 0; r = mount("none", "/nonexistent-mini-agent", "tmpfs", 0, NULL); report("mount", r, errno);
  /* BPF_PROG_LOAD with a NULL attr: EPERM when denied, EFAULT/EINVAL if it got through */
  errno = 0; r = syscall(SYS_bpf, 5, NULL, 0); report("bpf", r, errno);
  errno = 0; r = syscall(SYS_io_uring_setup, 1, NULL); report("io_uring_setup", r, errno);
  errno = 0; r = syscall(SYS_userfaultfd, 0); report("userfaultfd", r, errno);
  {
    /* clone3 carries its flags in memory the filter cannot read: a new user namespace must still be refused */
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_NEWUSER;
    ca.exit_signal = SIGCHLD;
    errno = 0; r = syscall(SYS_clone3, &ca, sizeof ca);
    if (r == 0) _exit(0);
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    report("clone3_newuser", r, errno);
  }
  /* state, not denials: where /proc/self/status lacks the fields (gVisor) */
  printf(",\"no_new_privs\":%d,\"seccomp_mode\":%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
  printf("}\n");
  return 0;
}
