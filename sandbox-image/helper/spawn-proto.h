/*
 * Wire format of requests to the spawner (spawner.c, the container's main
 * process). From run.c (started by `docker exec`), one request per
 * connection on a Unix stream socket in the abstract namespace (no file: the
 * sandbox's network namespace is its own, and /tmp stays empty, see below):
 *   header  {u32 magic, u32 type, u32 length}  sent with the relay's fds 0/1/2 (SCM_RIGHTS)
 *   payload {u32 argc, u32 envc} then NUL-terminated strings: cwd, argv..., env...
 * Answer: {u32 magic, i32 status, u32 leftovers}; status is the exit code, or
 * 128+signal, of the command (for CLEAR: 0 when proven clean; SETTLE: below).
 * From the host's attach to the spawner's stdin (RUN only): the same header,
 * the payload prefixed by a 32-hex-digit nonce; the answer is an end marker
 * on stdout ("\0mini-agent-end:<nonce>:<status>:<signal>:<pids>:<oom>\0") and
 * stderr ("\0mini-agent-end:<nonce>\0"). <signal> is the signal that ended the
 * command's own process (0: it exited). <pids> and <oom> are how often, while
 * the command ran, the sandbox's pids cgroup refused a fork or clone
 * (pids.events "max") and the kernel OOM-killed a process in its memory
 * cgroup ("oom_kill"); -1 where the sandbox cannot read them (gVisor has no
 * cgroupfs inside).
 */
#ifndef MINI_AGENT_SPAWN_PROTO_H
#define MINI_AGENT_SPAWN_PROTO_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* abstract socket name (sun_path starts with a NUL byte) */
#define SPAWN_SOCK_NAME "mini-agent-spawner"
#define SPAWN_MAGIC 0x6d615370u /* "maSp" */
#define SPAWN_RUN 1u
/* kill every leftover process, empty /tmp and /workspace (warm sandbox between two commands) */
#define SPAWN_CLEAR 2u
/*
 * after a command (warm sandbox): kill leftovers and empty /tmp (else answer 1);
 * if /workspace is exactly as it was when the last command started (same entries,
 * inodes, sizes, modes, mtimes and ctimes), keep it and answer 0; else empty it
 * and answer SETTLE_CLEARED.
 */
#define SPAWN_SETTLE 3u
#define SETTLE_CLEARED 3
/*
 * after a command, before SETTLE (warm sandbox): what the last command changed
 * under /workspace, compared with the fingerprint taken when it started.
 * Payload: the usual {argc, envc} cwd argv env with argv[0] = MAXPATHS in
 * decimal. Written to the relay's stdout, then status 0:
 *   one line per changed path (relative to /workspace, sorted bytewise), its
 *   bytes in lowercase hex (a name may hold a newline or any non-UTF-8 byte),
 *   at most MAXPATHS lines and CHANGED_MAX_OUTPUT bytes of lines, then
 *   "end <lines> <cut>\n" (cut 1: more paths changed than were listed).
 * CHANGED_UNAVAILABLE when no list can be made (no usable start fingerprint,
 * the tree cannot be walked), the reason in one line on the relay's stderr.
 */
#define SPAWN_CHANGED 4u
#define CHANGED_UNAVAILABLE 21
#define CHANGED_MAX_PATHS 100000u
#define CHANGED_MAX_OUTPUT (1u << 20)
/*
 * From the host's attach only: the workspace as a tar stream, extracted by the
 * spawner itself (helper/untar.h) into /workspace. The header's payload is the
 * 32-hex-digit nonce alone; the tar follows on stdin up to and including its
 * two end blocks. The answer is the usual end marker pair with status 0 (all
 * of it is in), or PUT_REFUSED after the reason on stderr; after a refusal the
 * rest of the stream is not read and the channel is out of step (the host
 * discards the sandbox).
 */
#define SPAWN_PUT 5u
#define PUT_REFUSED 30
#define SPAWN_MAX_PAYLOAD (4u << 20)
/* relay exit code when the spawner cannot be reached or dropped the connection */
#define RELAY_LOST 254
/*
 * `run --read-report PATH MAXBYTES` (no spawner involved): the file's bytes on
 * stdout and exit 0, or one of these (the reason, or the size, on stderr).
 */
#define REPORT_MISSING 10
#define REPORT_TOO_LARGE 11
#define REPORT_UNREADABLE 12

struct spawn_header { uint32_t magic, type, length; };
struct spawn_answer { uint32_t magic; int32_t status; uint32_t leftovers; };

/* the spawner's address; returns its length (an abstract name is not NUL-terminated) */
static inline socklen_t spawn_address(struct sockaddr_un *addr) {
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  memcpy(addr->sun_path + 1, SPAWN_SOCK_NAME, sizeof SPAWN_SOCK_NAME - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + sizeof SPAWN_SOCK_NAME - 1);
}
#endif
