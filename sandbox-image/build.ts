import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { recordImage } from "../daemon/src/sandbox/image-lock.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { IMAGE_FAMILIES } from "../daemon/src/contracts/sandbox.js";
import { buildCustomFamily } from "./custom-family.js";
import { buildFamily } from "./image-builder.js";
import { IMAGE_DEFINITIONS, type ImageFamily } from "./definitions.js";

/**
 * `npm run image:build [-- --family node]... [--all] [--state-dir DIR] [--quiet] [--fresh]`
 * `npm run image:build -- --family NAME --dockerfile PATH [--state-dir DIR]` (a custom family)
 * Builds the sandbox image(s) through the Engine API and records each
 * content digest in the state dir's image lock. An image the engine already has from exactly the
 * same inputs (inputs-key.ts) is reused; `--fresh` assembles and builds it again all the same.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let stateFlag: string | undefined;
  const families: ImageFamily[] = [];
  let quiet = false;
  let fresh = false;
  let dockerfile: string | undefined;
  const named: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--state-dir") stateFlag = argv[++i];
    else if (a === "--family") named.push(argv[++i] ?? "");
    else if (a === "--all") families.push(...IMAGE_FAMILIES);
    else if (a === "--dockerfile") dockerfile = argv[++i];
    else if (a === "--quiet") quiet = true;
    else if (a === "--fresh") fresh = true;
    else {
      process.stderr.write(`unknown option ${a}; use --family NAME, --all, --dockerfile PATH, --state-dir DIR, --quiet, --fresh\n`);
      return 64;
    }
  }
  if (dockerfile !== undefined && (named.length !== 1 || families.length > 0)) {
    process.stderr.write("--dockerfile builds one custom family: give exactly one --family NAME with it (and no --all)\n");
    return 64;
  }
  if (dockerfile === undefined) {
    for (const f of named) {
      if (!(f in IMAGE_DEFINITIONS)) {
        process.stderr.write(
          `unknown --family ${JSON.stringify(f)}; use one of: ${Object.keys(IMAGE_DEFINITIONS).join(", ")}, or build a custom family with --family NAME --dockerfile PATH\n`,
        );
        return 64;
      }
      families.push(f as ImageFamily);
    }
  }
  const stateDir = resolveStateDir(env, stateFlag);
  const docker = createDockerClient(env);
  try {
    await docker.ping();
  } catch {
    process.stderr.write("no Docker engine is reachable (DOCKER_HOST or /var/run/docker.sock); run `npm run docker:ensure`\n");
    return 2;
  }
  const lockPath = statePath(stateDir, "imageLock");
  if (dockerfile !== undefined) {
    try {
      const built = await buildCustomFamily(docker, {
        name: named[0]!,
        dockerfile,
        lockPath,
        ...(quiet ? {} : { onProgress: (l) => process.stderr.write(`  ${l}\n`) }),
      });
      process.stdout.write(`${built.family} ${built.tag} ${built.digest} (FROM ${built.base})\nlock: ${lockPath}\n`);
      return 0;
    } catch (err) {
      if (isMiniAgentError(err) && err.code === "invalid_request") {
        process.stderr.write(`${err.message}\n`);
        return 64;
      }
      throw err;
    }
  }
  for (const family of families.length ? [...new Set(families)] : (["node"] as ImageFamily[])) {
    const built = await buildFamily(docker, family, quiet ? undefined : (l) => process.stderr.write(`  ${l}\n`), fresh);
    await recordImage(statePath(stateDir, "imageLock"), family, { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
    const how = built.reused ? " (reused: the engine has an image built from the same inputs; --fresh rebuilds it)" : "";
    process.stdout.write(`${built.family} ${built.tag} ${built.digest}${how}\n`);
  }
  process.stdout.write(`lock: ${statePath(stateDir, "imageLock")}\n`);
  return 0;
}

main(process.argv.slice(2), process.env).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`image build failed: ${isMiniAgentError(err) ? err.message : String((err as Error)?.message ?? err)}\n`);
    process.exitCode = 1;
  },
);
