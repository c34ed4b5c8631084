// The structure of src/, read from its imports (type-only ones included, as madge counts them):
// no import cycle anywhere; the plain code never imports the speed room (src/fast/), which only
// the entry point names; no runtime import between the store and tracing in either direction
// (the composition root, src/server.ts, hands the store a traced driver).
//
// Read with the TypeScript compiler's own parser rather than madge: madge 8 asks for TypeScript
// below 6 as a peer, which this project's TypeScript 6 refuses to install beside.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Import {
  from: string;
  to: string;
  /** Erased at compile time: `import type`, `export type … from`, or every name imported as a type. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${dir}/${entry.name}`] : [],
  );
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts` (or `…/x/index.ts`); undefined for a package or a node: module. */
function resolveSpecifier(from: string, specifier: string, files: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = relative(ROOT, resolve(ROOT, dirname(from), specifier)).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}/index.ts`].find((candidate) => files.has(candidate));
}

function importsOf(file: string, files: Set<string>): Import[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: ts.Node | undefined, typeOnly: boolean) => {
    if (specifier === undefined || !ts.isStringLiteralLike(specifier)) return;
    const to = resolveSpecifier(file, specifier.text, files);
    if (to !== undefined) found.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const everyNameATypeOnly =
        clause?.name === undefined && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
      add(node.moduleSpecifier, clause?.isTypeOnly === true || everyNameATypeOnly);
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The import cycles: each strongly connected group of more than one file, or a file importing itself (Tarjan). */
function cycles(files: string[], imports: Import[]): string[][] {
  const next = new Map(files.map((file) => [file, imports.filter((edge) => edge.from === file).map((edge) => edge.to)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || next.get(file)?.includes(file)) groups.push(group.sort());
  };
  for (const file of files) if (!index.has(file)) connect(file);
  return groups;
}

const FILES = sourceFiles('src');
const IMPORTS = FILES.flatMap((file) => importsOf(file, new Set(FILES)));
const describeImport = ({ from, to, typeOnly }: Import) => `${from} -> ${to}${typeOnly ? ' (type)' : ''}`;
const inRoom = (file: string) => file.startsWith('src/fast/');

describe('the structure of src/', () => {
  it('the imports were read', () => {
    expect(IMPORTS.some((edge) => edge.from === 'src/app.ts' && edge.to === 'src/server.ts')).toBe(false);
    expect(IMPORTS.some((edge) => edge.from === 'src/server.ts' && edge.to === 'src/app.ts')).toBe(true);
    expect(IMPORTS.some((edge) => edge.from === 'src/main.ts' && edge.to === 'src/fast/index.ts')).toBe(true);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(cycles(FILES, IMPORTS)).toEqual([]);
  });

  it('the plain code imports nothing of the speed room (src/fast/): only the entry point names it', () => {
    const intoRoom = IMPORTS.filter((edge) => inRoom(edge.to) && !inRoom(edge.from) && edge.from !== 'src/main.ts');
    expect(intoRoom.map(describeImport)).toEqual([]);
  });

  it('the store and tracing do not import each other at run time', () => {
    const between = IMPORTS.filter(
      (edge) =>
        !edge.typeOnly &&
        ((edge.from.startsWith('src/store/') && edge.to.startsWith('src/tracing/')) || (edge.from.startsWith('src/tracing/') && edge.to.startsWith('src/store/'))),
    );
    expect(between.map(describeImport)).toEqual([]);
  });
});
