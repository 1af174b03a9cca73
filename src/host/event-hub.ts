/**
 * Lets a subsystem that registers its own Pi hooks (async compaction's wiring) do so without
 * registering anything with Pi: its `pi.on` calls are collected here, everything else goes to
 * the real `pi`. The host then registers each Pi event once and calls the collected handlers
 * from its single handler, in an order it states (hooks.ts).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export type AnyHandler = (event: unknown, ctx: unknown) => unknown;

export interface EventHub {
  /** Hand this to the subsystem instead of `pi`. */
  pi: ExtensionAPI;
  /** The handlers collected for `event`, in registration order. */
  handlers(event: string): AnyHandler[];
  events(): string[];
}

export function createEventHub(pi: ExtensionAPI): EventHub {
  const collected = new Map<string, AnyHandler[]>();
  const on = (event: string, handler: AnyHandler) => {
    const list = collected.get(event) ?? [];
    list.push(handler);
    collected.set(event, list);
    return () => {
      const at = list.indexOf(handler);
      if (at >= 0) list.splice(at, 1);
    };
  };
  const proxy = new Proxy(pi, {
    get(target, prop, receiver) {
      if (prop === "on") return on;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { pi: proxy, handlers: (event) => [...(collected.get(event) ?? [])], events: () => [...collected.keys()] };
}

/**
 * Run steps in order; a step that returns a promise is awaited before the next. The result is
 * the last step's result that is not `undefined` (at most one subsystem answers an event).
 */
export function fanOut(steps: ReadonlyArray<() => unknown>): unknown {
  let result: unknown;
  for (let i = 0; i < steps.length; i++) {
    const r = steps[i]();
    if (r instanceof Promise) {
      return (async () => {
        const first = await r;
        if (first !== undefined) result = first;
        for (const step of steps.slice(i + 1)) {
          const next = await step();
          if (next !== undefined) result = next;
        }
        return result;
      })();
    }
    if (r !== undefined) result = r;
  }
  return result;
}
