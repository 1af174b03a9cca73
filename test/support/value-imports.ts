/**
 * Import rules as tests (src/host/runtime-imports.test.ts, src/engine/entry-point.test.ts):
 * the module specifiers a source file imports or re-exports as values (type-only imports
 * left out), and the TypeScript files under a folder.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** Specifiers matching `matches` that this source imports, re-exports or dynamically imports as values. */
export function valueImports(fileName: string, text: string, matches: (specifier: string) => boolean): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && matches(node.moduleSpecifier.text)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && matches(node.moduleSpecifier.text)) {
      const typeOnly = node.isTypeOnly || (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteral(arg) && matches(arg.text)) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** `.ts` files under `dir` (recursively); test files only with `tests`. */
export function sourceFiles(dir: string, options: { tests?: boolean } = {}): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") out.push(...sourceFiles(path, options));
    } else if (entry.name.endsWith(".ts") && (options.tests || !entry.name.endsWith(".test.ts"))) out.push(path);
  }
  return out;
}
