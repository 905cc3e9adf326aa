import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile, type Plugin } from "esbuild";

/**
 * `npm run build` step 2: each program's entry as one file, written over tsc's
 * output at the same path (the paths package.json's `bin` names, so every
 * caller keeps working). Every status and approval is a fresh client process, the
 * test suite starts these bins hundreds of times, and loading a few hundred module
 * files was most of each start (measured: `npm run bench:startup`): one file holds
 * what a program needs, and the heavy optional paths are reached by `await import`.
 */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface BundleEntry {
  /** the entry's source, relative to the repo; the bundle replaces tsc's output for it */
  source: string;
  /**
   * Where the entry's own `await import`s go.
   * "inline": into the file, evaluated only when reached. One copy of every module, so an error
   * class thrown on a lazy path is the class the daemon's `instanceof` checks (the daemon and the
   * worker: the LangGraph and Agents SDK orchestrators, the live model).
   * "beside": left out, loading the built file beside the bundle (tsc's, or another entry's
   * bundle), so the file holds only what the common commands need (the client, whose every
   * status and approval is a fresh process).
   */
  lazy: "inline" | "beside";
  /** packages that must never be on the start-up path (every module reached without an `await import`): each was measured as most of a start */
  forbidden: RegExp[];
  /** worker-thread entries the code starts by `new URL("./NAME.js", import.meta.url)`: bundled beside this one, where that URL points from it */
  threads?: string[];
}

const UNDICI = /node_modules\/undici\//;
const ZOD_CLASSIC = /node_modules\/zod\/v4\/(classic|locales)\//;
const ORCHESTRATORS = /node_modules\/@(langchain|openai)\//;
const MCP_SDK = /node_modules\/@modelcontextprotocol\//;
const BULLMQ = /node_modules\/(bullmq|ioredis)\//;

/** The one list of bundled entries. */
export const ENTRIES: BundleEntry[] = [
  { source: "client/src/cli.ts", lazy: "beside", forbidden: [UNDICI, ZOD_CLASSIC, ORCHESTRATORS, MCP_SDK, BULLMQ] },
  // `mini-agent-client mcp`: a long-lived server, loaded by the client only for that command
  { source: "client/src/mcp/index.ts", lazy: "beside", forbidden: [ORCHESTRATORS, BULLMQ] },
  // `mini-agent-client eval|gate`: loaded by the client only for them; fleets (bullmq) stay lazy
  { source: "eval/src/cli.ts", lazy: "inline", forbidden: [ORCHESTRATORS, MCP_SDK, BULLMQ] },
  {
    source: "daemon/src/cli.ts",
    lazy: "inline",
    forbidden: [UNDICI, ORCHESTRATORS, MCP_SDK, BULLMQ],
    threads: ["daemon/src/adhoc/git-state-worker.ts"],
  },
  { source: "worker/src/cli.ts", lazy: "inline", forbidden: [UNDICI, ORCHESTRATORS, MCP_SDK], threads: ["daemon/src/adhoc/git-state-worker.ts"] },
];

/**
 * Natives and packages that read files next to themselves stay files in node_modules:
 * better-sqlite3 loads its .node binding; ssh2 (dockerode's ssh:// transport) and its
 * optional cpu-features load theirs.
 */
export const BUNDLE_EXTERNAL = ["better-sqlite3", "ssh2", "cpu-features"];

/** bundled CommonJS packages call require() for node's own modules, which an ES module does not have */
export const BUNDLE_BANNER = 'import { createRequire as __bundleRequire } from "node:module";\nconst require = __bundleRequire(import.meta.url);';

/** "beside": a relative `await import` is left out, pointing at the built file for that module as seen from the bundle's folder */
function lazyBeside(root: string, dist: string, outfile: string): Plugin {
  return {
    name: "lazy-imports-beside",
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind !== "dynamic-import") return undefined;
        if (!args.path.startsWith(".")) return { path: args.path, external: true };
        const built = path.join(dist, path.relative(root, path.resolve(args.resolveDir, args.path)));
        const rel = path.relative(path.dirname(outfile), built);
        return { path: rel.startsWith(".") ? rel : `./${rel}`, external: true };
      });
    },
  };
}

/**
 * Modules a bundled dependency requires at load but calls only on a path mini-agent never takes
 * at start, each exporting one function: dockerode's BuildKit session (grpc and protobufjs, about
 * 0.12 s of CPU) and docker-modem's ssh:// transport (ssh2, about 0.05 s). Each is replaced by a
 * function that requires the real module on its first call and forwards to it, so behaviour is
 * the same and only the load moves (esbuild evaluates a bundled CommonJS module at its first require).
 */
const LOAD_ON_FIRST_CALL: ReadonlyArray<{ importer: RegExp; specifier: string }> = [
  { importer: /[\\/]dockerode[\\/]lib[\\/]docker\.js$/, specifier: "./session" },
  { importer: /[\\/]docker-modem[\\/]lib[\\/]modem\.js$/, specifier: "./ssh" },
];

function loadOnFirstCall(): Plugin {
  return {
    name: "load-on-first-call",
    setup(b) {
      b.onResolve({ filter: /^\.\/(session|ssh)$/ }, (args) => {
        if (args.namespace === "load-on-first-call") return undefined;
        if (!LOAD_ON_FIRST_CALL.some((l) => l.specifier === args.path && l.importer.test(args.importer))) return undefined;
        return { path: path.join(args.resolveDir, `${args.path.slice(2)}.js`), namespace: "load-on-first-call" };
      });
      b.onLoad({ filter: /.*/, namespace: "load-on-first-call" }, (args) => ({
        contents: `module.exports = function () { return require(${JSON.stringify(args.path)}).apply(this, arguments); };`,
        loader: "js",
        resolveDir: path.dirname(args.path),
      }));
    },
  };
}

/**
 * The modules evaluated at start: reached from the entry without crossing an `await import`, and
 * in the file (esbuild lists what it reached but tree-shook away with 0 bytes: zod's locales).
 */
export function startupInputs(meta: Metafile, entryInput: string, output: Metafile["outputs"][string]): string[] {
  const seen = new Set<string>([entryInput]);
  const queue = [entryInput];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const i of meta.inputs[next]?.imports ?? []) {
      if (i.kind === "dynamic-import" || i.external || seen.has(i.path)) continue;
      seen.add(i.path);
      queue.push(i.path);
    }
  }
  return [...seen].filter((i) => (output.inputs[i]?.bytesInOutput ?? 0) > 0);
}

/** `new URL("./x.js", import.meta.url)` in a bundle: files the code expects beside it */
export function filesExpectedBeside(code: string): string[] {
  return [...code.matchAll(/new URL\("\.\/([^"]+\.js)", import\.meta\.url\)/g)].map((m) => m[1]!);
}

function builtPath(dist: string, source: string): string {
  return path.join(dist, source.replace(/\.ts$/, ".js"));
}

export interface Bundled {
  source: string;
  outfile: string;
  bytes: number;
  modules: number;
  startupModules: number;
}

/** One entry over tsc's output in `dist`; `root` is the tree its source paths are relative to (the repo, or a test's fixture). Throws when a check fails. */
export async function bundleEntry(entry: BundleEntry, dist: string, root = REPO): Promise<Bundled> {
  const outfile = builtPath(dist, entry.source);
  const result = await build({
    entryPoints: [path.join(root, entry.source)],
    absWorkingDir: root,
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    external: BUNDLE_EXTERNAL,
    banner: { js: BUNDLE_BANNER },
    plugins: [loadOnFirstCall(), ...(entry.lazy === "beside" ? [lazyBeside(root, dist, outfile)] : [])],
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  if (!output?.entryPoint) throw new Error(`${entry.source}: esbuild wrote no entry`);
  const startup = startupInputs(result.metafile, output.entryPoint, output);
  const bad = startup.filter((i) => entry.forbidden.some((re) => re.test(i)));
  if (bad.length > 0) {
    throw new Error(
      `${entry.source}: the start-up path imports ${bad.slice(0, 5).join(", ")}${bad.length > 5 ? ` and ${bad.length - 5} more` : ""}; import it lazily (await import) instead`,
    );
  }
  for (const thread of entry.threads ?? []) {
    await build({
      entryPoints: [path.join(root, thread)],
      absWorkingDir: root,
      outfile: path.join(path.dirname(outfile), path.basename(thread).replace(/\.ts$/, ".js")),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "warning",
      external: BUNDLE_EXTERNAL,
      banner: { js: BUNDLE_BANNER },
    });
  }
  // a file the code opens beside itself that is not there would fail only when that path runs
  const missing = filesExpectedBeside(fs.readFileSync(outfile, "utf8")).filter((f) => !fs.existsSync(path.join(path.dirname(outfile), f)));
  if (missing.length > 0) throw new Error(`${entry.source}: the bundle opens ${missing.join(", ")} beside itself; list it in the entry's threads`);
  const inputs = Object.entries(output.inputs).filter(([, i]) => i.bytesInOutput > 0);
  return { source: entry.source, outfile, bytes: output.bytes, modules: inputs.length, startupModules: startup.length };
}

/** `--dist DIR`: the tree tsc wrote (default dist/), for builds staged elsewhere (tests/docker-image) */
function distDir(argv: string[]): string {
  if (argv.length === 0) return path.join(REPO, "dist");
  if (argv.length === 2 && argv[0] === "--dist" && argv[1]) return path.resolve(argv[1]);
  throw new Error(`unknown arguments ${argv.join(" ")}; use --dist DIR`);
}

async function main(argv: string[]): Promise<number> {
  const dist = distDir(argv);
  for (const entry of ENTRIES) {
    const b = await bundleEntry(entry, dist);
    process.stdout.write(
      `bundle: ${path.relative(process.cwd(), b.outfile)} (${Math.round(b.bytes / 1024)} KiB, ${b.modules} modules, ${b.startupModules} at start-up)\n`,
    );
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err) => {
      process.stderr.write(`bundle failed: ${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
