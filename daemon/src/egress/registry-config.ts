import path from "node:path";
import { readSmall } from "./config-read.js";

/** npm's own default, used when neither the workspace's nor the user's .npmrc names a registry. */
export const NPM_DEFAULT_REGISTRY = "https://registry.npmjs.org/";

/**
 * The `registry=` line of an npmrc, read as data: nothing in it is run or
 * expanded (an `${ENV}` reference is left as text, and so fails to parse as
 * a URL, rather than reading the daemon's environment). Scoped registries
 * (`@scope:registry=`) and auth lines are not read here.
 */
export function registryOfNpmrc(text: string): string | null {
  let found: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*registry\s*=\s*(.+?)\s*$/.exec(line);
    if (m && !/^[;#]/.test(line.trim())) found = m[1]!.replace(/^["']|["']$/g, "");
  }
  return found;
}

/** Whether an npmrc holds an auth entry (`_authToken`, `_auth`, `_password`): such a registry is reached without it. */
export function npmrcHasAuth(text: string): boolean {
  return /^\s*(?:\/\/[^=\s]*:)?(?:_authToken|_auth|_password)\s*=/m.test(text);
}

export interface NpmRegistry {
  url: string;
  /** which file named it ("default" when none did) */
  from: string;
  /** true when that file also holds an auth entry, which never enters the sandbox */
  authDropped: boolean;
}

/**
 * The registry an install of `workspace` uses: the workspace's .npmrc, else
 * the user's (`home`/.npmrc), else npm's default, as npm itself orders them.
 */
export function npmRegistry(workspace: string, home: string | null): NpmRegistry {
  for (const file of [path.join(workspace, ".npmrc"), ...(home ? [path.join(home, ".npmrc")] : [])]) {
    const text = readSmall(file);
    if (text === null) continue;
    const url = registryOfNpmrc(text);
    if (url !== null) return { url, from: file, authDropped: npmrcHasAuth(text) };
  }
  return { url: NPM_DEFAULT_REGISTRY, from: "default", authDropped: false };
}
