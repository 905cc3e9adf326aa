import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { readImageLock } from "../../daemon/src/sandbox/image-lock.js";
import type { Runtime } from "../../daemon/src/contracts/sandbox.js";
import { setUpEngine } from "./engine.js";
import { collectEnvironment } from "./environment.js";
import { GROUPS } from "./groups.js";
import { KEY_NUMBERS_WIDTH, keyNumbers } from "./key-numbers.js";
import { prepareOutputDir } from "./output-dir.js";
import { writeReport } from "./report.js";
import { runGroup, scratchDirIn, type GroupOutcome } from "./runner.js";

/**
 * `npm run experiments -- --group all|1|2|3|4|5 --output DIR [--replace] [--runtime runc|runsc] [--image-lock FILE]`
 * Exit codes, set in one place: 0 every scenario passed; 1 a scenario that ran
 * failed; 2 nothing that ran failed, but no sandbox engine is reachable, so the
 * scenarios that need the container were not run (the report says
 * available=false rather than pretending; those that claim no isolation ran on
 * trusted_local); 64 bad usage or an output dir that exists without --replace.
 */
export const EXIT = { ok: 0, failed: 1, unavailable: 2, usage: 64 } as const;

export interface CliOptions {
  groups: Array<keyof typeof GROUPS>;
  output: string;
  replace: boolean;
  runtime: Runtime;
  /** a lock `npm run image:build` wrote: its images are pinned instead of built again (engine.ts) */
  imageLock: string | null;
}

export function parseArgs(argv: string[]): CliOptions | { error: string } {
  let group = "all";
  let output: string | undefined;
  let replace = false;
  let runtime: Runtime = "runc";
  let imageLock: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--group") group = argv[++i] ?? "";
    else if (a === "--output") output = argv[++i];
    else if (a === "--replace") replace = true;
    else if (a === "--runtime") {
      const r = argv[++i];
      if (r !== "runc" && r !== "runsc") return { error: `unknown --runtime ${r}; use runc or runsc` };
      runtime = r;
    } else if (a === "--image-lock") {
      const f = argv[++i];
      if (!f) return { error: "--image-lock needs a FILE (a lock written by npm run image:build)" };
      imageLock = f;
    } else return { error: `unknown option ${a}; use --group all|1|2|3|4|5, --output DIR, --replace, --runtime runc|runsc, --image-lock FILE` };
  }
  if (!output) return { error: "--output DIR is required" };
  const all = Object.keys(GROUPS) as Array<keyof typeof GROUPS>;
  let groups: Array<keyof typeof GROUPS>;
  if (group === "all") groups = all;
  else if ((["1", "2", "3", "4", "5"] as const).includes(group as "1")) groups = [`group-${group}` as keyof typeof GROUPS];
  else return { error: `unknown --group ${group}; use all, 1, 2, 3, 4 or 5` };
  return { groups, output, replace, runtime, imageLock };
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  repoRoot: string;
  nodeVersion: string;
  nodeExecPath: string;
  platform: string;
  cpus: number;
  stdout(line: string): void;
  stderr(line: string): void;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const opts = parseArgs(argv);
  if ("error" in opts) {
    io.stderr(opts.error);
    return EXIT.usage;
  }
  const outDir = path.resolve(io.cwd, opts.output);
  const imageLock = opts.imageLock === null ? null : path.resolve(io.cwd, opts.imageLock);
  // checked before anything is written: a lock that is missing or unreadable is bad usage, not a reason to build
  if (imageLock !== null) {
    const lock = await readImageLock(imageLock).catch((err: unknown) => (isMiniAgentError(err) ? err : null));
    if (lock === null || isMiniAgentError(lock)) {
      io.stderr(lock === null ? `--image-lock ${imageLock}: no such file` : lock.message);
      return EXIT.usage;
    }
  }
  let movedTo: string | null;
  try {
    movedTo = await prepareOutputDir(outDir, opts.replace);
  } catch (err) {
    if (isMiniAgentError(err, "invalid_request")) {
      io.stderr(err.message);
      return EXIT.usage;
    }
    throw err;
  }
  if (movedTo) io.stdout(`previous report kept as ${movedTo}`);

  const scratchRoot = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-experiments-"));
  try {
    const engine = await setUpEngine(path.join(scratchRoot, "engine"), io.env, opts.runtime, imageLock);
    if (!engine.facts.available) {
      io.stderr(
        `no sandbox engine: ${engine.facts.reason}; scenarios that need the container will report available=false, those that claim no isolation run on trusted_local`,
      );
    }
    const env = await collectEnvironment({
      repoRoot: io.repoRoot,
      nodeVersion: io.nodeVersion,
      platform: io.platform,
      cpus: io.cpus,
      backend: "container",
      engine: engine.facts,
    });
    const outcomes: GroupOutcome[] = [];
    const dockerEnv = io.env.DOCKER_HOST ? { DOCKER_HOST: io.env.DOCKER_HOST } : {};
    const base = {
      repoRoot: io.repoRoot,
      executor: engine.executor,
      familyExecutor: engine.familyExecutor,
      engine: engine.facts,
      imageLockPath: engine.lockPath,
      dockerEnv,
      nodeExecPath: io.nodeExecPath,
    };
    for (const id of opts.groups as Array<keyof typeof GROUPS & string>) {
      const outcome = await runGroup(GROUPS[id], base, {
        now: () => performance.now(),
        scratchDir: scratchDirIn(path.join(scratchRoot, "s")),
        onError: (where, err) =>
          io.stderr(
            `${where} threw ${isMiniAgentError(err) ? err.code : err instanceof Error ? err.name : "error"}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
          ),
      });
      io.stdout(`${id}: ${outcome.passed ? "passed" : "FAILED"} (${outcome.scenarios.filter((s) => s.passed).length}/${outcome.scenarios.length})`);
      for (const s of outcome.scenarios) {
        const head = `  ${s.id}: `;
        if (s.passed) io.stdout(head + keyNumbers(s.observed, s.expected, KEY_NUMBERS_WIDTH - head.length));
        else io.stdout(`  - ${s.id}: expected ${JSON.stringify(s.expected)} observed ${JSON.stringify(s.observed)}`);
      }
      const local = Object.keys(outcome.backends).filter((id) => outcome.backends[id] === "trusted_local");
      if (local.length > 0) io.stdout(`  on trusted_local (no engine): ${local.join(", ")}`);
      outcomes.push(outcome);
    }
    const written = await writeReport(outDir, outcomes, env);
    io.stdout(`wrote ${written.files.join(", ")} to ${outDir}`);
    io.stdout(`offline-canonical.json sha256 ${written.canonicalSha256}`);
    if (written.measuredFailure) return EXIT.failed;
    if (written.unavailable) return EXIT.unavailable;
    return written.passed ? EXIT.ok : EXIT.failed;
  } finally {
    await fs.rm(scratchRoot, { recursive: true, force: true }).catch(() => undefined);
  }
}
