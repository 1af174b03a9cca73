/**
 * A stand-in for pi-async-compaction in the e2e tests (written here; the published package is
 * not a dependency): a Pi extension that registers what that package registers — the
 * `/async-compact-now` command and handlers for `turn_end`, `agent_end`, `model_select`,
 * `thinking_level_select`, `session_tree`, `session_before_compact`, `session_compact` and
 * `session_shutdown` — and behaves the same way in outline: at a turn end past
 * `PI_ASYNC_PREFIX_COMPACTION_START_RATIO` (default 0.8) of the window, or on the command, it
 * starts one background summary job; a ready job's summary is handed to Pi at
 * `session_before_compact`. Its job is instant and model-free: each start and hand-off is one
 * JSON line in `STANDIN_LOG` (when set), which is what the tests count.
 */
import { appendFileSync } from "node:fs";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

type Job = { id: number; status: "ready"; summary: string };

export default function asyncCompactionStandIn(pi: ExtensionAPI): void {
  const ratio = Number(process.env.PI_ASYNC_PREFIX_COMPACTION_START_RATIO ?? "0.8");
  let job: Job | undefined;
  let jobs = 0;
  const log = (record: Record<string, unknown>) => {
    if (process.env.STANDIN_LOG) appendFileSync(process.env.STANDIN_LOG, `${JSON.stringify(record)}\n`);
  };
  const start = (ctx: ExtensionContext, by: "turn_end" | "command"): string => {
    if (job) return "job already ready";
    const usage = ctx.getContextUsage();
    if (by === "turn_end" && (usage?.tokens == null || !usage.contextWindow || usage.tokens < usage.contextWindow * ratio)) return "below threshold";
    job = { id: ++jobs, status: "ready", summary: `Stand-in summary #${jobs}.` };
    log({ kind: "job", id: job.id, by, tokens: usage?.tokens ?? null });
    return "started";
  };
  const stale = () => {
    job = undefined;
  };

  pi.on("turn_end", (_event, ctx) => void start(ctx, "turn_end"));
  pi.on("agent_end", () => {});
  pi.on("model_select", stale);
  pi.on("thinking_level_select", stale);
  pi.on("session_tree", stale);
  pi.on("session_before_compact", (event) => {
    if (!job) return undefined;
    const handed = job;
    job = undefined;
    log({ kind: "handoff", id: handed.id });
    return { compaction: { summary: handed.summary, firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: event.preparation.tokensBefore } };
  });
  pi.on("session_compact", () => {});
  pi.on("session_shutdown", stale);
  pi.registerCommand("async-compact-now", {
    description: "Start async compaction now",
    handler: async (_args, ctx) => {
      const outcome = start(ctx, "command");
      log({ kind: "command", outcome });
      if (ctx.hasUI) ctx.ui.notify(`stand-in async compaction: ${outcome}`, "info");
    },
  });
}
