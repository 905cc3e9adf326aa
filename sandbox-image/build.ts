import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { recordImage } from "../daemon/src/sandbox/image-lock.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { buildFamily } from "./image-builder.js";
import { IMAGE_DEFINITIONS, type ImageFamily } from "./definitions.js";

/**
 * `npm run image:build [-- --family node] [--state-dir DIR] [--quiet]`
 * Builds the sandbox image(s) through the Engine API and records each
 * content digest in the state dir's image lock.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let stateFlag: string | undefined;
  const families: ImageFamily[] = [];
  let quiet = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--state-dir") stateFlag = argv[++i];
    else if (a === "--family") {
      const f = argv[++i];
      if (!f || !(f in IMAGE_DEFINITIONS)) {
        process.stderr.write(`unknown --family ${f}; use one of: ${Object.keys(IMAGE_DEFINITIONS).join(", ")}\n`);
        return 64;
      }
      families.push(f as ImageFamily);
    } else if (a === "--quiet") quiet = true;
    else {
      process.stderr.write(`unknown option ${a}; use --family NAME, --state-dir DIR, --quiet\n`);
      return 64;
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
  for (const family of families.length ? families : (["node"] as ImageFamily[])) {
    const built = await buildFamily(docker, family, quiet ? undefined : (l) => process.stderr.write(`  ${l}\n`));
    await recordImage(statePath(stateDir, "imageLock"), family, { tag: built.tag, digest: built.digest, built_at: new Date().toISOString() });
    process.stdout.write(`${built.family} ${built.tag} ${built.digest}\n`);
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
