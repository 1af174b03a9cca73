/**
 * An adapter written the pi-async-compaction way (its `./core` shape, as its adapter guide
 * writes one) runs on this core unchanged: start, background run, validation, turn_end draft.
 */
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createDefaultAdapter } from "./default-adapter.ts";
import { deferred, FakeHost, flush } from "../../test/support/compaction/fake-pi.ts";
import { SessionBuilder } from "../../test/support/compaction/session-builder.ts";
import { TURN } from "../../test/support/compaction/wiring-setup.ts";
import { type AnchorAsyncCompactionAdapter, type AnchorSnapshot, fromAnchorAdapter, isAnchorAdapter } from "./anchor-compat.ts";
import { registerAsyncCompaction } from "../../core.ts";
import { piCompact, piCompactionPrimitives } from "../host/compaction-runtime.ts";
import { prepareCompaction } from "./prepare.ts";
import type { CompactionPreparation } from "./primitives.ts";
import { readCompactionMarker } from "./persistence.ts";

type Prepared = { readonly firstKeptEntryId: string; readonly snapshotLeafId: string; readonly sessionId: string; readonly input: CompactionPreparation };
type SummaryResult = { readonly summary: string; readonly details: Record<string, unknown> };

/** Written as pi-async-compaction's adapter guide writes one (its own key formats included). */
function anchorStyleAdapter() {
  const runs: { prepared: Prepared; signal: AbortSignal; done: ReturnType<typeof deferred<SummaryResult>> }[] = [];
  const snapshots: AnchorSnapshot[] = [];
  const adapter: AnchorAsyncCompactionAdapter<Prepared, SummaryResult> = {
    id: "my-package",
    label: "my package compaction",
    prepare: ({ ctx, settings }) => {
      const branch = ctx.sessionManager.getBranch();
      const snapshotLeafId = branch[branch.length - 1]?.id;
      if (!snapshotLeafId || !ctx.model) return undefined;
      const input = prepareCompaction(branch, settings, piCompactionPrimitives);
      if (!input) return undefined;
      return { firstKeptEntryId: input.firstKeptEntryId, snapshotLeafId, sessionId: ctx.sessionManager.getSessionId(), input };
    },
    createSnapshot: ({ jobId, prepared }) => {
      const snapshot = {
        jobId,
        sessionId: prepared.sessionId,
        snapshotLeafId: prepared.snapshotLeafId,
        firstKeptEntryId: prepared.firstKeptEntryId,
        modelKey: "its-own-format",
        thinkingLevel: "off",
        settingsKey: JSON.stringify({ its: "own format" }),
        promptVersion: "my-package-summary-v1",
      };
      snapshots.push(snapshot);
      return snapshot;
    },
    run: async ({ prepared, signal }) => {
      const done = deferred<SummaryResult>();
      runs.push({ prepared, signal, done });
      return done.promise;
    },
    toCompaction: ({ prepared, result }) => ({
      summary: result.summary,
      firstKeptEntryId: prepared.firstKeptEntryId,
      tokensBefore: prepared.input.tokensBefore,
      details: result.details,
    }),
  };
  return { adapter, runs, snapshots };
}

describe("pi-async-compaction adapters", () => {
  test("told apart from this package's adapters by their single-object createSnapshot/run", () => {
    expect(isAnchorAdapter(anchorStyleAdapter().adapter)).toBe(true);
    expect(isAnchorAdapter(createDefaultAdapter({ compact: piCompact, primitives: piCompactionPrimitives }))).toBe(false);
  });

  test("an anchor-style adapter runs in the background and applies as a turn_end draft, its details kept", async () => {
    const builder = new SessionBuilder();
    for (let i = 0; i < 6; i++) builder.applyAll(TURN);
    const anchor = anchorStyleAdapter();
    const host = new FakeHost({ sm: builder.sm, adapter: fromAnchorAdapter(anchor.adapter, { newJobId: () => "anchor-job-1" }) });
    host.idle = false;
    host.tokens = 60_000;
    await host.turnEnd();
    expect(host.state()).toMatchObject({ kind: "pending", job: { adapterId: "my-package", promptVersion: "my-package-summary-v1" } });
    expect(anchor.snapshots.map((s) => s.jobId)).toEqual(["anchor-job-1"]);
    expect(anchor.runs).toHaveLength(1);
    anchor.runs[0].done.resolve({ summary: "anchor-style summary", details: { mine: true } });
    await flush();
    expect(host.state().kind).toBe("ready");
    builder.applyAll(TURN); // the loop went on: kept raw after the snapshot
    const piCut = prepareCompaction(builder.sm.getBranch(), host.settings, piCompactionPrimitives)!.firstKeptEntryId;
    expect(piCut).not.toBe(anchor.runs[0].prepared.firstKeptEntryId);
    host.tokens = 90_000; // at Pi's threshold: the summary is due
    const r = await host.turnEnd();
    const [draft] = r.entries;
    // Caught up to Pi's cut now; the adapter's summary leads, its layout untouched (no Pi file tags to extend).
    expect(draft).toMatchObject({ type: "compaction", firstKeptEntryId: piCut });
    expect(draft.summary.startsWith("anchor-style summary\n\n---\n\n")).toBe(true);
    expect(draft.details.mine).toBe(true);
    expect(readCompactionMarker(draft.details)).toMatchObject({ source: "context-keeper", jobId: "job-1", promptVersion: "my-package-summary-v1" });
    // Validation used the core's own keys, not the adapter's formats: nothing was rejected.
    expect(host.events.some((e) => e.kind === "apply" && e.outcome === "rejected")).toBe(false);
    expect(host.status.get("async-compaction:my-package")).toBe("my package compaction: ready");
  });

  test("core's registerAsyncCompaction takes an anchor adapter with the anchor's options only", () => {
    const on: string[] = [];
    const commands: string[] = [];
    const pi = {
      on: (name: string) => void on.push(name),
      registerCommand: (name: string) => void commands.push(name),
      getThinkingLevel: () => "off",
    } as unknown as ExtensionAPI;
    const controller = registerAsyncCompaction(pi, anchorStyleAdapter().adapter, { commandName: "my-compact-now", commandDescription: "Mine" });
    expect(controller.adapter.id).toBe("my-package");
    expect(isAnchorAdapter(controller.adapter)).toBe(false); // wrapped
    expect(commands).toEqual(["my-compact-now"]);
    expect(on).toEqual(expect.arrayContaining(["turn_end", "agent_end", "session_before_compact", "session_compact"]));
  });
});

describe("compaction markers", () => {
  test("pi-async-compaction's marker is read; this package's too; anything else is not a background compaction", () => {
    expect(readCompactionMarker({ readFiles: [], asyncPrefixCompaction: { jobId: "async-3", snapshotLeafId: "a", modelKey: "m", thinkingLevel: "off", settingsKey: "{}", promptVersion: "pi-compaction-v1" } })).toEqual({
      source: "pi-async-compaction",
      jobId: "async-3",
      promptVersion: "pi-compaction-v1",
    });
    expect(readCompactionMarker({ contextKeeperAsyncCompaction: { jobId: "acj-1", adapterId: "pi-default", promptVersion: "pi-compact-1" } })).toEqual({
      source: "context-keeper",
      jobId: "acj-1",
      adapterId: "pi-default",
      promptVersion: "pi-compact-1",
    });
    for (const details of [undefined, null, [], { readFiles: [] }, { asyncPrefixCompaction: { jobId: 7 } }, { asyncPrefixCompaction: [] }]) {
      expect(readCompactionMarker(details)).toBeUndefined();
    }
  });
});
