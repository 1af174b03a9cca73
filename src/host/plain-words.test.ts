/**
 * Plain words on every first screen of `/keeper` — the view, stats, why, cache, now, help, the
 * answers to set/reset/on/off — with the internals one level down (`/keeper why --detail`,
 * `/keeper cache --detail`). Setting names (`cache.seam`) are the user's own words and are
 * left out of the check.
 */
import { describe, expect, test } from "bun:test";
import { assistant, text, user } from "../../test/support/message-factory.ts";
import { played, type KeeperRuntime } from "../../test/support/host/keeper-session.ts";
import { internalWordsIn } from "../../test/support/plain-words.ts";

/** A session with a warm cache, two flushes and a gate decision behind it, and a changed setting. */
async function busySession(): Promise<KeeperRuntime> {
  const { rt } = played({ summarizer: { model: "anthropic/claude-haiku-4-5" } });
  const request = () => {
    const messages = rt.messages();
    rt.host.onContext({ type: "context", messages } as never, rt.ctx);
    rt.host.onBeforeProviderRequest({ type: "before_provider_request", payload: { model: "m", messages: messages.map((m) => ({ role: m.role, content: JSON.stringify(m) })) } } as never, rt.ctx);
  };
  request();
  await rt.command("now");
  rt.say(user("and now?", 20));
  rt.say(assistant([text("fine")], 21));
  request();
  await rt.command("now");
  request();
  return rt;
}

describe("first screens speak the user's words", () => {
  test("the view, stats, why, cache, now, help and the answers to settings commands", async () => {
    const rt = await busySession();
    const screens: Record<string, string> = {};
    for (const args of ["", "stats", "why", "cache", "now", "help", "set thinkingStrip.mode sometimes", "set summarizer.mode extractive", "set cache.discipline off", "off", "on", "reset"]) {
      screens[args || "(view)"] = await rt.command(args);
    }
    for (const [args, screen] of Object.entries(screens)) expect({ args, words: internalWordsIn(screen) }).toEqual({ args, words: [] });
    // The setting answers say what matters: the bad value, that nothing changed, a setting without effect.
    expect(screens["set thinkingStrip.mode sometimes"]).toContain('"sometimes" is not a valid thinkingStrip.mode — it takes one of auto, off, flush-gated. thinkingStrip.mode is unchanged.');
    expect(screens["set summarizer.mode extractive"]).toContain('warning: summarizer.model = "anthropic/claude-haiku-4-5" has no effect: summarizer.mode is "extractive"');
    expect(screens["(view)"]).toContain('warning: summarizer.model = "anthropic/claude-haiku-4-5" has no effect');
  });

  test("the internals are one level down", async () => {
    const rt = await busySession();
    const why = await rt.command("why --detail");
    expect(why).toContain("rewrite = ");
    expect(why).toContain("chance the cache is lost anyway");
    const cache = await rt.command("cache --detail");
    expect(cache).toMatch(/frozen|no seam mark/);
    expect(cache).toContain("tail");
    expect(await rt.command("why")).toContain("/keeper why --detail shows the arithmetic.");
    expect(await rt.command("cache")).toContain("/keeper cache --detail shows");
    expect(await rt.command("why --detials")).toContain('/keeper why takes only --detail (got "--detials")');
  });
});
