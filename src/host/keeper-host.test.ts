/**
 * The `context` handler is pure: a cold re-plan decided while rendering is appended by the
 * host once the request is on its way (`before_provider_request`), never from the render.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { CUSTOM_TYPE_FLUSH } from "../state/schema.ts";
import { assistant, text, thinking, user } from "../../test/support/message-factory.ts";
import { driveKeeper } from "../../test/support/host/keeper-driver.ts";
import { withAgentDir } from "../../test/support/host/agent-dir.ts";

const OPUS = { provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages" }; // `auto` strips old thinking

function fixture() {
  const appended: Array<{ customType: string; data: unknown }> = [];
  const pi = {
    appendEntry: (customType: string, data: unknown) => void appended.push({ customType, data }),
    getThinkingLevel: () => "high",
    getActiveTools: () => ["read"],
    setActiveTools: () => {},
  };
  const dir = mkdtempSync(join(tmpdir(), "keeper-host-"));
  const ctx = {
    cwd: dir,
    isProjectTrusted: () => false,
    hasUI: false,
    ui: { notify: () => {}, setStatus: () => {} },
    model: OPUS,
    sessionManager: { getBranch: () => [], buildSessionProjection: () => ({ messages: [] }), getSessionFile: () => undefined },
    getContextUsage: () => ({ tokens: 10_000, contextWindow: 200_000, percent: 5 }),
  } as unknown as ExtensionContext;
  const host = driveKeeper(pi as never, { now: () => 1_000_000 });
  return { host, ctx, appended };
}

// Twenty answered prompts with thinking, then a new prompt: the first request of this process (cold).
const messages: ContextMessage[] = [];
const KEEP = DEFAULT_SETTINGS.thinkingStrip.keepLastTurns;
const PROMPTS = 20; // more than `thinkingStrip.keepLastTurns`
for (let p = 0; p < PROMPTS; p++) messages.push(user(`p${p}`, 10 * p + 1), assistant([thinking(`why ${p} `.repeat(50)), text(`answer ${p}`)], 10 * p + 2));
messages.push(user("last", 10 * PROMPTS + 1));

describe("the context handler appends nothing", () => {
  test("a cold re-plan changes the render at once; its entries are appended at before_provider_request", () => {
    const { host, ctx, appended } = fixture();
    withAgentDir(join(ctx.cwd, "agent"), () => host.onSessionStart(ctx));
    const out = host.onContext({ type: "context", messages } as never, ctx);
    expect(out).toBeDefined();
    const thinkingLeft = out!.messages.filter((m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking")).length;
    expect(KEEP).toBeLessThan(PROMPTS);
    expect(thinkingLeft).toBe(KEEP);
    expect(appended).toEqual([]);
    // The render is pure: the same request renders the same again, still nothing appended.
    const again = host.onContext({ type: "context", messages } as never, ctx);
    expect(again!.messages).toEqual(out!.messages);
    expect(appended).toEqual([]);
    host.onBeforeProviderRequest({ type: "before_provider_request", payload: { model: "x", messages: [] } } as never, ctx);
    expect(appended.map((e) => e.customType)).toEqual([CUSTOM_TYPE_FLUSH]);
    const count = appended.length;
    host.onBeforeProviderRequest({ type: "before_provider_request", payload: { model: "x", messages: [] } } as never, ctx);
    expect(appended.length).toBe(count);
  });
});
