import { z } from "zod";
import { resolveWorkspaceArg } from "./workspace-arg.js";
import { SandboxExecRequest, SandboxTestsRequest, VerifyBeginRequest, VerifyRequest } from "../../../daemon/src/contracts/api.js";
import { type HealthBody, SandboxExecBody, SandboxTestsBody, VerificationBody, VerifyBegunBody } from "../../../daemon/src/contracts/api-responses.js";
import { IMAGE_FAMILIES } from "../../../daemon/src/contracts/sandbox.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import type { ApiClient } from "../../../client-lib/index.js";

/**
 * The MCP tools, each one daemon call: the server decides nothing, so a tool's
 * input is the daemon's request contract (the workspace optional when the
 * server was started with --workspace, or relative to it) and its structured output is the
 * daemon's answer contract as it came back.
 */
export type McpApi = Pick<ApiClient, "sandboxTests" | "sandboxExec" | "decideCheck" | "verifyBegin" | "verify" | "health" | "trace" | "getRun">;

export interface ToolDefaults {
  /** the server's --workspace (absolute): used when a call names none, and what a relative one is resolved against */
  workspace?: string;
}

interface ToolSpec<I extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.core.$ZodType;
  call(api: McpApi, args: z.infer<I>, defaults: ToolDefaults): Promise<Record<string, unknown>>;
  /** one line for a client that shows only text */
  summary(out: Record<string, unknown>): string;
}

const tool = <I extends z.ZodType>(spec: ToolSpec<I>) => spec;

function workspaceOf(args: { workspace?: string | undefined }, defaults: ToolDefaults): string {
  return resolveWorkspaceArg(args.workspace, defaults.workspace);
}

/**
 * The daemon's request contracts take an absolute workspace; a tool also takes
 * one relative to the server's --workspace (workspace-arg.ts resolves it).
 */
const WORKSPACE_NOTE =
  " `workspace`: an absolute path, or one relative to the server's --workspace (refused if it leads outside it); absent: the server's --workspace.";

const WorkspaceArg = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes("\0"), "must not contain NUL")
  .optional()
  .describe(
    "the project folder: an absolute path, or a path relative to the server's --workspace (which it must stay inside); absent: the server's --workspace",
  );

const IsolationStatusInput = z.strictObject({
  family: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(`an image family (${IMAGE_FAMILIES.join(", ")} or a custom one); absent: every family`),
});

const IsolationStatus = z.strictObject({
  engine: z.record(z.string(), z.unknown()),
  families: z.record(
    z.string(),
    z.strictObject({
      verdict: z.string(),
      passing: z.boolean(),
      reason: z.string().nullable(),
      generated_at: z.string().nullable(),
      probe_command: z.string().nullable(),
    }),
  ),
});

export const TOOLS = [
  tool({
    name: "sandbox_run_tests",
    title: "Run the workspace's tests in a fresh proven sandbox",
    description:
      "Runs the workspace's tests (detected, or the `test` command given as words) in a fresh container whose isolation the probes proved. " +
      "Returns counts, failing tests with their first error lines and the limits reached. Refused, with the probe command, when the isolation report is not passing; never runs on the host." +
      WORKSPACE_NOTE,
    input: SandboxTestsRequest.extend({ workspace: WorkspaceArg }),
    output: SandboxTestsBody,
    call: async (api, args, d) => api.sandboxTests({ ...args, workspace: workspaceOf(args, d) }),
    summary: (o) => {
      const r = o.result as Record<string, unknown>;
      const counts = typeof r.passed === "number" ? `${r.passed} passed, ${String(r.failed)} failed of ${String(r.discovered)}` : `exit ${String(r.exit_code)}`;
      return o.green ? `tests green: ${counts}` : `tests not green (${String(o.code)}): ${counts}; ${String(o.message)}`;
    },
  }),
  tool({
    name: "sandbox_exec",
    title: "Run one command in a fresh proven sandbox, under the command policy",
    description:
      "Runs one argv (no shell) in a fresh sandbox of the workspace's family, with a copy of the workspace and no network, if the daemon's command policy allows it. " +
      "Denied commands never run. A command the policy asks about is put to a person: through your MCP client when it supports elicitation, else the call is refused with an approval id and the command a person runs to approve it; call again with that approval_id once they have. " +
      "Files the command changed are listed and discarded, never copied back. Refused, with the probe command, when the isolation report is not passing." +
      WORKSPACE_NOTE,
    input: SandboxExecRequest.extend({ workspace: WorkspaceArg }),
    output: SandboxExecBody,
    call: async (api, args, d) => api.sandboxExec({ ...args, workspace: workspaceOf(args, d) }),
    summary: (o) => {
      const r = o.result as Record<string, unknown>;
      return o.ok ? `exit ${String(r.exit_code)} (allowed by ${String(o.rule)}); changed files discarded` : `${String(o.code)}: ${String(o.message)}`;
    },
  }),
  tool({
    name: "verify_begin",
    title: "Record the workspace's baseline before the work starts",
    description:
      "Records the workspace as it is now in the mini-agent daemon's state dir (outside the workspace). `verify` later judges the work against it. Calling it again replaces the baseline." +
      WORKSPACE_NOTE,
    input: VerifyBeginRequest.extend({ workspace: WorkspaceArg }),
    output: VerifyBegunBody,
    call: async (api, args, d) => api.verifyBegin({ ...args, workspace: workspaceOf(args, d) }),
    summary: (o) => `baseline recorded at ${String(o.recorded_at)}: ${String(o.files)} files`,
  }),
  tool({
    name: "verify",
    title: "The host Verifier's verdict on the workspace",
    description:
      "The host Verifier judges the workspace against the baseline verify_begin recorded: protected paths unchanged, no secret in the diff, " +
      "the tests in a fresh proven sandbox, the policy's extra verify commands. Only this verdict says the work is done; the caller cannot set it." +
      WORKSPACE_NOTE,
    input: VerifyRequest.extend({ workspace: WorkspaceArg }),
    output: VerificationBody,
    call: async (api, args, d) => api.verify({ ...args, workspace: workspaceOf(args, d) }),
    summary: (o) => (o.passed ? "verified: completed" : `not verified: ${String(o.reason)}`),
  }),
  tool({
    name: "isolation_status",
    title: "The isolation probes' verdict per image family",
    description:
      "Whether each image family's sandbox is proven (the latest isolation report passed for the current image, HostConfig, engine and runtime), and what to run when it is not.",
    input: IsolationStatusInput,
    output: IsolationStatus,
    call: async (api, args) => isolationStatus(await api.health(), args.family),
    summary: (o) =>
      Object.entries(o.families as z.infer<typeof IsolationStatus>["families"])
        .map(([f, v]) => `${f}: ${v.verdict}${v.passing ? "" : ` (run: ${String(v.probe_command)})`}`)
        .join("; ") || "no family reported",
  }),
];

/**
 * health's verdicts as a tool answer. health names the other families and gives the
 * configured one as `isolation`: it is the built-in family the others leave out.
 */
export function isolationStatus(h: HealthBody, family?: string): z.infer<typeof IsolationStatus> {
  const others = h.families ?? {};
  const configured = IMAGE_FAMILIES.find((f) => !Object.hasOwn(others, f)) ?? "configured";
  const all: Record<string, HealthBody["isolation"]> = { [configured]: h.isolation, ...others };
  const families: z.infer<typeof IsolationStatus>["families"] = {};
  for (const [name, v] of Object.entries(all)) {
    if (family !== undefined && name !== family) continue;
    const passing = v.verdict === "passed";
    const probe = name === configured ? "mini-agent-client probe" : `mini-agent-client probe --family ${name}`;
    families[name] = { verdict: v.verdict, passing, reason: v.reason, generated_at: v.generated_at, probe_command: passing ? null : probe };
  }
  if (family !== undefined && Object.keys(families).length === 0)
    throw new MiniAgentError("unknown_image_family", `no image family ${JSON.stringify(family)} on this daemon; known: ${Object.keys(all).join(", ")}`);
  return { engine: h.engine, families };
}
