import { resolveStateDir } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { FAMILY_CHOICES } from "../daemon/src/contracts/sandbox.js";
import { ImageFamily } from "../daemon/src/contracts/test-report.js";
import { runIsolationProbes } from "./run.js";

const USAGE = `usage: npm run probe -- [--json] [--runtime runc|runsc] [--family ${FAMILY_CHOICES}|CUSTOM] [--state-dir DIR]`;

/** Exit codes: 0 every probe passed, 1 a probe failed or the run failed, 2 no engine, 64 bad usage. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let json = false;
  let runtime: string | undefined;
  let stateFlag: string | undefined;
  let family: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") json = true;
    else if (a === "--runtime") runtime = argv[++i];
    else if (a === "--state-dir") stateFlag = argv[++i];
    else if (a === "--family") family = argv[++i];
    else {
      process.stderr.write(`unknown option ${a}\n${USAGE}\n`);
      return 64;
    }
  }
  if (runtime !== undefined && runtime !== "runc" && runtime !== "runsc") {
    process.stderr.write(`--runtime must be runc or runsc\n${USAGE}\n`);
    return 64;
  }
  // the shape here; a well-formed name the state dir's lock does not know is refused by the executor with the known ones
  if (family !== undefined && !ImageFamily.safeParse(family).success) {
    process.stderr.write(`--family must be a family name (${FAMILY_CHOICES}, or a custom family in the state dir's lock)\n${USAGE}\n`);
    return 64;
  }
  const stateDir = resolveStateDir(env, stateFlag);
  let report;
  try {
    report = await runIsolationProbes({
      stateDir,
      config: { ...(runtime ? { runtime } : {}), ...(family ? { imageFamily: family } : {}) },
      docker: createDockerClient(env),
      hostEnv: env,
    });
  } catch (err) {
    const msg = isMiniAgentError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
    process.stderr.write(`isolation probes could not run: ${msg}\n`);
    return isMiniAgentError(err) && err.code === "unknown_image_family" ? 64 : 1;
  }
  if (json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else if (!report.available) process.stdout.write("no Docker engine reachable: isolation NOT verified (runtime_unavailable)\n");
  else {
    for (const pr of report.probes) process.stdout.write(`${pr.passed ? "PASS" : "FAIL"} ${pr.id}: ${pr.property}\n`);
    process.stdout.write(
      `${report.passed ? "isolation verified" : "isolation NOT verified"} (${report.image_family}, ${report.runtime}, ${report.image_digest})\n`,
    );
  }
  if (!report.available) return 2;
  return report.passed ? 0 : 1;
}

main(process.argv.slice(2), process.env).then((code) => (process.exitCode = code));
