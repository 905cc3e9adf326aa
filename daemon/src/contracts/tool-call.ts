import { z } from "zod";
import { FileVersion, Id, RelPath, Sha256Hex } from "./common.js";
import { ERROR_CODES } from "../errors.js";

/**
 * The one tool protocol. Argument schemas are strict: an unknown field is
 * `invalid_fields`, never silently dropped. Tool descriptions sent to a
 * model are generated from these schemas (see tools/descriptions.ts).
 */
export const ReadFileArgs = z
  .strictObject({
    path: RelPath,
    start: z.int().min(1).max(1_000_000).optional().describe("first line, 1-based"),
    end: z.int().min(1).max(1_000_000).optional().describe("last line, inclusive"),
  })
  .describe("Read a text file. Returns its lines, its SHA-256 version, total lines and the returned range.");

export const SearchArgs = z
  .strictObject({
    query: z.string().min(1).max(256).describe("literal text to find"),
    path: RelPath.optional().describe("restrict to this file or folder"),
  })
  .describe("Search the workspace for literal text. Returns path, line and snippet per hit.");

export const ListFilesArgs = z
  .strictObject({
    path: RelPath.optional().describe("folder to list (default: the workspace root)"),
    glob: z.string().min(1).max(256).optional().describe("only files whose path relative to `path` matches this glob, e.g. `**/*.py`"),
    limit: z.int().min(1).max(2000).optional().describe("at most this many files (default 200)"),
  })
  .describe(
    "List the files under a workspace folder, sorted, with sizes. Honours .gitignore; forbidden files are never listed; symlinks are not followed. `truncated` when there are more than `limit`.",
  );

export const ApplyPatchArgs = z
  .strictObject({
    path: RelPath,
    version: FileVersion.describe("SHA-256 of the file as last read, or `absent` to create a new file"),
    old: z.string().max(65_536).describe("exact text to replace; must occur exactly once (empty when creating)"),
    new: z.string().max(65_536).describe("replacement text"),
  })
  .describe("Replace exactly one occurrence of `old` with `new` in a file whose current version is `version`. Needs approval.");

export const RunTestsArgs = z
  .strictObject({
    preset: z.string().min(1).max(64).describe("a test preset named by the task"),
  })
  .describe("Run a test preset from the task spec inside the sandbox and report discovered/passed/failed.");

/** One argv element: a word, never a shell string. NUL cannot cross exec(2), so it is refused rather than cut. */
const ArgvWord = z
  .string()
  .min(1)
  .max(4096)
  .refine((w) => !w.includes("\u0000"), "must not contain NUL");

export const RUN_COMMAND_MAX_TIMEOUT_SECONDS = 600;

export const RunCommandArgs = z
  .strictObject({
    argv: z.array(ArgvWord).min(1).max(64).describe("the program and its arguments, one word each; no shell, so no pipes, `&&`, redirections or `$VARS`"),
    timeout_seconds: z
      .int()
      .min(1)
      .max(RUN_COMMAND_MAX_TIMEOUT_SECONDS)
      .optional()
      .describe("stop the command after this many seconds (default: the run's per-call budget)"),
  })
  .describe(
    "Run one command (argv, never a shell string) inside the run's sandbox: no network, the workspace as a copy. " +
      "A command policy allows it, asks the user first, or denies it before anything runs. " +
      "Files the command creates, changes or deletes in the sandbox are DISCARDED, never copied back; the result lists them as `changed_in_sandbox`. " +
      "apply_patch is the only way to change the workspace. Returns exit_code, stdout/stderr tails and `truncated`.",
  );

export const ShowDiffArgs = z.strictObject({}).describe("Show the unified diff of the workspace against the run's baseline.");

export const TOOL_ARGS = {
  read_file: ReadFileArgs,
  search: SearchArgs,
  list_files: ListFilesArgs,
  apply_patch: ApplyPatchArgs,
  run_tests: RunTestsArgs,
  show_diff: ShowDiffArgs,
  run_command: RunCommandArgs,
} as const;

export type ToolName = keyof typeof TOOL_ARGS;
export const TOOL_NAMES = Object.keys(TOOL_ARGS) as ToolName[];

/** What a decision source proposes. Exactly these three fields. */
export const ToolCall = z.strictObject({
  call_id: Id,
  name: z.string().min(1).max(64),
  // a record drops an own "__proto__" key (JSON.parse makes one) without a word;
  // it is refused here instead, before the key can silently vanish
  arguments: z.preprocess(
    (value, ctx) => {
      if (value !== null && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
        ctx.addIssue({ code: "custom", message: 'Unrecognized key: "__proto__"', input: value });
      }
      return value;
    },
    z.record(z.string(), z.unknown()),
  ),
});
export type ToolCall = z.infer<typeof ToolCall>;

export type ToolArgs<N extends ToolName> = z.infer<(typeof TOOL_ARGS)[N]>;

export const ToolErrorCode = z.enum(ERROR_CODES);

export const ToolResult = z
  .strictObject({
    call_id: Id,
    ok: z.boolean(),
    data: z.unknown(),
    error: z.strictObject({ code: ToolErrorCode, message: z.string().max(2048) }).nullable(),
    truncated: z.boolean(),
  })
  .refine((r) => (r.ok ? r.error === null : r.error !== null), {
    message: "ok=true requires error=null; ok=false requires an error code",
  });
export type ToolResult = z.infer<typeof ToolResult>;

/**
 * A prepared apply_patch: the contract an approval binds to and the record the
 * ledger keeps between proposal, approval and write. Nothing is written when it
 * is created; tools/apply-patch.ts commits it after re-checking the workspace.
 */
export const PreparedAction = z.strictObject({
  schema_version: z.literal(1),
  /** derived from run_id, call_id and the call's content (tools/apply-patch.ts actionIdFor): unique across runs */
  action_id: Id,
  /** the run that proposed it: part of the id, so two runs never share an action id */
  run_id: Id,
  call_id: Id,
  tool: z.literal("apply_patch"),
  arguments: ApplyPatchArgs,
  /** normalized workspace-relative path */
  path: RelPath,
  created: z.boolean(),
  before_hash: FileVersion,
  after_hash: Sha256Hex,
  /** workspace manifest digest at proposal time */
  manifest_digest: Sha256Hex,
  /** SHA-256 of the canonical {name, arguments} */
  args_digest: Sha256Hex,
  /** the unified diff the write is expected to produce */
  diff: z.string(),
  new_content: z.string(),
  /** file mode bits to write with (the existing file's, or 0644 for a new file) */
  mode: z.int().min(0).max(0o7777),
});
export type PreparedAction = z.infer<typeof PreparedAction>;

/**
 * A run_command the policy asked about: what an approval binds to (run, action
 * id, argument digest, workspace digest) and what the ledger keeps until the
 * user decides. It never writes the workspace, so the ledger's write machinery
 * (intent, receipt, three-state recovery) never touches it.
 */
export const PreparedCommand = z.strictObject({
  schema_version: z.literal(1),
  /** derived like a write's (tools/apply-patch.ts actionIdFor) from run, call, arguments and workspace digest */
  action_id: Id,
  run_id: Id,
  call_id: Id,
  tool: z.literal("run_command"),
  arguments: RunCommandArgs,
  args_digest: Sha256Hex,
  /** workspace digest at proposal: a changed workspace makes the approval stale */
  workspace_digest: Sha256Hex,
  /** the policy rule that asked, e.g. `policy:interactive:tools.command` */
  rule: z.string().min(1).max(512),
});
export type PreparedCommand = z.infer<typeof PreparedCommand>;

/** What a committed write leaves behind, for the ledger's receipt. */
export const WriteReceipt = z.strictObject({
  schema_version: z.literal(1),
  action_id: Id,
  path: RelPath,
  before_hash: FileVersion,
  after_hash: Sha256Hex,
  created: z.boolean(),
});
export type WriteReceipt = z.infer<typeof WriteReceipt>;
