import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * The one command-line grammar helper of every mini-agent program (daemon,
 * worker, client, eval): Node's parseArgs underneath, with the usage errors a
 * person can act on. Node's own messages ("Unknown option '--workspce'. To
 * specify a positional argument starting with a '-', place it at the end of the
 * command after '--' …", "Option '--workspace <value>' argument missing") named
 * no fix; ours name the flag or value, suggest the nearest known flag, and
 * leave the full help to `--help` instead of printing 40 lines after it.
 */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

type Values<O extends OptionSpec> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: true }>>["values"];

export type CliParse<O extends OptionSpec> = { ok: true; values: Values<O>; positionals: string[] } | { ok: false; message: string };

export function parseCli<const O extends OptionSpec>(args: readonly string[], options: O, allowPositionals = true): CliParse<O> {
  const problem = scan(args, options, allowPositionals);
  if (problem) return { ok: false, message: problem };
  try {
    const r = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
    return { ok: true, values: r.values, positionals: r.positionals };
  } catch (err) {
    // scan() catches what a person types wrong; anything left is reported by its kind, not by Node's wording
    const code = (err as NodeJS.ErrnoException).code;
    return { ok: false, message: code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" ? "unexpected argument" : "the options could not be read" };
  }
}

/** The first mistake in argv, in words, or null. Stops at `--` like parseArgs. */
function scan(args: readonly string[], options: OptionSpec, allowPositionals: boolean): string | null {
  const longNames = Object.keys(options);
  const shorts = new Map(Object.entries(options).flatMap(([name, o]) => (o.short ? [[o.short, name] as const] : [])));
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return null;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq === -1 ? undefined : eq);
      const spec = options[name];
      if (!spec) return unknownOption(`--${name}`, longNames);
      if (spec.type === "boolean") {
        if (eq !== -1) return `--${name} takes no value (got '${a.slice(eq + 1)}')`;
        continue;
      }
      if (eq !== -1) continue;
      const next = args[i + 1];
      if (next === undefined) return `--${name} needs a value`;
      if (next.startsWith("-") && next !== "-") return `--${name} needs a value (one that starts with '-' is written --${name}=${next})`;
      i++;
      continue;
    }
    if (a.startsWith("-") && a !== "-") {
      const name = shorts.get(a.slice(1, 2));
      if (!name || a.length > 2) return unknownOption(a, longNames);
      if (options[name]!.type === "string") i++;
      continue;
    }
    if (!allowPositionals) return `unexpected argument '${a}'`;
  }
  return null;
}

function unknownOption(given: string, longNames: readonly string[]): string {
  const near = didYouMean(given.replace(/^-+/, ""), longNames);
  return `unknown option ${given}${near ? ` (did you mean --${near}?)` : ""}`;
}

/**
 * The known word nearest to `input`, when it is near enough to be a typo:
 * at most 2 edits (1 for words of up to 4 letters), or `input` is a prefix of
 * exactly one word. Null when nothing is close or two words tie.
 */
export function didYouMean(input: string, known: readonly string[]): string | null {
  const lower = input.toLowerCase();
  const prefixed = known.filter((k) => lower.length >= 3 && k.startsWith(lower));
  if (prefixed.length === 1) return prefixed[0]!;
  const limit = lower.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
      tie = false;
    } else if (d === bestDistance) tie = true;
  }
  return best !== null && bestDistance <= limit && !tie ? best : null;
}

/** Damerau-Levenshtein (optimal string alignment): a swapped pair of letters is one edit, as typos usually are. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The one shape of a usage error on stderr: what is wrong, then where the full help is. */
export function usageErrorText(program: string, message: string, helpCommand: string): string {
  return `${program}: ${message}\nrun \`${helpCommand}\` for more\n`;
}
