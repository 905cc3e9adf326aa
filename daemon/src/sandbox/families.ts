/**
 * What an image family needs from the sandbox beyond the defaults (issue 11). Applied
 * under the caller's own overrides by resolveSandboxConfig, so it is part of the
 * config, of the HostConfig, and of the HostConfig hash the isolation report is keyed
 * by: the probes of a family run with exactly its candidate HostConfig.
 *
 * go: `go test` builds the test binary under GOTMPDIR (/tmp) and executes it there, so
 * /tmp is exec for this family (/workspace, writable by the same user, is exec in every
 * family already: noexec on /tmp was defence in depth, not a boundary). GOCACHE lives
 * there too: 512 MiB of tmpfs, and a memory limit that leaves room for the compiler
 * while the tmpfs pages (charged to the container) are in use.
 */
import { ImageFamily } from "../contracts/test-report.js";
import { MiniAgentError } from "../errors.js";

/** A family name as a user gave it (`--image-family`), checked: unknown_image_family names the known ones. */
export function requireImageFamily(raw: string): ImageFamily {
  const f = ImageFamily.safeParse(raw);
  if (!f.success) throw new MiniAgentError("unknown_image_family", `unknown image family ${JSON.stringify(raw)}; use one of ${ImageFamily.options.join(", ")}`);
  return f.data;
}

/** The SandboxConfig fields a family may set (named here, not imported, so config.ts can import this file without a cycle). */
export interface FamilySandbox {
  tmpfsBytes?: number;
  tmpExec?: boolean;
  memoryBytes?: number;
}

export const FAMILY_SANDBOX: Record<string, FamilySandbox> = {
  go: { tmpfsBytes: 512 * 1024 * 1024, tmpExec: true, memoryBytes: 1024 * 1024 * 1024 },
};

export function familySandboxDefaults(family: string): FamilySandbox {
  return Object.hasOwn(FAMILY_SANDBOX, family) ? { ...FAMILY_SANDBOX[family] } : {};
}
