import fs from "node:fs";
import type { z } from "zod";
import { PolicyFile, PolicyRules } from "../contracts/policy.js";
import { MiniAgentError } from "../errors.js";

/**
 * Reads a policy file: JSON, validated strictly. A broken file is an error
 * that names the file, the line and the reason (the daemon refuses to start
 * on it), never a silent fall-back to defaults. A missing DEFAULT file
 * (`<state-dir>/policy.json`) is not an error: the built-in policy applies;
 * a missing file the user named is.
 */
export const POLICY_FILE_MAX_BYTES = 256 * 1024;

export function loadPolicyFile(file: string, opts: { optional?: boolean } = {}): PolicyFile | null {
  const text = readPolicyText(file, opts.optional ?? false);
  return text === null ? null : parsePolicyText(text, file, PolicyFile);
}

/** A workspace's `.mini-agent/policy.json`: the same rules (no profiles); it can only tighten. */
export function parseWorkspacePolicy(text: string, label: string): z.infer<typeof PolicyRules> {
  return parsePolicyText(text, label, PolicyRules);
}

export function readPolicyText(file: string, optional: boolean): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && optional) return null;
    throw new MiniAgentError("policy_invalid", `${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!st.isFile()) throw new MiniAgentError("policy_invalid", `${file}: not a regular file`);
  if (st.size > POLICY_FILE_MAX_BYTES) throw new MiniAgentError("policy_invalid", `${file}: larger than ${POLICY_FILE_MAX_BYTES} bytes`);
  return fs.readFileSync(file, "utf8");
}

export function parsePolicyText<S extends z.ZodType>(text: string, label: string, schema: S): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // Node 20 names a position for some errors only ("Unexpected token 'e', ... is not valid JSON" has none)
    const at = /position (\d+)/.exec(String((err as Error).message));
    const offset = at ? Number(at[1]) : jsonErrorOffset(text);
    const line = offset === null ? null : lineOf(text, offset);
    throw new MiniAgentError("policy_invalid", `${label}${line === null ? "" : `:${line}`}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // an unknown key is reported at the key itself
  const keys = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] as string] : issue.path;
  const where = keys.map(String).join(".");
  const line = lineOfPath(text, keys);
  throw new MiniAgentError("policy_invalid", `${label}${line === null ? "" : `:${line}`}: ${where === "" ? "" : `${where}: `}${issue.message}`);
}

/**
 * Where the first JSON syntax error is, by a small recursive-descent scan of
 * the grammar; null if the scan finds none. Only called on text JSON.parse refused.
 */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const fail = (): never => {
    throw new JsonSyntaxAt(i);
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++;
  };
  const literal = (word: string) => {
    if (!text.startsWith(word, i)) fail();
    i += word.length;
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '"') {
        i++;
        return;
      }
      if (c < " ") fail();
      i += c === "\\" ? 2 : 1;
    }
    fail();
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    if (!m) fail();
    i += m![0].length;
  };
  const container = (close: "}" | "]") => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (close === "}") {
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
      }
      value();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") container("}");
    else if (c === "[") container("]");
    else if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else number();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return null;
  } catch (err) {
    if (err instanceof JsonSyntaxAt) return Math.min(err.offset, text.length);
    throw err;
  }
}

class JsonSyntaxAt {
  constructor(readonly offset: number) {}
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * The line where the value at `path` (object keys and array indices) starts,
 * found by walking the JSON text itself; null if it cannot be found. Only
 * called on text JSON.parse accepted.
 */
export function lineOfPath(text: string, path: readonly PropertyKey[]): number | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const skipString = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
  };
  const readString = (): string => {
    const start = i;
    skipString();
    return JSON.parse(text.slice(start, i)) as string;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') {
      skipString();
      return;
    }
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === "{") {
          ws();
          skipString();
          ws();
          i++; // colon
        }
        skipValue();
        ws();
        if (text[i++] === close) return;
      }
    }
    while (i < text.length && !/[\s,}\]]/.test(text[i] as string)) i++;
  };
  for (let k = 0; k < path.length; k++) {
    const step = path[k];
    ws();
    if (text[i] === "{" && typeof step === "string") {
      i++;
      let found = false;
      for (;;) {
        ws();
        if (text[i] === "}") return null;
        const keyAt = i;
        const key = readString();
        ws();
        i++; // colon
        if (key === step) {
          found = true;
          // the last step: the key's own line (where an unknown key or a bad value is)
          if (k === path.length - 1) return lineOf(text, keyAt);
          break;
        }
        skipValue();
        ws();
        if (text[i] === ",") i++;
      }
      if (!found) return null;
    } else if (text[i] === "[" && typeof step === "number") {
      i++;
      for (let n = 0; n < step; n++) {
        skipValue();
        ws();
        if (text[i] !== ",") return null;
        i++;
      }
    } else return null;
  }
  ws();
  return lineOf(text, i);
}
