import type { ToolArgs, ToolResult } from "../contracts/tool-call.js";
import { readNoFollow } from "../workspace/read.js";
import { isWorkspaceRoot, resolveSafePath } from "../workspace/safe-path.js";
import { walkTree } from "../workspace/walk.js";
import { toolEnv, type ToolContext } from "./context.js";
import { errorResult, okResult } from "./result.js";
import { decodeUtf8, splitLines } from "./text.js";

export interface SearchHit {
  path: string;
  line: number;
  snippet: string;
}

const MAX_LISTED_SKIPS = 20;

function snippetOf(line: string, at: number, queryLen: number, max: number): string {
  if (line.length <= max) return line;
  const from = Math.max(0, Math.min(at - Math.floor((max - queryLen) / 2), line.length - max));
  return line.slice(from, from + max);
}

/**
 * search: literal text over readable workspace files. Hits are kept whole up
 * to a byte cap (then truncated=true); non-UTF-8 and oversized files are
 * skipped and named, so "no hit" is never confused with "not searched".
 */
export async function searchTool(callId: string, args: ToolArgs<"search">, ctx: ToolContext): Promise<ToolResult> {
  const env = toolEnv(ctx);
  let files: string[];
  if (args.path !== undefined && !isWorkspaceRoot(args.path)) {
    const p = await resolveSafePath(ctx.workspaceRoot, args.path, { purpose: "read", forbidden: env.forbidden, controlDir: ctx.controlDir });
    if (!p.ok) return errorResult(callId, p.code, p.message);
    if (p.kind === "file") files = [p.rel];
    else {
      const entries = await walkTree(p.abs, { skip: (rel) => env.forbidden(`${p.rel}/${rel}`), excludeAbs: [ctx.controlDir] });
      files = entries.filter((e) => e.type === "file" && e.nlink === 1).map((e) => `${p.rel}/${e.rel}`);
    }
  } else {
    const entries = await walkTree(ctx.workspaceRoot, { skip: (rel) => env.forbidden(rel), excludeAbs: [ctx.controlDir] });
    files = entries.filter((e) => e.type === "file" && e.nlink === 1).map((e) => e.rel);
  }

  const hits: SearchHit[] = [];
  const nonUtf8: string[] = [];
  const tooLarge: string[] = [];
  let bytes = 0;
  let truncated = false;
  let searched = 0;
  outer: for (const rel of files) {
    // each file is re-resolved: the listing may be stale and a path may now be a symlink
    const p = await resolveSafePath(ctx.workspaceRoot, rel, { purpose: "read", forbidden: env.forbidden, controlDir: ctx.controlDir });
    if (!p.ok || p.kind !== "file") continue;
    const read = await readNoFollow(p.abs, { maxBytes: env.limits.searchMaxFileBytes, verifyPath: true });
    if (!read.ok) {
      if (read.reason === "too_large") tooLarge.push(rel);
      continue;
    }
    if (read.nlink > 1) continue;
    const text = decodeUtf8(read.bytes);
    if (text === null) {
      nonUtf8.push(rel);
      continue;
    }
    searched++;
    const lines = splitLines(text);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      const at = line.indexOf(args.query);
      if (at === -1) continue;
      const hit: SearchHit = { path: rel, line: i + 1, snippet: snippetOf(line, at, args.query.length, env.limits.searchSnippetChars) };
      const size = Buffer.byteLength(JSON.stringify(hit));
      if (bytes + size > env.limits.searchMaxResultBytes) {
        truncated = true;
        break outer;
      }
      hits.push(hit);
      bytes += size;
    }
  }
  return okResult(
    callId,
    {
      query: args.query,
      hits,
      truncated,
      files_searched: searched,
      skipped_non_utf8: nonUtf8.slice(0, MAX_LISTED_SKIPS),
      skipped_non_utf8_count: nonUtf8.length,
      skipped_too_large: tooLarge.slice(0, MAX_LISTED_SKIPS),
      skipped_too_large_count: tooLarge.length,
    },
    truncated,
  );
}
