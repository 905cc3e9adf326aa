import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * The go family's /tmp seed: a GOCACHE holding what every `go test` / `go run`
 * in a sandbox would otherwise rebuild from nothing, because a sandbox starts
 * with an empty /tmp: the vet facts of every standard-library package (the
 * analysis `go test` runs on each dependency before vetting the package) and
 * the standard packages whose shipped archives do not fit CGO_ENABLED=0 (net,
 * os/user, ...). Measured on fixtures/wordwrap: `go test` 3.3 s and ~6 CPU-s
 * from an empty cache, 0.6 s and ~0.8 CPU-s from this seed.
 *
 * It is made at image build time by the very toolchain the image carries
 * (copied from the same GOROOT) under the image's own Go env, so its cache keys
 * are the ones a sandbox computes. Nothing of a user's code is in it, and the
 * spawner copies it into each command's fresh /tmp: no sandbox ever sees what
 * another wrote (sandbox-image/helper/tmp-seed.h).
 */
export async function buildGoCacheSeed(outDir: string, imageEnv: Record<string, string>): Promise<void> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-go-seed-"));
  try {
    const env: NodeJS.ProcessEnv = {
      ...imageEnv,
      // the host's go is the image's go (same GOROOT, copied from it); only the writable places differ
      PATH: `${imageEnv.GOROOT}/bin:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: work,
      GOCACHE: outDir,
      GOPATH: path.join(work, "gopath"),
      GOMODCACHE: path.join(work, "gopath", "pkg", "mod"),
      GOTMPDIR: work,
    };
    const { stdout } = await run("go", ["list", "-e", "-f", "{{if not .Incomplete}}{{.ImportPath}}{{end}}", "std"], { env, cwd: work, maxBuffer: 8 << 20 });
    const source = seedSource(stdout.split("\n"));
    const goTest = async (dir: string) => {
      const mod = path.join(work, dir);
      await fs.mkdir(mod);
      await fs.writeFile(path.join(mod, "go.mod"), "module mini-agent.invalid/seed\n\ngo 1.19\n");
      await fs.writeFile(path.join(mod, "seed.go"), source);
      await fs.writeFile(path.join(mod, "seed_test.go"), 'package seed\n\nimport "testing"\n\nfunc TestSeed(t *testing.T) {}\n');
      // go test: the same vet analyzers and flags as a sandbox's `go test`, so the same cache keys
      await run("go", ["test", "-count=1", "./..."], { env, cwd: mod, timeout: 15 * 60_000, maxBuffer: 8 << 20 });
    };
    await goTest("a");
    // The entries of the seed package itself are keyed by its folder (a temp path): useless in a
    // sandbox, and different on every build. The same package again from another folder uses
    // (and so touches: go refreshes the mtime of an entry it reads when that is over an hour old)
    // exactly the entries that do not depend on where a package sits; only those are kept.
    const first = await ageEntries(outDir);
    await goTest("b");
    await keepTouched(outDir, first);
    await normalizeCache(outDir);
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

const AGED = new Date(0);

async function cacheFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const sub of await fs.readdir(dir)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of await fs.readdir(path.join(dir, sub))) out.push(path.join(dir, sub, name));
  }
  return out;
}

/** Ages every file of the cache; returns them. */
async function ageEntries(dir: string): Promise<Set<string>> {
  const files = await cacheFiles(dir);
  for (const f of files) await fs.utimes(f, AGED, AGED);
  return new Set(files);
}

/** Keeps only the files of `first` that the second run read (no longer aged): what it wrote, and what it did not need, go. */
async function keepTouched(dir: string, first: Set<string>): Promise<void> {
  for (const f of await cacheFiles(dir)) if (!first.has(f) || (await fs.stat(f)).mtimeMs === AGED.getTime()) await fs.rm(f);
}

/** A package importing every importable standard package (no internal or vendored ones). */
export function seedSource(importPaths: string[]): string {
  const std = importPaths.map((p) => p.trim()).filter((p) => p !== "" && !p.split("/").includes("internal") && !p.startsWith("vendor/"));
  return `package seed\n\nimport (\n${std.map((p) => `\t_ ${JSON.stringify(p)}\n`).join("")})\n`;
}

/**
 * Makes the seed the same bytes on every build of the same toolchain: the
 * time stamp in each action entry (`v1 <action> <output> <size> <time>`,
 * read only to expire cached TEST results, which the seed has none of) is set
 * to 0, and what depends on when or how often go ran is removed: trim.txt
 * (go trims an old cache at most once a day; without the file it checks once
 * and writes it in the sandbox's own /tmp) and the module-index entries
 * (`go index v1`, written on some runs only, keyed by GOROOT's timestamps,
 * which differ in the image).
 */
async function normalizeCache(dir: string): Promise<void> {
  await fs.rm(path.join(dir, "trim.txt"), { force: true });
  for (const file of await cacheFiles(dir)) {
    if (!file.endsWith("-a")) continue;
    const entry = parseActionEntry(await fs.readFile(file, "utf8"));
    if (entry === null) throw new Error(`go cache seed: unexpected action entry ${file}`);
    const output = path.join(dir, entry.output.slice(0, 2), `${entry.output}-d`);
    const head = await fs.readFile(output).then(
      (b) => b.subarray(0, 12).toString("latin1"),
      () => "",
    );
    if (head.startsWith("go index v")) {
      await fs.rm(file);
      await fs.rm(output, { force: true });
      continue;
    }
    await fs.writeFile(file, formatActionEntry({ ...entry, time: 0n }));
  }
}

export interface ActionEntry {
  action: string;
  output: string;
  size: number;
  /** nanoseconds: beyond a double's exact range */
  time: bigint;
}

/** An action entry as Go 1.19's cache writes it (cmd/go/internal/cache: "v1 %x %x %20d %20d\n"); null when it is not one. */
export function parseActionEntry(text: string): ActionEntry | null {
  const m = /^v1 ([0-9a-f]{64}) ([0-9a-f]{64}) +(\d+) +(\d+)\n$/.exec(text);
  return m ? { action: m[1]!, output: m[2]!, size: Number(m[3]), time: BigInt(m[4]!) } : null;
}

export function formatActionEntry(e: ActionEntry): string {
  return `v1 ${e.action} ${e.output} ${String(e.size).padStart(20)} ${String(e.time).padStart(20)}\n`;
}
