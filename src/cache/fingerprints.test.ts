import { describe, expect, test } from "bun:test";
import { fingerprintRequest, firstChangedLayer, messagesPrefixFingerprint } from "./fingerprints.ts";
import { EMPTY_PREFIX_HASH } from "./prefix-hash.ts";
import { createCharRatioEstimator } from "./token-estimator.ts";
import { flattenRequest } from "./flatten.ts";
import { a, MARK_1H, piBody, txt, u } from "../../test/support/cache/wire-builders.ts";

const base = [u(txt(10, "p0")), a(txt(10, "a0")), u(txt(10, "p1"))];

describe("fingerprints", () => {
  test("marks do not change fingerprints; growth leaves earlier message prefixes equal", () => {
    const f1 = fingerprintRequest(piBody(base));
    const f2 = fingerprintRequest(piBody([...base, a(txt(5, "a1")), u(txt(5, "p2"))], { mark: MARK_1H }));
    expect(f2.tools).toBe(f1.tools);
    expect(f2.system).toBe(f1.system);
    expect(f2.messages.slice(0, 3)).toEqual(f1.messages);
    expect(firstChangedLayer(f1, f2)).toEqual({ layer: "none" });
    expect(messagesPrefixFingerprint(f1, -1)).toBe(EMPTY_PREFIX_HASH);
  });
  test("attributes a change to tools, system, or the first changed message", () => {
    const f = fingerprintRequest(piBody(base));
    const sys = fingerprintRequest(piBody(base, { systemTag: "other" }));
    expect(firstChangedLayer(f, sys)).toEqual({ layer: "system" });
    const tools = piBody(base);
    tools.tools![0].description = "changed";
    expect(firstChangedLayer(f, fingerprintRequest(tools))).toEqual({ layer: "tools" });
    const edited = fingerprintRequest(piBody([base[0], a(txt(10, "A0")), base[2]]));
    expect(firstChangedLayer(f, edited)).toEqual({ layer: "messages", messageIndex: 1 });
    const shorter = fingerprintRequest(piBody(base.slice(0, 1)));
    // Dropping messages is a change at the first dropped one; growing back is not.
    expect(firstChangedLayer(f, shorter)).toEqual({ layer: "messages", messageIndex: 1 });
    expect(firstChangedLayer(shorter, f)).toEqual({ layer: "none" });
  });
  test("moving a block across a message boundary changes the prefix", () => {
    const joined = fingerprintRequest(piBody([u(txt(10, "x"), txt(10, "y"))]));
    const split = fingerprintRequest(piBody([u(txt(10, "x")), u(txt(10, "y"))]));
    expect(joined.messages[0]).not.toBe(split.messages[0]);
  });
});

describe("default estimator", () => {
  test("chars / ratio + per-block overhead, prose vs code-ish", () => {
    const est = createCharRatioEstimator({ proseCharsPerToken: 4, codeCharsPerToken: 2, blockOverheadTokens: 10 });
    const [text, result] = flattenRequest({
      messages: [{ role: "user", content: [{ type: "text", text: "x".repeat(40) }, { type: "tool_result", tool_use_id: "t", content: "y".repeat(40) }] }],
    });
    expect(est(text)).toBe(10 + 40 / 4); // 20
    expect(est(result)).toBe(10 + 40 / 2); // 30
  });
});
