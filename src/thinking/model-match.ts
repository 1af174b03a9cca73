/**
 * Matching a (provider, api, model id) triple against one row of the thinking policy table.
 * Rows are data; this is the only code that reads them.
 */

/** [major, minor]; a missing minor is 0 (`claude-sonnet-4-20250514` is 4.0). */
export type ModelVersion = readonly [number, number];

export interface ModelMatcher {
  /** Provider ids the row applies to; any provider when absent. */
  providers?: readonly string[];
  /** Pi API ids (the wire format) the row applies to; any API when absent. */
  apis?: readonly string[];
  /**
   * Tested against the lower-cased model id, unanchored (Bedrock and gateway ids carry
   * prefixes such as `us.anthropic.` or `anthropic/`). Named groups `major` and `minor`, when
   * present, give the version that `minVersion` / `maxVersion` are compared with.
   */
  model: RegExp;
  /** Inclusive lower bound on the parsed version. */
  minVersion?: ModelVersion;
  /** Inclusive upper bound on the parsed version. */
  maxVersion?: ModelVersion;
}

export interface ModelIdentity {
  provider: string;
  api: string;
  modelId: string;
}

function compareVersions(a: ModelVersion, b: ModelVersion): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

/** The version captured by the matcher's `major` / `minor` groups, if it has them. */
export function versionFromMatch(match: RegExpExecArray): ModelVersion | undefined {
  const major = match.groups?.major;
  if (major === undefined) return undefined;
  const minor = match.groups?.minor;
  return [Number(major), minor === undefined ? 0 : Number(minor)];
}

export function matchesModel(matcher: ModelMatcher, model: ModelIdentity): boolean {
  if (matcher.providers !== undefined && !matcher.providers.includes(model.provider)) return false;
  if (matcher.apis !== undefined && !matcher.apis.includes(model.api)) return false;
  const match = matcher.model.exec(model.modelId.toLowerCase());
  if (match === null) return false;
  if (matcher.minVersion === undefined && matcher.maxVersion === undefined) return true;
  const version = versionFromMatch(match);
  if (version === undefined) return false; // a ranged row needs a version to compare
  if (matcher.minVersion !== undefined && compareVersions(version, matcher.minVersion) < 0) return false;
  if (matcher.maxVersion !== undefined && compareVersions(version, matcher.maxVersion) > 0) return false;
  return true;
}
