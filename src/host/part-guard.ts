/**
 * Each part isolated: the steps one Pi event runs, in order, each in its own guard. A step
 * that throws (or whose promise rejects) is reported — once per part for the session runtime,
 * not at every event — and the steps after it still run for the same event; the handler
 * returns what the other steps returned, so Pi keeps going. (Pi runs each extension handler
 * in a try/catch of its own; one handler for several parts needs one per part.)
 */

import { faultNotice } from "../ui/fault-text.ts";

/** The parts of the extension, as the table in `hooks.ts` names them. */
export type PartName = "settings" | "pruning" | "thinking" | "cache" | "compaction" | "ui";

export interface PartStep {
  part: PartName;
  run: () => unknown;
}

/** Told about each throw; must not throw itself (a throw here is dropped). */
export type FaultSink = (part: PartName, error: unknown) => void;

const tell = (onFault: FaultSink, part: PartName, error: unknown) => {
  try {
    onFault(part, error);
  } catch {
    // Reporting must never stop the other parts or Pi.
  }
};

/**
 * Run `steps` in order, each guarded; a step that returns a promise is awaited before the
 * next. The result is the last step's result that is not `undefined` (at most one part
 * answers an event).
 */
export function runParts(steps: readonly PartStep[], onFault: FaultSink): unknown {
  let result: unknown;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    let r: unknown;
    try {
      r = step.run();
    } catch (error) {
      tell(onFault, step.part, error);
      continue;
    }
    if (r instanceof Promise) return finishAsync(r, step.part, steps.slice(i + 1), result, onFault);
    if (r !== undefined) result = r;
  }
  return result;
}

async function finishAsync(first: Promise<unknown>, part: PartName, rest: readonly PartStep[], before: unknown, onFault: FaultSink): Promise<unknown> {
  let result = before;
  try {
    const r = await first;
    if (r !== undefined) result = r;
  } catch (error) {
    tell(onFault, part, error);
  }
  for (const step of rest) {
    try {
      const r = await step.run();
      if (r !== undefined) result = r;
    } catch (error) {
      tell(onFault, step.part, error);
    }
  }
  return result;
}

/** The user's one line about a part that failed at a Pi event (`src/ui/fault-text.ts`). */
export function faultNoticeOf(part: PartName, event: string, error: unknown): string {
  return faultNotice(part, event, error instanceof Error ? error.message : String(error));
}
