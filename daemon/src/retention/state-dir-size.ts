import { stateDirBytes } from "./gc.js";

/**
 * The state dir's size as `health` shows it. Counting it walks every file the
 * daemon keeps (baselines, traces, layers), which on a large state dir made
 * each /health as slow as that walk. So a measurement is kept for `maxAgeMs`;
 * past that the kept figure is still answered at once while one walk runs in
 * the background (never two at a time), and only the very first call waits.
 * gc calls `invalidate`, so the health after a gc shows what is left, not what
 * was freed.
 */
export interface StateDirSizeDeps {
  stateDir: string;
  now(): number;
  maxAgeMs: number;
  /** the walk (default: stateDirBytes, null when the dir cannot be read) */
  measure?: (stateDir: string) => Promise<number | null>;
}

export interface StateDirSize {
  bytes(): Promise<number | null>;
  /** forget the kept figure: the next call measures and waits */
  invalidate(): void;
}

/** How old a kept figure may be before a call starts a new walk. */
export const STATE_DIR_SIZE_MAX_AGE_MS = 30_000;

export function createStateDirSize(deps: StateDirSizeDeps): StateDirSize {
  const measure = deps.measure ?? stateDirBytes;
  let kept: { bytes: number | null; at: number } | null = null;
  let walking: Promise<number | null> | null = null;
  // a walk that began before invalidate() must not bring back what gc removed
  let generation = 0;

  const walk = (): Promise<number | null> => {
    if (walking) return walking;
    const gen = generation;
    const at = deps.now();
    walking = measure(deps.stateDir)
      .catch(() => null)
      .then((bytes) => {
        if (gen === generation) kept = { bytes, at };
        return bytes;
      })
      .finally(() => {
        walking = null;
      });
    return walking;
  };

  return {
    async bytes() {
      if (kept === null) return walk();
      if (deps.now() - kept.at >= deps.maxAgeMs) void walk();
      return kept.bytes;
    },
    invalidate() {
      generation++;
      kept = null;
      walking = null;
    },
  };
}
