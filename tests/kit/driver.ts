import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { BUNDLE_BANNER, BUNDLE_EXTERNAL } from "../../scripts/bundle.js";

/**
 * The node arguments that start a test driver: a TypeScript program that drives the
 * daemon's internals in a process of its own, so a test can SIGKILL it at a crash point
 * (tests/recovery/driver.ts, tests/orchestrators/*-driver.ts, langgraph-child.ts).
 *
 * Through tsx every spawn compiled the ~1,000 modules of the run service again (about
 * 1.5 s of CPU more than a bundled start, and a crash test spawns a dozen). Under the
 * test command (MINI_AGENT_TEST_BINS=dist) the driver is bundled once per test process,
 * from the current sources, into dist/tests/ (a build output inside the repo, so packages
 * and tsx resolve from it as from the sources), and every spawn starts that one file.
 *
 * Every module keeps its own source file as `import.meta.url`, so what the code finds
 * beside itself (the fixtures, package.json, the git-state worker run through tsx, the
 * Verifier's code fingerprint) is exactly what it finds run from source.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const built = new Map<string, string>();

export function driverArgs(source: string): string[] {
  if (process.env.MINI_AGENT_TEST_BINS !== "dist") return ["--import", "tsx", source];
  let out = built.get(source);
  if (out === undefined) {
    out = path.join(REPO, "dist", path.relative(REPO, source).replace(/\.ts$/, ".js"));
    // written beside, then renamed over: a test file running at once keeps the one it started
    const tmp = `${out}.${process.pid}.tmp`;
    const r = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), source, tmp], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`bundling the driver ${source} failed:\n${r.stdout}${r.stderr}`);
    fs.renameSync(tmp, out);
    built.set(source, out);
  }
  return [out];
}

/** our modules see their source file as import.meta.url; packages are left as they are */
const sourceUrls: Plugin = {
  name: "source-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = fs.readFileSync(args.path, "utf8");
      return { contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" };
    });
  },
};

async function bundleDriver(source: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [source],
    absWorkingDir: REPO,
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    external: BUNDLE_EXTERNAL,
    banner: { js: BUNDLE_BANNER },
    plugins: [sourceUrls],
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [source, outfile] = process.argv.slice(2);
  if (!source || !outfile) throw new Error("usage: driver.ts SOURCE OUTFILE");
  await bundleDriver(source, outfile);
}
