/**
 * The report's edge to pi-ai's model registry: each model's `cost` (dollars per million
 * tokens, optional tiers) and `promptCache` lifetimes from the package's bundled model data
 * (`dist/providers/data/<provider>.json` beside pi-ai's resolved entry), turned into the
 * pure cost model (cost-model.ts). A model the data does not list (a custom provider, a newer
 * id) gets the fallback table's prices; the report names the source per model.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelRef } from "../../cache/cache-rules.ts";
import { costModelFor, type CostModel, type RegistryCost } from "../../cache/cost-model.ts";
import { piAiModelDataDir } from "./locations.ts";

interface RegistryRow {
  id?: string;
  api?: string;
  cost?: RegistryCost;
  promptCache?: { short?: number; long?: number };
  compat?: unknown;
}

/** `dataDir`: pi-ai's bundled model data, found where pi-ai resolves (a clone, a global install, npx's folder). */
export function registryRows(provider: string, dataDir = piAiModelDataDir()): RegistryRow[] {
  const path = join(dataDir, `${provider.replace(/[^a-z0-9-]/gi, "")}.json`);
  try {
    if (!existsSync(path)) return [];
    const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, Record<string, RegistryRow>>;
    return Object.entries(data).flatMap(([api, byId]) => Object.values(byId).map((row) => ({ api, ...row })));
  } catch {
    return [];
  }
}

/**
 * Providers that serve another provider's models under the same ids (a subscription or a
 * cloud): when the provider's own data does not list the id, the sibling's price is the
 * model's list price.
 */
const SIBLINGS: Record<string, readonly string[]> = { "openai-codex": ["openai"], azure: ["openai"], "google-vertex": ["google"], "github-copilot": ["openai", "anthropic"] };

/** ref → cost model, registry prices first (same provider and id, the same API preferred; then a sibling provider). */
export function registryCostModels(dataDir = piAiModelDataDir()): (ref: ModelRef) => CostModel {
  const rows = new Map<string, RegistryRow[]>();
  const rowsOf = (provider: string): RegistryRow[] => {
    let list = rows.get(provider);
    if (!list) rows.set(provider, (list = registryRows(provider, dataDir)));
    return list;
  };
  return (ref) => {
    let row: RegistryRow | undefined;
    for (const provider of [ref.provider, ...(SIBLINGS[ref.provider] ?? [])]) {
      const same = rowsOf(provider).filter((r) => r.id === ref.model && r.cost && r.cost.input > 0);
      row = same.find((r) => r.api === ref.api) ?? same[0];
      if (row) break;
    }
    // The row's compat only for the very model (a sibling provider's row prices the id, nothing more).
    const own = row !== undefined && rowsOf(ref.provider).includes(row);
    return costModelFor({
      ref,
      ...(row?.cost ? { registryCost: row.cost } : {}),
      ...(row?.promptCache ? { promptCache: row.promptCache } : {}),
      ...(own && row?.compat ? { compat: row.compat } : {}),
    });
  };
}
