import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How to write a mini-agent program in a command we print for the user to run
 * (`approve RUN ACTION`, `resume RUN`, `probe --family F`): exactly as it can
 * be run from the user's shell. A bin name only works once `npm link` put it on
 * the PATH; the README's set-up runs `node dist/client/src/cli.js`, so a printed
 * `mini-agent-client approve …` was `command not found`. The rule: the bin's
 * name when that name on PATH is this very file, else `node /abs/path/to/cli.js`
 * (with the Node flags this process was started with, e.g. `--import tsx`).
 */
export interface ProgramCommandInput {
  /** the bin's name (`mini-agent-client`) */
  bin: string;
  /** the program's entry file (process.argv[1], or a sibling program's file) */
  file: string;
  /** process.execArgv: flags a printed command needs too (a loader such as tsx) */
  execArgv: readonly string[];
  /** process.execPath */
  execPath: string;
  /** $PATH */
  pathEnv: string | undefined;
}

export interface ProgramCommandFs {
  realpath(p: string): string | null;
  /** a loader's bare specifier (`tsx`) as the absolute file Node loaded, so the command runs from any folder */
  resolveModule(specifier: string): string | null;
}

const realFs: ProgramCommandFs = {
  realpath(p) {
    try {
      return fs.realpathSync(p);
    } catch {
      return null;
    }
  },
  resolveModule(specifier) {
    try {
      return fileURLToPath(import.meta.resolve(specifier));
    } catch {
      return null;
    }
  },
};

export function programCommand(input: ProgramCommandInput, fsx: ProgramCommandFs = realFs): string {
  const self = fsx.realpath(input.file);
  const dirs = (input.pathEnv ?? "").split(path.delimiter).filter(Boolean);
  const onPath = (name: string) => dirs.map((d) => fsx.realpath(path.join(d, name))).find((p) => p !== null) ?? null;
  if (self !== null && onPath(input.bin) === self) return input.bin;
  const node = onPath("node") === fsx.realpath(input.execPath) ? "node" : shellWord(input.execPath);
  const flags = loaderFlags(input.execArgv, fsx);
  return [node, ...flags.map(shellWord), shellWord(path.resolve(self ?? input.file))].join(" ");
}

/** Only the flags that change what runs (a module loader); never inspector or memory flags. */
function loaderFlags(execArgv: readonly string[], fsx: ProgramCommandFs): string[] {
  const out: string[] = [];
  const absolute = (spec: string) => (/^[./]|^file:/.test(spec) ? spec : (fsx.resolveModule(spec) ?? spec));
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    const joined = /^--(import|require|loader)=(.+)$/.exec(a);
    if ((a === "--import" || a === "--require" || a === "-r" || a === "--loader") && execArgv[i + 1] !== undefined) out.push(a, absolute(execArgv[++i]!));
    else if (joined) out.push(`--${joined[1]}=${absolute(joined[2]!)}`);
  }
  return out;
}

/** `s` as one word of a POSIX shell command line. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/** A printed command from another program (the daemon's `mini-agent-client probe`) in this user's form. */
export function rewriteProgram(text: string, bin: string, command: string): string {
  if (command === bin) return text;
  return text.replace(new RegExp(`(^|[\\s\`'"(])${bin.replace(/[-]/g, "\\-")}(?=\\s)`, "g"), (_m, pre: string) => `${pre}${command}`);
}
