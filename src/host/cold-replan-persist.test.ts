/**
 * A cold re-plan decided at a render commits like a flush: at `before_provider_request` the
 * side file of every huge original it hides is written BEFORE its entries are appended, and a
 * side file that cannot be written is warned about once while the re-plan commits without it.
 * (Fuzzer fixture `test/fuzz/fixtures/cold-replan-spill.json`.)
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { ContextMessage } from "../session/messages.ts";
import { CUSTOM_TYPE_FLUSH, type FlushRecord } from "../state/schema.ts";
import { assistant, call, result, text, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";

// "Huge" relative to the spill threshold the test sets (`recall.spillThresholdBytes`: 100), yet
// under `pruning.minBatchChars` (1,200) so that its chain collapses without a summary.
const SPILL_THRESHOLD = 100;
const HUGE = "x".repeat(500);

// A read in the first prompt's tool chain, then enough prompts that the chain is older than
// `chainCompression.rollingWindow` (3): the cold re-plan (the first request, so cold) collapses it.
function history(): ContextMessage[] {
  const m: ContextMessage[] = [user("read it", 1), assistant([call("toolu_big", "read", { path: "big.txt" })], 2), result("toolu_big", "read", HUGE, 3), assistant([text("read")], 4)];
  for (let p = 1; p <= 5; p++) m.push(user(`p${p}`, 10 * p + 1), assistant([text(`answer ${p}`)], 10 * p + 2));
  m.push(user("last", 100));
  return m;
}

/** `history()` answered, then a second read chain with another output, old enough to collapse. */
function laterHistory(): ContextMessage[] {
  const m = [...history(), assistant([text("done")], 101)];
  m.push(user("read more", 201), assistant([call("toolu_big2", "read", { path: "big2.txt" })], 202), result("toolu_big2", "read", "y".repeat(500), 203), assistant([text("read")], 204));
  for (let p = 1; p <= 5; p++) m.push(user(`q${p}`, 300 + 10 * p), assistant([text(`answer q${p}`)], 301 + 10 * p));
  m.push(user("last again", 400));
  return m;
}

const recallOf = (e: { customType: string; data: unknown }) => (e.customType === CUSTOM_TYPE_FLUSH ? (e.data as FlushRecord).recall : undefined);

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), "keeper-cold-spill-"));
  const sessionFile = join(dir, "session.jsonl");
  const appended: Array<{ customType: string; data: unknown; spillOnDisk: boolean[] }> = [];
  const warnings: string[] = [];
  const pi = {
    // Records, at append time, whether each spill path the entry names is already on disk.
    appendEntry: (customType: string, data: unknown) => {
      const recall = customType === CUSTOM_TYPE_FLUSH ? (data as FlushRecord).recall : undefined;
      const paths = recall ? Object.values(recall.entries).flatMap((e) => (e.spillPath ? [e.spillPath] : [])) : [];
      appended.push({ customType, data, spillOnDisk: paths.map((p) => existsSync(p)) });
    },
    getThinkingLevel: () => "off",
    getActiveTools: () => ["read"],
    setActiveTools: () => {},
  };
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: true,
    ui: { notify: (t: string, level: string) => void (level === "warning" && warnings.push(t)), setStatus: () => {}, theme: { fg: (_c: string, t: string) => t } },
    model: { provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages" },
    sessionManager: { getBranch: () => [], buildSessionProjection: () => ({ messages: [] }), getSessionFile: () => sessionFile },
    getContextUsage: () => ({ tokens: 30_000, contextWindow: 200_000, percent: 15 }),
  } as unknown as ExtensionContext;
  const clock = { now: 1_000_000 };
  const host = driveKeeper(pi as never, { now: () => clock.now });
  const previous = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = join(dir, "agent");
  mkdirSync(join(dir, "agent"));
  writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify({ contextKeeper: { recall: { spillThresholdBytes: SPILL_THRESHOLD } } }));
  try {
    host.onSessionStart(ctx);
  } finally {
    if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previous;
  }
  return { host, ctx, appended, sessionFile, warnings, clock };
}

describe("a cold re-plan spills like a flush", () => {
  test("the huge original it hides gets its side file, written before the recall entry is appended", async () => {
    const { host, ctx, appended, sessionFile } = fixture();
    const out = host.onContext({ type: "context", messages: history() } as never, ctx);
    expect(out).toBeDefined(); // the chain collapsed: the re-plan changed history
    expect(appended).toEqual([]); // nothing from inside the render
    expect(existsSync(`${sessionFile}.keeper`)).toBe(false);

    const payload = { model: "x", messages: [] };
    await host.onBeforeProviderRequest({ type: "before_provider_request", payload } as never, ctx);
    const recallEntry = appended.find((e) => recallOf(e) !== undefined);
    expect(recallEntry).toBeDefined();
    const entry = Object.values(recallOf(recallEntry!)!.entries).find((e) => e.bytes === HUGE.length);
    expect(entry?.spillPath).toBeDefined();
    expect(entry!.spillPath!.startsWith(`${sessionFile}.keeper`)).toBe(true);
    expect(recallEntry!.spillOnDisk).toEqual([true]);
    expect(readFileSync(entry!.spillPath!, "utf8")).toBe(HUGE);
  });

  test("a side file that cannot be written: one warning, and the re-plan commits without it", async () => {
    const { host, ctx, appended, sessionFile, warnings, clock } = fixture();
    writeFileSync(`${sessionFile}.keeper`, "a file where the spill folder should be");
    host.onContext({ type: "context", messages: history() } as never, ctx);
    await host.onBeforeProviderRequest({ type: "before_provider_request", payload: { model: "x", messages: [] } } as never, ctx);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("could not write 1 copy(ies) of large outputs beside the session");
    // Committed anyway: one flush entry with the frontier and the recall delta, which keeps the hash and size, not the path.
    expect(appended.map((e) => e.customType)).toEqual([CUSTOM_TYPE_FLUSH]);
    expect((appended[0]!.data as FlushRecord).frontier).toBeDefined();
    const recallEntry = appended.find((e) => recallOf(e) !== undefined)!;
    const entry = Object.values(recallOf(recallEntry)!.entries).find((e) => e.bytes === HUGE.length)!;
    expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(entry.spillPath).toBeUndefined();
    expect(entry.preview).toBeUndefined();
    // Two hours later (the cache expired), a second cold re-plan whose side file fails too: no second warning.
    clock.now += 2 * 3_600_000;
    const before = appended.length;
    expect(host.onContext({ type: "context", messages: laterHistory() } as never, ctx)).toBeDefined();
    await host.onBeforeProviderRequest({ type: "before_provider_request", payload: { model: "x", messages: [] } } as never, ctx);
    const later = appended.slice(before).find((e) => recallOf(e) !== undefined)!;
    expect(Object.values(recallOf(later)!.entries).some((e) => e.bytes === 500 && e.spillPath === undefined)).toBe(true);
    expect(warnings).toHaveLength(1);
  });
});
