import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../../errors.js";
import type { Ledger } from "../../store/ledger.js";
import { BindingRecord, readRecord } from "../../store/records.js";

/**
 * A run belongs to one workspace and one state dir. The binding id is stored
 * twice, in the ledger and in the run's control dir, and the workspace root's
 * device/inode are recorded: a ledger copied elsewhere, a control dir from
 * another run, or a workspace moved away (even if another dir now sits at the
 * same path) no longer match, and resume refuses (`binding_mismatch`).
 */
export const BINDING_FILE = "binding.json";

export function createBinding(input: { runId: string; workspace: string; controlDir: string; stateDir: string }): BindingRecord {
  const st = fs.statSync(input.workspace);
  const record: BindingRecord = {
    schema_version: 1,
    run_id: input.runId,
    binding_id: randomBytes(16).toString("hex"),
    workspace: input.workspace,
    control_dir: input.controlDir,
    state_dir: input.stateDir,
    workspace_dev: st.dev,
    workspace_ino: st.ino,
  };
  const file = path.join(input.controlDir, BINDING_FILE);
  const fd = fs.openSync(file, "wx", 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(record) + "\n");
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return record;
}

export function checkBinding(ledger: Ledger, runId: string, stateDir: string): BindingRecord {
  const mismatch = (why: string) => new MiniAgentError("binding_mismatch", `run ${runId} cannot be resumed here: ${why}`, { details: { run_id: runId } });
  const stored = ledger.getBinding(runId);
  if (!stored) throw mismatch("the ledger has no binding for it");
  if (stored.state_dir !== stateDir) throw mismatch("the ledger was created for another state dir (copied database?)");
  let text: string;
  try {
    text = fs.readFileSync(path.join(stored.control_dir, BINDING_FILE), "utf8");
  } catch {
    throw mismatch("its control dir has no binding file");
  }
  const onDisk = readRecord(BindingRecord, text.trim(), "binding file");
  if (onDisk.binding_id !== stored.binding_id || onDisk.run_id !== runId) throw mismatch("the control dir belongs to another run or ledger");
  let st: fs.Stats;
  try {
    st = fs.statSync(stored.workspace);
  } catch {
    throw mismatch("its workspace is gone from where it was (moved or deleted)");
  }
  if (!st.isDirectory() || st.dev !== stored.workspace_dev || st.ino !== stored.workspace_ino) {
    throw mismatch("the directory at its workspace path is not the workspace it was started on (moved?)");
  }
  return stored;
}
