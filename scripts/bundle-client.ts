import path from "node:path";
import { build, type Plugin } from "esbuild";

/**
 * `npm run build` step 2: mini-agent-client as one file, written over tsc's
 * dist/client/src/cli.js (the path package.json's `bin` names, so every caller
 * keeps working). Every status and approval is a fresh process, and loading
 * ~50 module files (zod's locales among them) was most of its start-up
 * (issue 10 item 16); one tree-shaken file holds what a command needs.
 *
 * Dynamic imports stay outside: they are the rare paths (`run --task-spec`
 * checks the spec with classic zod) and load tsc's compiled modules next to
 * the bundle, at the same relative paths as in the source tree. eval/src/cli.js
 * is the one such path into another program; it takes the shared client-lib/
 * from tsc's output beside it, so client-lib/ must stay in tsconfig's include.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

/** `--dist DIR`: the tree tsc wrote (default dist/), for builds staged elsewhere (tests/docker-image) */
function distDir(argv: string[]): string {
  if (argv.length === 0) return path.join(REPO, "dist");
  if (argv.length === 2 && argv[0] === "--dist" && argv[1]) return path.resolve(argv[1]);
  throw new Error(`unknown arguments ${argv.join(" ")}; use --dist DIR`);
}

/** what must never be in the hot path again: each was measured as most of the start-up */
const FORBIDDEN_INPUTS = [/node_modules\/undici\//, /node_modules\/zod\/v4\/classic\//, /node_modules\/zod\/v4\/locales\//];

const lazyImportsStayOutside: Plugin = {
  name: "lazy-imports-stay-outside",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => (args.kind === "dynamic-import" ? { path: args.path, external: true } : undefined));
  },
};

async function main(argv: string[]): Promise<number> {
  const OUT = path.join(distDir(argv), "client/src/cli.js");
  const result = await build({
    entryPoints: [path.join(REPO, "client/src/cli.ts")],
    outfile: OUT,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    plugins: [lazyImportsStayOutside],
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  // modules esbuild reached but tree-shook away are listed with 0 bytes: only what is in the file counts
  const inputs = Object.entries(output?.inputs ?? {})
    .filter(([, i]) => i.bytesInOutput > 0)
    .map(([name]) => name);
  const bad = inputs.filter((i) => FORBIDDEN_INPUTS.some((re) => re.test(i)));
  if (bad.length > 0) {
    process.stderr.write(
      `bundle-client: the client's start-up path imports ${bad.slice(0, 5).join(", ")}${bad.length > 5 ? ` and ${bad.length - 5} more` : ""}; import it lazily (await import) instead\n`,
    );
    return 1;
  }
  const bytes = output?.bytes ?? 0;
  process.stdout.write(`bundle-client: ${path.relative(process.cwd(), OUT)} (${Math.round(bytes / 1024)} KiB, ${inputs.length} modules)\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`bundle-client failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
