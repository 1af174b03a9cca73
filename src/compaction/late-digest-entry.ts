/**
 * The custom entry a late job's model summary leaves behind: the upgrade of the extractive
 * digest that was applied in its place (`late-digest.ts`). The next background summary reads
 * it as its previous summary (`prepare.ts`); the context itself keeps the digest until then
 * (changing an applied summary would rewrite the whole cache).
 */
import { z } from "zod";
import type { SessionEntry } from "./primitives.ts";

export const UPGRADE_ENTRY_TYPE = "context-keeper/compaction-upgrade";

export const upgradeEntrySchema = z.object({
  version: z.literal(1),
  /** The compaction entry (the digest) this summary stands for. */
  compactionEntryId: z.string(),
  jobId: z.string(),
  summary: z.string().min(1),
});

export type UpgradeEntry = z.infer<typeof upgradeEntrySchema>;

/** The upgrade an entry carries, if it is a well-formed one. */
export function upgradeOf(entry: SessionEntry): UpgradeEntry | undefined {
  if (entry.type !== "custom" || entry.customType !== UPGRADE_ENTRY_TYPE) return undefined;
  const parsed = upgradeEntrySchema.safeParse(entry.data);
  return parsed.success ? parsed.data : undefined;
}
