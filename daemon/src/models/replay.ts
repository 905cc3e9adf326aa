import fs from "node:fs";
import path from "node:path";
import { describeZodError } from "../contracts/common.js";
import { ReplayFile } from "../contracts/decision.js";
import { MiniAgentError } from "../errors.js";
import type { Model, ModelTurn, ModelView } from "./model.js";

/** Reads and validates a replay file; any problem is `invalid_replay` with the zod path. */
export function loadReplayFile(file: string): ReplayFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (cause) {
    throw new MiniAgentError("invalid_replay", `cannot read replay file ${path.basename(file)}`, { cause });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new MiniAgentError("invalid_replay", `replay file ${path.basename(file)} is not valid JSON`, { cause });
  }
  const parsed = ReplayFile.safeParse(raw);
  if (!parsed.success) {
    throw new MiniAgentError("invalid_replay", `replay file ${path.basename(file)} is invalid:\n${describeZodError(parsed.error)}`);
  }
  return parsed.data;
}

/**
 * Only the built-in canonical replay (a shipped fixture's own replay.json) is
 * trusted on the host-process backend. Anything else needs the operator's
 * explicit `trustReplayFile` (a statement, not a verification).
 */
export function isCanonicalReplay(replayPath: string, fixtureDir: string | undefined, builtinFixturesDir: string): boolean {
  if (!fixtureDir || !isBuiltinFixture(fixtureDir, builtinFixturesDir)) return false;
  const fixture = realOrNull(fixtureDir);
  return fixture !== null && realOrNull(replayPath) === path.join(fixture, "replay.json");
}

/** a fixture that ships with mini-agent: directly in the built-in fixtures folder (links resolved) */
export function isBuiltinFixture(fixtureDir: string, builtinFixturesDir: string): boolean {
  const fixture = realOrNull(fixtureDir);
  const builtin = realOrNull(builtinFixturesDir);
  return fixture !== null && builtin !== null && path.dirname(fixture) === builtin;
}

function realOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/**
 * A decision source that plays a file back. It holds no position of its own:
 * the cursor is the number of decisions the ledger has recorded for the run,
 * so a resumed run continues exactly where the last process stopped.
 */
export class ReplayModel implements Model {
  readonly name = "replay";

  constructor(
    private readonly file: ReplayFile,
    private readonly cursor: () => number,
  ) {}

  async decide(_view: ModelView, signal: AbortSignal): Promise<ModelTurn> {
    if (signal.aborted) throw new MiniAgentError("cancelled", "model call cancelled");
    const at = this.cursor();
    const decision = this.file.decisions[at];
    if (!decision) {
      throw new MiniAgentError("model_error", `replay exhausted after ${this.file.decisions.length} decisions without a final`, {
        details: { transient: false, cursor: at },
      });
    }
    return { decision: structuredClone(decision) };
  }
}
