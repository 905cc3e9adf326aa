import { MiniAgentError } from "../errors.js";
import { ReplayFile } from "../contracts/decision.js";
import { describeZodError } from "../contracts/common.js";
import type { MessageRecord } from "../store/records.js";

/**
 * The run's decisions, in the order decide.ts recorded them, as a replay file:
 * same call ids, names and arguments, so the case re-runs offline bit for bit.
 * A live run's decisions were stored redacted; that is what goes in.
 */
export function replayFromMessages(runId: string, messages: readonly MessageRecord[]): ReplayFile {
  const decisions = messages.flatMap((m) => (m.role === "assistant" ? [m.decision] : []));
  if (decisions.length === 0) throw new MiniAgentError("capture_refused", `run ${runId} recorded no decision: there is nothing to replay`);
  const parsed = ReplayFile.safeParse({ schema_version: 1, decisions });
  if (!parsed.success)
    throw new MiniAgentError("capture_refused", `run ${runId}'s decisions do not make a valid replay file:\n${describeZodError(parsed.error)}`);
  return parsed.data;
}
