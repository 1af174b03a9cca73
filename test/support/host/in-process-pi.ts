/**
 * Pi in-process for host tests: a resource loader with the given extension factories (no
 * skills, prompts, themes or context files), a faux model, an in-memory session unless one is
 * given, and in-memory settings.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxProvider } from "@earendil-works/pi-ai";
import { createAgentSession, DefaultResourceLoader, type ExtensionFactory, SessionManager, SettingsManager } from "@earendil-works/pi-coding-agent";

export interface InProcessPiOptions {
  factories: ExtensionFactory[];
  /** Default: a new in-memory session in a temporary folder. */
  sessionManager?: SessionManager;
  settings?: Parameters<typeof SettingsManager.inMemory>[0];
  /** The faux model's id and window (default `faux-in-process`, 100k). */
  model?: { id?: string; contextWindow?: number };
}

export async function inProcessPi(options: InProcessPiOptions) {
  const dir = mkdtempSync(join(tmpdir(), "ck-in-process-"));
  const resourceLoader = new DefaultResourceLoader({
    cwd: dir,
    agentDir: dir,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
    extensionFactories: options.factories,
  });
  await resourceLoader.reload();
  const faux = fauxProvider({ models: [{ id: options.model?.id ?? "faux-in-process", contextWindow: options.model?.contextWindow ?? 100_000 }] });
  const { session, extensionsResult } = await createAgentSession({
    cwd: dir,
    agentDir: dir,
    model: faux.getModel(),
    sessionManager: options.sessionManager ?? SessionManager.inMemory(dir),
    resourceLoader,
    settingsManager: SettingsManager.inMemory(options.settings ?? {}),
  });
  return { session, extensionsResult, resourceLoader, dir };
}
