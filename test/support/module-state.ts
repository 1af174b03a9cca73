/**
 * Module-level mutable state, found in a source file's text (src/host/module-state.test.ts):
 * a top-level `let` or `var`, or a top-level `const` the file mutates — a method that changes
 * a Map, Set, WeakMap or array (`set`, `add`, `push`, …), an assignment to one of its
 * properties or elements, a `delete` or `++` on one — or a top-level `new` of anything but a
 * value that is never changed in place (a RegExp, an error). Names are reported as
 * `name (why)`.
 */
import ts from "typescript";

const MUTATORS = new Set(["set", "add", "delete", "clear", "push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin"]);
/** Constructors whose instances are containers: flagged only when the file mutates them. */
const CONTAINERS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Array"]);
/** Constructors whose instances nothing changes in place. */
const INERT = new Set(["RegExp", "Error", "TypeError", "RangeError", "TextEncoder", "TextDecoder"]);

/** The identifier an expression like `a`, `a.b`, `a[0].c` is rooted at. */
function rootName(node: ts.Expression): string | undefined {
  let n: ts.Expression = node;
  while (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n) || ts.isParenthesizedExpression(n) || ts.isNonNullExpression(n)) n = n.expression;
  return ts.isIdentifier(n) ? n.text : undefined;
}

const isAssignment = (k: ts.SyntaxKind) => k >= ts.SyntaxKind.FirstAssignment && k <= ts.SyntaxKind.LastAssignment;

export function moduleLevelMutableState(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const consts = new Set<string>();
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      const name = ts.isIdentifier(d.name) ? d.name.text : d.name.getText(sf);
      if (!isConst) {
        found.push(`${name} (a module-level ${list.flags & ts.NodeFlags.Let ? "let" : "var"})`);
        continue;
      }
      consts.add(name);
      const init = d.initializer;
      if (init && ts.isNewExpression(init) && ts.isIdentifier(init.expression)) {
        const ctor = init.expression.text;
        if (!CONTAINERS.has(ctor) && !INERT.has(ctor)) found.push(`${name} (a module-level new ${ctor})`);
      }
    }
  }
  const mutated = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && MUTATORS.has(node.expression.name.text)) {
      const root = rootName(node.expression.expression);
      if (root && consts.has(root)) mutated.add(root);
    }
    if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind) && !ts.isIdentifier(node.left)) {
      const root = rootName(node.left);
      if (root && consts.has(root)) mutated.add(root);
    }
    if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken) && !ts.isIdentifier(node.operand)) {
      const root = rootName(node.operand);
      if (root && consts.has(root)) mutated.add(root);
    }
    if (ts.isDeleteExpression(node)) {
      const root = rootName(node.expression);
      if (root && consts.has(root)) mutated.add(root);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  // A local of the same name shadows the module's: counted anyway (rare, and worth a look).
  for (const name of mutated) found.push(`${name} (a module-level const changed in place)`);
  return found;
}
