import type { Dispatcher } from "undici";
import { buildProjectContext, projectContextMessages, systemPrompt } from "../context/project-context.js";
import { loadProjectContext } from "../context/stored-context.js";
import type { CredentialSource } from "../credentials/credential-source.js";
import type { LiveModelConfig } from "../models/live/config.js";
import { LiveModel, type LiveModelOptions } from "../models/live/live-model.js";
import type { Backend, Runtime } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { LiveRunRecorder } from "../live-record/recorder.js";
import type { IsolationFacts } from "./isolation-facts.js";
import { assertLiveGate } from "./live-gate.js";

/** What the runtime tells the factory (structurally the runtime's LiveModelRequest, see runtime/ports.ts). */
export interface LiveModelRequest {
  runId: string;
  task: Pick<TaskSpec, "forbidden">;
  backend: Backend;
  /** the image family of the run's sandbox; absent: the configured one (runs choose a family in later work) */
  imageFamily?: string;
  /** the run's OCI runtime (`--runtime`); absent: the configured one */
  runtime?: Runtime;
}

export interface LiveModelFactoryDeps {
  facts: IsolationFacts;
  config: LiveModelConfig;
  /** null when the endpoint needs no key; read only on the first request */
  credentials: Pick<CredentialSource, "read"> | null;
  dispatcher?: Dispatcher;
  maxReportAgeMs?: number;
  clock?: () => number;
  /**
   * Where the run's workspace is, for the project context. Called on the FIRST
   * decide(), after the gate passed and the run was created (so it may look the
   * run up in the ledger). The context the run was created with is read from
   * its control dir (exactly the traced bytes, the same after a resume); only a
   * run without one stored is given a context built now. null: no project
   * context beyond the protocol prompt.
   */
  workspaceOf?: (req: LiveModelRequest) => { root: string; controlDir?: string } | null;
  /** when set, every live run segment leaves a live run record when it stops */
  recorder?: LiveRunRecorder;
  log?: LiveModelOptions["log"];
  /** clock and sleep for the provider's backoff; default real time */
  pacing?: LiveModelOptions["pacing"];
}

/**
 * The runtime's ModelFactory for `--model live`. Call it in createRun BEFORE the
 * workspace is prepared: it runs the isolation gate and throws
 * MiniAgentError("isolation_unverified") on refusal, having read no key and
 * sent no request. The model it returns reads the key and builds the project
 * context only on its first decide().
 */
export function createLiveModelFactory(deps: LiveModelFactoryDeps): (req: LiveModelRequest) => Promise<LiveModel> {
  return async (req: LiveModelRequest) => {
    const pass = await assertLiveGate({
      backend: req.backend,
      facts: deps.facts,
      ...(req.imageFamily !== undefined ? { family: req.imageFamily } : {}),
      ...(req.runtime !== undefined ? { runtime: req.runtime } : {}),
      ...(deps.maxReportAgeMs !== undefined ? { maxReportAgeMs: deps.maxReportAgeMs } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    const model = new LiveModel({
      config: deps.config,
      credentials: deps.credentials,
      ...(deps.dispatcher ? { dispatcher: deps.dispatcher } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      ...(deps.pacing ? { pacing: deps.pacing } : {}),
      isolationReportGeneratedAt: pass.report_generated_at,
      preamble: async () => {
        const where = deps.workspaceOf?.(req) ?? null;
        if (where === null) return [{ role: "system", content: systemPrompt(deps.config.mode) }];
        const stored = where.controlDir ? await loadProjectContext(where.controlDir) : null;
        const data =
          stored ??
          (await buildProjectContext({
            workspaceRoot: where.root,
            forbidden: req.task.forbidden,
            ...(where.controlDir ? { controlDir: where.controlDir } : {}),
          }));
        return projectContextMessages(data, deps.config.mode);
      },
    });
    deps.recorder?.watch(req.runId, model);
    return model;
  };
}
