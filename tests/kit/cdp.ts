import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { WebSocket } from "undici";

/**
 * Drives Debian's headless `chromium` over the DevTools protocol, for tests
 * that must see a page as a browser does (eval-report.html): console errors,
 * exceptions, every network request, the DOM text, a screenshot. No browser
 * library: a spawned process, its DevTools WebSocket, and a few CDP commands.
 * A missing chromium is a failure with the install hint, never a skip
 * (scripts/chromium-ensure.sh installs it; scripts/test.sh calls it).
 */
export interface PageVisit {
  /** console.error calls, uncaught exceptions and error-level log entries (CSP violations land here) */
  errors: string[];
  /** every request the page made, the document itself included */
  requests: string[];
  /** document.body.innerText after load */
  text: string;
  /** Page.captureScreenshot, full page, PNG */
  screenshot: Buffer;
}

export interface Browser {
  visit(url: string, opts?: { evaluate?: string }): Promise<PageVisit & { evaluated?: unknown }>;
  close(): Promise<void>;
}

export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    for (const name of ["chromium", "chromium-browser"]) {
      const file = path.join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {}
    }
  }
  throw new Error(
    "chromium is missing: run `bash scripts/chromium-ensure.sh` (Debian: apt-get install -y chromium); the HTML report test needs a real browser",
  );
}

export async function launchBrowser(timeoutMs = 60_000): Promise<Browser> {
  const bin = findChromium();
  const profile = await mkdtemp(path.join(os.tmpdir(), "mini-agent-chromium-"));
  const child = spawn(
    bin,
    [
      "--headless",
      "--remote-debugging-port=0",
      "--no-sandbox",
      `--user-data-dir=${profile}`,
      "--disable-gpu",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // crashpad forks a handler that outlives the browser as a zombie on hosts whose pid 1 does not reap
      "--disable-crash-reporter",
      "--disable-breakpad",
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const cleanup = async () => {
    await stop(child);
    await rm(profile, { recursive: true, force: true });
  };
  let ws: WebSocket;
  try {
    ws = await connect(await devtoolsUrl(child, timeoutMs));
  } catch (err) {
    await cleanup();
    throw err;
  }
  const cdp = new Cdp(ws);
  return {
    visit: (url, opts) => visit(cdp, url, timeoutMs, opts?.evaluate),
    async close() {
      ws.close();
      await cleanup();
    },
  };
}

function devtoolsUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`chromium printed no DevTools URL within ${timeoutMs} ms:\n${seen.slice(-2000)}`)), timeoutMs);
    child.stderr?.on("data", (d: Buffer) => {
      seen += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited (${code ?? signal}) before it listened:\n${seen.slice(-2000)}`));
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.addEventListener("open", () => resolve(ws), { once: true });
    ws.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)), { once: true });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** the few event fields the visit reads (Network.requestWillBeSent, Runtime.*, Log.entryAdded) */
interface CdpParams {
  request?: { url?: string };
  exceptionDetails?: { text?: string; exception?: { description?: string } };
  type?: string;
  args?: Array<{ value?: unknown; description?: string }>;
  entry?: { level?: string; text?: string; url?: string };
}

type CdpEvent = { method: string; params: Record<string, unknown>; sessionId?: string };

/** CDP over one browser WebSocket; page commands go to a flattened session. */
class Cdp {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly listeners = new Set<(e: CdpEvent) => void>();

  constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string }; method?: string };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`CDP: ${msg.error.message}`));
        else p?.resolve(msg.result);
      } else if (msg.method) {
        for (const l of this.listeners) l(msg as CdpEvent);
      }
    });
  }

  send<T = Record<string, unknown>>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject }));
  }

  on(listener: (e: CdpEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

async function visit(cdp: Cdp, url: string, timeoutMs: number, evaluate?: string): Promise<PageVisit & { evaluated?: unknown }> {
  const { targetId } = await cdp.send<{ targetId: string }>("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
  const errors: string[] = [];
  const requests: string[] = [];
  let loaded: () => void = () => {};
  const load = new Promise<void>((r) => (loaded = r));
  const off = cdp.on((e) => {
    if (e.sessionId !== sessionId) return;
    const p = e.params as CdpParams;
    if (e.method === "Network.requestWillBeSent") requests.push(String(p.request?.url));
    else if (e.method === "Runtime.exceptionThrown") errors.push(`exception: ${p.exceptionDetails?.exception?.description ?? p.exceptionDetails?.text}`);
    else if (e.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert"))
      errors.push(`console.${p.type}: ${(p.args ?? []).map((a) => a.value ?? a.description).join(" ")}`);
    else if (e.method === "Log.entryAdded" && p.entry?.level === "error") errors.push(`log: ${p.entry.text}${p.entry.url ? ` (${p.entry.url})` : ""}`);
    else if (e.method === "Page.loadEventFired") loaded();
  });
  try {
    for (const domain of ["Runtime", "Log", "Network", "Page"]) await cdp.send(`${domain}.enable`, {}, sessionId);
    await cdp.send("Page.navigate", { url }, sessionId);
    await withTimeout(load, timeoutMs, `${url} did not load within ${timeoutMs} ms`);
    const text = await cdp.send<{ result: { value: string } }>("Runtime.evaluate", { expression: "document.body.innerText", returnByValue: true }, sessionId);
    const evaluated =
      evaluate === undefined
        ? undefined
        : (await cdp.send<{ result: { value: unknown } }>("Runtime.evaluate", { expression: evaluate, returnByValue: true }, sessionId)).result.value;
    const shot = await cdp.send<{ data: string }>("Page.captureScreenshot", { format: "png", captureBeyondViewport: true }, sessionId);
    return { errors, requests, text: text.result.value, screenshot: Buffer.from(shot.data, "base64"), evaluated };
  } finally {
    off();
    await cdp.send("Target.closeTarget", { targetId }).catch(() => undefined);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}

/** PNG signature, IHDR first, and the picture's size: enough to tell a real screenshot from an empty buffer. */
export function pngSize(buf: Buffer): { width: number; height: number } {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (buf.length < 33 || !buf.subarray(0, 8).equals(sig) || buf.toString("ascii", 12, 16) !== "IHDR") throw new Error("not a PNG");
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}
