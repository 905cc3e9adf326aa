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
import { type BuiltinFamily, IMAGE_FAMILIES, isBuiltinFamily } from "../contracts/sandbox.js";
import { ImageFamily } from "../contracts/test-report.js";
import { MiniAgentError } from "../errors.js";
import { type ImageLock, readImageLockSync } from "./image-lock.js";

/** The families a daemon knows: the built-in ones, then the custom ones its image lock records. */
export function knownFamilies(lock: ImageLock | null): string[] {
  const custom = Object.entries(lock?.images ?? {})
    .filter(([name, entry]) => !isBuiltinFamily(name) && entry.base !== undefined)
    .map(([name]) => name)
    .sort();
  return [...IMAGE_FAMILIES, ...custom];
}

/**
 * The families of the image lock at `lockPath` (knownFamilies): what a worker on that state dir may
 * take cases of. A lock that is missing or unreadable pins no custom family; the daemon's own
 * preflight says what is wrong with it.
 */
export function knownFamiliesAt(lockPath: string): string[] {
  try {
    return knownFamilies(readImageLockSync(lockPath));
  } catch {
    return knownFamilies(null);
  }
}

/** The unknown_image_family error, naming what to use instead (and how a custom family is made). */
export function unknownFamily(raw: string, known: readonly string[]): MiniAgentError {
  return new MiniAgentError(
    "unknown_image_family",
    `unknown image family ${JSON.stringify(raw)}; use one of ${known.join(", ")} (a custom family is built with \`npm run image:build -- --family NAME --dockerfile PATH\`)`,
    { details: { family: raw, known: [...known] } },
  );
}

/**
 * A family name as a user gave it (`--image-family`), checked for its shape: unknown_image_family
 * names the built-in ones. A well-formed name the daemon has not pinned is refused by the
 * executor's preflight, before the run exists, with the lock's families named (image-pin.ts).
 */
export function requireImageFamily(raw: string): ImageFamily {
  const f = ImageFamily.safeParse(raw);
  if (!f.success) throw unknownFamily(raw, IMAGE_FAMILIES);
  return f.data;
}

/**
 * The built-in family whose conventions a family follows (its sandbox needs below, its test
 * timeouts): itself, or the base a custom family was built FROM, as its lock entry records.
 * null for a family the lock does not know.
 */
export function familyBase(family: string, lock: ImageLock | null): BuiltinFamily | null {
  if (isBuiltinFamily(family)) return family;
  const base = lock?.images[family]?.base;
  return base !== undefined && isBuiltinFamily(base) ? base : null;
}

/** The SandboxConfig fields a family may set (named here, not imported, so config.ts can import this file without a cycle). */
export interface FamilySandbox {
  tmpfsBytes?: number;
  tmpExec?: boolean;
  memoryBytes?: number;
  /** a custom family's base, so its config says which install tool it has (install-tools.ts familyInstallKind) */
  familyBase?: BuiltinFamily;
}

export const FAMILY_SANDBOX: Record<string, FamilySandbox> = {
  go: { tmpfsBytes: 512 * 1024 * 1024, tmpExec: true, memoryBytes: 1024 * 1024 * 1024 },
};

export function familySandboxDefaults(family: string): FamilySandbox {
  return Object.hasOwn(FAMILY_SANDBOX, family) ? { ...FAMILY_SANDBOX[family] } : {};
}

/**
 * The sandbox needs a custom family takes from its base (a family FROM go runs `go test` and needs
 * go's exec /tmp) and the base itself (its install tool), to merge into its sandbox overrides; a built-in family gets its own from
 * resolveSandboxConfig. Read from the lock when the family's executor is made; an unreadable lock
 * adds nothing (the preflight then refuses the family with the lock's own error).
 */
export function customFamilyNeeds(family: string, lockPath: string): FamilySandbox {
  if (isBuiltinFamily(family)) return {};
  let lock: ImageLock | null;
  try {
    lock = readImageLockSync(lockPath);
  } catch {
    return {};
  }
  const base = familyBase(family, lock);
  return base === null ? {} : { ...familySandboxDefaults(base), familyBase: base };
}
