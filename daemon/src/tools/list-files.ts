import picomatch from "picomatch";
import type { ToolArgs, ToolResult } from "../contracts/tool-call.js";
import { listWorkspaceFiles, type ListedFile } from "../workspace/listing.js";
import { isWorkspaceRoot, resolveSafePath } from "../workspace/safe-path.js";
import { toolEnv, type ToolContext } from "./context.js";
import { errorResult, okResult } from "./result.js";

/**
 * list_files: the files under a workspace folder, sorted, with sizes, as git
 * would show them (.gitignore honoured). Forbidden paths are never listed, not
 * even by name; symlinks are never followed (counted, not listed). Cut at
 * `limit` files or the result byte cap, whichever comes first, with
 * `truncated` and the total, so "not listed" is never mistaken for "absent".
 */
export async function listFilesTool(callId: string, args: ToolArgs<"list_files">, ctx: ToolContext): Promise<ToolResult> {
  const env = toolEnv(ctx);
  let under = "";
  if (args.path !== undefined && !isWorkspaceRoot(args.path)) {
    const p = await resolveSafePath(ctx.workspaceRoot, args.path, { purpose: "read", forbidden: env.forbidden, controlDir: ctx.controlDir });
    if (!p.ok) return errorResult(callId, p.code, p.message);
    if (p.kind !== "dir") return errorResult(callId, "invalid_fields", `${p.rel} is a file, not a folder; read it with read_file`);
    under = p.rel;
  }
  const listing = await listWorkspaceFiles(ctx.workspaceRoot, { under, forbidden: env.forbidden, excludeAbs: [ctx.controlDir] });
  const prefix = under === "" ? "" : `${under}/`;
  const matches = args.glob === undefined ? null : picomatch(args.glob, { dot: true });
  const selected = matches === null ? listing.files : listing.files.filter((f) => matches(f.path.slice(prefix.length)));
  const limit = args.limit ?? env.limits.listDefaultFiles;
  const files: ListedFile[] = [];
  let bytes = 0;
  for (const f of selected) {
    const size = Buffer.byteLength(JSON.stringify(f));
    if (files.length >= limit || bytes + size > env.limits.listMaxResultBytes) break;
    files.push(f);
    bytes += size;
  }
  const truncated = files.length < selected.length;
  return okResult(
    callId,
    {
      path: under === "" ? "." : under,
      ...(args.glob !== undefined && { glob: args.glob }),
      files,
      total: selected.length,
      truncated,
      gitignored: listing.gitignored,
      links_not_followed: listing.links_and_special,
    },
    truncated,
  );
}
