/**
 * The keeper's parts read async compaction's state in the engine (its outlook,
 * `src/compaction/cooperation.ts`): Pi's cache warming stops while a job is pending or ready,
 * and the budget flush holds then and re-bases on the compacted context after a handoff.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CompactionOutlook } from "../compaction/cooperation.ts";
import type { JobSnapshot } from "../compaction/job-reducer.ts";
import { initialEngineState, step, type EngineState } from "../engine/index.ts";
import type { EngineCell } from "./engine-cell.ts";
import { budgetThreshold } from "../flush/budget-trigger.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";

const WINDOW = 200_000;
/** The context size at which the budget rule fires from a base far below it. */
const BUDGET = budgetThreshold(DEFAULT_SETTINGS.pruning.budgetTrigger, WINDOW);

const snapshot = { jobId: "j1", sessionId: "s", snapshotLeafId: "l", firstKeptEntryId: "f", modelKey: "m", thinkingLevel: "off", settingsKey: "k", promptVersion: "v", adapterId: "a", manual: false, startedAt: 0 } satisfies JobSnapshot;

/** Async compaction's state in the engine as an outlook says (undefined: none was ever there). */
function withOutlook(state: EngineState, o: CompactionOutlook | undefined): EngineState {
  const job =
    o?.job === "pending" ? { kind: "pending" as const, job: snapshot } : o?.job === "ready" ? { kind: "ready" as const, job: snapshot, result: { summary: "s", firstKeptEntryId: "f", tokensBefore: 1 }, persisted: false } : { kind: "idle" as const };
  return { ...state, compaction: { ...state.compaction, job, handoffs: o?.handoffs ?? 0 } };
}

function fixture() {
  let state = initialEngineState();
  // The cell the host steps, with async compaction's slice set by the test.
  const cell: EngineCell = {
    get: () => state,
    step(event) {
      const out = step(state, event);
      state = out.state;
      return out;
    },
  };
  let tokens = 10_000;
  const pi = { appendEntry: () => {}, getThinkingLevel: () => "off", getActiveTools: () => ["read"], setActiveTools: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "keeper-host-compaction-"));
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: false,
    ui: { notify: () => {}, setStatus: () => {} },
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
    sessionManager: { getBranch: () => [], buildSessionProjection: () => ({ messages: [] }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens, contextWindow: WINDOW, percent: (100 * tokens) / WINDOW }),
  } as unknown as ExtensionContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000, cell });
  withAgentDir(join(dir, "agent"), () => host.onSessionStart(ctx));
  return {
    host,
    ctx,
    setOutlook: (o: CompactionOutlook | undefined) => void (state = withOutlook(state, o)),
    /** Async compaction's vote at `cache_warming_decision` (its part's step). */
    compactionWarming: (action: "warm" | "stop") => step(state, { type: "compaction-warming", decision: { warmCost: 0, missCost: 1, continuationProbability: 1, action } }).warming,
    setTokens: (t: number) => void (tokens = t),
  };
}

const warming = (action: "warm" | "stop") => ({ type: "cache_warming_decision", action }) as never;

describe("keeper host and async compaction", () => {
  test("warming is stopped while a job is pending or ready, left to Pi otherwise", () => {
    const { host, setOutlook, compactionWarming } = fixture();
    expect(host.onCacheWarmingDecision(warming("warm"))).toBeUndefined();
    expect(compactionWarming("warm")).toBeUndefined();
    setOutlook({ job: "pending", handoffs: 0 });
    expect(compactionWarming("warm")).toBe("stop");
    expect(compactionWarming("stop")).toBeUndefined();
    setOutlook({ job: "ready", handoffs: 0 });
    expect(compactionWarming("warm")).toBe("stop");
    setOutlook(undefined);
    expect(compactionWarming("warm")).toBeUndefined();
  });

  test("the budget flush holds while a job is pending, re-bases after the handoff, then fires from the compacted size", async () => {
    const { host, ctx, setOutlook, setTokens } = fixture();
    setOutlook({ job: "pending", handoffs: 0 });
    setTokens(BUDGET + 20_000);
    host.onTurnEnd(ctx);
    expect(host.busy()).toBe(false);

    // Handed off: the context shrank to 20k; that turn re-bases and flushes nothing.
    setOutlook({ job: "none", handoffs: 1 });
    setTokens(20_000);
    host.onTurnEnd(ctx);
    expect(host.busy()).toBe(false);
    setTokens(BUDGET - 1);
    host.onTurnEnd(ctx);
    expect(host.busy()).toBe(false);

    setTokens(BUDGET);
    host.onTurnEnd(ctx);
    expect(host.busy()).toBe(true);
    await host.onSessionShutdown();
  });

  test("without compaction the budget flush fires from the session-start size", async () => {
    const { host, ctx, setOutlook, setTokens } = fixture();
    setOutlook(undefined);
    setTokens(10_000 + BUDGET);
    host.onTurnEnd(ctx);
    expect(host.busy()).toBe(true);
    await host.onSessionShutdown();
  });
});
