import { expect, test } from "bun:test";
import { parseSince } from "./since.ts";

const NOW = Date.parse("2025-12-01T12:00:00Z");

test("durations back from now and dates; the label says which", () => {
  expect(parseSince("30d", NOW)).toEqual({ ok: true, fromMs: NOW - 30 * 86_400_000, label: "last 30 days" });
  expect(parseSince("12h", NOW)).toEqual({ ok: true, fromMs: NOW - 12 * 3_600_000, label: "last 12 hours" });
  expect(parseSince("1w", NOW)).toEqual({ ok: true, fromMs: NOW - 7 * 86_400_000, label: "last 1 week" });
  expect(parseSince("2025-11-01", NOW)).toEqual({ ok: true, fromMs: Date.parse("2025-11-01T00:00:00Z"), label: "since 2025-11-01" });
  expect(parseSince("2025-11-01T08:30:00Z", NOW)).toMatchObject({ ok: true, fromMs: Date.parse("2025-11-01T08:30:00Z") });
});

test("bad values: the value named, the accepted forms given", () => {
  for (const bad of ["30", "thirty days", "30x", "-3d", "d"]) {
    const r = parseSince(bad, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toBe(`--since ${bad}: expected a duration back from now (30d, 12h, 2w) or a date (2025-11-01)`);
  }
  expect(parseSince("0d", NOW)).toEqual({ ok: false, message: "--since 0d: the duration must be more than 0" });
  expect(parseSince("2025-13-45", NOW)).toMatchObject({ ok: false, message: expect.stringContaining("not a real date") });
  expect(parseSince("2026-01-01", NOW)).toEqual({ ok: false, message: "--since 2026-01-01 is in the future" });
});
