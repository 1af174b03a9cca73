/**
 * Protected tools and paths: calls that pruning never touches.
 *
 * Globs: `**` spans directories, `*` and `?` stay within one segment, `{a,b}` alternates.
 * A glob without `/` is also tried against a path's last segment. Paths are compared with
 * a leading `./` removed.
 */
import type { PruneConfig } from "./config.ts";

const PATH_ARGUMENT_NAMES = ["path", "file_path"];

export function globToRegExp(glob: string): RegExp {
  let re = "";
  let inBraces = 0;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "*") {
      if (glob[i + 1] === "*") {
        // `**/` matches zero or more whole directories; a bare `**` matches anything.
        if (glob[i + 2] === "/") {
          re += "(?:.*/)?";
          i += 2;
        } else {
          re += ".*";
          i += 1;
        }
      } else {
        re += "[^/]*";
      }
    } else if (ch === "?") re += "[^/]";
    else if (ch === "{") {
      inBraces++;
      re += "(?:";
    } else if (ch === "}" && inBraces > 0) {
      inBraces--;
      re += ")";
    } else if (ch === "," && inBraces > 0) re += "|";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

function normalizePath(p: string): string {
  return p.startsWith("./") ? p.slice(2) : p;
}

/** Tokens of a shell command that look like paths (contain `/` or a `.` that is not the whole token). */
export function pathsInCommand(command: string): string[] {
  return command
    .split(/[\s;|&<>()`]+/)
    .map((t) => t.replace(/^['"]+|['"]+$/g, ""))
    .filter((t) => t.length > 0 && !t.startsWith("-") && (t.includes("/") || /\.[^.]/.test(t)));
}

/** Path-like values in a call's arguments: `path`, `file_path`, and tokens of a bash `command`. */
export function pathsInArguments(toolName: string, args: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const name of PATH_ARGUMENT_NAMES) {
    const v = args[name];
    if (typeof v === "string" && v.length > 0) out.push(v);
  }
  if (toolName === "bash" && typeof args.command === "string") out.push(...pathsInCommand(args.command));
  return out;
}

export interface ProtectionMatcher {
  isProtected(toolName: string, args: Record<string, unknown>): boolean;
}

export function protectionMatcher(config: Pick<PruneConfig, "protectedTools" | "protectedPaths">): ProtectionMatcher {
  const tools = new Set(config.protectedTools);
  const globs = config.protectedPaths.map((g) => ({ re: globToRegExp(normalizePath(g)), bare: !g.includes("/") }));
  const pathProtected = (p: string): boolean => {
    const path = normalizePath(p);
    const base = path.slice(path.lastIndexOf("/") + 1);
    return globs.some((g) => g.re.test(path) || (g.bare && g.re.test(base)));
  };
  return {
    isProtected(toolName, args) {
      if (tools.has(toolName)) return true;
      if (globs.length === 0) return false;
      return pathsInArguments(toolName, args).some(pathProtected);
    },
  };
}
