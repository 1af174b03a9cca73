/** Property: records glued on one line (lost line breaks) read back as if each had its own line. */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { parseSessionText, splitJsonValues } from "./session-file.ts";

const tricky = fc.string({ unit: fc.constantFrom("a", "{", "}", "[", "]", '"', "\\", " ", "é", "\n") });
const entry = fc.record({ type: fc.constantFrom("custom", "label", "session_info"), id: fc.uuid(), text: tricky, nested: fc.array(fc.record({ k: tricky }), { maxLength: 3 }) });

test("any entries, any line breaks lost between them: the same entries in the same order, one note per glued line", () => {
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (entries, glue) => {
      const lines: string[] = [];
      entries.forEach((e, i) => {
        const json = JSON.stringify(e);
        if (i > 0 && glue[i]) lines[lines.length - 1] += json;
        else lines.push(json);
      });
      const parsed = parseSessionText(lines.join("\n"), "f");
      expect(parsed.entries).toEqual(entries);
      const glued = lines.filter((l) => splitJsonValues(l).values.length > 1).length;
      expect(parsed.diagnostics.filter((d) => d.message.includes("on one line")).length).toBe(glued);
    }),
    { seed: 24, numRuns: 300 },
  );
});
