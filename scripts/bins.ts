import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How the tests and the benches start mini-agent's programs: the built files
 * package.json's `bin` names (one file each, scripts/bundle.ts), or their
 * TypeScript sources through tsx. From source needs no build step, but tsx
 * compiles every module on every spawn, about twice the CPU of a bundled start;
 * the test command (scripts/test.sh) builds dist/ first and sets
 * MINI_AGENT_TEST_BINS=dist, so there every spawn starts the files users run.
 */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export type BinName = "daemon" | "client" | "worker";

/** package.json's `bin` is the one list: `mini-agent-<name>` → dist/<dir>/src/cli.js, whose source is <dir>/src/cli.ts */
function builtBins(): Record<BinName, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { bin: Record<string, string> };
  const of = (name: BinName): string => {
    const file = pkg.bin[`mini-agent-${name}`];
    if (!file) throw new Error(`package.json names no bin mini-agent-${name}`);
    return path.join(REPO, file);
  };
  return { daemon: of("daemon"), client: of("client"), worker: of("worker") };
}

const BUILT = builtBins();

/** the source a built bin is compiled from (dist/X.js → X.ts) */
export function sourceOf(built: string): string {
  return path.join(REPO, path.relative(path.join(REPO, "dist"), built).replace(/\.js$/, ".ts"));
}

/** The node arguments that start a bin: `MINI_AGENT_TEST_BINS=dist` the built file, otherwise its source through tsx. */
export function binArgs(which: BinName, env: NodeJS.ProcessEnv = process.env): string[] {
  return env.MINI_AGENT_TEST_BINS === "dist" ? [BUILT[which]] : ["--import", "tsx", sourceOf(BUILT[which])];
}

/** the built file of a bin (what `MINI_AGENT_TEST_BINS=dist` starts) */
export function builtBin(which: BinName): string {
  return BUILT[which];
}
