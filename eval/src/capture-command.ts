import path from "node:path";
import { parseCli } from "../../daemon/src/config/cli-args.js";
import { usageFail } from "./usage.js";
import { CAPTURE_LEFT_OUT_TEXT } from "../../daemon/src/contracts/api-responses.js";
import { CaseExpect } from "../../daemon/src/contracts/eval-case.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { ApiClient, EXIT, termSafe, resolveTarget } from "../../client-lib/index.js";
import type { EvalCommand, EvalIO } from "./command.js";

const USAGE = `usage: mini-agent-client eval capture RUN --out DIR [--json] [--socket PATH] [--state-dir DIR]

Writes the finished run RUN as a self-contained eval case in DIR (new, or an
empty folder): repo/ as it was at the run's baseline, task.json, control/ when
the task had one, replay.json rebuilt from the run's decisions, and
expect.json with defaults taken from the run. Edit expect.json to say what
the case must show (evals/README.md describes every field).`;

function usageError(io: EvalIO, message: string): number {
  return usageFail(io, "eval capture", message);
}

export const captureCommand: EvalCommand = {
  async main(argv, io) {
    const parsed = parse(argv);
    if (!parsed.ok) return usageError(io, parsed.message);
    const { values, positionals } = parsed;
    if (values.help) {
      io.out(`${USAGE}\n`);
      return EXIT.ok;
    }
    if (positionals.length !== 1) return usageError(io, positionals.length === 0 ? "RUN is required" : `one RUN only (got ${positionals.length})`);
    if (values.out === undefined || values.out === "") return usageError(io, "--out DIR is required");
    const runId = positionals[0]!;
    const out = path.resolve(io.cwd, values.out);
    const target = resolveTarget(values, io);
    const api = new ApiClient({ socketPath: target.socketPath, stateDir: target.stateDir, explicitSocket: target.explicitSocket });
    const r = await api.capture(runId, out);
    // the daemon wrote it; the client checks the one file a person edits next against the same schema the loader uses
    const expect = CaseExpect.safeParse(r.expect);
    if (!expect.success) throw new MiniAgentError("internal", "the daemon answered with an expect.json that is not a valid CaseExpect");
    if (values.json) {
      io.out(`${JSON.stringify(r)}\n`);
      return EXIT.ok;
    }
    const repoFiles = r.files.filter((f) => f.startsWith("repo/")).length;
    const controlFiles = r.files.filter((f) => f.startsWith("control/")).length;
    const lines = [
      `captured run ${r.run_id} as an eval case in ${r.out}`,
      `  repo/        ${repoFiles} file(s), as at the run's baseline`,
      ...(controlFiles > 0 ? [`  control/     ${controlFiles} file(s)`] : []),
      "  task.json    the run's task",
      "  replay.json  the run's decisions, in order",
      "  expect.json  defaults from the run:",
      ...describeExpect(expect.data).map((l) => `    ${l}`),
      // one line per folder the export rule refused as a whole (a .git of 27 files is one line), else per path
      ...(r.left_out_groups.length > 0 ? ["left out of repo/:"] : []),
      ...r.left_out_groups.map((g) => `  ${g.path}${g.files > 1 ? ` (${g.files} files)` : ""}: ${CAPTURE_LEFT_OUT_TEXT[g.reason]}`),
      `edit ${path.join(r.out, "expect.json")} to say what the case must show, then: mini-agent-client eval run ${r.out} --output DIR`,
    ];
    // paths and names here come from the run's repository and the model: each line terminal-safe
    io.out(`${lines.map((l) => termSafe(l)).join("\n")}\n`);
    return EXIT.ok;
  },
};

function parse(argv: string[]) {
  return parseCli(argv, {
    out: { type: "string" },
    json: { type: "boolean" },
    socket: { type: "string" },
    "state-dir": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
}

function describeExpect(e: CaseExpect): string[] {
  const l: string[] = [`status: ${e.status}${e.reason !== undefined ? `, reason: ${e.reason ?? "(none)"}` : ""}`];
  if (e.require?.must_call) l.push(`must_call: ${e.require.must_call.join(", ")}`);
  if (e.require?.must_write_creatable) l.push("must_write_creatable: true");
  if (e.require?.red_before_green) l.push("red_before_green: true");
  const forbid = Object.entries(e.forbid ?? {})
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  if (forbid.length > 0) l.push(`forbid: ${forbid.join(", ")}`);
  if (e.limits)
    l.push(
      `limits: ${Object.entries(e.limits)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
  if (e.stale_calls) l.push(`stale_calls: ${e.stale_calls.join(", ")}`);
  return l;
}
