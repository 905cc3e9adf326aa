/** The programs' clock and timer, passed in from each cli.ts (tests use a hand-driven one). */
export interface Clock {
  now(): number;
  /** calls tick every ms until the returned stop is called */
  every(ms: number, tick: () => void): () => void;
}
