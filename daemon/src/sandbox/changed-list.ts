import type { ChangedList, SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import type { ExecOutcome } from "./exec-outcome.js";
import { IN_IMAGE } from "./host-config.js";
import type { SandboxContainer } from "./sandbox-container.js";

/**
 * What a command changed under a warm sandbox's /workspace, asked of the
 * spawner right after the command ended and before settle (which may empty
 * /workspace and starts the next command's fingerprint afresh):
 * `run --changed MAXPATHS` (sandbox-image/helper/run.c, spawn-proto.h). The
 * spawner compares the fingerprint it took when the command started with a
 * walk now and writes each changed path's bytes in hex, one a line, then
 * `end N CUT`. Hex, because a file name may hold a newline or bytes that are
 * not UTF-8, and neither may break the framing. Never throws.
 */

/** spawn-proto.h: CHANGED_UNAVAILABLE (the reason on stderr), CHANGED_MAX_OUTPUT, CHANGED_MAX_PATHS */
export const CHANGED_EXIT = { listed: 0, unavailable: 21 } as const;
const MAX_OUTPUT_BYTES = 1 << 20;
/** far below the spawner's own bound (100000): a model reads this list */
export const MAX_CHANGED_PATHS = 10_000;

/** stderr of the helper beyond this is not kept (one line of reason) */
const STDERR_ROOM = 4096;

/** Runs the lister in `box` (a control exec) and turns its answer into a ChangedList. */
export async function listChangedIn(box: SandboxContainer, maxPaths: number, timeoutMs: number): Promise<ChangedList> {
  let o: ExecOutcome;
  try {
    o = await box.control({
      argv: [...IN_IMAGE.changed, String(maxPaths)],
      env: [],
      timeoutMs,
      capBytes: MAX_OUTPUT_BYTES + STDERR_ROOM,
      // a lister that hangs leaves a sandbox nobody can trust: it goes
      onStop: () => box.kill(),
    });
  } catch (err) {
    return { status: "unavailable", reason: `the sandbox could not be asked what changed (${(err as { code?: string }).code ?? "engine error"})` };
  }
  return changedFromOutcome(o, maxPaths);
}

/** The lister's answer as a ChangedList; anything that does not parse whole is `unavailable`, never a partial list. */
export function changedFromOutcome(o: ExecOutcome, maxPaths: number): ChangedList {
  const why = o.stderr.trim().split("\n")[0]!.slice(0, 200);
  if (o.timedOut) return unavailable("listing the changed files timed out");
  if (o.cancelled) return unavailable("cancelled while the changed files were listed");
  if (o.spawnerLost) return unavailable("the sandbox stopped while the changed files were listed");
  if (o.exitCode === CHANGED_EXIT.unavailable) return unavailable(why === "" ? "the sandbox could not list the changed files" : why);
  if (o.exitCode !== CHANGED_EXIT.listed)
    return unavailable(`the changed-file lister exited ${o.exitCode ?? "without a status"}${why === "" ? "" : `: ${why}`}`);
  if (o.truncated) return unavailable("the list of changed files read back was cut short");
  const lines = o.stdout.split("\n");
  // the text ends with a newline, so the last element is empty and the one before it is the end line
  const endLine = /^end (\d+) ([01])$/.exec(lines.at(-2) ?? "");
  if (lines.at(-1) !== "" || endLine === null) return unavailable("the list of changed files read back has no end line");
  const hexLines = lines.slice(0, -2);
  if (Number(endLine[1]) !== hexLines.length || hexLines.length > maxPaths || !hexLines.every((l) => /^(?:[0-9a-f]{2})+$/.test(l))) {
    return unavailable("the list of changed files read back does not parse");
  }
  return { status: "listed", paths: hexLines.map((l) => decodePath(Buffer.from(l, "hex"))), truncated: endLine[2] === "1" };
}

function unavailable(reason: string): ChangedList {
  return { status: "unavailable", reason };
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A path's bytes as text: UTF-8 when they are valid UTF-8 (a newline stays a
 * newline); else every byte above 0x7f is written `\xNN`, so a name that is
 * not UTF-8 stays readable and distinct instead of collapsing into U+FFFD.
 */
export function decodePath(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return [...bytes].map((b) => (b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("");
  }
}

/** Checked before anything is created, so a bad request changes nothing. */
export function checkChangedRequest(req: SandboxRunRequest["listChanged"]): void {
  if (req === undefined) return;
  if (!Number.isSafeInteger(req.maxPaths) || req.maxPaths < 1 || req.maxPaths > MAX_CHANGED_PATHS) {
    throw new MiniAgentError("invalid_fields", `listChanged.maxPaths must be a whole number from 1 to ${MAX_CHANGED_PATHS}`);
  }
}

/**
 * Only a warm session's spawner holds the fingerprint a command started from;
 * a fresh sandbox is removed with everything in it, and trusted_local has no
 * sandbox. Refused before anything is created.
 */
export function refuseChangedList(req: Pick<SandboxRunRequest, "listChanged">, where: "fresh" | "trusted_local"): void {
  if (req.listChanged === undefined) return;
  throw new MiniAgentError(
    "changed_list_unsupported",
    where === "fresh"
      ? "a fresh sandbox cannot list what a command changed (it is removed with its changes); use a warm session (openSession)"
      : "the trusted_local backend runs host processes in a throw-away copy and cannot list what a command changed; use the container backend",
  );
}

/** What a result carries when the command did not end by itself: no list is made from a killed or lost sandbox. */
export function notListedAfterStop(o: { timedOut: boolean; cancelled: boolean }): ChangedList {
  return unavailable(
    o.timedOut
      ? "the command hit its deadline; its sandbox was discarded, so what it changed was not listed"
      : o.cancelled
        ? "the command was cancelled; its sandbox was discarded, so what it changed was not listed"
        : "the sandbox was lost before the changed files could be listed",
  );
}
