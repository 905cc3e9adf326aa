import crypto from "node:crypto";
import type Docker from "dockerode";
import tarStream from "tar-stream";
import type { SandboxConfig } from "./config.js";
import { containerSpec } from "./host-config.js";
import { engineError } from "./image-pin.js";
import { sandboxLabels } from "./labels.js";

/** Where a PATH is unset in the image's env, what the spawner's exec falls back to. */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The programs an image can start by name: every entry (file or link) directly in a folder
 * of the image's PATH, sorted. Read by the engine from a created, never started container
 * (nothing of the image runs), so it is the image as pinned, custom families included,
 * not what its recipe meant to put in it. A PATH folder the image lacks has no programs.
 */
export async function readImagePrograms(docker: Docker, config: SandboxConfig, digest: string): Promise<string[]> {
  let c: Docker.Container | undefined;
  try {
    const env = (await docker.getImage(digest).inspect()).Config?.Env ?? [];
    const pathVar = env.find((e) => e.startsWith("PATH="))?.slice("PATH=".length) ?? DEFAULT_PATH;
    const spec = containerSpec(config, digest, sandboxLabels("image-programs", "image_read", config.instance), false);
    c = await docker.createContainer({ ...spec, name: `mini-agent-image-programs-${crypto.randomBytes(6).toString("hex")}` });
    const programs = new Set<string>();
    for (const dir of new Set(pathVar.split(":").filter((d) => d.startsWith("/")))) {
      let tar: NodeJS.ReadableStream;
      try {
        tar = (await c.getArchive({ path: dir })) as NodeJS.ReadableStream;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) continue;
        throw err;
      }
      for (const name of await topLevelEntries(tar)) programs.add(name);
    }
    return [...programs].sort();
  } catch (err) {
    throw engineError(err);
  } finally {
    await c?.remove({ force: true, v: true }).catch(() => undefined);
  }
}

/** Names of the non-folder entries directly inside the archive's one top folder (`bin/node` -> `node`). */
function topLevelEntries(tar: NodeJS.ReadableStream): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const extract = tarStream.extract();
    const names: string[] = [];
    extract.on("entry", (header, stream, next) => {
      const parts = header.name.split("/").filter(Boolean);
      if (parts.length === 2 && header.type !== "directory") names.push(parts[1]!);
      stream.on("end", next);
      stream.resume();
    });
    extract.on("finish", () => resolve(names));
    extract.on("error", reject);
    tar.pipe(extract);
  });
}
