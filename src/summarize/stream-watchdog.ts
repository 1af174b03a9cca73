/**
 * Idle and ceiling timers around one streaming call. Timers are injected so tests drive
 * them by hand; nothing here reads a real clock.
 */

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

export type WatchdogReason = "idle-timeout" | "ceiling-timeout";

export interface Watchdog {
  /** The stream made progress: restart the idle timer. */
  touch(): void;
  stop(): void;
}

/** Fires `onFire` once: after `idleMs` without a touch, or `ceilingMs` after start. */
export function startWatchdog(options: {
  timers: Timers;
  idleMs: number;
  ceilingMs: number;
  onFire: (reason: WatchdogReason) => void;
}): Watchdog {
  const { timers, idleMs, ceilingMs, onFire } = options;
  let stopped = false;
  const fire = (reason: WatchdogReason) => {
    if (stopped) return;
    stop();
    onFire(reason);
  };
  let idle = timers.setTimeout(() => fire("idle-timeout"), idleMs);
  const ceiling = timers.setTimeout(() => fire("ceiling-timeout"), ceilingMs);
  function stop() {
    stopped = true;
    timers.clearTimeout(idle);
    timers.clearTimeout(ceiling);
  }
  return {
    touch() {
      if (stopped) return;
      timers.clearTimeout(idle);
      idle = timers.setTimeout(() => fire("idle-timeout"), idleMs);
    },
    stop,
  };
}
