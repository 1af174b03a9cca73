/**
 * Edge: one copy of this package per Pi. Two copies from two folders (an installed package and
 * a clone passed with `-e`) are two extensions to Pi: both would register `keeper_recall`, and
 * Pi refuses to start on the tool conflict, which it checks once every extension has loaded.
 * So the first copy to load claims the package on Pi's event bus — shared by the extensions of
 * one load, its subscriptions dropped when Pi reloads or replaces the session, one per session
 * runtime in an SDK host — and a later copy that finds the claim registers nothing. The running
 * copy keeps the later copies' folders, to say once which copy runs (`hooks.ts`).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The event-bus channel of the claim (the package's name). */
export const COPY_CHANNEL = "pi-context-keeper:copy";

/** A copy of the package: its folder (real path) and version. */
export interface KeeperCopy {
  root: string;
  version: string;
}

/** What a loading copy emits; the running copy answers by filling in `running`. */
interface CopyProbe {
  copy: KeeperCopy;
  running?: KeeperCopy;
}

export type CopyClaim =
  /** This copy runs; `others` fills with the copies loaded after it (they register nothing). */
  | { runs: true; others: KeeperCopy[] }
  /** Another copy already runs in this Pi: this one registers nothing. */
  | { runs: false; running: KeeperCopy };

/** This copy: the folder two levels above this file, and its package.json's version. */
export function thisCopy(): KeeperCopy {
  const here = dirname(fileURLToPath(import.meta.url));
  let root = join(here, "..", "..");
  try {
    root = realpathSync(root);
  } catch {
    // keep the path as found
  }
  let version = "unknown";
  try {
    version = String((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version ?? "unknown");
  } catch {
    // a copy without its package.json still runs
  }
  return { root, version };
}

/**
 * Claim the package for `copy` on Pi's event bus. The bus calls listeners synchronously, so the
 * running copy's answer is in the probe when `emit` returns. A `pi` without an event bus (a
 * test double, an old Pi) cannot tell: the copy runs.
 */
export function claimCopy(pi: Pick<ExtensionAPI, "events">, copy: KeeperCopy): CopyClaim {
  const bus = pi.events as Partial<ExtensionAPI["events"]> | undefined;
  if (typeof bus?.emit !== "function" || typeof bus.on !== "function") return { runs: true, others: [] };
  const probe: CopyProbe = { copy };
  bus.emit(COPY_CHANNEL, probe);
  if (probe.running) return { runs: false, running: probe.running };
  const others: KeeperCopy[] = [];
  bus.on(COPY_CHANNEL, (data) => {
    const p = data as CopyProbe;
    if (!p || typeof p !== "object" || !p.copy) return;
    p.running = copy;
    if (!others.some((o) => o.root === p.copy.root)) others.push(p.copy);
  });
  return { runs: true, others };
}
