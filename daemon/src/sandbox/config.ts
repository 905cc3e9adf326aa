import { z } from "zod";
import { describeZodError } from "../contracts/common.js";
import { type BuiltinFamily, IMAGE_FAMILIES, Runtime } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { familySandboxDefaults } from "./families.js";

/**
 * Every sandbox default in one object. Overrides are validated strictly: an
 * unknown option is an error naming the known ones, never silently ignored.
 */
export const SANDBOX_DEFAULTS = {
  /** OCI runtime: `runc` (default) or `runsc` (gVisor, registered in /etc/docker/daemon.json). */
  runtime: "runc" as Runtime,
  /** image family in the lock (see sandbox-image/definitions.ts). */
  imageFamily: "node",
  /**
   * the built-in family a custom family was built FROM (its lock entry's base; families.ts customFamilyNeeds
   * sets it), whose install tool it has; null for a built-in family, which is its own base
   */
  familyBase: null as BuiltinFamily | null,
  /** when set, this tag must resolve to the pinned digest (else image_digest_mismatch). */
  imageTag: null as string | null,
  memoryBytes: 512 * 1024 * 1024,
  pidsLimit: 256,
  nanoCpus: 1_000_000_000,
  /** size caps of the three writable places: /tmp, /workspace and /control (tmpfs, so no host disk). */
  tmpfsBytes: 64 * 1024 * 1024,
  /** /tmp is noexec unless the family runs what it builds there (go test; see families.ts). */
  tmpExec: false,
  workspaceBytes: 128 * 1024 * 1024,
  controlBytes: 16 * 1024 * 1024,
  /** stdout+stderr kept per exec; beyond it `truncated: true`. */
  outputCapBytes: 1024 * 1024,
  /** bound on the bookkeeping steps (clear, settle, sync) in a warm sandbox. */
  controlExecTimeoutMs: 20_000,
  /**
   * Names the daemon (its state dir) on every container's labels, so that daemon's
   * start-up reaper removes whatever it left (probe sandboxes included) and never a
   * sandbox of another daemon sharing the engine. Not part of the HostConfig hash.
   */
  instance: null as string | null,
  /** names a caller may pass in `env`; the daemon's own environment is never passed. */
  envAllowlist: ["CI", "NODE_ENV", "NO_COLOR", "FORCE_COLOR", "TZ", "LANG", "MINI_AGENT_NONCE"] as string[],
  /** env every exec gets (the image's PATH/HOME are fixed here, not inherited). */
  baseEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8" } as Record<string, string>,
};

export type SandboxConfig = typeof SANDBOX_DEFAULTS;

const Overrides = z.strictObject({
  runtime: z.optional(Runtime),
  imageFamily: z.string().min(1).max(64).optional(),
  familyBase: z.enum(IMAGE_FAMILIES).nullable().optional(),
  imageTag: z.string().min(1).max(256).nullable().optional(),
  memoryBytes: z
    .int()
    .min(16 * 1024 * 1024)
    .optional(),
  pidsLimit: z.int().min(8).max(32_768).optional(),
  nanoCpus: z.int().min(10_000_000).optional(),
  tmpfsBytes: z
    .int()
    .min(1024 * 1024)
    .optional(),
  tmpExec: z.boolean().optional(),
  workspaceBytes: z
    .int()
    .min(1024 * 1024)
    .optional(),
  controlBytes: z
    .int()
    .min(1024 * 1024)
    .optional(),
  outputCapBytes: z.int().min(1024).optional(),
  controlExecTimeoutMs: z.int().min(1000).optional(),
  instance: z
    .string()
    .regex(/^[a-f0-9]{8,64}$/, "lowercase hex, 8-64 characters")
    .nullable()
    .optional(),
  envAllowlist: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/)).optional(),
  baseEnv: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string()).optional(),
});
export type SandboxOverrides = z.input<typeof Overrides>;

export function resolveSandboxConfig(overrides: unknown = {}): SandboxConfig {
  const parsed = Overrides.safeParse(overrides ?? {});
  if (!parsed.success) {
    throw new MiniAgentError(
      "invalid_fields",
      `invalid sandbox options (known: ${Object.keys(SANDBOX_DEFAULTS).join(", ")}): ${describeZodError(parsed.error)}`,
    );
  }
  const clean = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  // the family's own needs sit between the defaults and what the caller asked for
  const family = (clean.imageFamily as string | undefined) ?? SANDBOX_DEFAULTS.imageFamily;
  return { ...SANDBOX_DEFAULTS, ...familySandboxDefaults(family), ...clean } as SandboxConfig;
}

/** Allowlisted env for one exec; an unlisted name is refused, not dropped, so a caller learns about it. */
export function buildExecEnv(config: SandboxConfig, requested: Record<string, string> | undefined): string[] {
  const env: Record<string, string> = { ...config.baseEnv };
  for (const [k, v] of Object.entries(requested ?? {})) {
    if (!config.envAllowlist.includes(k)) {
      throw new MiniAgentError("invalid_fields", `env name ${k} is not allowed in the sandbox (allowed: ${config.envAllowlist.join(", ")})`);
    }
    env[k] = v;
  }
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}
