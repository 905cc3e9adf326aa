import { z } from "zod";
import { VerifyCommand, VerifyCommands } from "./task-spec.js";

/**
 * The policy file (`mini-agent-daemon --policy FILE`, default
 * `<state-dir>/policy.json`) and a workspace's `.mini-agent/policy.json`.
 * Strict: an unknown key is an error, never ignored (a misspelt `deny` must
 * not silently allow). Both files have this shape; a workspace file can only
 * tighten (policy/effective.ts).
 */
export const PolicyVerdict = z.enum(["allow", "ask", "deny"]);
export type PolicyVerdict = z.infer<typeof PolicyVerdict>;

/** What a tool does: read_file/search/list_files/show_diff, apply_patch, run_command, run_tests. */
export const ToolClass = z.enum(["read", "write", "command", "test"]);
export type ToolClass = z.infer<typeof ToolClass>;

export const PROFILE_NAMES = ["interactive", "ci", "eval"] as const;
export const ProfileName = z.enum(PROFILE_NAMES);
export type ProfileName = z.infer<typeof ProfileName>;

const Glob = z.string().min(1).max(256);
/**
 * The operand placeholders an allow entry may use (policy/argv-shape.ts checks
 * each operand): `<path>` a file or folder of the workspace (relative, no `..`,
 * not an option), `<pkg>` a Go package pattern inside the module (`.`, `./...`,
 * `./dir/...`); with `...` appended, one or more of them.
 */
export const SHAPE_OPERANDS = ["<path>", "<pkg>"] as const;
/** an entry's last word `...`: any further words (a file's explicit choice; no built-in entry uses it) */
export const SHAPE_ANY_REST = "...";

/**
 * An allow entry: the WHOLE argv it allows, word for word, with placeholders
 * for operands: `["node","--check","<path>"]` allows `node --check src/a.js`,
 * never `node --check --import data:...`. Anything else is unlisted.
 */
export const ArgvShape = z
  .array(z.string().min(1).max(256))
  .min(1)
  .max(16)
  .superRefine((shape, ctx) => {
    const bad = (i: number, message: string) => ctx.addIssue({ code: "custom", path: [i], message });
    for (const [i, w] of shape.entries()) {
      const last = i === shape.length - 1;
      const placeholder = /^<[^>]*>(\.\.\.)?$/.test(w);
      if (i === 0 && (placeholder || w === SHAPE_ANY_REST)) bad(i, "the first word is the program itself, never a placeholder");
      else if (w === SHAPE_ANY_REST && !last) bad(i, '"..." (any further words) can only end an entry');
      else if (placeholder && !(SHAPE_OPERANDS as readonly string[]).includes(w.replace(/\.\.\.$/, "")))
        bad(i, `unknown placeholder ${w}; use ${SHAPE_OPERANDS.join(", ")} (one operand) or the same with "..." (one or more)`);
      else if (placeholder && w.endsWith("...") && !last) bad(i, `${w} (one or more operands) can only end an entry`);
    }
  });

/** a deny token: one word (a program or an argument), or words that must appear in this order (`git push`) */
const DenyToken = z
  .string()
  .min(1)
  .max(128)
  .refine((t) => t.trim() === t && !/\s{2,}/.test(t), "no leading, trailing or doubled spaces");

export const PolicyRules = z.strictObject({
  /** allow / ask / deny per tool class */
  tools: z.strictObject({ read: PolicyVerdict, write: PolicyVerdict, command: PolicyVerdict, test: PolicyVerdict }).partial().optional(),
  /** writes to paths matching these globs are approved by the policy (still bound, recorded, crash-safe) */
  auto_edit: z.array(Glob).max(64).optional(),
  /**
   * writes the task itself allows (inside its `writable` globs; the task's own rules
   * are decided first) are approved by the policy, as `auto_edit` approves its globs:
   * what an unattended eval needs, since each case's task names its own writable paths.
   * A workspace file may switch it off, never on.
   */
  auto_edit_writable: z.boolean().optional(),
  commands: z
    .strictObject({
      /** whole-argv shapes that run without asking (when `tools.command` is not deny) */
      allow: z.array(ArgvShape).max(128).optional(),
      /**
       * what a command NOT on the allowlist gets: `ask` a person, or `deny`
       * (unattended profiles: nobody is there to ask). The stricter of this
       * and `tools.command` applies; absent: `tools.command`.
       */
      unlisted: z.enum(["ask", "deny"]).optional(),
      /** matched on every argv element and each program's basename; deny beats every allow */
      deny_tokens: z.array(DenyToken).max(256).optional(),
    })
    .optional(),
  /** extra checks the Verifier runs for every run (lint, type check); they only add up, a workspace file may add but never remove */
  verify_commands: VerifyCommands.optional(),
});
export type PolicyRules = z.infer<typeof PolicyRules>;

export const PolicyFile = z.strictObject({
  schema_version: z.literal(1),
  ...PolicyRules.shape,
  /** the profile a run gets without `--policy-profile` */
  default_profile: ProfileName.optional(),
  /** per-profile rules applied over the file's own top-level rules */
  profiles: z.partialRecord(ProfileName, PolicyRules).optional(),
});
export type PolicyFile = z.infer<typeof PolicyFile>;

/**
 * The policy a run actually gets: every field resolved. Resolved once when the
 * run is created and stored with the run (RunRecord.policy), so a later edit
 * of the policy file never changes what a run already started with.
 */
export const EffectivePolicy = z.strictObject({
  profile: ProfileName,
  tools: z.strictObject({ read: PolicyVerdict, write: PolicyVerdict, command: PolicyVerdict, test: PolicyVerdict }),
  auto_edit: z.array(Glob),
  /** absent in a policy resolved before it existed: false */
  auto_edit_writable: z.boolean().optional(),
  command_allow: z.array(ArgvShape),
  /** what an unlisted command gets (`commands.unlisted`); absent: `tools.command` decides alone */
  command_unlisted: z.enum(["ask", "deny"]).optional(),
  deny_tokens: z.array(DenyToken),
  /** the daemon's verify commands (file, then profile; a later one of the same name replaces); absent in a policy resolved before they existed */
  verify_commands: z.array(VerifyCommand).optional(),
  /** the workspace's own `.mini-agent/policy.json`, applied only to tighten; null when there is none */
  workspace: PolicyRules.nullable(),
  /** the daemon's policy file, or null for the built-in default */
  source: z.string().nullable(),
  /**
   * the run's sandbox image and the programs on its PATH, read when the run was created: the
   * allowlist above keeps only entries it has, and a command naming another program is refused
   * (policy/image-programs.ts). Absent: not known (a run without an image, or made before this).
   */
  image: z.strictObject({ family: z.string().min(1).max(64), programs: z.array(z.string().min(1).max(255)).max(10_000) }).optional(),
});
export type EffectivePolicy = z.infer<typeof EffectivePolicy>;
