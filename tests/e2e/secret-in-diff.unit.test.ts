import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allFiles, REPO, runClient, Started, type ClientResult, type DaemonHandle } from "./harness.js";

/**
 * A run that writes credentials into the workspace (issue 12, secret scan of
 * the final diff): the canonical linkcheck fix, but the fix also assigns a
 * random-looking upload token and the agent's test carries an AWS key id. The
 * Verifier fails it as secret_in_diff naming file and line; the planted values
 * are then searched for in everything the run left behind: the client's output
 * (run, approve, status, status --json, trace, list), the daemon's state dir
 * (ledger, logs, records) and the daemon's own output. trusted_local: real
 * daemon and client processes, no engine needed.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const TOKEN = "Hq3Vn8Lz2Wc7Rp5Tk9Yb4Md6"; // caught only by the entropy rule under a credential's name
const AWS_ID = "AKIA2E0A8F3B244C9986";
const started = new Started();
let root: string;
let d: DaemonHandle;

beforeAll(async () => {
  root = started.dir("ma-secret-diff-");
  d = await started.daemon({ stateDir: path.join(root, "state") });
});
afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

/** the canonical replay, with the two secrets planted in its two writes */
function plantedReplay(): string {
  const replay = JSON.parse(fs.readFileSync(path.join(FIXTURE, "replay.json"), "utf8")) as {
    decisions: Array<{ kind: string; call?: { name: string; arguments: Record<string, string> } }>;
  };
  const [addTest, fix] = replay.decisions.filter((x) => x.call?.name === "apply_patch").map((x) => x.call!.arguments);
  addTest!.new = `${addTest!.new}// fixture account ${AWS_ID}\n`;
  fix!.new = `${fix!.new}\n    const UPLOAD_TOKEN = "${TOKEN}";`;
  const file = path.join(root, "planted-replay.json");
  fs.writeFileSync(file, JSON.stringify(replay));
  return file;
}

describe("secret_in_diff through the daemon and the client", () => {
  it("fails the run naming file and line, and neither planted value reaches the verdict, run view, trace, ledger, log or client output", async () => {
    const socket = ["--socket", d.socketPath];
    const ws = path.join(root, "ws");
    const outputs: ClientResult[] = [];
    let r = await runClient([
      "run",
      "--fixture",
      FIXTURE,
      "--workspace",
      ws,
      "--backend",
      "trusted_local",
      "--replay",
      plantedReplay(),
      "--trust-replay-file",
      ...socket,
    ]);
    outputs.push(r);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    for (let i = 0; i < 3 && r.code === 3; i++) {
      const s = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string };
      r = await runClient(["approve", runId, s.action_id, ...socket]);
      outputs.push(r);
    }
    // the planted values really are in the workspace: the scan had something to find
    expect(fs.readFileSync(path.join(ws, "src/linkcheck.js"), "utf8")).toContain(TOKEN);
    expect(fs.readFileSync(path.join(ws, "tests/test_agent_nested.js"), "utf8")).toContain(AWS_ID);

    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 1 });
    const status = await runClient(["status", runId, "--json", ...socket]);
    const view = JSON.parse(status.stdout) as {
      status: string;
      reason: string;
      verification: { reason: string; diff_scan_hits: unknown[]; details: string[] };
    };
    expect(view).toMatchObject({ status: "failed", reason: "secret_in_diff", verification: { reason: "secret_in_diff" } });
    const addedTestLine = fs.readFileSync(path.join(ws, "tests/test_agent_nested.js"), "utf8").split("\n").indexOf(`// fixture account ${AWS_ID}`) + 1;
    const tokenLine =
      fs
        .readFileSync(path.join(ws, "src/linkcheck.js"), "utf8")
        .split("\n")
        .findIndex((l) => l.includes("UPLOAD_TOKEN")) + 1;
    expect(view.verification.diff_scan_hits).toEqual([
      { path: "src/linkcheck.js", line: tokenLine, rule: "assigned_secret" },
      { path: "tests/test_agent_nested.js", line: addedTestLine, rule: "aws_access_key_id" },
    ]);
    expect(r.stdout).toContain(
      `secret in the diff (src/linkcheck.js line ${tokenLine}: assigned_secret, tests/test_agent_nested.js line ${addedTestLine}: aws_access_key_id)`,
    );

    outputs.push(
      status,
      await runClient(["status", runId, ...socket]),
      await runClient(["trace", runId, "--jsonl", ...socket]),
      await runClient(["trace", runId, ...socket]),
    );
    outputs.push(await runClient(["list", "--json", ...socket]));
    const planted = (text: string) => [TOKEN, AWS_ID].filter((s) => text.includes(s));
    // an approval prompt shows the exact write it asks about: there, and only on the diff's
    // added lines, the value is the user's to see (the Verifier's findings never carry it)
    const sinks: Array<[string, string]> = [];
    for (const [i, o] of outputs.entries()) {
      const text = o.stdout + o.stderr;
      if (o.code === 3)
        sinks.push([
          `approval prompt ${i} outside its diff's added lines`,
          text
            .split("\n")
            .filter((l) => !l.startsWith("+"))
            .join("\n"),
        ]);
      else sinks.push([`client output ${i}`, text]);
    }
    // every row and column of the ledger but the actions' record: that IS the approved write
    // (its exact content, replayed after a crash), not a report about it
    const db = new Database(path.join(root, "state", "ledger.sqlite"), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
      for (const { name } of tables) {
        for (const row of db.prepare(`SELECT * FROM ${name}`).all() as Array<Record<string, unknown>>) {
          for (const [col, v] of Object.entries(row)) if (!(name === "actions" && col === "record")) sinks.push([`ledger ${name}.${col}`, String(v)]);
        }
      }
    } finally {
      db.close();
    }
    // every other file of the state dir: logs, records (the baseline copy was taken before the run wrote)
    for (const file of allFiles(path.join(root, "state"))) {
      if (/ledger\.sqlite/.test(path.basename(file)) || file.includes(`${path.sep}control${path.sep}`)) continue;
      sinks.push([path.relative(root, file), fs.readFileSync(file).toString("latin1")]);
    }
    sinks.push(["daemon output", d.stdout() + d.stderr()]);
    // the sinks really were read: the verdict's event, the daemon's log file
    expect(sinks.some(([name, text]) => name === "ledger events.payload" && text.includes("diff_scan_hits"))).toBe(true);
    expect(sinks.some(([name, text]) => name.startsWith(`state${path.sep}logs`) && text.includes(runId))).toBe(true);
    const leaks = sinks.filter(([, text]) => planted(text).length > 0).map(([name, text]) => `${name}: ${planted(text).length} value(s)`);
    expect(leaks).toEqual([]);
  });
});
