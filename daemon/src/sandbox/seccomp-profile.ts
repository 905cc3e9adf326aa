/**
 * mini-agent's own seccomp profile: default action EPERM, an explicit
 * allowlist. Why not the engine's default profile: Docker 20.10's default
 * allows io_uring_setup/enter/register (measured here: io_uring_setup got
 * past it with EFAULT), and it allows ptrace, which lets code forge a
 * self-report. This list is every x86_64 syscall name minus DENIED below;
 * syscalls newer than this list are denied by the default action.
 */

/** Refused: namespace/mount/module/keyring/bpf/io_uring/ptrace/time-setting and other host-facing calls. */
export const DENIED_SYSCALLS = [
  "acct",
  "add_key",
  "adjtimex",
  "afs_syscall",
  "bpf",
  "chroot",
  "clock_adjtime",
  "clock_settime",
  "create_module",
  "delete_module",
  "epoll_ctl_old",
  "epoll_wait_old",
  "fanotify_init",
  "finit_module",
  "fsconfig",
  "fsmount",
  "fsopen",
  "fspick",
  "get_kernel_syms",
  "get_mempolicy",
  "getpmsg",
  "init_module",
  "io_uring_enter",
  "io_uring_register",
  "io_uring_setup",
  "ioperm",
  "iopl",
  "kcmp",
  "kexec_file_load",
  "kexec_load",
  "keyctl",
  "lookup_dcookie",
  "mbind",
  "memfd_secret",
  "migrate_pages",
  "modify_ldt",
  "mount",
  "mount_setattr",
  "move_mount",
  "move_pages",
  "name_to_handle_at",
  "nfsservctl",
  "open_by_handle_at",
  "open_tree",
  "perf_event_open",
  "personality",
  "pidfd_getfd",
  "pivot_root",
  "process_madvise",
  "process_vm_readv",
  "process_vm_writev",
  "ptrace",
  "putpmsg",
  "query_module",
  "quotactl",
  "quotactl_fd",
  "reboot",
  "request_key",
  "security",
  "set_mempolicy",
  "set_mempolicy_home_node",
  "setdomainname",
  "sethostname",
  "setns",
  "settimeofday",
  "swapoff",
  "swapon",
  "syslog",
  "sysfs",
  "_sysctl",
  "tuxcall",
  "umount2",
  "unshare",
  "uselib",
  "userfaultfd",
  "ustat",
  "vhangup",
  "vserver",
] as const;

/** The x86_64 syscall table by name (from the kernel's asm/unistd_64.h). */
const X86_64_SYSCALLS = `read write open close stat fstat lstat poll lseek mmap mprotect munmap brk rt_sigaction rt_sigprocmask
rt_sigreturn ioctl pread64 pwrite64 readv writev access pipe select sched_yield mremap msync mincore madvise shmget shmat
shmctl dup dup2 pause nanosleep getitimer alarm setitimer getpid sendfile socket connect accept sendto recvfrom sendmsg
recvmsg shutdown bind listen getsockname getpeername socketpair setsockopt getsockopt clone fork vfork execve exit wait4
kill uname semget semop semctl shmdt msgget msgsnd msgrcv msgctl fcntl flock fsync fdatasync truncate ftruncate getdents
getcwd chdir fchdir rename mkdir rmdir creat link unlink symlink readlink chmod fchmod chown fchown lchown umask
gettimeofday getrlimit getrusage sysinfo times ptrace getuid syslog getgid setuid setgid geteuid getegid setpgid getppid
getpgrp setsid setreuid setregid getgroups setgroups setresuid getresuid setresgid getresgid getpgid setfsuid setfsgid
getsid capget capset rt_sigpending rt_sigtimedwait rt_sigqueueinfo rt_sigsuspend sigaltstack utime mknod uselib
personality ustat statfs fstatfs sysfs getpriority setpriority sched_setparam sched_getparam sched_setscheduler
sched_getscheduler sched_get_priority_max sched_get_priority_min sched_rr_get_interval mlock munlock mlockall munlockall
vhangup modify_ldt pivot_root _sysctl prctl arch_prctl adjtimex setrlimit chroot sync acct settimeofday mount umount2
swapon swapoff reboot sethostname setdomainname iopl ioperm create_module init_module delete_module get_kernel_syms
query_module quotactl nfsservctl getpmsg putpmsg afs_syscall tuxcall security gettid readahead setxattr lsetxattr
fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr removexattr lremovexattr fremovexattr tkill time
futex sched_setaffinity sched_getaffinity set_thread_area io_setup io_destroy io_getevents io_submit io_cancel
get_thread_area lookup_dcookie epoll_create epoll_ctl_old epoll_wait_old remap_file_pages getdents64 set_tid_address
restart_syscall semtimedop fadvise64 timer_create timer_settime timer_gettime timer_getoverrun timer_delete clock_settime
clock_gettime clock_getres clock_nanosleep exit_group epoll_wait epoll_ctl tgkill utimes vserver mbind set_mempolicy
get_mempolicy mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr kexec_load waitid add_key
request_key keyctl ioprio_set ioprio_get inotify_init inotify_add_watch inotify_rm_watch migrate_pages openat mkdirat
mknodat fchownat futimesat newfstatat unlinkat renameat linkat symlinkat readlinkat fchmodat faccessat pselect6 ppoll
unshare set_robust_list get_robust_list splice tee sync_file_range vmsplice move_pages utimensat epoll_pwait signalfd
timerfd_create eventfd fallocate timerfd_settime timerfd_gettime accept4 signalfd4 eventfd2 epoll_create1 dup3 pipe2
inotify_init1 preadv pwritev rt_tgsigqueueinfo perf_event_open recvmmsg fanotify_init fanotify_mark prlimit64
name_to_handle_at open_by_handle_at clock_adjtime syncfs sendmmsg setns getcpu process_vm_readv process_vm_writev kcmp
finit_module sched_setattr sched_getattr renameat2 seccomp getrandom memfd_create kexec_file_load bpf execveat
userfaultfd membarrier mlock2 copy_file_range preadv2 pwritev2 pkey_mprotect pkey_alloc pkey_free statx io_pgetevents
rseq pidfd_send_signal io_uring_setup io_uring_enter io_uring_register open_tree move_mount fsopen fsconfig fsmount
fspick pidfd_open clone3 close_range openat2 pidfd_getfd faccessat2 process_madvise epoll_pwait2 mount_setattr
quotactl_fd landlock_create_ruleset landlock_add_rule landlock_restrict_self memfd_secret process_mrelease futex_waitv
set_mempolicy_home_node`
  .split(/\s+/)
  .filter(Boolean);

/** Any of these clone flags creates a namespace: refused. */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;
const ENOSYS = 38;

/**
 * clone3's flags live in memory seccomp cannot read, so runc answers ENOSYS and libc
 * falls back to clone, whose flags the filter can check. gVisor's --oci-seccomp
 * (release 20221219 here) ignores errnoRet and answers EPERM, which stops glibc's
 * fallback and kills Node's thread creation; gVisor itself answers clone3 with
 * ENOSYS, so under runsc the call is passed to it. The clone3_newuser probe checks
 * the outcome on both runtimes.
 */
export function seccompProfile(runtime: "runc" | "runsc" = "runc"): Record<string, unknown> {
  const denied = new Set<string>(DENIED_SYSCALLS);
  const allowed = X86_64_SYSCALLS.filter((n) => !denied.has(n) && n !== "clone" && n !== "clone3");
  const clone3 = runtime === "runsc" ? { names: ["clone3"], action: "SCMP_ACT_ALLOW" } : { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: ENOSYS };
  return {
    defaultAction: "SCMP_ACT_ERRNO",
    syscalls: [
      { names: allowed, action: "SCMP_ACT_ALLOW" },
      // clone only without namespace flags (threads, fork)
      { names: ["clone"], action: "SCMP_ACT_ALLOW", args: [{ index: 0, value: CLONE_NAMESPACE_FLAGS, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }] },
      clone3,
    ],
  };
}
