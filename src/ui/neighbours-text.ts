/**
 * Pure text for what else is loaded beside this copy of the keeper: another copy of the
 * package, said once by the copy that runs; another async compaction, said once.
 */

export interface CopyView {
  root: string;
  version: string;
}

/** Two or more copies of the package: which runs, which registered nothing, how to keep one. */
export function copiesNotice(running: CopyView, others: readonly CopyView[]): string {
  const label = (c: CopyView) => `${c.root} (${c.version})`;
  return [
    `context-keeper: ${others.length + 1} copies of pi-context-keeper are loaded; only the first one Pi loaded registers anything.`,
    `  runs: ${label(running)}`,
    ...others.map((o) => `  registered nothing: ${label(o)}`),
    "Pi loads -e paths before installed packages. Keep one: `pi remove <package>` for an installed copy, or start without `-e <folder>`.",
  ].join("\n");
}

/** Another async compaction (pi-async-compaction or one with its command) is loaded: the keeper's stands down. */
export function otherCompactionNotice(path: string): string {
  return [
    `context-keeper: another async compaction is loaded beside the keeper (its /async-compact-now comes from ${path || "another extension"}; pi-async-compaction, which this package replaces, is one).`,
    "The keeper's async compaction stands down for this session, so each compaction makes one background summary, not two: the other extension's. /async-compact-now runs its command.",
    "To use the keeper's compaction instead (it measures the context as the keeper sends it and never makes you wait on a late summary), remove the other extension (`pi remove npm:pi-async-compaction`).",
  ].join("\n");
}
