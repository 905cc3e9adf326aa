import fs from "node:fs";
import path from "node:path";
import type { PolicyRules } from "../contracts/policy.js";
import { MiniAgentError } from "../errors.js";
import { sha256Hex } from "../workspace/hash.js";
import { refuseUnaskable } from "./daemon-policy.js";
import { parseWorkspacePolicy } from "./policy-file.js";

/** Where a workspace may carry its own rules; they can only tighten the daemon's (policy/effective.ts). */
export const WORKSPACE_POLICY_FILE = ".mini-agent/policy.json";
/** a rules file is a few hundred bytes; anything far larger is not one */
export const WORKSPACE_POLICY_MAX_BYTES = 64 * 1024;

export interface WorkspacePolicy {
  rules: PolicyRules;
  /** sha256 of the file's bytes */
  digest: string;
}

/**
 * Reads `<root>/.mini-agent/policy.json` as untrusted content: never through a
 * link (the folder and the file are checked with lstat, the file opened with
 * O_NOFOLLOW), a regular file with one link, at most 64 KiB. Absent: null. A
 * broken one is `policy_invalid` naming the file and line: the run is refused
 * rather than started without the rules its workspace asked for.
 */
export function readWorkspacePolicy(root: string): WorkspacePolicy | null {
  const dir = path.join(root, path.dirname(WORKSPACE_POLICY_FILE));
  const file = path.join(root, WORKSPACE_POLICY_FILE);
  const refuse = (why: string) => new MiniAgentError("policy_invalid", `${file}: ${why}`);
  let dirStat: fs.Stats;
  try {
    dirStat = fs.lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (dirStat.isSymbolicLink() || !dirStat.isDirectory()) throw refuse(`${path.dirname(WORKSPACE_POLICY_FILE)} is not a folder (links are never followed)`);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    throw refuse(code === "ELOOP" ? "is a link (links are never followed)" : `cannot be read (${code ?? "error"})`);
  }
  let text: string;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw refuse("is not a regular file");
    if (st.nlink > 1) throw refuse("is hard-linked elsewhere");
    if (st.size > WORKSPACE_POLICY_MAX_BYTES) throw refuse(`is larger than ${WORKSPACE_POLICY_MAX_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    const n = fs.readSync(fd, buf, 0, st.size, 0);
    text = buf.subarray(0, n).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
  const rules = parseWorkspacePolicy(text, file);
  refuseUnaskable(rules, [], text, file);
  return { rules, digest: sha256Hex(text) };
}
