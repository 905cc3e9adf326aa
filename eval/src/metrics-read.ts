import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parseTraceFile } from "../../daemon/src/contracts/trace-file.js";
import type { Metrics, TraceInput } from "./metrics.js";

/** a trace file beyond this is skipped as not a trace file (the daemon caps each event, so real ones stay far below) */
export const TRACE_FILE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The trace files of DIR: an eval output folder's `traces/`, else DIR's own
 * `*.jsonl` (e.g. `<state-dir>/traces`). A file that is not a trace file is
 * reported in `skipped` and never stops the others from being read.
 */
export async function readTraceFiles(dir: string): Promise<{ folder: string; inputs: TraceInput[]; skipped: Metrics["skipped"] }> {
  const sub = path.join(dir, "traces");
  const folder = (await isDir(sub)) ? sub : dir;
  const names = (await readdir(folder)).filter((n) => n.endsWith(".jsonl")).sort();
  const inputs: TraceInput[] = [];
  const skipped: Metrics["skipped"] = [];
  for (const file of names) {
    const full = path.join(folder, file);
    try {
      const st = await stat(full);
      if (!st.isFile()) {
        skipped.push({ file, why: "not a regular file" });
        continue;
      }
      if (st.size > TRACE_FILE_MAX_BYTES) {
        skipped.push({ file, why: `larger than ${TRACE_FILE_MAX_BYTES} bytes` });
        continue;
      }
      const parsed = parseTraceFile(await readFile(full, "utf8"));
      // lines that are all torn: not a trace file at all (prose, another format), not a run with a cut line
      if (parsed.events.length === 0 && parsed.torn.length > 0) {
        skipped.push({ file, why: `no valid event (line ${parsed.torn[0]?.line} is not one)` });
        continue;
      }
      inputs.push({ file, parsed });
    } catch (err) {
      skipped.push({ file, why: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    }
  }
  return { folder, inputs, skipped };
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}
