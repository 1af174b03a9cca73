/**
 * Pure text for what else is loaded beside this copy of the keeper: another copy of the
 * package, said once by the copy that runs.
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
