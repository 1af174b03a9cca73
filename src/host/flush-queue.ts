/**
 * At most one flush at a time. A trigger that arrives while one runs is queued (the latest
 * wins) and runs right after it, with its own closing message; its caller gets the running
 * flush's promise. A failed flush is reported and leaves history as it was.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import type { FlushReport, FlushTrigger } from "../engine/index.ts";

export interface FlushRequest {
  trigger: FlushTrigger;
  ctx: ExtensionContext;
  closingMessage?: ContextMessage;
}

export interface FlushQueueOptions {
  /** Checked for every request, queued ones included, when it would start. */
  active: (ctx: ExtensionContext) => boolean;
  run: (request: FlushRequest) => Promise<FlushReport>;
  onFailure: (ctx: ExtensionContext, error: unknown) => void;
}

export interface FlushQueue {
  start(request: FlushRequest): Promise<FlushReport | undefined>;
  /** The running flush, if any. */
  inFlight(): Promise<FlushReport | undefined> | undefined;
}

export function createFlushQueue({ active, run, onFailure }: FlushQueueOptions): FlushQueue {
  let inFlight: Promise<FlushReport | undefined> | undefined;
  let queued: FlushRequest | undefined;

  function start(request: FlushRequest): Promise<FlushReport | undefined> {
    if (!active(request.ctx)) return Promise.resolve(undefined);
    if (inFlight) {
      queued = { trigger: request.trigger, ctx: request.ctx, closingMessage: request.closingMessage };
      return inFlight;
    }
    const running = run(request)
      .catch((error: unknown) => {
        onFailure(request.ctx, error);
        return undefined;
      })
      .finally(() => {
        inFlight = undefined;
        const next = queued;
        queued = undefined;
        if (next) void start(next);
      });
    inFlight = running;
    return running;
  }

  return { start, inFlight: () => inFlight };
}
