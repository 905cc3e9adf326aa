import { splitWords } from "./argv.js";
import type { RepoFiles } from "./repo-files.js";
import { recognise } from "./test-command.js";

/**
 * A package.json test script that chains commands (`a && b`) or hands over to
 * another script (`npm run test:unit`) cannot run in the sandbox (no npm, no
 * shell), and "cannot run" alone leaves the user to open package.json and
 * follow the chain. This names what each step runs and, when one of them is a
 * runner mini-agent reads, the exact `--test` to give. It only READS
 * package.json; nothing here runs or chooses for the user.
 */
export interface ScriptChain {
  /** "npm run test:unit (scripts["test:unit"] is "vitest run"), then npm run lint (...)" */
  runs: string;
  /** the first step, followed through npm run, that is a runner mini-agent translates; null when none is */
  suggest: string | null;
}

type Scripts = Record<string, unknown>;

/** `npm run X`, `npm run-script X`, `npm test`, `yarn [run] X`, `pnpm [run] X`: the script it hands over to, or null */
function scriptNamed(words: string[]): string | null {
  const [p, a1, a2] = words;
  if (p === "npm" && (a1 === "test" || a1 === "t") && words.length === 2) return "test";
  if (p === "npm" && (a1 === "run" || a1 === "run-script") && a2 !== undefined && words.length === 3) return a2;
  if ((p === "yarn" || p === "pnpm") && a1 === "run" && a2 !== undefined && words.length === 3) return a2;
  if ((p === "yarn" || p === "pnpm") && a1 !== undefined && !a1.startsWith("-") && words.length === 2) return a1;
  return null;
}

const scriptKey = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `scripts.${name}` : `scripts[${JSON.stringify(name)}]`);

/** `a && b && c` as its steps (one step when there is no `&&`) */
function steps(text: string): string[] {
  return text
    .split("&&")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** The first step of `text` (npm run followed up to `depth` times, never in a loop) that is a runner we translate. */
function firstRunner(text: string, scripts: Scripts, repo: RepoFiles, seen: Set<string>, depth: number): string | null {
  for (const step of steps(text)) {
    const split = splitWords(step);
    if (!split.ok || split.words.length === 0) continue;
    const named = scriptNamed(split.words.map((w) => w.text));
    if (named !== null) {
      const target = scripts[named];
      if (depth > 0 && typeof target === "string" && !seen.has(named)) {
        const found = firstRunner(target, scripts, repo, new Set([...seen, named]), depth - 1);
        if (found !== null) return found;
      }
      continue;
    }
    if (recognise(split.words, repo)?.ok === true) return step;
  }
  return null;
}

/** What a chained or handed-over test script runs; null for a single plain command (its own refusal says enough). */
export function explainScriptChain(script: string, scripts: Scripts, repo: RepoFiles): ScriptChain | null {
  const parts = steps(script);
  const described = parts.map((step) => {
    const split = splitWords(step);
    const named = split.ok ? scriptNamed(split.words.map((w) => w.text)) : null;
    if (named === null) return { step, named: false, text: step };
    const target = scripts[named];
    return {
      step,
      named: true,
      text: typeof target === "string" ? `${step} (${scriptKey(named)} is ${JSON.stringify(target)})` : `${step} (package.json has no ${scriptKey(named)})`,
    };
  });
  if (parts.length < 2 && !described.some((d) => d.named)) return null;
  return { runs: described.map((d) => d.text).join(", then "), suggest: firstRunner(script, scripts, repo, new Set(["test"]), 3) };
}
