import path from "node:path";
import { MiniAgentError } from "../errors.js";
import { readSmall, stripCredentials } from "./config-read.js";

/** pip's own default index, and the host PyPI serves its files from (its simple pages link there). */
export const PYPI_INDEX = "https://pypi.org/simple/";
export const PYPI_FILES = "https://files.pythonhosted.org/";

export interface PipIndex {
  /** the index pip is pointed at (credentials removed) */
  url: string;
  extra: string[];
  /** which file or variable named it ("default" when none did) */
  from: string;
  /** true when a URL held user:password@: it never enters the sandbox, and the index is reached without it */
  authDropped: boolean;
}

/** The variables of pip's that this reads: the daemon's environment, passed in as data. */
export type PipEnv = Partial<Record<"PIP_INDEX_URL" | "PIP_EXTRA_INDEX_URL" | "PIP_CONFIG_FILE" | "XDG_CONFIG_HOME", string>>;

/** `index-url` and `extra-index-url` of a pip.conf's [global] or [install] section, read as data (no interpolation). */
export function indexOfPipConf(text: string): { url: string | null; extra: string[] } {
  let section = "";
  let url: string | null = null;
  let extra: string[] = [];
  let continuing: "extra" | null = null;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw)) continue;
    const head = /^\s*\[([^\]]+)\]\s*$/.exec(raw);
    if (head) {
      section = head[1]!.trim().toLowerCase();
      continuing = null;
      continue;
    }
    if (section !== "global" && section !== "install") continue;
    // an indented line continues the value before it (pip.conf is an ini file: extra-index-url may list one per line)
    if (continuing && /^\s+\S/.test(raw)) {
      extra.push(...raw.trim().split(/\s+/));
      continue;
    }
    continuing = null;
    const m = /^\s*([a-z-_]+)\s*[=:]\s*(.*?)\s*$/i.exec(raw);
    if (!m) continue;
    const key = m[1]!.toLowerCase().replace(/_/g, "-");
    if (key === "index-url" || key === "i") url = m[2]!;
    else if (key === "extra-index-url") {
      extra = m[2] ? m[2].split(/\s+/) : [];
      continuing = "extra";
    }
  }
  return { url, extra };
}

/** The `--index-url`/`-i` and `--extra-index-url` option lines of a requirements file, which pip honours over any config. */
export function indexOfRequirements(text: string): { url: string | null; extra: string[] } {
  let url: string | null = null;
  const extra: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(--index-url|-i|--extra-index-url)(?:\s*=\s*|\s+)(\S+)\s*$/.exec(line);
    if (!m) continue;
    if (m[1] === "--extra-index-url") extra.push(m[2]!);
    else url = m[2]!;
  }
  return { url, extra };
}

/**
 * The index a pip install of `workspace` uses, in pip's own order of
 * precedence: the workspace's requirements files' option lines, else
 * PIP_INDEX_URL, else the user's pip.conf ($XDG_CONFIG_HOME/pip/pip.conf,
 * ~/.config/pip/pip.conf, ~/.pip/pip.conf) or PIP_CONFIG_FILE, else PyPI.
 * All read as data: nothing is run, nothing is expanded. A URL's
 * user:password@ is removed (authenticated indexes are not supported yet);
 * in a requirements file, which enters the sandbox as it is, it is refused.
 */
export function pipIndex(workspace: string, home: string | null, env: PipEnv): PipIndex {
  const found = (url: string, extra: string[], from: string): PipIndex => {
    const all = [url, ...extra].map(stripCredentials);
    return { url: all[0]!.url, extra: all.slice(1).map((a) => a.url), from, authDropped: all.some((a) => a.dropped) };
  };
  for (const name of ["requirements.txt", "requirements-dev.txt", "requirements-test.txt"]) {
    const file = path.join(workspace, name);
    const text = readSmall(file);
    if (text === null) continue;
    const r = indexOfRequirements(text);
    // the file itself goes into the sandbox (pip reads it there), so a password in it cannot be held back
    if ([r.url, ...r.extra].some((u) => u !== null && stripCredentials(u).dropped))
      throw new MiniAgentError(
        "invalid_workspace",
        `${file} names an index with a user or password in its URL: the file would carry them into the install sandbox, and authenticated indexes are not supported yet`,
        { details: { file } },
      );
    if (r.url !== null) return found(r.url, r.extra, file);
  }
  if (env.PIP_INDEX_URL) return found(env.PIP_INDEX_URL, env.PIP_EXTRA_INDEX_URL?.split(/\s+/).filter(Boolean) ?? [], "PIP_INDEX_URL");
  const userFiles = [
    ...(env.PIP_CONFIG_FILE ? [env.PIP_CONFIG_FILE] : []),
    ...(env.XDG_CONFIG_HOME ? [path.join(env.XDG_CONFIG_HOME, "pip", "pip.conf")] : []),
    ...(home ? [path.join(home, ".config", "pip", "pip.conf"), path.join(home, ".pip", "pip.conf")] : []),
  ];
  for (const file of userFiles) {
    const text = readSmall(file);
    if (text === null) continue;
    const c = indexOfPipConf(text);
    if (c.url !== null) return found(c.url, c.extra, file);
  }
  return { url: PYPI_INDEX, extra: [], from: "default", authDropped: false };
}
