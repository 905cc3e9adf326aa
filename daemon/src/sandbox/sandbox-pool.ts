import crypto from "node:crypto";
import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import { MiniAgentError } from "../errors.js";
import { canonicalJson } from "../workspace/hash.js";
import type { SandboxConfig } from "./config.js";
import { containerSpec } from "./host-config.js";
import { poolLabels } from "./labels.js";
import { SandboxContainer } from "./sandbox-container.js";

/** What shapes a sandbox: a pooled one is only ever handed to a request with the same key. */
export interface PoolRequest {
  config: SandboxConfig;
  digest: string;
  /** acceptance runs get a /control volume: another mount, so another key */
  withControl: boolean;
}

export interface SandboxPoolOptions {
  docker: Docker;
  /** ready sandboxes kept per key; 0 disables the pool (every run makes its own, as before). */
  size: number;
  /** keys kept at once; beyond it the least recently used key's members are removed. */
  maxKeys?: number;
  log?: Logger;
}

/** a handful of families x runtimes (`--runtime`) x (with/without /control) is what a daemon uses; more means an old image digest */
const DEFAULT_MAX_KEYS = 8;

/**
 * The pool key: a hash of everything that shapes the container (the full create
 * spec: image digest, HostConfig with runtime and limits, mounts, env, user,
 * labels) made with the pool's labels, plus the family. Per-run labels are not
 * in it because a pool member has none; the key itself is one of its labels.
 */
export function poolKey(req: PoolRequest): string {
  const spec = containerSpec(req.config, req.digest, poolLabels("", req.config.instance), req.withControl);
  const hash = crypto.createHash("sha256").update(canonicalJson({ family: req.config.imageFamily, spec }));
  return hash.digest("hex").slice(0, 32);
}

interface Slot {
  key: string;
  req: PoolRequest;
  ready: SandboxContainer[];
  filling: Promise<void> | null;
  evicted: boolean;
}

/**
 * Pre-created AND started sandboxes, never used: nothing but the image's own
 * main process (the spawner) has run in a member, exactly as in a fresh one.
 * `take` hands a member out at most once; the caller runs ONE command in it
 * and gives it back to `retire`, which removes it. Filled per key only once a
 * run of that family exists (`warm` at run creation, or a first `take`: a key
 * nobody asked for costs nothing) and refilled in the background after each take; an empty pool answers null and the caller creates a fresh
 * sandbox as before, so the pool never blocks a run. Members carry the
 * owner and instance labels: the start-up reaper and the leftover check find
 * them like every sandbox; `drain` removes them at shutdown.
 */
export class SandboxPool {
  readonly size: number;
  private readonly maxKeys: number;
  private readonly docker: Docker;
  private readonly log: Logger;
  /** Map order is use order: the first key is the least recently used */
  private readonly slots = new Map<string, Slot>();
  private readonly removing = new Set<Promise<void>>();
  private closed = false;

  constructor(opts: SandboxPoolOptions) {
    if (!Number.isInteger(opts.size) || opts.size < 0)
      throw new MiniAgentError("invalid_fields", `sandbox pool size must be a whole number >= 0, got ${opts.size}`);
    this.size = opts.size;
    this.maxKeys = opts.maxKeys ?? DEFAULT_MAX_KEYS;
    this.docker = opts.docker;
    this.log = opts.log ?? pino({ level: "silent" });
  }

  /**
   * A never-used, running sandbox made for exactly this request, or null. Either
   * way the key is refilled in the background. A member that no longer runs
   * (engine restarted, killed from outside) is removed, never handed out.
   */
  async take(req: PoolRequest): Promise<SandboxContainer | null> {
    if (this.size === 0 || this.closed) return null;
    const slot = this.slotFor(req);
    let box: SandboxContainer | null = null;
    // shift() is synchronous: two concurrent takes never get the same member
    for (let next = slot.ready.shift(); next; next = slot.ready.shift()) {
      if ((await next.running()) === true) {
        box = next;
        break;
      }
      this.retire(next);
    }
    this.refill(slot);
    return box;
  }

  /**
   * Starts filling this key in the background, without taking: called when a run
   * of this family is created, so its Verifier (minutes later) finds members ready.
   */
  warm(req: PoolRequest): void {
    if (this.size === 0 || this.closed) return;
    this.refill(this.slotFor(req));
  }

  /** Removes a used (or dead) member in the background; `drain` waits for it. */
  retire(box: SandboxContainer): void {
    const p = box.remove().finally(() => this.removing.delete(p));
    this.removing.add(p);
  }

  /** Resolves once the key's background refill (if any) has finished: for tests and the bench. */
  async whenFilled(req: PoolRequest): Promise<number> {
    const slot = this.slotFor(req);
    if (slot.ready.length < this.size) this.refill(slot);
    await slot.filling;
    return slot.ready.length;
  }

  /** Resolves once every member handed to `retire` so far is removed. */
  async whenRetired(): Promise<void> {
    while (this.removing.size > 0) await Promise.all([...this.removing]);
  }

  /** How many members are ready, over all keys. */
  readyCount(): number {
    let n = 0;
    for (const s of this.slots.values()) n += s.ready.length;
    return n;
  }

  /**
   * Stops refilling and removes every member, used or ready; resolves with how
   * many ready ones it removed. Called at daemon shutdown (SIGTERM included): a
   * stopped daemon leaves nothing behind. A SIGKILLed one leaves them to the next
   * start-up's reaper, like any sandbox.
   */
  async drain(): Promise<number> {
    this.closed = true;
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(slots.map((s) => s.filling));
    let n = 0;
    for (const s of slots) n += this.evict(s);
    await this.whenRetired();
    return n;
  }

  private slotFor(req: PoolRequest): Slot {
    const key = poolKey(req);
    let slot = this.slots.get(key);
    if (slot) {
      this.slots.delete(key);
    } else {
      slot = { key, req, ready: [], filling: null, evicted: false };
    }
    this.slots.set(key, slot);
    for (const [k, old] of this.slots) {
      if (this.slots.size <= this.maxKeys) break;
      this.slots.delete(k);
      this.evict(old);
    }
    return slot;
  }

  private evict(slot: Slot): number {
    slot.evicted = true;
    const n = slot.ready.length;
    for (const box of slot.ready.splice(0)) this.retire(box);
    return n;
  }

  /** Tops the key up to `size`, one create at a time, off the caller's path; an engine error ends this round (logged). */
  private refill(slot: Slot): void {
    if (slot.filling || this.closed || slot.evicted) return;
    slot.filling = (async () => {
      while (!this.closed && !slot.evicted && slot.ready.length < this.size) {
        let box: SandboxContainer;
        try {
          box = await SandboxContainer.startLabelled(
            this.docker,
            slot.req.config,
            slot.req.digest,
            "pool",
            poolLabels(slot.key, slot.req.config.instance),
            slot.req.withControl,
            this.log,
          );
        } catch (err) {
          this.log.warn({ err, pool: slot.key }, "pooled sandbox could not be made; runs make their own meanwhile");
          return;
        }
        if (this.closed || slot.evicted) {
          this.retire(box);
          return;
        }
        slot.ready.push(box);
      }
    })().finally(() => {
      slot.filling = null;
    });
  }
}
