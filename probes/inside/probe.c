/*
 * In-container isolation probe. Compiled static (no libc, interpreter or
 * library needed from the image), so the same probe runs in every image
 * family, whatever language the family ships (issue 11). It runs in a FRESH
 * container made by the same code path and HostConfig as candidate tests,
 * before any candidate code. It only observes; the host decides.
 *
 * argv: --nonce N --runtime runc|runsc [--allow-env NAME]... --canary-sha256 H
 *       --canary-name NAME --canary-file NAME --host-state-dir DIR --tmp-noexec 0|1
 *       (built by probes/inside-args.ts, the one home of this format)
 * stdout: one JSON line {nonce, probes[]}. A self-report can be forged by code
 * in the same container (ptrace is allowed by the default seccomp profile),
 * which is why it runs first, is bound to the nonce, and host checks rule.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---------- a growable string, JSON helpers ---------- */
typedef struct { char *p; size_t n, cap; } buf;
static void bput(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p) _exit(70);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void bs(buf *b, const char *s) { bput(b, s, strlen(s)); }
static void bf(buf *b, const char *fmt, ...) {
  char tmp[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  bput(b, tmp, n < 0 ? 0 : (size_t)n >= sizeof tmp ? sizeof tmp - 1 : (size_t)n);
}
/* a JSON string literal */
static void bj(buf *b, const char *s) {
  if (!s) { bs(b, "null"); return; }
  bs(b, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') { char e[3] = {'\\', (char)*c, 0}; bs(b, e); }
    else if (*c == '\n') bs(b, "\\n");
    else if (*c < 0x20 || *c >= 0x7f) bf(b, "\\u%04x", *c);
    else bput(b, (const char *)c, 1);
  }
  bs(b, "\"");
}
static char *take(buf *b) { char *s = b->p ? b->p : strdup(""); b->p = NULL; b->n = b->cap = 0; return s; }
static char *jstr(const char *s) { buf b = {0}; bj(&b, s); return take(&b); }

/* ---------- arguments ---------- */
static const char *a_nonce = "", *a_runtime = "", *a_canary_sha = "", *a_canary_name = "", *a_canary_file = "", *a_state_dir = "";
static int a_tmp_noexec = 1;
static const char *a_allow[256];
static int a_nallow;

/* ---------- the report ---------- */
static buf probes;
static int nprobes;
static void add(const char *id, const char *property, const char *expected_json, const char *observed_json, int passed, const char *dnp) {
  bs(&probes, nprobes++ ? "," : "");
  bs(&probes, "{\"id\":"); bj(&probes, id);
  bs(&probes, ",\"property\":"); bj(&probes, property);
  bs(&probes, ",\"expected\":"); bs(&probes, expected_json);
  bs(&probes, ",\"observed\":"); bs(&probes, observed_json);
  bf(&probes, ",\"passed\":%s", passed ? "true" : "false");
  bs(&probes, ",\"does_not_prove\":"); bj(&probes, dnp);
  bs(&probes, "}");
}

/* ---------- small helpers ---------- */
static char *readfile(const char *p) {
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  buf b = {0};
  char tmp[8192];
  ssize_t n;
  while ((n = read(fd, tmp, sizeof tmp)) > 0) bput(&b, tmp, (size_t)n);
  close(fd);
  return take(&b);
}
/* the value of "Name:" in /proc/self/status, or NULL (gVisor omits some) */
static char *status_field(const char *name) {
  char *s = readfile("/proc/self/status");
  if (!s) return NULL;
  size_t ln = strlen(name);
  char *out = NULL;
  for (char *line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, name, ln) == 0 && line[ln] == ':') {
      char *v = line + ln + 1;
      while (*v == ' ' || *v == '\t') v++;
      size_t e = strcspn(v, "\n");
      while (e > 0 && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
      out = strndup(v, e);
      break;
    }
  }
  free(s);
  return out;
}
static const char *errname(int e) { const char *n = strerrorname_np(e); return n ? n : "UNKNOWN"; }
/* "written" or the errno name; the same flags as a plain write-file (create, truncate) */
static const char *try_write(const char *p) {
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errname(errno);
  ssize_t n = write(fd, "mini-agent-probe", 16);
  int e = errno;
  close(fd);
  return n < 0 ? errname(e) : "written";
}
static int all_zero_hex(const char *v) {
  if (!v || !*v) return 0;
  for (; *v; v++) if (*v != '0') return 0;
  return 1;
}

/* /proc/self/mountinfo, one entry per mount */
typedef struct { char point[512]; char opts[512]; char fstype[64]; char super[512]; } mnt;
static mnt mounts[512];
static int nmounts;
static void load_mounts(void) {
  char *s = readfile("/proc/self/mountinfo");
  nmounts = 0;
  if (!s) return;
  for (char *line = strtok(s, "\n"); line && nmounts < 512; line = strtok(NULL, "\n")) {
    char *sep = strstr(line, " - ");
    if (!sep) continue;
    *sep = 0;
    /* fields left of " - " (point is the 5th, its options the 6th), then fstype, source, super options */
    char *fields[8] = {0};
    int nf = 0;
    for (char *c = line; *c && nf < 8;) {
      while (*c == ' ') c++;
      if (!*c) break;
      fields[nf++] = c;
      while (*c && *c != ' ') c++;
      if (*c) *c++ = 0;
    }
    char *right[4] = {0};
    int nr = 0;
    for (char *c = sep + 3; *c && nr < 4;) {
      while (*c == ' ') c++;
      if (!*c) break;
      right[nr++] = c;
      while (*c && *c != ' ') c++;
      if (*c) *c++ = 0;
    }
    if (nf < 6) continue;
    mnt *m = &mounts[nmounts++];
    snprintf(m->point, sizeof m->point, "%s", fields[4]);
    snprintf(m->opts, sizeof m->opts, "%s", fields[5]);
    snprintf(m->fstype, sizeof m->fstype, "%s", right[0] ? right[0] : "");
    snprintf(m->super, sizeof m->super, "%s", right[2] ? right[2] : "");
  }
  free(s);
}
static mnt *find_mount(const char *point) {
  mnt *found = NULL;
  /* the last entry for a point is the one on top */
  for (int i = 0; i < nmounts; i++) if (strcmp(mounts[i].point, point) == 0) found = &mounts[i];
  return found;
}
static int has_opt(const char *opts, const char *opt) {
  size_t l = strlen(opt);
  for (const char *c = opts; c && *c;) {
    size_t e = strcspn(c, ",");
    if (e == l && strncmp(c, opt, l) == 0) return 1;
    c += e;
    if (*c == ',') c++;
  }
  return 0;
}
static int has_opt_prefix(const char *opts, const char *prefix) {
  size_t l = strlen(prefix);
  for (const char *c = opts; c && *c;) {
    size_t e = strcspn(c, ",");
    if (e >= l && strncmp(c, prefix, l) == 0) return 1;
    c += e;
    if (*c == ',') c++;
  }
  return 0;
}
/* a comma-separated option list as a JSON array */
static void opts_json(buf *b, const char *opts) {
  bs(b, "[");
  int first = 1;
  for (const char *c = opts; c && *c;) {
    size_t e = strcspn(c, ",");
    char *o = strndup(c, e);
    if (!first) bs(b, ",");
    bj(b, o);
    free(o);
    first = 0;
    c += e;
    if (*c == ',') c++;
  }
  bs(b, "]");
}

/* Walks the image (not /proc, /sys, /dev) calling visit(path, lstat). */
typedef void (*visitor)(const char *path, const struct stat *st, void *ctx);
static void walk(const char *dir, visitor visit, void *ctx, int depth) {
  if (depth > 40) return;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
    if (!strcmp(p, "/proc") || !strcmp(p, "/sys") || !strcmp(p, "/dev")) continue;
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    visit(p, &st, ctx);
    if (S_ISDIR(st.st_mode)) walk(p, visit, ctx, depth + 1);
  }
  closedir(d);
}
typedef struct { buf list; int n; } pathlist;
static void plist_add(pathlist *l, const char *p) { bs(&l->list, l->n++ ? "," : ""); bj(&l->list, p); }

/* ---------- SHA-256 (FIPS 180-4), for the canary comparison ---------- */
static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static void sha256_block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}
static void sha256_hex(const char *msg, char out[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  size_t len = strlen(msg), i = 0;
  unsigned char block[64];
  for (; i + 64 <= len; i += 64) sha256_block(h, (const unsigned char *)msg + i);
  size_t rest = len - i;
  memset(block, 0, 64);
  memcpy(block, msg + i, rest);
  block[rest] = 0x80;
  if (rest >= 56) { sha256_block(h, block); memset(block, 0, 64); }
  uint64_t bits = (uint64_t)len * 8;
  for (int k = 0; k < 8; k++) block[63 - k] = (unsigned char)(bits >> (8 * k));
  sha256_block(h, block);
  for (int k = 0; k < 8; k++) sprintf(out + 8 * k, "%08x", h[k]);
}

/* ---------- the probes ---------- */
static void identity(void) {
  gid_t groups[64];
  int n = getgroups(64, groups);
  int root_group = 0;
  buf o = {0};
  bf(&o, "{\"uid\":%u,\"gid\":%u,\"euid\":%u,\"groups\":[", getuid(), getgid(), geteuid());
  for (int i = 0; i < n; i++) { bf(&o, "%s%u", i ? "," : "", groups[i]); if (groups[i] == 0) root_group = 1; }
  bs(&o, "]}");
  add("uid_gid", "runs as a non-root user and group", "\"uid=gid=65534, no root group\"", o.p,
      getuid() == 65534 && geteuid() == 65534 && getgid() == 65534 && !root_group, "that no other process in the container runs as root (see pid_namespace)");
  free(o.p);
}

static void capabilities(void) {
  const char *names[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
  char *v[5];
  buf o = {0};
  bs(&o, "{");
  for (int i = 0; i < 5; i++) { v[i] = status_field(names[i]); bf(&o, "%s\"%s\":", i ? "," : "", names[i]); bj(&o, v[i]); }
  bs(&o, "}");
  add("capabilities", "no capabilities: effective, permitted and the bounding set are empty", "\"CapEff=CapPrm=CapBnd=0\"", o.p,
      all_zero_hex(v[2]) && all_zero_hex(v[1]) && all_zero_hex(v[3]), "CapEff is 0 for any non-root user; only the empty bounding set proves CapDrop ALL");
  for (int i = 0; i < 5; i++) free(v[i]);
  free(o.p);
}

/* /proc/self/status where it has the field, else prctl alone (gVisor omits it); both must agree */
static void prctl_probe(const char *id, const char *property, const char *field, int option, int want, const char *dnp) {
  char *v = status_field(field);
  int p = prctl(option, 0, 0, 0, 0);
  char wants[8];
  snprintf(wants, sizeof wants, "%d", want);
  buf o = {0}, e = {0};
  bs(&o, "{\"status\":"); bj(&o, v); bf(&o, ",\"prctl\":%d}", p);
  bj(&e, wants);
  add(id, property, e.p, o.p, (v ? strcmp(v, wants) == 0 : 1) && p == want, dnp);
  free(v); free(o.p); free(e.p);
}

static void readonly_root(void) {
  const char *a = try_write("/probe-write"), *b = try_write("/etc/passwd"), *c = try_write("/usr/bin/probe-write");
  mnt *root = find_mount("/");
  buf o = {0};
  bs(&o, "{\"/\":"); bj(&o, a); bs(&o, ",\"/etc/passwd\":"); bj(&o, b); bs(&o, ",\"/usr/bin/x\":"); bj(&o, c);
  bs(&o, ",\"root_mount_opts\":");
  if (root) opts_json(&o, root->opts); else bs(&o, "null");
  bs(&o, "}");
  add("readonly_rootfs", "the root filesystem is mounted read-only", "\"/ mounted ro, writes fail with EROFS\"", o.p,
      root && has_opt(root->opts, "ro") && strcmp(a, "written") && strcmp(b, "written") && strcmp(c, "written"),
      "read-only volumes or tmpfs mounted elsewhere (see writable_mounts)");
  free(o.p);
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void writable_mounts(void) {
  char *writable[512];
  int nw = 0;
  buf rw = {0};
  int nrw = 0;
  for (int i = 0; i < nmounts; i++) {
    if (!has_opt(mounts[i].opts, "rw")) continue;
    bs(&rw, nrw++ ? "," : "");
    char label[600];
    snprintf(label, sizeof label, "%s(%s)", mounts[i].point, mounts[i].fstype);
    bj(&rw, label);
    struct stat st;
    if (access(mounts[i].point, W_OK) == 0 && stat(mounts[i].point, &st) == 0 && S_ISDIR(st.st_mode)) {
      int dup = 0;
      for (int k = 0; k < nw; k++) if (!strcmp(writable[k], mounts[i].point)) dup = 1;
      if (!dup) writable[nw++] = mounts[i].point;
    }
  }
  qsort(writable, nw, sizeof writable[0], cmpstr);
  buf o = {0};
  bs(&o, "{\"user_writable\":[");
  for (int k = 0; k < nw; k++) { bs(&o, k ? "," : ""); bj(&o, writable[k]); }
  bs(&o, "],\"rw_mounts\":["); bs(&o, rw.p ? rw.p : ""); bs(&o, "]}");
  int ok = nw == 2 && !strcmp(writable[0], "/tmp") && !strcmp(writable[1], "/workspace");
  add("writable_mounts", "the only mounts the sandbox user can write are /tmp and /workspace", "[\"/tmp\",\"/workspace\"]", o.p, ok,
      "the size caps (see host_inspect) or that root-owned rw mounts stay unwritable without capabilities");
  free(o.p); free(rw.p);
}

static void tmp_mount(void) {
  mnt *tmp = find_mount("/tmp");
  /* gVisor's mountinfo shows only noexec of the three flags it was given. A family whose tests run
     what they build (go test) gets /tmp without noexec (daemon/src/sandbox/families.ts). */
  int runsc = !strcmp(a_runtime, "runsc");
  const char *flags[3] = {"nosuid", "nodev", "noexec"};
  int ok = tmp && !strcmp(tmp->fstype, "tmpfs") && has_opt_prefix(tmp->super, "size=");
  if (tmp && runsc) ok = ok && (!a_tmp_noexec || has_opt(tmp->opts, "noexec"));
  else if (tmp) for (int k = 0; k < (a_tmp_noexec ? 3 : 2); k++) ok = ok && has_opt(tmp->opts, flags[k]);
  buf o = {0};
  if (tmp) {
    bs(&o, "{\"fstype\":"); bj(&o, tmp->fstype);
    bs(&o, ",\"opts\":"); opts_json(&o, tmp->opts);
    bs(&o, ",\"super\":"); opts_json(&o, tmp->super);
    bs(&o, "}");
  } else bs(&o, "null");
  add("tmp_mount", a_tmp_noexec ? "/tmp is a size-capped tmpfs with nosuid,nodev,noexec" : "/tmp is a size-capped tmpfs with nosuid,nodev (exec: this family runs what it builds there)",
      a_tmp_noexec ? "\"tmpfs nosuid,nodev,noexec size=...\"" : "\"tmpfs nosuid,nodev size=...\"", o.p, ok,
      runsc ? "nosuid/nodev under gVisor (not shown in its mountinfo; requested in HostConfig)" : "the workspace size cap (host_inspect checks the volume options)");
  free(o.p);
}

static void control_readonly(void) {
  struct stat st;
  if (stat("/control", &st) != 0) return;
  buf o = {0};
  const char *dir = try_write("/control/probe-write");
  int ok = strcmp(dir, "written") != 0;
  bs(&o, "{\"dir\":"); bj(&o, dir); bs(&o, ",\"files\":[");
  DIR *d = opendir("/control");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "/control/%s", e->d_name);
    const char *r = try_write(p);
    ok = ok && strcmp(r, "written") != 0;
    bs(&o, n++ ? "," : ""); bj(&o, r);
  }
  if (d) closedir(d);
  bs(&o, "]}");
  add("control_readonly", "control assets cannot be changed by the sandbox user", "\"EACCES/EROFS on every write\"", o.p, ok,
      "that control assets are hidden from the candidate (they are only given to fresh verifier runs)");
  free(o.p);
}

static void proc_sys(void) {
  mnt *sys = find_mount("/sys"), *procsys = find_mount("/proc/sys");
  const char *wps = try_write("/proc/sys/kernel/hostname"), *ws = try_write("/sys/kernel/uevent_helper");
  buf o = {0};
  bs(&o, "{\"sys_opts\":"); if (sys) opts_json(&o, sys->opts); else bs(&o, "null");
  bs(&o, ",\"proc_sys_opts\":"); if (procsys) opts_json(&o, procsys->opts); else bs(&o, "null");
  bs(&o, ",\"write_proc_sys\":"); bj(&o, wps); bs(&o, ",\"write_sys\":"); bj(&o, ws); bs(&o, "}");
  add("proc_sys_readonly", "/proc/sys and /sys are read-only", "\"writes fail\"", o.p,
      strcmp(wps, "written") && strcmp(ws, "written") && (!sys || has_opt(sys->opts, "ro")), "every file below /proc (see proc_protect)");
  free(o.p);
}

static void proc_protect(void) {
  char kcore[128] = "absent";
  struct stat st;
  if (stat("/proc/kcore", &st) != 0) snprintf(kcore, sizeof kcore, errno == ENOENT ? "absent" : "masked(%s)", errname(errno));
  else {
    int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
    if (fd < 0) snprintf(kcore, sizeof kcore, "masked(%s)", errname(errno));
    else {
      char b[16];
      ssize_t n = read(fd, b, sizeof b);
      int e = errno;
      close(fd);
      if (n < 0) snprintf(kcore, sizeof kcore, "masked(%s)", errname(e));
      else if (n == 0) snprintf(kcore, sizeof kcore, "masked(size=%lld,read=0)", (long long)st.st_size);
      else snprintf(kcore, sizeof kcore, "readable(%zd bytes)", n);
    }
  }
  const char *sysrq = try_write("/proc/sysrq-trigger"), *core = try_write("/proc/sys/kernel/core_pattern");
  buf o = {0};
  bs(&o, "{\"sysrq_trigger\":"); bj(&o, sysrq); bs(&o, ",\"core_pattern\":"); bj(&o, core); bs(&o, ",\"kcore\":"); bj(&o, kcore); bs(&o, "}");
  add("proc_protect", "/proc/sysrq-trigger and core_pattern not writable, /proc/kcore masked", "\"writes fail, kcore unreadable\"", o.p,
      strcmp(sysrq, "written") && strcmp(core, "written") && strncmp(kcore, "readable", 8), "other /proc files not listed here");
  free(o.p);
}

/* the lines of a file, for line-by-line parsing without strtok (callers nest) */
static int lines_of(char *s, char **out, int max) {
  int n = 0;
  for (char *l = s; l && *l && n < max;) {
    char *nl = strchr(l, '\n');
    if (nl) *nl = 0;
    out[n++] = l;
    l = nl ? nl + 1 : NULL;
  }
  return n;
}
static int blank(const char *l) { return l[strspn(l, " \t")] == 0; }

static int network(void) {
  int ok = 1;
  char *lines[1024];
  buf o = {0};
  bs(&o, "{\"proc_net_dev\":[");
  char *dev = readfile("/proc/net/dev");
  int nl = dev ? lines_of(dev, lines, 1024) : 0, n = 0;
  for (int i = 2; i < nl; i++) {
    char *l = lines[i], *colon = strchr(l, ':');
    if (!colon) continue;
    *colon = 0;
    while (*l == ' ') l++;
    bs(&o, n++ ? "," : ""); bj(&o, l);
    if (strcmp(l, "lo")) ok = 0;
  }
  free(dev);
  bs(&o, "],\"interfaces\":[");
  /* interfaces that carry an address (what an application would bind or route through) */
  struct ifaddrs *ifa = NULL;
  n = 0;
  if (getifaddrs(&ifa) == 0) {
    char seen[64][64];
    int ns = 0;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
      int dup = 0;
      for (int k = 0; k < ns; k++) if (!strcmp(seen[k], i->ifa_name)) dup = 1;
      if (dup || ns >= 64) continue;
      snprintf(seen[ns++], 64, "%s", i->ifa_name);
      bs(&o, n++ ? "," : ""); bj(&o, i->ifa_name);
      if (strcmp(i->ifa_name, "lo")) ok = 0;
    }
    freeifaddrs(ifa);
  }
  int routes = 0, routes6 = 0;
  char *r4 = readfile("/proc/net/route");
  nl = r4 ? lines_of(r4, lines, 1024) : 0;
  for (int i = 1; i < nl; i++) if (!blank(lines[i])) routes++;
  free(r4);
  char *r6 = readfile("/proc/net/ipv6_route");
  nl = r6 ? lines_of(r6, lines, 1024) : 0;
  for (int i = 0; i < nl; i++) {
    char *l = lines[i];
    size_t len = strlen(l);
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\t')) l[--len] = 0;
    if (blank(l) || (len >= 3 && !strcmp(l + len - 3, " lo"))) continue;
    routes6++;
  }
  free(r6);
  bf(&o, "],\"ipv4_routes\":%d,\"ipv6_routes\":%d}", routes, routes6);
  ok = ok && routes == 0 && routes6 == 0;
  add("network_interfaces", "only the loopback interface and an empty route table", "\"interfaces=[lo], routes=[]\"", o.p, ok,
      "that no other channel (e.g. a shared socket) exists (see docker_socket)");
  free(o.p);
  return ok;
}

static void outbound(int network_ok) {
  if (!network_ok) {
    /* never send anything from a sandbox that might have a network */
    add("outbound_tcp", "an outbound TCP connect is refused", "\"ENETUNREACH\"", "\"skipped: interface/route check failed\"", 0, "anything, it was not attempted");
    add("dns", "a DNS lookup fails", "\"error\"", "\"skipped: interface/route check failed\"", 0, "anything, it was not attempted");
    return;
  }
  /* 192.0.2.1 is TEST-NET-1; with no route the kernel refuses before any packet exists. */
  const char *tcp;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) tcp = errname(errno);
  else {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(80)};
    inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) tcp = "connected";
    else if (errno != EINPROGRESS) tcp = errname(errno);
    else {
      struct pollfd p = {fd, POLLOUT, 0};
      int r = poll(&p, 1, 3000), err = 0;
      socklen_t l = sizeof err;
      if (r == 0) tcp = "ETIMEDOUT";
      else if (r < 0) tcp = errname(errno);
      else tcp = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && err ? errname(err) : "connected";
    }
    close(fd);
  }
  char *t = jstr(tcp);
  add("outbound_tcp", "an outbound TCP connect is refused", "\"ENETUNREACH (or another error, never connected)\"", t, strcmp(tcp, "connected") != 0,
      "that raw sockets or other protocols are blocked (no interface or route exists for them either)");
  free(t);

  /* an A query for example.com to the configured resolver, as a stub resolver sends it (127.0.0.1 when none is configured) */
  char server[64] = "127.0.0.1";
  char *rc = readfile("/etc/resolv.conf");
  char *lines[256];
  int nl = rc ? lines_of(rc, lines, 256) : 0;
  for (int i = 0; i < nl; i++) {
    char ns[64];
    if (sscanf(lines[i], " nameserver %63s", ns) == 1) { snprintf(server, sizeof server, "%s", ns); break; }
  }
  free(rc);
  static const unsigned char query[] = {0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
  char dns[96];
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  socklen_t sl = sizeof(struct sockaddr_in);
  struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET6, server, &s6->sin6_addr) == 1) { s6->sin6_family = AF_INET6; s6->sin6_port = htons(53); sl = sizeof *s6; }
  else {
    if (inet_pton(AF_INET, server, &s4->sin_addr) != 1) inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(53);
  }
  int u = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (u < 0) snprintf(dns, sizeof dns, "%s", errname(errno));
  else if (connect(u, (struct sockaddr *)&ss, sl) != 0 || send(u, query, sizeof query, 0) < 0) snprintf(dns, sizeof dns, "%s", errname(errno));
  else {
    struct pollfd p = {u, POLLIN, 0};
    int r = poll(&p, 1, 2000);
    unsigned char ans[512];
    ssize_t n = r > 0 ? recv(u, ans, sizeof ans, 0) : -1;
    if (r == 0) snprintf(dns, sizeof dns, "ETIMEOUT");
    else if (n < 0) snprintf(dns, sizeof dns, "%s", errname(errno));
    else if (n >= 12 && (ans[3] & 0x0f) == 0 && (ans[6] | ans[7])) snprintf(dns, sizeof dns, "resolved:%d answers", ans[6] << 8 | ans[7]);
    else snprintf(dns, sizeof dns, "ENODATA(rcode=%d)", n >= 4 ? ans[3] & 0x0f : -1);
  }
  if (u >= 0) close(u);
  char *d = jstr(dns);
  add("dns", "a DNS lookup fails", "\"an error code\"", d, strncmp(dns, "resolved", 8) != 0, "that no resolver cache exists inside (none is in the image)");
  free(d);
}

static void collect_socket(const char *p, const struct stat *st, void *ctx) {
  if (S_ISSOCK(st->st_mode)) plist_add(ctx, p);
}
static int foreign_sockets;
static void count_foreign(const char *p, const struct stat *st, void *ctx) {
  (void)ctx;
  /* the spawner's own socket is abstract (no file), so no socket file is expected anywhere (no binds: host_inspect) */
  (void)p;
  if (S_ISSOCK(st->st_mode)) foreign_sockets++;
}
static void docker_socket(void) {
  const char *paths[] = {"/var/run/docker.sock", "/run/docker.sock", "/var/run/docker", "/run/containerd/containerd.sock", "/var/run/containerd",
                         "/run/podman/podman.sock", "/var/run/crio/crio.sock", "/var/lib/docker", "/run/runc"};
  buf o = {0};
  bs(&o, "{\"present\":[");
  int present = 0;
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
    struct stat st;
    if (stat(paths[i], &st) == 0) { bs(&o, present++ ? "," : ""); bj(&o, paths[i]); }
  }
  pathlist socks = {0};
  foreign_sockets = 0;
  walk("/", collect_socket, &socks, 0);
  walk("/", count_foreign, NULL, 0);
  bs(&o, "],\"sockets\":["); bs(&o, socks.list.p ? socks.list.p : ""); bs(&o, "]}");
  add("docker_socket", "no container-engine socket is reachable", "\"none of the usual paths exist and no socket file at all\"", o.p,
      present == 0 && foreign_sockets == 0,
      "abstract unix sockets other than the spawner's own (the sandbox's network namespace is its own, never the host's)");
  free(o.p); free(socks.list.p);
}

static void environment(void) {
  char *names[1024];
  int n = 0, canary = 0;
  for (char **e = environ; *e && n < 1024; e++) {
    char *eq = strchr(*e, '=');
    names[n++] = eq ? strndup(*e, (size_t)(eq - *e)) : strdup(*e);
    char hex[65];
    sha256_hex(eq ? eq + 1 : "", hex);
    if (*a_canary_sha && !strcmp(hex, a_canary_sha)) canary = 1;
  }
  qsort(names, n, sizeof names[0], cmpstr);
  buf o = {0}, unexpected = {0}, list = {0}, want = {0};
  int nu = 0;
  bs(&o, "{\"names\":[");
  for (int i = 0; i < n; i++) {
    bs(&o, i ? "," : ""); bj(&o, names[i]);
    if (!strcmp(names[i], a_canary_name)) canary = 1;
    int allowed = 0;
    for (int k = 0; k < a_nallow; k++) if (!strcmp(a_allow[k], names[i])) allowed = 1;
    if (!allowed) { bs(&unexpected, nu++ ? "," : ""); bj(&unexpected, names[i]); }
  }
  bs(&o, "],\"unexpected\":["); bs(&o, unexpected.p ? unexpected.p : ""); bf(&o, "],\"canary_seen\":%s}", canary ? "true" : "false");
  bs(&list, "names within [");
  for (int k = 0; k < a_nallow; k++) { bs(&list, k ? "," : ""); bj(&list, a_allow[k]); }
  bs(&list, "]; no canary");
  bj(&want, list.p);
  add("env_allowlist", "the environment holds only allowlisted names and not the host's canary secret", want.p, o.p, nu == 0 && !canary,
      "that secrets are absent from files (see canary_file)");
  for (int i = 0; i < n; i++) free(names[i]);
  free(o.p); free(unexpected.p); free(want.p); free(list.p);
}

static void find_canary(const char *p, const struct stat *st, void *ctx) {
  (void)st;
  const char *base = strrchr(p, '/');
  if (!strcmp(base ? base + 1 : p, a_canary_file)) plist_add(ctx, p);
}
static void canary_file(void) {
  pathlist seen = {0};
  walk("/", find_canary, &seen, 0);
  struct stat st;
  int visible = *a_state_dir && stat(a_state_dir, &st) == 0;
  buf o = {0};
  bs(&o, "{\"found\":["); bs(&o, seen.list.p ? seen.list.p : ""); bf(&o, "],\"host_state_dir_visible\":%s}", visible ? "true" : "false");
  add("canary_file", "a canary file in the host state dir is not visible", "\"not found; host state dir absent\"", o.p, seen.n == 0 && !visible,
      "that other host paths are hidden (no binds exist: host_inspect)");
  free(o.p); free(seen.list.p);
}

/* ---------- processes ---------- */
static int ppid_of(int pid) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/stat", pid);
  char *s = readfile(p);
  if (!s) return 0;
  char *r = strrchr(s, ')');
  int pp = 0;
  if (r) sscanf(r + 2, "%*c %d", &pp);
  free(s);
  return pp;
}
/* the command line with its NULs as spaces (whole), or its argv[0] (whole == 0) */
static char *cmd_of(int pid, int whole) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/cmdline", pid);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return strdup("");
  buf b = {0};
  char tmp[4096];
  ssize_t n;
  while ((n = read(fd, tmp, sizeof tmp)) > 0) bput(&b, tmp, (size_t)n);
  close(fd);
  size_t len = b.n;
  char *s = take(&b);
  if (!whole) return s;
  while (len > 0 && s[len - 1] == 0) len--;
  for (size_t i = 0; i < len; i++) if (s[i] == 0) s[i] = ' ';
  s[len] = 0;
  return s;
}
static int is_mine(int pid) {
  for (int q = pid, hops = 0; q > 1 && hops < 64; q = ppid_of(q), hops++) if (q == getpid()) return 1;
  return 0;
}
static int numeric(const char *s) { return *s && strspn(s, "0123456789") == strlen(s); }

static void pid_namespace(void) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  buf list = {0}, unexpected = {0};
  int n = 0, nu = 0, has_init = 0;
  while (d && (e = readdir(d))) {
    if (!numeric(e->d_name)) continue;
    int pid = atoi(e->d_name);
    char *cmd = cmd_of(pid, 1);
    char entry[4200];
    snprintf(entry, sizeof entry, "%d:%s", pid, cmd);
    bs(&list, n++ ? "," : ""); bj(&list, entry);
    int pp = ppid_of(pid);
    /* exactly: the init, the spawner under it, this probe and what this probe started; started by a
       plain `docker exec` (not the daemon's way), also the relay that exec made (its parent is outside) */
    int relay = pp == 0 && !strncmp(cmd, "/opt/mini-agent/run -- ", 23);
    int ok = pid == 1 || (pp == 1 && !strcmp(cmd, "/opt/mini-agent/spawner")) || is_mine(pid) || relay;
    if (pid == 1 && strstr(cmd, "init")) has_init = 1;
    if (!ok) { bf(&unexpected, "%s%d", nu++ ? "," : "", pid); }
    free(cmd);
  }
  if (d) closedir(d);
  buf o = {0};
  bs(&o, "{\"processes\":["); bs(&o, list.p ? list.p : ""); bs(&o, "],\"unexpected\":["); bs(&o, unexpected.p ? unexpected.p : ""); bs(&o, "]}");
  add("pid_namespace", "the PID namespace is private: only the sandbox's own processes are visible",
      "\"the init (pid 1), the spawner, this probe (and its children; under a plain docker exec, its relay); nothing else\"", o.p,
      has_init && nu == 0, "that another container's processes are hidden from the host");
  free(o.p); free(list.p); free(unexpected.p);
}

/* Under gVisor the OCI seccomp filter covers only the container's init process tree, not
   `docker exec`'d processes: the measured process must descend from the spawner (the
   container's main process under the init), not from an exec. */
static void spawned_tree(void) {
  char *chain[64];
  int n = 0;
  for (int pid = getpid(); n < 64 && pid > 0;) {
    char *argv0 = cmd_of(pid, 0);
    char entry[4200];
    snprintf(entry, sizeof entry, "%d:%s", pid, argv0);
    chain[n++] = strdup(entry);
    free(argv0);
    if (pid == 1) break;
    pid = ppid_of(pid);
  }
  /* this process -> spawner -> the init (pid 1): nothing else in between or above */
  const char *spawner = n > 1 ? strchr(chain[1], ':') + 1 : "";
  const char *init = n > 2 ? strchr(chain[2], ':') + 1 : "";
  int passed = n == 3 && !strcmp(spawner, "/opt/mini-agent/spawner") && !strncmp(chain[2], "1:", 2) && strstr(init, "init");
  buf o = {0};
  bs(&o, "[");
  for (int i = 0; i < n; i++) { bs(&o, i ? "," : ""); bj(&o, chain[i]); free(chain[i]); }
  bs(&o, "]");
  add("spawned_tree", "the measured process is a child of the spawner under the container's init (the seccomp-filtered tree), not a docker exec child",
      "\"probe -> /opt/mini-agent/spawner -> init (pid 1)\"", o.p, passed,
      "that a process started some other way would be filtered (the executor starts every command this way)");
  free(o.p);
}

static void runtime_probe(void) {
  struct utsname u;
  uname(&u);
  char *version = readfile("/proc/version");
  if (!version) version = strdup("");
  int gvisor = !strcmp(u.release, "4.4.0") || strcasestr(version, "gvisor") || strstr(version, "Sun Jan 10 15:06:54 PST 2016");
  size_t len = strlen(version);
  while (len && (version[len - 1] == '\n' || version[len - 1] == ' ')) version[--len] = 0;
  if (len > 120) version[120] = 0;
  buf o = {0}, w = {0};
  bs(&o, "{\"detected\":"); bj(&o, gvisor ? "runsc" : "runc"); bs(&o, ",\"release\":"); bj(&o, u.release); bs(&o, ",\"version\":"); bj(&o, version); bs(&o, "}");
  bj(&w, a_runtime);
  add("runtime", "the runtime seen from inside is the configured one", w.p, o.p, !strcmp(gvisor ? "runsc" : "runc", a_runtime),
      "the runtime's own hardening; a kernel version heuristic can be spoofed by nothing inside but is a heuristic");
  free(version); free(o.p); free(w.p);
}

static pathlist dev_chars, dev_blocks;
static int dev_unusual;
static buf dev_unusual_list;
static int allowed_device(const char *p) {
  const char *ok[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts/ptmx", "/dev/console"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) if (!strcmp(ok[i], p)) return 1;
  /* gVisor's sentry emulates these itself (using them needs capabilities that are dropped) */
  if (!strcmp(a_runtime, "runsc") && (!strcmp(p, "/dev/fuse") || !strcmp(p, "/dev/net/tun"))) return 1;
  return 0;
}
static void scan_dev(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISCHR(st.st_mode)) {
      plist_add(&dev_chars, p);
      if (!allowed_device(p)) { bs(&dev_unusual_list, dev_unusual++ ? "," : ""); bj(&dev_unusual_list, p); }
    } else if (S_ISBLK(st.st_mode)) plist_add(&dev_blocks, p);
    else if (S_ISDIR(st.st_mode)) scan_dev(p);
  }
  if (d) closedir(d);
}
static void devices(void) {
  scan_dev("/dev");
  buf o = {0};
  bs(&o, "{\"chars\":["); bs(&o, dev_chars.list.p ? dev_chars.list.p : ""); bs(&o, "],\"blocks\":["); bs(&o, dev_blocks.list.p ? dev_blocks.list.p : "");
  bs(&o, "],\"unusual\":["); bs(&o, dev_unusual_list.p ? dev_unusual_list.p : ""); bs(&o, "]}");
  add("devices", "only the usual character devices in /dev, no block devices", "\"null zero full random urandom tty ptmx; no block devices\"", o.p,
      dev_unusual == 0 && dev_blocks.n == 0, "device cgroup rules for devices created later (mknod needs CAP_MKNOD, dropped)");
  free(o.p);
}

static void find_setuid(const char *p, const struct stat *st, void *ctx) {
  if (S_ISREG(st->st_mode) && (st->st_mode & 06000)) plist_add(ctx, p);
}
static void setuid_files(void) {
  pathlist found = {0};
  walk("/", find_setuid, &found, 0);
  buf o = {0};
  bs(&o, "["); bs(&o, found.list.p ? found.list.p : ""); bs(&o, "]");
  add("setuid_files", "no setuid or setgid files in the image", "\"none\"", o.p, found.n == 0, "files in volumes mounted nosuid later");
  free(o.p); free(found.list.p);
}

/*
 * The syscall list lives once, in the static helper (sandbox-image/helper/syscalls.c), which
 * runs as its own child so that a call that unexpectedly succeeds (a new user namespace)
 * changes nothing for the other probes. Its output is one JSON object; each entry is read back.
 */
static void seccomp_syscalls(void) {
  int pipefd[2];
  char *out = NULL;
  if (pipe2(pipefd, O_CLOEXEC) == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      dup2(pipefd[1], 1);
      char *argv[] = {"/opt/mini-agent/syscall-probe", NULL};
      execve(argv[0], argv, environ);
      _exit(127);
    }
    close(pipefd[1]);
    buf b = {0};
    char tmp[4096];
    ssize_t n;
    while ((n = read(pipefd[0], tmp, sizeof tmp)) > 0) bput(&b, tmp, (size_t)n);
    close(pipefd[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    out = take(&b);
  }
  if (!out) out = strdup("");
  size_t len = strlen(out);
  while (len && (out[len - 1] == '\n' || out[len - 1] == ' ')) out[--len] = 0;
  const char *names[] = {"keyctl", "unshare", "mount", "bpf", "io_uring_setup", "userfaultfd", "clone3_newuser"};
  int all = 1, parsed = 1;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char key[64], error[32] = "";
    long ret = 0;
    int err = 0;
    snprintf(key, sizeof key, "\"%s\":{", names[i]);
    const char *at = strstr(out, key);
    if (!at || sscanf(at + strlen(key), "\"ret\":%ld,\"errno\":%d,\"error\":\"%31[A-Z_0-9]\"}", &ret, &err, error) != 3) { parsed = 0; all = 0; continue; }
    /* gVisor implements some of these itself or not at all: ENOSYS is a refusal too */
    if (!(ret < 0 && (!strcmp(error, "EPERM") || !strcmp(error, "ENOSYS")))) all = 0;
  }
  /* embed the helper's object as it printed it when every entry was read back; else as a string */
  char *observed = parsed && len > 1 && out[0] == '{' && out[len - 1] == '}' && !strchr(out, '\n') ? strdup(out) : jstr(out);
  add("seccomp_syscalls", "seccomp (or the runtime) refuses keyctl, unshare, mount, bpf, io_uring_setup, userfaultfd, and clone3 creating a user namespace",
      "\"EPERM for each (ENOSYS for clone3, and under gVisor)\"", observed, all, "other syscalls not in this list");
  free(observed);
  free(out);
}

static int usage(const char *why) {
  fprintf(stderr, "probe: %s\n", why);
  return 64;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage("every option takes a value");
    if (!strcmp(a, "--nonce")) a_nonce = v;
    else if (!strcmp(a, "--runtime")) a_runtime = v;
    else if (!strcmp(a, "--allow-env")) { if (a_nallow >= 256) return usage("too many --allow-env"); a_allow[a_nallow++] = v; }
    else if (!strcmp(a, "--canary-sha256")) a_canary_sha = v;
    else if (!strcmp(a, "--canary-name")) a_canary_name = v;
    else if (!strcmp(a, "--canary-file")) a_canary_file = v;
    else if (!strcmp(a, "--host-state-dir")) a_state_dir = v;
    else if (!strcmp(a, "--tmp-noexec")) a_tmp_noexec = strcmp(v, "0") != 0;
    else return usage("unknown option");
    i++;
  }
  if (!*a_nonce) return usage("--nonce is required");
  load_mounts();
  identity();
  capabilities();
  prctl_probe("no_new_privs", "no_new_privs is set", "NoNewPrivs", PR_GET_NO_NEW_PRIVS, 1, "nothing about setuid files (see setuid_files)");
  prctl_probe("seccomp_mode", "a seccomp filter is installed", "Seccomp", PR_GET_SECCOMP, 2,
              "which syscalls the filter denies (see seccomp_syscalls); under gVisor it needs runsc --oci-seccomp");
  readonly_root();
  writable_mounts();
  tmp_mount();
  control_readonly();
  proc_sys();
  proc_protect();
  int network_ok = network();
  docker_socket();
  environment();
  canary_file();
  pid_namespace();
  spawned_tree();
  runtime_probe();
  devices();
  setuid_files();
  seccomp_syscalls();
  outbound(network_ok);
  buf out = {0};
  bs(&out, "{\"nonce\":"); bj(&out, a_nonce); bs(&out, ",\"probes\":["); bs(&out, probes.p ? probes.p : ""); bs(&out, "]}\n");
  fwrite(out.p, 1, out.n, stdout);
  fflush(stdout);
  return 0;
}
