import type { ToolResult } from "../contracts/tool-call.js";
import { isMiniAgentError } from "../errors.js";
import { loadBaseline } from "../workspace/baseline.js";
import { changedPaths, computeManifest } from "../workspace/manifest.js";
import { readNoFollow } from "../workspace/read.js";
import { toolEnv, type ToolContext } from "./context.js";
import { unifiedDiff } from "./apply-patch.js";
import { errorResult, okResult } from "./result.js";
import { decodeUtf8 } from "./text.js";
import path from "node:path";

export interface WorkspaceDiff {
  diff: string;
  files: Array<{ path: string; status: "added" | "deleted" | "modified" }>;
  truncated: boolean;
}

/**
 * The unified diff of the workspace against the baseline captured at run
 * start. Forbidden files are listed but their content is withheld; binary or
 * special files are named without content. Cut at a file boundary at the cap.
 */
export async function workspaceDiff(ctx: ToolContext): Promise<WorkspaceDiff> {
  const env = toolEnv(ctx);
  const baseline = await loadBaseline(ctx.controlDir);
  const now = await computeManifest(ctx.workspaceRoot, { excludeAbs: [ctx.controlDir] });
  const files: WorkspaceDiff["files"] = [];
  const parts: string[] = [];
  let bytes = 0;
  let truncated = false;
  for (const rel of changedPaths(baseline.manifest, now)) {
    const was = rel in baseline.manifest.files || rel in baseline.manifest.special;
    const is = rel in now.files || rel in now.special;
    const status = !was ? "added" : !is ? "deleted" : "modified";
    files.push({ path: rel, status });
    if (truncated) continue;
    let part: string;
    if (env.forbidden(rel)) {
      part = `${status}: ${rel} (forbidden path; content withheld)\n`;
    } else {
      const before = rel in baseline.manifest.files ? decodeUtf8((await baseline.readFile(rel)) as Buffer) : status === "added" ? null : undefined;
      let after: string | null | undefined = null;
      if (rel in now.files) {
        const read = await readNoFollow(path.join(ctx.workspaceRoot, ...rel.split("/")));
        after = read.ok ? decodeUtf8(read.bytes) : undefined;
      }
      if (before === undefined || after === undefined) part = `${status}: ${rel} (binary or special file; no text diff)\n`;
      else if (after === null) part = unifiedDiff(rel, before, "").replace(`+++ b/${rel}`, "+++ /dev/null");
      else part = unifiedDiff(rel, before, after);
    }
    const size = Buffer.byteLength(part);
    if (bytes + size > env.limits.diffMaxBytes) {
      truncated = true;
      continue;
    }
    parts.push(part);
    bytes += size;
  }
  return { diff: parts.join(""), files, truncated };
}

export async function showDiffTool(callId: string, ctx: ToolContext): Promise<ToolResult> {
  try {
    const d = await workspaceDiff(ctx);
    return okResult(callId, d, d.truncated);
  } catch (err) {
    if (isMiniAgentError(err)) return errorResult(callId, err.code, err.message);
    return errorResult(callId, "internal", "the diff could not be computed");
  }
}
