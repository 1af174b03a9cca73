import { describe, expect, test } from "bun:test";
import { globToRegExp, pathsInArguments, protectionMatcher } from "./protection.ts";

describe("globs", () => {
  test("** spans directories, * and ? stay in one segment, braces alternate", () => {
    expect(globToRegExp("src/**/*.ts").test("src/a/b/c.ts")).toBe(true);
    expect(globToRegExp("src/**/*.ts").test("src/c.ts")).toBe(true);
    expect(globToRegExp("src/*.ts").test("src/a/c.ts")).toBe(false);
    expect(globToRegExp("a?.md").test("ab.md")).toBe(true);
    expect(globToRegExp("a?.md").test("a/.md")).toBe(false);
    expect(globToRegExp("*.{env,pem}").test("x.pem")).toBe(true);
    expect(globToRegExp("*.{env,pem}").test("x.txt")).toBe(false);
    expect(globToRegExp("a.b").test("axb")).toBe(false);
  });
});

describe("path-like arguments", () => {
  test("path, file_path and path tokens of bash commands", () => {
    expect(pathsInArguments("read", { path: "a/b.ts", other: "x/y" })).toEqual(["a/b.ts"]);
    expect(pathsInArguments("edit", { file_path: "c.md" })).toEqual(["c.md"]);
    expect(pathsInArguments("bash", { command: "cat 'secrets/.env' | grep -v x && ls -la src/" })).toEqual(["secrets/.env", "src/"]);
    expect(pathsInArguments("grep", { command: "cat .env" })).toEqual([]);
  });
});

describe("protectionMatcher", () => {
  const m = protectionMatcher({ protectedTools: ["todo"], protectedPaths: [".env", "docs/**", "./keep/*.md"] });
  test("protected tool names", () => {
    expect(m.isProtected("todo", {})).toBe(true);
    expect(m.isProtected("read", { path: "src/a.ts" })).toBe(false);
  });
  test("bare globs also match the last segment; ./ is ignored", () => {
    expect(m.isProtected("read", { path: "config/.env" })).toBe(true);
    expect(m.isProtected("read", { path: "./docs/x/y.md" })).toBe(true);
    expect(m.isProtected("write", { file_path: "keep/a.md" })).toBe(true);
    expect(m.isProtected("write", { file_path: "keep/sub/a.md" })).toBe(false);
  });
  test("bash commands touching a protected path", () => {
    expect(m.isProtected("bash", { command: "cat config/.env" })).toBe(true);
    expect(m.isProtected("bash", { command: "ls src" })).toBe(false);
  });
});
