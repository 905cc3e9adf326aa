import { termSafe } from "../../client-lib/index.js";

/**
 * Diffs in colour on a terminal (issue 10 item 18): added lines green, removed
 * red, hunk headers cyan, file headers bold. Plain when NO_COLOR is set (any
 * value: https://no-color.org asks for that) or stdout is not a terminal;
 * FORCE_COLOR (other than 0) asks for colour even through a pipe.
 */
export function colorEnabled(env: Readonly<Record<string, string | undefined>>, stdoutIsTTY: boolean): boolean {
  if (env.NO_COLOR !== undefined) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "") return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  return stdoutIsTTY;
}

const SGR = { reset: "\x1b[0m", bold: "\x1b[1m", red: "\x1b[31m", green: "\x1b[32m", cyan: "\x1b[36m" } as const;

export interface DiffStyle {
  /** colour the lines */
  color: boolean;
  /**
   * the text goes to a terminal: control characters in it (a proposed patch
   * may carry escape sequences that rewrite the approval prompt) are shown as
   * \xNN (quote.ts), never interpreted. Through a pipe the bytes stay exact, for `git apply`.
   */
  terminal: boolean;
}

export function renderDiff(diff: string, style: DiffStyle): string {
  if (!style.color && !style.terminal) return diff;
  return diff
    .split("\n")
    .map((line) => {
      const shown = visible(line);
      if (!style.color || shown === "") return shown;
      const sgr = lineColor(shown);
      return sgr ? `${sgr}${shown}${SGR.reset}` : shown;
    })
    .join("\n");
}

function lineColor(line: string): string | null {
  if (line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff ") || line.startsWith("index ")) return SGR.bold;
  if (line.startsWith("@@")) return SGR.cyan;
  if (line.startsWith("+")) return SGR.green;
  if (line.startsWith("-")) return SGR.red;
  return null;
}

/** A diff line on a terminal: quote.ts's one rule (ESC as \x1b, bidi marks as \uNNNN), tab kept. */
export function visible(line: string): string {
  return termSafe(line);
}
