import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildProjectContext } from "../daemon/src/context/project-context.js";
import { FileHashCache } from "../daemon/src/workspace/hash-cache.js";
import { computeManifest } from "../daemon/src/workspace/manifest.js";

/**
 * `npm run bench:manifest [-- --files N] [--kib K] [--runs R] [--dir DIR]`
 * The workspace manifest is taken on every model turn and two or three times
 * per write. In ONE run, on the same tree, side by side: the median time of a
 * manifest that reads and hashes every file, and of one with the hash cache
 * warm (nothing changed since the last manifest), plus one after a single file
 * changed; and the same three for the project context every run builds (the
 * rules file and the repo map, whose text-or-binary sniff is kept in the same
 * hash cache): cold (a fresh cache, every file opened), warm (nothing changed:
 * a walk and an lstat per file) and after one file changed (one file opened),
 * so its cost reads against the manifest's.
 * Prints medians and ratios; never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { files: 5000, kib: 16, runs: 7, dir: undefined as string | undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const n = () => Number(argv[++i]);
    if (a === "--files") o.files = n();
    else if (a === "--kib") o.kib = n();
    else if (a === "--runs") o.runs = n();
    else if (a === "--dir") o.dir = argv[++i];
    else throw new Error(`unknown option ${a}; use --files N, --kib K, --runs R, --dir DIR (an existing tree to measure instead)`);
  }
  for (const k of ["files", "kib", "runs"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

/** source-like text (the repo map lists text files only; random bytes would read as binary) */
function textOf(kib: number): string {
  return crypto
    .randomBytes(kib * 768)
    .toString("base64")
    .replace(/(.{76})/g, "$1\n")
    .slice(0, kib * 1024);
}

function makeTree(files: number, kib: number): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-manifest-"));
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `d${i % 50}`, `e${i % 7}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.js`), textOf(kib));
  }
  // a realistic .gitignore at two levels, so the repo map pays for honouring it
  fs.writeFileSync(path.join(root, ".gitignore"), "*.log\nbuild/\n");
  fs.writeFileSync(path.join(root, "d1", ".gitignore"), "e3/\n");
  // old enough that the cache may trust the stamps (see FileHashCache: racily clean files are re-hashed)
  const past = new Date(Date.now() - 60_000);
  for (const f of fs.readdirSync(root, { recursive: true }) as string[]) fs.utimesSync(path.join(root, f), past, past);
  return root;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const made = o.dir === undefined;
  const root = o.dir ?? makeTree(o.files, o.kib);
  try {
    // ctime cannot be set back, so the cache gets a clock 10 s ahead: the fresh tree counts as quiet
    const cache = new FileHashCache({ now: () => Date.now() + 10_000 });
    const first = await computeManifest(root, { hashCache: cache });
    const samples = {
      read_everything: [] as number[],
      cache_warm: [] as number[],
      one_file_changed: [] as number[],
      project_context_cold: [] as number[],
      project_context_warm: [] as number[],
      project_context_one_file_changed: [] as number[],
    };
    // files the repo map opened, per variant (the cache's evidence: warm 0, one changed 1)
    const sniffed = { cold: 0, warm: 0, one_file_changed: 0 };
    await buildProjectContext({ workspaceRoot: root, cache });
    const someFile = Object.keys(first.files)[0];
    for (let i = 0; i < o.runs; i++) {
      let t = performance.now();
      const plain = await computeManifest(root, { hashCache: null });
      samples.read_everything.push(performance.now() - t);
      t = performance.now();
      const cached = await computeManifest(root, { hashCache: cache });
      samples.cache_warm.push(performance.now() - t);
      if (cached.digest !== plain.digest) throw new Error("the cached manifest differs from the full one");
      t = performance.now();
      const cold = await buildProjectContext({ workspaceRoot: root, cache: new FileHashCache({ now: () => Date.now() + 10_000 }) });
      samples.project_context_cold.push(performance.now() - t);
      if (cold.map.entries === 0) throw new Error("the repo map is empty");
      sniffed.cold = cold.sniffed;
      t = performance.now();
      const warm = await buildProjectContext({ workspaceRoot: root, cache });
      samples.project_context_warm.push(performance.now() - t);
      if (warm.facts.repo_map.sha256 !== cold.facts.repo_map.sha256) throw new Error("the cached repo map differs from the cold one");
      sniffed.warm = warm.sniffed;
      if (made && someFile) {
        fs.writeFileSync(path.join(root, someFile), textOf(o.kib));
        t = performance.now();
        const after = await computeManifest(root, { hashCache: cache });
        samples.one_file_changed.push(performance.now() - t);
        if (after.files[someFile] === plain.files[someFile]) throw new Error("the change was not seen");
        t = performance.now();
        const changed = await buildProjectContext({ workspaceRoot: root, cache });
        samples.project_context_one_file_changed.push(performance.now() - t);
        sniffed.one_file_changed = changed.sniffed;
      }
    }
    const m = Object.fromEntries(
      Object.entries(samples)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, Math.round(median(v))]),
    );
    const out = {
      tree: made ? `${o.files} files of ${o.kib} KiB (generated)` : root,
      files: Object.keys(first.files).length,
      runs: o.runs,
      median_ms: m,
      repo_map_files_opened: sniffed,
      ratios: {
        cache_warm_over_read_everything: +(m.cache_warm! / m.read_everything!).toFixed(2),
        project_context_warm_over_cold: +(m.project_context_warm! / m.project_context_cold!).toFixed(2),
        project_context_warm_over_manifest_cache_warm: +(m.project_context_warm! / m.cache_warm!).toFixed(2),
        ...(m.one_file_changed ? { one_file_changed_over_read_everything: +(m.one_file_changed / m.read_everything!).toFixed(2) } : {}),
      },
      load_average: os.loadavg().map((l) => +l.toFixed(2)),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  } finally {
    if (made) fs.rmSync(root, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`bench failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
