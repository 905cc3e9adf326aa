import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { describeZodError, SchemaVersion } from "../contracts/common.js";
import { isBuiltinFamily } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";

/**
 * How the user rebuilds the image; every pinning error says it. The lock sits
 * in the daemon's state dir, so the command names that dir: without it the
 * build would record the digest in the default state dir's lock instead.
 */
export function rebuildHint(lockPath: string, family?: string): string {
  // node is the build's default family; any other must be named or the build makes the wrong image
  // a custom family is rebuilt from its own Dockerfile, which only the user can name
  const custom = family !== undefined && !isBuiltinFamily(family);
  const fam = family && family !== "node" ? `--family ${family} ${custom ? "--dockerfile PATH " : ""}` : "";
  return `rebuild it with \`npm run image:build -- ${fam}--state-dir ${path.dirname(lockPath)}\``;
}

const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

const LockedImage = z.strictObject({
  tag: z.string().min(1),
  digest: Digest,
  built_at: z.string(),
  /** a custom family only: the built-in family it was built FROM, whose conventions it follows */
  base: z.string().optional(),
  /** a custom family only: the pinned digest of that base when it was built */
  base_digest: Digest.optional(),
});
export type LockedImage = z.infer<typeof LockedImage>;

export const ImageLock = z.strictObject({
  schema_version: SchemaVersion,
  images: z.record(z.string(), LockedImage),
});
export type ImageLock = z.infer<typeof ImageLock>;

/** Reads the lock; a missing file is `null`, a corrupt one is an error that says how to recover. */
export async function readImageLock(lockPath: string): Promise<ImageLock | null> {
  let text: string;
  try {
    text = await fs.readFile(lockPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new MiniAgentError("image_missing", `cannot read the image lock ${lockPath}; ${rebuildHint(lockPath)}`, { cause: err });
  }
  return parseImageLock(text, lockPath);
}

/**
 * The same read, synchronous, for the composition root, which learns a custom family's base
 * when it first makes that family's executor (readImageLock's rules and errors).
 */
export function readImageLockSync(lockPath: string): ImageLock | null {
  let text: string;
  try {
    text = fsSync.readFileSync(lockPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new MiniAgentError("image_missing", `cannot read the image lock ${lockPath}; ${rebuildHint(lockPath)}`, { cause: err });
  }
  return parseImageLock(text, lockPath);
}

function parseImageLock(text: string, lockPath: string): ImageLock {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new MiniAgentError("image_missing", `the image lock ${lockPath} is not JSON; ${rebuildHint(lockPath)}`, { cause: err });
  }
  const parsed = ImageLock.safeParse(json);
  if (!parsed.success) {
    throw new MiniAgentError("image_missing", `the image lock ${lockPath} is invalid (${describeZodError(parsed.error)}); ${rebuildHint(lockPath)}`);
  }
  return parsed.data;
}

/** Records one family's digest, keeping the others; written atomically (tmp + rename). */
export async function recordImage(lockPath: string, family: string, image: LockedImage): Promise<ImageLock> {
  const current = (await readImageLock(lockPath).catch(() => null)) ?? { schema_version: 1 as const, images: {} };
  const next: ImageLock = { schema_version: 1, images: { ...current.images, [family]: image } };
  await fs.mkdir(path.dirname(lockPath), { recursive: true, mode: 0o700 });
  const tmp = `${lockPath}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 });
  await fs.rename(tmp, lockPath);
  return next;
}
