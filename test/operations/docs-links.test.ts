// The documentation stays true to the repository: every relative link in README.md, docs/*.md
// and the READMEs under deploy/ names a file that exists (and a heading that exists, when it names one), and docs/layout.md
// lists exactly the files under src/, web/, test/, scripts/, bench/ and deploy/, no more, no fewer.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCS = [
  'README.md',
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

/** Every file docs/layout.md names: a table row's first cell under a heading that names its folder. */
function filesInLayout(): string[] {
  const files: string[] = [];
  let folder: string | undefined;
  for (const line of readFileSync(join(ROOT, 'docs/layout.md'), 'utf8').split('\n')) {
    const heading = /^#{2,3} `([^`]+\/)`$/.exec(line);
    if (heading) folder = heading[1];
    else if (/^#{2,3} /.test(line)) folder = undefined;
    const row = /^\| `([^`]+)` \|/.exec(line);
    if (row && folder !== undefined) files.push(`${folder}${row[1]}`);
  }
  return files;
}

describe('documentation', () => {
  it.each(DOCS)('%s: every relative link resolves, anchors included', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('docs/layout.md lists every file under src/, web/, test/, scripts/, bench/ and deploy/, and nothing else', () => {
    const listed = filesInLayout();
    const present = LAID_OUT.flatMap(filesUnder);
    expect(present.filter((file) => !listed.includes(file)), 'files missing from docs/layout.md').toEqual([]);
    expect(listed.filter((file) => !present.includes(file)), 'docs/layout.md names files that do not exist').toEqual([]);
  });
});
