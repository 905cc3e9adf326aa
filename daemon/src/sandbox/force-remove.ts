/** waits between tries: a busy engine answers a force-remove with 409/500 while it still kills */
const RETRY_WAITS_MS = [250, 1_000, 3_000] as const;

/** a container or a volume: anything the engine force-removes with `remove(options)` */
export interface Removable {
  remove(options: { force: boolean; v?: boolean }): Promise<unknown>;
}

/**
 * Force-removes a container (with its anonymous volumes) or a volume, trying again
 * when the engine refuses (under load it answers "removal already in progress", or
 * "could not kill" while the runtime is still tearing the sandbox down). Gone
 * already (404) is success. Never throws: answers the last refusal, or null.
 */
export async function forceRemove(target: Removable, opts: { withVolumes?: boolean; waits?: readonly number[] } = {}): Promise<string | null> {
  const waits = opts.waits ?? RETRY_WAITS_MS;
  let last: string | null = null;
  for (let attempt = 0; attempt <= waits.length; attempt++) {
    try {
      await target.remove(opts.withVolumes ? { force: true, v: true } : { force: true });
      return null;
    } catch (err) {
      const e = err as { statusCode?: number; message?: string };
      if (e?.statusCode === 404) return null;
      last = `${e?.statusCode ?? "no status"}: ${e?.message ?? String(err)}`;
    }
    const wait = waits[attempt];
    if (wait !== undefined) await new Promise((r) => setTimeout(r, wait));
  }
  return last;
}
