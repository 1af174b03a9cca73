import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { escapeXml, niceMax, renderLineChart, sessionChart } from "./svg-chart.ts";

/** A small XML well-formedness check: balanced tags, quoted attributes, no stray `<` or `&`. */
function xmlProblems(svg: string): string[] {
  const problems: string[] = [];
  const body = svg.replace(/^<\?xml[^>]*\?>\s*/, "");
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    const between = body.slice(last, m.index);
    if (between.includes("<")) problems.push(`stray '<' before offset ${m.index}`);
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(between)) problems.push(`bare '&' before offset ${m.index}`);
    last = tag.lastIndex;
    const [, close, name, , selfClose] = m;
    if (close) {
      if (stack.pop() !== name) problems.push(`unbalanced </${name}>`);
    } else if (!selfClose) stack.push(name);
  }
  if (body.slice(last).trim() !== "") problems.push("text after the root element");
  if (stack.length) problems.push(`unclosed: ${stack.join(",")}`);
  return problems;
}

const series = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));

describe("session chart", () => {
  const svg = sessionChart({
    title: "s.jsonl <bare & keeper>",
    bare: { contextTokens: series(50, (i) => 1000 * i), read: series(50, (i) => 900 * i), write: series(50, () => 100) },
    keeper: { contextTokens: series(50, (i) => 400 * i), read: series(50, (i) => 350 * i), write: series(50, (i) => (i % 10 === 0 ? 5000 : 50)) },
  });

  test("is well-formed and escapes its text", () => {
    expect(xmlProblems(svg)).toEqual([]);
    expect(svg).toContain("s.jsonl &lt;bare &amp; keeper&gt;");
    expect(svg.startsWith("<?xml")).toBe(true);
  });

  test("has both panels and every series, bare and keeper, with one point per request", () => {
    expect(svg).toContain("Context tokens per request");
    expect(svg).toContain("Cache read / write tokens per request");
    const lines = [...svg.matchAll(/<polyline data-series="([^"]+)"[^>]* points="([^"]+)"/g)].map((m) => ({ name: m[1], points: m[2].split(" ").length }));
    expect(lines.map((l) => l.name)).toEqual([
      "bare: context tokens",
      "keeper: context tokens",
      "bare: cache read",
      "keeper: cache read",
      "bare: cache write",
      "keeper: cache write",
    ]);
    for (const l of lines) expect(l.points).toBe(50);
  });

  test("the largest value sits at the top of its panel's nice axis", () => {
    // bare context tops at 49 000 → axis 50 000; the 49k point is 98% of the plot height up.
    const one = renderLineChart([{ title: "p", series: [{ name: "a", color: "#000", values: [0, 49_000] }] }], { title: "t", width: 200, panelHeight: 200 });
    const pts = one.match(/points="([^"]+)"/)![1].split(" ").map((p) => p.split(",").map(Number));
    const rect = one.match(/<rect x="64" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/)!;
    const [top, height] = [Number(rect[1]), Number(rect[2])];
    expect(pts[0][1]).toBeCloseTo(top + height, 1);
    expect(pts[1][1]).toBeCloseTo(top + height * (1 - 49 / 50), 1);
  });

  test("empty and single-point series still render well-formed", () => {
    for (const n of [0, 1]) {
      const s = sessionChart({ title: "x", bare: { contextTokens: series(n, () => 5), read: [], write: [] }, keeper: { contextTokens: [], read: [], write: [] } });
      expect(xmlProblems(s)).toEqual([]);
      expect(s).not.toContain("NaN");
    }
  });
});

describe("helpers", () => {
  test("niceMax is the smallest 1/2/5 × 10^k at or above the value", () => {
    expect(niceMax(49_000)).toBe(50_000);
    expect(niceMax(120)).toBe(200);
    expect(niceMax(0)).toBe(1);
    fc.assert(
      fc.property(fc.double({ min: 1e-3, max: 1e9, noNaN: true }), (x) => {
        const m = niceMax(x);
        return m >= x && m < 5 * x + 1e-9;
      }),
    );
  });

  test("escaped text never contains markup characters", () => {
    fc.assert(fc.property(fc.string(), (s) => !/[<>"']/.test(escapeXml(s)) && xmlProblems(`<t>${escapeXml(s)}</t>`).length === 0));
  });
});
