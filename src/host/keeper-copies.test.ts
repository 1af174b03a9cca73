/**
 * Two copies of the package in one in-process Pi (two extension factories standing for two
 * folders): the first registers, the second registers nothing and Pi reports no conflict; a
 * reload claims afresh (the old runtime's claim is dropped with it); a fake `pi` without an
 * event bus runs.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { inProcessPi } from "../../test/support/host/in-process-pi.ts";
import { registerKeeperCopy } from "./hooks.ts";
import { claimCopy, thisCopy } from "./keeper-copies.ts";

const A = { root: "/copies/a", version: "1.0.0" };
const B = { root: "/copies/b", version: "0.9.0" };

async function twoCopies() {
  const runs: string[] = [];
  const copy = (self: typeof A) => (pi: ExtensionAPI) => void (registerKeeperCopy(pi, self) && runs.push(self.root));
  return { ...(await inProcessPi({ factories: [copy(A), copy(B)] })), runs };
}

const registered = (e: { tools: Map<string, unknown>; commands: Map<string, unknown>; handlers: Map<string, unknown> }) => e.tools.size + e.commands.size + e.handlers.size;

describe("two copies in one Pi", () => {
  test("the first registers; the second registers no tool, command or handler; no conflict", async () => {
    const { session, extensionsResult, runs } = await twoCopies();
    expect(runs).toEqual([A.root]);
    expect(extensionsResult.errors).toEqual([]);
    const [first, second] = extensionsResult.extensions;
    expect([...first!.tools.keys()]).toEqual(["keeper_recall"]);
    expect(registered(second!)).toBe(0);
    session.dispose();
  });

  test("after a reload the first copy claims again (the old runtime's claim went with it)", async () => {
    const { session, resourceLoader, runs } = await twoCopies();
    await session.reload();
    expect(runs).toEqual([A.root, A.root]);
    const [first, second] = resourceLoader.getExtensions().extensions;
    expect([...first!.tools.keys()]).toEqual(["keeper_recall"]);
    expect(registered(second!)).toBe(0);
    session.dispose();
  });
});

describe("claimCopy", () => {
  test("without an event bus the copy runs", () => {
    expect(claimCopy({} as never, A)).toEqual({ runs: true, others: [] });
  });

  test("this copy is the repository's folder, with its package.json's version", () => {
    const self = thisCopy();
    expect(self.root).toBe(join(import.meta.dir, "..", ".."));
    expect(self.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
