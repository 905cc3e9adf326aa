import type { ToolArgs, ToolResult } from "../contracts/tool-call.js";
import { sha256Hex } from "../workspace/hash.js";
import { readNoFollow } from "../workspace/read.js";
import { resolveSafePath } from "../workspace/safe-path.js";
import { toolEnv, type ToolContext } from "./context.js";
import { errorResult, okResult } from "./result.js";
import { decodeUtf8, splitLines } from "./text.js";

/**
 * read_file: text plus the SHA-256 `version` that apply_patch must quote back.
 * Returns complete lines only; when the byte cap cuts the range, `end` says
 * where it stopped and truncated=true.
 */
export async function readFileTool(callId: string, args: ToolArgs<"read_file">, ctx: ToolContext): Promise<ToolResult> {
  const env = toolEnv(ctx);
  const p = await resolveSafePath(ctx.workspaceRoot, args.path, { purpose: "read", forbidden: env.forbidden, controlDir: ctx.controlDir });
  if (!p.ok) return errorResult(callId, p.code, p.message);
  if (p.kind !== "file") return errorResult(callId, "path_denied", `${p.rel} is a directory; use list_files to list it`);
  const read = await readNoFollow(p.abs, { maxBytes: env.limits.readMaxFileBytes, verifyPath: true });
  if (!read.ok) {
    if (read.reason === "too_large") return errorResult(callId, "too_large", `${p.rel} is larger than ${env.limits.readMaxFileBytes} bytes`);
    if (read.reason === "absent") return errorResult(callId, "not_found", `${p.rel} does not exist`);
    return errorResult(callId, "path_denied", `${p.rel} cannot be read safely (${read.reason})`);
  }
  if (read.nlink > 1) return errorResult(callId, "path_denied", `${p.rel} is hard-linked; hard-linked files are refused`);
  const text = decodeUtf8(read.bytes);
  if (text === null) return errorResult(callId, "path_denied", `${p.rel} is not UTF-8 text`);
  const lines = splitLines(text);
  const total = lines.length;
  const start = args.start ?? 1;
  const wantEnd = Math.min(args.end ?? total, total);
  if (args.end !== undefined && args.end < start) return errorResult(callId, "invalid_fields", "end must be >= start");
  if (total > 0 && start > total) return errorResult(callId, "invalid_fields", `start ${start} is past the last line (${total})`);

  const out: string[] = [];
  let bytes = 0;
  let end = start - 1;
  let truncated = false;
  for (let n = start; n <= wantEnd; n++) {
    // keep the file's own last-line ending so `old` can be copied verbatim
    const line = (lines[n - 1] as string) + (n === total && !text.endsWith("\n") ? "" : "\n");
    const size = Buffer.byteLength(line);
    if (bytes + size > env.limits.readMaxReturnBytes) {
      truncated = true;
      break;
    }
    out.push(line);
    bytes += size;
    end = n;
  }
  return okResult(callId, { path: p.rel, version: sha256Hex(read.bytes), total_lines: total, start, end, text: out.join(""), truncated }, truncated);
}
