/**
 * "Kept out of the next request" is one figure on three screens — the status line's
 * "−42k pruned", `/keeper`'s and `/keeper stats`' — and each is checked against the same
 * figure computed another way (the serialized request Pi would send, minus the one the keeper
 * of what the keeper sends). The status line follows the context when it changes without a
 * request: a resumed session (`pi -c`), `/keeper off` and `on`, `/tree`, a compaction.
 * Before, a resumed session said "nothing pruned yet" while `/keeper` listed its stubs, and a
 * compaction left the old figures on screen.
 */
import { describe, expect, test } from "bun:test";
import { formatTokenCount } from "../ui/status-line.ts";
import { assistant, text, user } from "../../test/support/message-factory.ts";
import type { DrivenKeeper } from "../../test/support/host/keeper-driver.ts";
import { played, runtime, sayReadLoop, tokensOf, type KeeperRuntime } from "../../test/support/host/keeper-session.ts";

/** The figure three ways on screen, and computed from what Pi would send and what the keeper sends. */
async function figures(rt: KeeperRuntime) {
  const status = rt.statuses.at(-1)!;
  const stats = await rt.command("stats");
  const view = await rt.command("");
  const raw = rt.messages();
  const sent = (rt.host as DrivenKeeper).sentContext(raw, rt.ctx);
  const read = (text: string) => {
    const m = text.match(/kept out of the next request: ≈ ([\d,]+) tokens/);
    return m ? Number(m[1]!.replace(/,/g, "")) : 0;
  };
  // Way 2: the whole requests serialized, / 4 (the screens count only the messages that differ).
  const computed = (JSON.stringify(raw).length - JSON.stringify(sent).length) / 4;
  return { status, stats: read(stats), view: read(view), computed, messagesDropped: raw.length - sent.length };
}

function expectAgree(f: Awaited<ReturnType<typeof figures>>) {
  // The three screens: one figure.
  expect(f.view).toBe(f.stats);
  expect(f.status).toContain(f.stats > 0 ? `−${formatTokenCount(f.stats)} pruned` : "nothing pruned yet");
  // The other way: equal up to rounding and the separators of the messages a collapse removed.
  expect(Math.abs(f.stats - f.computed)).toBeLessThanOrEqual(0.5 + f.messagesDropped / 4);
}

describe("one 'kept out of the next request' figure, on every screen", () => {
  test("after a flush: status line, /keeper and /keeper stats agree with the figure computed from the two contexts", async () => {
    const { rt } = played();
    await rt.command("now");
    const f = await figures(rt);
    expect(f.stats).toBeGreaterThan(3_000);
    expectAgree(f);
  });

  test("a resumed session (pi -c) shows what it prunes before any request", async () => {
    const { session, rt } = played();
    await rt.command("now");
    const before = await figures(rt);
    const resumed = runtime(session);
    expect(resumed.statuses.at(-1)).toContain(`−${formatTokenCount(before.stats)} pruned`);
    const after = await figures(resumed);
    expect(after.stats).toBe(before.stats);
    expectAgree(after);
  });

  test("/keeper off and on: off, then the same figure again", async () => {
    const { rt } = played();
    await rt.command("now");
    const on = await figures(rt);
    await rt.command("off");
    expect(rt.statuses.at(-1)).toBe("keeper: off");
    expect(await rt.command("stats")).toContain("kept out of the next request: nothing yet");
    await rt.command("on");
    expect(rt.statuses.at(-1)).toContain(`−${formatTokenCount(on.stats)} pruned`);
    expectAgree(await figures(rt));
  });

  test("/tree to a point before the flush: nothing pruned there; back to the leaf: the figure again", async () => {
    const { session, rt } = played();
    await rt.command("now");
    const leaf = await figures(rt);
    session.leaf = 9; // the prompt and its reads, before the answer and the flush's entry
    rt.host.onSessionTree(rt.ctx);
    const early = await figures(rt);
    expect(early.stats).toBe(0);
    expectAgree(early);
    session.leaf = undefined;
    rt.host.onSessionTree(rt.ctx);
    expect(rt.statuses.at(-1)).toContain(`−${formatTokenCount(leaf.stats)} pruned`);
  });

  test("a compaction (also /async-compact-now): the new context's size and nothing left to prune, at once", async () => {
    const { session, rt } = played();
    await rt.command("now");
    expect(rt.statuses.at(-1)).toContain("pruned");
    expect(rt.statuses.at(-1)).not.toContain("nothing pruned");
    session.compacted = [user("The conversation so far: three files were read.", 13), user("next", 14), assistant([text("done")], 15)];
    rt.host.onSessionCompact(rt.ctx);
    expect(rt.statuses.at(-1)).toBe(`keeper: ~${formatTokenCount(tokensOf(session.compacted))} ctx · nothing pruned yet`);
    expectAgree(await figures(rt));
  });
});

describe("'removed by all flushes together' is the sum of each flush's saving", () => {
  const settings: Array<[string, Record<string, unknown> | undefined]> = [
    ["no cache gate, no chain collapse", undefined],
    ["the defaults (the gate measures the saving from its own renders)", {}],
  ];
  test.each(settings)("%s: the flushes' own figures add up to it, and it equals the saving of the whole history measured in one go", async (_name, contextKeeper) => {
    const { rt } = played(contextKeeper);
    const perFlush: number[] = [];
    const removed = (text: string) => Number(text.match(/≈ ([\d,]+) tokens removed/)?.[1]?.replace(/,/g, "") ?? Number.NaN);
    perFlush.push(removed(await rt.command("now")));
    sayReadLoop(rt, 3, 3, 26);
    perFlush.push(removed(await rt.command("now")));
    const stats = await rt.command("stats");
    const total = Number(stats.match(/removed by all flushes together: ≈ ([\d,]+) tokens/)![1]!.replace(/,/g, ""));
    // Way 1: the per-flush figures `/keeper now` printed.
    expect(perFlush.every((n) => n > 0)).toBe(true);
    expect(perFlush.reduce((a, b) => a + b, 0)).toBe(total);
    // Way 2: the whole history, rendered without and with the keeper, as a flush measures it
    // (characters of the request / 4, a new prompt after it); each flush rounds once.
    const probe = user("", Number.MAX_SAFE_INTEGER);
    const raw = [...rt.messages(), probe];
    const sent = (rt.host as DrivenKeeper).sentContext(raw, rt.ctx);
    const oneGo = (JSON.stringify(raw).length - JSON.stringify(sent).length) / 4;
    // Each flush rounds once; a collapsed chain also drops the separators between its messages.
    const slack = perFlush.length + (raw.length - sent.length) / 4;
    expect(Math.abs(oneGo - total)).toBeLessThanOrEqual(slack);
    // And, with no compaction and no thinking to strip, it is the "kept out of the next request" figure.
    const kept = Number(stats.match(/kept out of the next request: ≈ ([\d,]+) tokens/)![1]!.replace(/,/g, ""));
    expect(Math.abs(kept - total)).toBeLessThanOrEqual(slack);
  });
});

describe("the counts on /keeper stats agree with /keeper cache and with what is sent", () => {
  test("outputs replaced by summaries = tool results the keeper sends changed; changed history = /keeper cache's count", async () => {
    const { rt } = played();
    await rt.command("now");
    sayReadLoop(rt, 3, 2, 26);
    await rt.command("now");
    const stats = await rt.command("stats");
    const replaced = Number(stats.match(/tool outputs replaced by summaries: (\d+)/)![1]);
    const raw = rt.messages();
    const sent = (rt.host as DrivenKeeper).sentContext(raw, rt.ctx);
    const sentResults = new Map(sent.filter((m) => m.role === "toolResult").map((m) => [(m as { toolCallId: string }).toolCallId, m]));
    const changed = raw.filter((m) => m.role === "toolResult" && sentResults.get((m as { toolCallId: string }).toolCallId) !== m).length;
    expect(replaced).toBe(5);
    expect(changed).toBe(replaced);
    const rewrites = Number(stats.match(/, (\d+) of them changed history already sent/)![1]);
    const cache = await rt.command("cache");
    expect(cache).toContain(`This extension changed history already sent ${rewrites} time${rewrites === 1 ? "" : "s"} in this session`);
  });
});
