import fs from "node:fs";
import { z } from "zod";
import { describeZodError } from "../contracts/common.js";
import { MiniAgentError } from "../errors.js";

/**
 * The live model's API key. It lives only in the daemon: never returned by the
 * API, never in the ledger, trace, logs or any container (issue 5).
 *
 * Reading is LAZY and counted, so the isolation gate can prove that a refused
 * live run never touched the key (issue 6): nothing reads the file or the
 * captured environment until `read()` is called.
 */
export interface CredentialSource {
  /** returns the key, or throws MiniAgentError("credentials_missing" | "credentials_insecure") */
  read(): ApiKey;
  /** how many times `read()` was called (observable for the gate's proof) */
  readonly reads: number;
}

export interface ApiKey {
  readonly value: string;
  /** where it came from, safe to log: `env:MINI_AGENT_API_KEY`, `env:OPENAI_API_KEY` or `file:credentials.json` */
  readonly origin: string;
}

/** Environment names holding the key, in priority order (issue 6: MINI_AGENT_* first, OPENAI_* as fallback). */
export const CREDENTIAL_ENV_NAMES = ["MINI_AGENT_API_KEY", "OPENAI_API_KEY"] as const;

export const CredentialsFile = z.strictObject({
  schema_version: z.literal(1).optional(),
  api_key: z.string().min(1).max(4096),
});

/**
 * Moves the credential variables OUT of `env` (normally `process.env`) into a
 * private map, so that no child process the daemon ever spawns (the
 * trusted_local backend, git, a test runner) can inherit the key.
 */
export function takeCredentialEnv(env: NodeJS.ProcessEnv): ReadonlyMap<string, string> {
  const taken = new Map<string, string>();
  for (const name of CREDENTIAL_ENV_NAMES) {
    const value = env[name];
    if (value !== undefined && value !== "") taken.set(name, value);
    delete env[name];
  }
  return taken;
}

export interface CredentialSourceOptions {
  /** the variables captured by takeCredentialEnv */
  env: ReadonlyMap<string, string>;
  /** absolute path of credentials.json (statePath(stateDir, "credentials")) */
  filePath: string;
  /** told each key that is read, so the daemon's sinks can scrub it (redact/ SecretSet) */
  onRead?: (key: string) => void;
}

/** Environment first (MINI_AGENT_API_KEY, then OPENAI_API_KEY), then the 0600 credentials file. */
export function createCredentialSource(opts: CredentialSourceOptions): CredentialSource {
  let reads = 0;
  return {
    get reads() {
      return reads;
    },
    read(): ApiKey {
      reads += 1;
      const key = readKey(opts);
      opts.onRead?.(key.value);
      return key;
    },
  };
}

function readKey(opts: CredentialSourceOptions): ApiKey {
  for (const name of CREDENTIAL_ENV_NAMES) {
    const value = opts.env.get(name);
    if (value) return { value, origin: `env:${name}` };
  }
  return readCredentialsFile(opts.filePath);
}

/**
 * Reads credentials.json without following a symlink, and refuses a file that
 * group or others can read: a key readable by other users is already leaked,
 * and saying so is kinder than using it.
 */
export function readCredentialsFile(filePath: string): ApiKey {
  let fd: number;
  try {
    fd = fs.openSync(filePath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new MiniAgentError(
        "credentials_missing",
        `no API key: set MINI_AGENT_API_KEY (or OPENAI_API_KEY) in the daemon's environment, or write {"api_key": "..."} to ${filePath} with mode 0600`,
      );
    }
    if (code === "ELOOP") {
      throw new MiniAgentError("credentials_insecure", `${filePath} is a symlink; refusing to follow it`);
    }
    throw new MiniAgentError("credentials_missing", `cannot open ${filePath}: ${code ?? "unknown error"}`, { cause: err });
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new MiniAgentError("credentials_insecure", `${filePath} is not a regular file`);
    if ((st.mode & 0o077) !== 0) {
      throw new MiniAgentError(
        "credentials_insecure",
        `${filePath} is readable by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}); run: chmod 600 ${filePath}`,
      );
    }
    const text = fs.readFileSync(fd, "utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // The parser's message may quote file content (the key); say only where.
      throw new MiniAgentError("credentials_missing", `${filePath} is not valid JSON; expected {"api_key": "..."}`);
    }
    const parsed = CredentialsFile.safeParse(json);
    if (!parsed.success) {
      throw new MiniAgentError("credentials_missing", `${filePath} is invalid: ${describeZodError(parsed.error)}`);
    }
    return { value: parsed.data.api_key, origin: "file:credentials.json" };
  } finally {
    fs.closeSync(fd);
  }
}
