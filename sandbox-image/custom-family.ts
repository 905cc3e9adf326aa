import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import tar from "tar-fs";
import { type BuiltinFamily, FAMILY_NAME_PATTERN, IMAGE_FAMILIES } from "../daemon/src/contracts/sandbox.js";
import { MiniAgentError } from "../daemon/src/errors.js";
import { type ImageLock, readImageLock, rebuildHint, recordImage } from "../daemon/src/sandbox/image-lock.js";
import { CUSTOM_BASE_LABEL, PROTOCOL_LABEL, SANDBOX_PROTOCOL } from "../daemon/src/sandbox/labels.js";
import type { BuiltImage } from "./image-builder.js";
import { INPUTS_LABEL } from "./inputs-key.js";

/**
 * A custom image family: the user's own Dockerfile, FROM one of the pinned built-in family images,
 * built by the local engine with no network and no registry (the FROM is rewritten to the pinned
 * digest, so the base is exactly the image the lock names), then pinned by digest in the same lock.
 * From then on it is a family like the others: the same HostConfig, probed with `probe --family`,
 * and it follows its base's conventions (families.ts). What the build refuses, it refuses before
 * anything is recorded; an image it built and then refused is removed again.
 */

/** Names a custom family cannot take: the built-in ones and the daemon's own base image. */
const RESERVED = new Set<string>([...IMAGE_FAMILIES, "node-base"]);

const usage = (message: string) => new MiniAgentError("invalid_request", message);

export function checkCustomFamilyName(name: string): void {
  if (RESERVED.has(name)) throw usage(`--family ${name} is a built-in family; a custom family needs its own name`);
  if (!FAMILY_NAME_PATTERN.test(name)) {
    throw usage(`--family ${JSON.stringify(name)} is not a family name: 2-32 lowercase letters, digits and '-', starting with a letter`);
  }
}

/** The Dockerfile's instructions, one per entry, with continuation lines joined and comments left out. */
function instructions(text: string): Array<{ keyword: string; rest: string; line: number }> {
  const out: Array<{ keyword: string; rest: string; line: number }> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let joined = lines[i]!;
    while (joined.endsWith("\\") && i + 1 < lines.length) joined = joined.slice(0, -1) + " " + lines[++i]!;
    const t = joined.trim();
    if (t === "" || t.startsWith("#")) continue;
    const m = /^(\S+)\s*(.*)$/.exec(t)!;
    out.push({ keyword: m[1]!.toUpperCase(), rest: m[2]!, line: start });
  }
  return out;
}

/**
 * The built-in family a Dockerfile builds on, and the Dockerfile with its FROM pinned to that
 * family's digest. Exactly one FROM, as the first instruction, naming a pinned family image by
 * its tag or digest; anything else is refused with what to write instead.
 */
export function pinDockerfileBase(text: string, lock: ImageLock | null): { base: BuiltinFamily; digest: string; dockerfile: string } {
  const pinned = IMAGE_FAMILIES.flatMap((f) => {
    const e = lock?.images[f];
    return e ? [{ family: f, tag: e.tag, digest: e.digest }] : [];
  });
  const allowed = pinned.map((p) => `FROM ${p.tag}`).join(", ") || "(none: build a family first with `npm run image:build -- --family node`)";
  const all = instructions(text);
  const froms = all.filter((i) => i.keyword === "FROM");
  if (froms.length !== 1 || all[0]?.keyword !== "FROM") {
    throw usage(
      `the Dockerfile must start with exactly one FROM naming a pinned mini-agent family image (one stage, no ARG before it); use one of: ${allowed}`,
    );
  }
  const from = froms[0]!;
  const words = from.rest.split(/\s+/);
  const ref = words[0] ?? "";
  const tail = words.slice(1);
  if (ref.startsWith("--") || !(tail.length === 0 || (tail.length === 2 && tail[0]!.toUpperCase() === "AS"))) {
    throw usage(`FROM ${from.rest} is refused: give only the image (and AS NAME); use one of: ${allowed}`);
  }
  const hit = pinned.find((p) => p.tag === ref || p.digest === ref);
  if (!hit) throw usage(`FROM ${ref} is not one of the pinned mini-agent family images, which are the only bases a family may have; use one of: ${allowed}`);
  const lines = text.split(/\r?\n/);
  lines[from.line] = ["FROM", hit.digest, ...tail].join(" ");
  return { base: hit.family, digest: hit.digest, dockerfile: lines.join("\n") };
}

/** What the built image may not change from its base: who runs, and what runs as the container's main process. */
function sameRunShape(built: Docker.ImageInspectInfo["Config"], base: Docker.ImageInspectInfo["Config"]): string | null {
  if ((built.User ?? "") !== (base.User ?? "")) return `it changes USER to ${JSON.stringify(built.User ?? "")} (the sandbox runs as ${base.User}; keep it)`;
  if (JSON.stringify(built.Cmd ?? null) !== JSON.stringify(base.Cmd ?? null)) return "it changes CMD (the sandbox's main process is the base image's spawner)";
  if (JSON.stringify(built.Entrypoint ?? null) !== JSON.stringify(base.Entrypoint ?? null))
    return "it sets an ENTRYPOINT (the sandbox's main process is the base image's spawner)";
  return null;
}

export async function buildCustomFamily(
  docker: Docker,
  opts: { name: string; dockerfile: string; lockPath: string; onProgress?: (line: string) => void; now?: () => Date },
): Promise<BuiltImage & { base: BuiltinFamily }> {
  checkCustomFamilyName(opts.name);
  let text: string;
  try {
    text = await fs.readFile(opts.dockerfile, "utf8");
  } catch (err) {
    throw usage(`cannot read the Dockerfile ${opts.dockerfile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const lock = await readImageLock(opts.lockPath);
  const { base, digest: baseDigest, dockerfile } = pinDockerfileBase(text, lock);
  let baseConfig: Docker.ImageInspectInfo["Config"];
  try {
    baseConfig = (await docker.getImage(baseDigest).inspect()).Config;
  } catch (err) {
    throw new MiniAgentError("image_missing", `the pinned ${base} image ${baseDigest} is not in the engine; ${rebuildHint(opts.lockPath, base)}`, {
      cause: err,
    });
  }
  // the context is the Dockerfile's folder, copied so the pinned FROM replaces the user's without touching their file
  const context = await fs.mkdtemp(path.join(os.tmpdir(), `mini-agent-family-${opts.name}-`));
  const tag = `mini-agent/sandbox-${opts.name}:local`;
  try {
    await fs.cp(path.dirname(path.resolve(opts.dockerfile)), context, { recursive: true, verbatimSymlinks: true });
    await fs.writeFile(path.join(context, ".mini-agent.Dockerfile"), dockerfile);
    const stream = await docker.buildImage(
      tar.pack(context) as never,
      {
        t: tag,
        dockerfile: ".mini-agent.Dockerfile",
        rm: true,
        forcerm: true,
        pull: "",
        // the build gets no network: a family is made of what the user has on this machine, nothing fetched
        networkmode: "none",
        // the base's inputs label is not this image's: a built-in build that looked it up would take this one
        labels: JSON.stringify({ [PROTOCOL_LABEL]: SANDBOX_PROTOCOL, [CUSTOM_BASE_LABEL]: base, [INPUTS_LABEL]: `custom:${opts.name}` }),
      } as unknown as Docker.ImageBuildOptions,
    );
    const events = await new Promise<Array<Record<string, unknown>>>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (err: Error | null, res: Array<Record<string, unknown>>) => (err ? reject(err) : resolve(res)),
        (ev: Record<string, unknown>) => {
          if (typeof ev.stream === "string" && ev.stream.trim()) opts.onProgress?.(ev.stream.trim());
        },
      );
    });
    const failed = events.find((e) => e.error !== undefined || e.errorDetail !== undefined);
    if (failed)
      throw new MiniAgentError(
        "sandbox_error",
        `the ${opts.name} family's Dockerfile did not build: ${String(failed.error ?? JSON.stringify(failed.errorDetail))}`,
      );
    const id = events.map((e) => (e.aux as { ID?: unknown } | undefined)?.ID).find((v): v is string => typeof v === "string" && v.startsWith("sha256:"));
    const digest = id ?? (await docker.getImage(tag).inspect()).Id;
    const why = sameRunShape((await docker.getImage(digest).inspect()).Config, baseConfig);
    if (why !== null) {
      await docker
        .getImage(digest)
        .remove({ force: true })
        .catch(() => undefined);
      throw usage(`the ${opts.name} family is refused: ${why}`);
    }
    await recordImage(opts.lockPath, opts.name, { tag, digest, built_at: (opts.now ?? (() => new Date()))().toISOString(), base, base_digest: baseDigest });
    return { family: opts.name, tag, digest, base };
  } finally {
    await fs.rm(context, { recursive: true, force: true });
  }
}
