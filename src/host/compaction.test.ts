/** The keeper with async compaction loads into a real in-process Pi session and serves its command. */
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { inProcessPi } from "../../test/support/host/in-process-pi.ts";
import type { LifecycleEvent } from "../compaction/lifecycle.ts";
import { registerKeeper } from "./hooks.ts";

async function load(env: Record<string, string>) {
  const events: LifecycleEvent[] = [];
  let registered: unknown = "not called";
  const factory = (pi: ExtensionAPI) => void (registered = registerKeeper(pi, { compaction: { env, onLifecycleEvent: (e) => events.push(e) } }).compaction);
  const { session, extensionsResult } = await inProcessPi({ factories: [factory], model: { id: "faux-reg" } });
  return { session, extensionsResult, registered, events };
}

describe("the keeper's async compaction", () => {
  test("registers the command and hooks when enabled", async () => {
    const { session, extensionsResult, registered } = await load({});
    expect(registered).toBeDefined();
    const commands = extensionsResult.extensions.flatMap((e) => [...e.commands.keys()]);
    expect(commands).toContain("async-compact-now");
    session.dispose();
  });

  test("PI_ASYNC_PREFIX_COMPACTION=0 registers none of its hooks; the command stays and answers that it is disabled (on the console without a UI)", async () => {
    const { session, extensionsResult, registered, events } = await load({ PI_ASYNC_PREFIX_COMPACTION: "0" });
    expect(registered).toBeUndefined();
    const ext = extensionsResult.extensions.find((e) => e.commands.has("async-compact-now"));
    expect(ext).toBeDefined();
    for (const hook of ["agent_end", "session_before_compact", "session_compact_failed", "model_select", "thinking_level_select"]) expect([...ext!.handlers.keys()]).not.toContain(hook);
    const logged: unknown[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => void logged.push(args.join(" "));
    try {
      await session.prompt("/async-compact-now");
    } finally {
      console.log = original;
    }
    expect(logged).toEqual(["async compaction: disabled"]);
    expect(events).toEqual([]);
    session.dispose();
  });
});
