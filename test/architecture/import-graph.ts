/**
 * The project's import graph, read from the source: every static `import` (type-only ones
 * too), `export … from`, and `import("…")` with a literal. TypeScript's own pre-processor
 * finds them, so imports in comments or strings do not count. Paths are relative to the
 * project root, with `/` separators.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

export const ROOT = resolve(import.meta.dirname, "../..");

export interface ImportEdge {
  from: string;
  /** The specifier as written. */
  specifier: string;
  /** The project file it names; undefined for packages and node: modules. */
  to: string | undefined;
}

const toPosix = (path: string) => path.split(sep).join("/");

function tsFiles(folder: string): string[] {
  const absolute = join(ROOT, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .map((name) => toPosix(join(folder, name)))
    .sort();
}

/** `./x.js` names x.ts in the source (NodeNext style); other extensions name themselves. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = join(dirname(join(ROOT, from)), specifier);
  const candidates = [target.replace(/\.js$/, ".ts"), target, join(target, "index.ts")];
  const found = candidates.find((candidate) => existsSync(candidate)) ?? target;
  return toPosix(relative(ROOT, found));
}

/** Every import of every .ts file under the given folders. */
export function readImports(folders: readonly string[]): ImportEdge[] {
  return folders.flatMap(tsFiles).flatMap((from) =>
    ts
      .preProcessFile(readFileSync(join(ROOT, from), "utf8"), true, true)
      .importedFiles.map(({ fileName: specifier }) => ({
        from,
        specifier,
        to: resolveSpecifier(from, specifier),
      })),
  );
}

/**
 * Every import cycle, one per strongly connected component (Tarjan), each given as the
 * shortest path round one of its files: `[a, b, a]`. A file importing itself is a cycle.
 */
export function findCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (to === undefined) continue;
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)?.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next.get(node)?.has(node)) components.push(component.sort());
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => shortestCycle(component, next));
}

/** Breadth-first from the component's first file back to itself, inside the component. */
function shortestCycle(component: string[], next: Map<string, Set<string>>): string[] {
  const start = component[0] ?? "";
  const inside = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() ?? start;
    for (const target of next.get(node) ?? []) {
      if (!inside.has(target)) continue;
      if (target === start) {
        const path = [node];
        for (let at = cameFrom.get(node); at !== undefined; at = cameFrom.get(at)) path.unshift(at);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...component, start];
}
