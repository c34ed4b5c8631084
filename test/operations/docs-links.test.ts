// The documentation stays true to the repository: every relative link in README.md, CHANGELOG.md,
// SECURITY.md, docs/*.md and the READMEs under deploy/ names a file that exists (and a heading
// that exists, when it names one), and docs/layout.md
// describes exactly the folders under src/, web/, test/, scripts/, bench/ and deploy/, no more, no fewer
// (a folder's job, not each file: each file says its own in its header).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCS = [
  'README.md',
  'CHANGELOG.md',
  'SECURITY.md',
  ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  ...filesUnder('deploy').filter((name) => name.endsWith('.md')),
];
const LAID_OUT = ['src', 'web', 'test', 'scripts', 'bench', 'deploy'];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const markdown = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading = ''] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const [, target = ''] of prose(readFileSync(join(ROOT, file), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:: outside the repository
    const [path = '', anchor] = target.split('#');
    const linked = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(path)));
    if (!existsSync(join(ROOT, linked))) broken.push(`${file}: ${target} (no file ${linked})`);
    else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) {
      broken.push(`${file}: ${target} (no heading #${anchor} in ${linked})`);
    }
  }
  return broken;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(`${dir}/${entry.name}`) : [`${dir}/${entry.name}`],
  );
}

/** `dir/` and every folder under it, each as `path/`. */
function foldersUnder(dir: string): string[] {
  return [
    `${dir}/`,
    ...readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? foldersUnder(`${dir}/${entry.name}`) : [])),
  ];
}

/** Every folder docs/layout.md describes: a heading that is a folder's path. */
function foldersInLayout(): string[] {
  return [...readFileSync(join(ROOT, 'docs/layout.md'), 'utf8').matchAll(/^#{2,3} `([^`]+\/)`$/gm)].map(([, folder]) => folder!);
}

describe('documentation', () => {
  it.each(DOCS)('%s: every relative link resolves, anchors included', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('docs/layout.md describes every folder under src/, web/, test/, scripts/, bench/ and deploy/, and nothing else', () => {
    const described = foldersInLayout();
    const present = LAID_OUT.flatMap(foldersUnder);
    expect(present.filter((folder) => !described.includes(folder)), 'folders missing from docs/layout.md').toEqual([]);
    expect(described.filter((folder) => !present.includes(folder)), 'docs/layout.md names folders that do not exist').toEqual([]);
  });
});
