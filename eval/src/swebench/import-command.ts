import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { parseCli, usageErrorText } from "../../../daemon/src/config/cli-args.js";
import { COPY_LIMITS } from "../../../daemon/src/workspace/copy-limits.js";
import { isMiniAgentError } from "../../../daemon/src/errors.js";
import { EXIT, termSafe } from "../../../client-lib/index.js";
import type { EvalCommand, EvalIO } from "../command.js";
import { importInstance } from "./case-build.js";
import { caseIdOf, parseInstanceLine } from "./instance.js";

const PROGRAM = "mini-agent-client eval import";

const USAGE = `usage: ${PROGRAM} --swebench FILE.jsonl --repos DIR [--out DIR]

Turns SWE-bench instances (its published JSON Lines: instance_id, repo,
base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS) into eval cases
that \`eval run\` accepts. Each instance's repository must be present under
--repos as DIR/owner__name, DIR/owner/name or DIR/name; it is read as data
(no git program runs). The tests test_patch adds or changes become the case's
hidden tests (control/hidden_tests/, seen only by the Verifier); the gold patch
becomes its replay.json. --out: a new or empty folder (default: a folder named
after FILE, beside it). A line that cannot be imported is reported with its
number and why, and skipped; the exit status is 1 when any line was skipped.`;

const OPTIONS = {
  swebench: { type: "string" },
  repos: { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** how long one repository's tree may take to read */
const READ_TIMEOUT_MS = 120_000;

function usageError(io: EvalIO, message: string): number {
  io.err(usageErrorText(PROGRAM, termSafe(message), `${PROGRAM} --help`));
  return EXIT.usage;
}

function defaultOut(file: string): string {
  const base = path.basename(file).replace(/\.jsonl?$/i, "");
  return path.join(path.dirname(file), base === path.basename(file) ? `${base}-cases` : base);
}

export const importCommand: EvalCommand = {
  async main(argv, io) {
    const parsed = parseCli(argv, OPTIONS, false);
    if (!parsed.ok) return usageError(io, parsed.message);
    const v = parsed.values;
    if (v.help) {
      io.out(`${USAGE}\n`);
      return EXIT.ok;
    }
    if (!v.swebench) return usageError(io, "--swebench FILE.jsonl is required (the only import format)");
    if (!v.repos) return usageError(io, "--repos DIR is required: the folder holding the instances' repositories");
    const file = path.resolve(io.cwd, v.swebench);
    const repos = path.resolve(io.cwd, v.repos);
    if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) return usageError(io, `${file} is not a file`);
    if (!fs.statSync(repos, { throwIfNoEntry: false })?.isDirectory()) return usageError(io, `${repos} is not a folder`);
    const out = v.out ? path.resolve(io.cwd, v.out) : defaultOut(file);
    const outStat = fs.lstatSync(out, { throwIfNoEntry: false });
    if (outStat && (!outStat.isDirectory() || fs.readdirSync(out).length > 0))
      return usageError(io, `${out} exists and is not an empty folder; give --out a new or empty folder`);
    fs.mkdirSync(out, { recursive: true });

    const limits = { ...COPY_LIMITS, timeoutMs: READ_TIMEOUT_MS, now: () => io.clock.now() };
    let imported = 0;
    let skipped = 0;
    let lineNo = 0;
    const say = (line: string) => io.out(`${termSafe(line)}\n`);
    const lines = readline.createInterface({ input: fs.createReadStream(file, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === "") continue;
      const p = parseInstanceLine(line);
      if (!p.ok) {
        skipped++;
        say(`line ${lineNo}: skipped: ${p.why}`);
        continue;
      }
      const inst = p.instance;
      try {
        const c = await importInstance(inst, repos, out, limits);
        imported++;
        say(
          `line ${lineNo}: ${inst.instance_id}: imported as ${c.dir} (${c.repoFiles} files, ${c.hiddenTests.length} hidden test file(s), FAIL_TO_PASS ${inst.FAIL_TO_PASS.length}, PASS_TO_PASS ${inst.PASS_TO_PASS.length})`,
        );
        for (const n of c.notes.slice(0, 5)) say(`  ${n}`);
        if (c.notes.length > 5) say(`  … and ${c.notes.length - 5} more`);
      } catch (err) {
        if (!isMiniAgentError(err)) throw err;
        skipped++;
        say(`line ${lineNo}: ${inst.instance_id} (${caseIdOf(inst.instance_id)}): skipped: ${err.message}`);
      }
    }
    // nothing imported: no empty folder left behind to refuse the next try
    if (imported === 0) fs.rmSync(out, { recursive: true, force: true });
    say(`imported ${imported} of ${imported + skipped} instance(s)${imported > 0 ? ` into ${out}` : ""}; ${skipped} skipped`);
    if (imported > 0) say(`run them: mini-agent-client eval run ${out} --output DIR`);
    return skipped === 0 ? EXIT.ok : EXIT.failed;
  },
};
