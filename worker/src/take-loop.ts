/**
 * The one place a worker decides to take a case: a fixed number of slots for
 * the whole worker process (`--concurrency`), shared by every queue it serves,
 * and a job is fetched only when a slot is free, so no job ever sits taken
 * while it waits for a slot (holding its lock from a worker that could run
 * it). The queues are polled round-robin, starting after the one that gave
 * the last job, so one family's backlog cannot starve another's.
 */
export interface Source<J> {
  /** for log lines */
  name: string;
  /** one non-blocking fetch: a job now (taken, locked to this worker) or undefined */
  take(): Promise<J | undefined>;
}

export interface TakeLoopDeps<J, S extends Source<J> = Source<J>> {
  slots: number;
  sources: S[];
  /** asked before each fetch: false leaves the source's jobs queued for another worker */
  mayTake(source: S): Promise<boolean>;
  /** runs a taken job to its end (completes or fails it); its slot is free once this settles */
  run(job: J, source: S): Promise<void>;
  /** the wait after a round in which no source had a job */
  idleMs: number;
  sleep(ms: number): Promise<void>;
  onError(message: string): void;
}

export interface TakeLoop {
  /** cases running now */
  running(): number;
  /** takes nothing more; running jobs are left to their run() */
  stop(): Promise<void>;
}

export function startTakeLoop<J, S extends Source<J> = Source<J>>(deps: TakeLoopDeps<J, S>): TakeLoop {
  let running = 0;
  let stopped = false;
  let next = 0;
  let wake: (() => void) | null = null;
  const wakeUp = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  // a fetch that fails (Redis away) is said once per source and outage, not every round
  const failing = new Map<string, string>();

  const round = async (): Promise<boolean> => {
    const n = deps.sources.length;
    for (let i = 0; i < n && !stopped; i++) {
      const idx = (next + i) % n;
      const s = deps.sources[idx]!;
      try {
        if (!(await deps.mayTake(s))) continue;
        const job = await s.take();
        if (failing.delete(s.name)) deps.onError(`${s.name}: the queue answers again`);
        if (job === undefined) continue;
        next = idx + 1;
        running++;
        void deps
          .run(job, s)
          .catch((err: unknown) => deps.onError(`${s.name}: ${(err as Error)?.message ?? String(err)}`))
          .finally(() => {
            running--;
            wakeUp();
          });
        return true;
      } catch (err) {
        const m = (err as Error)?.message ?? String(err);
        if (failing.get(s.name) !== m) deps.onError(`${s.name}: ${m} (retrying)`);
        failing.set(s.name, m);
      }
    }
    return false;
  };

  const loop = (async () => {
    while (!stopped) {
      if (running >= deps.slots) {
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      if (await round()) continue;
      if (!stopped) await Promise.race([deps.sleep(deps.idleMs), new Promise<void>((r) => (wake = r))]);
    }
  })();

  return {
    running: () => running,
    async stop() {
      stopped = true;
      wakeUp();
      // a fetch hanging on a Redis that is away must not hold up a stop
      await Promise.race([loop, deps.sleep(2000)]);
    },
  };
}
