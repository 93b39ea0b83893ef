// Every relative link and anchor of README.md and docs/ lands where it says, as GitHub resolves it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchors, brokenLink, githubSlug, links, type Repository } from '../../../scripts/docs/markdown-links.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const repository: Repository = {
  exists: (path) => existsSync(join(ROOT, path)),
  anchorsOf: (path) => (path.endsWith('.md') && statSync(join(ROOT, path)).isFile() ? anchors(readFileSync(join(ROOT, path), 'utf8')) : undefined),
};

describe('GitHub anchors', () => {
  it.each([
    ['Other kinds: `RD_ALLOWED_KINDS`', 'other-kinds-rd_allowed_kinds'],
    ["Who may do what: the author's rights", 'who-may-do-what-the-authors-rights'],
    ['Chaos soak: `npm run soak`', 'chaos-soak-npm-run-soak'],
    ["ObjectSync (k8s-object-syncer's API)", 'objectsync-k8s-object-syncers-api'],
    ['Scale (real)', 'scale-real'],
    ['Guarantees: copies before pods', 'guarantees-copies-before-pods'],
    ['A [linked](x.md) heading', 'a-linked-heading'],
    ['Copies — before pods', 'copies--before-pods'],
  ])('%s → #%s', (heading, slug) => {
    expect(githubSlug(heading)).toBe(slug);
  });

  it('numbers repeated headings, skips code blocks and comments, and takes explicit anchors', () => {
    const text = ['# Install', '## Helm', '```sh', '# not a heading', '```', '## Helm', '<!-- ## hidden -->', '<a id="kept"></a>'].join('\n');
    expect([...anchors(text)]).toEqual(['install', 'helm', 'helm-1', 'kept']);
  });
});

describe('links', () => {
  it('finds inline links, images and definitions, not those in code or comments', () => {
    const text = [
      'See [a](docs/a.md#x) and ![b](img.png "title").',
      '`[not](code.md)` and <!-- [not](comment.md) -->',
      '```',
      '[not](fenced.md)',
      '```',
      '[ref]: docs/ref.md',
      '[`code text`](bench/results/x.md)',
    ].join('\n');
    expect(links(text).map((link) => link.target)).toEqual(['docs/a.md#x', 'img.png', 'docs/ref.md', 'bench/results/x.md']);
  });

  const files: Record<string, string> = { 'README.md': '# Top\n## Install\n', 'docs/a.md': '# A\n## Part two\n', 'policies/p.yaml': '' };
  const fake: Repository = {
    exists: (path) => path in files || path === 'docs' || path === 'policies',
    anchorsOf: (path) => (path.endsWith('.md') ? anchors(files[path]!) : undefined),
  };
  it.each([
    ['README.md', 'docs/a.md#part-two', null],
    ['README.md', '#install', null],
    ['README.md', 'https://example.com/#nothing', null],
    ['docs/a.md', '../README.md#top', null],
    ['docs/a.md', '../policies/', null],
    ['docs/a.md', '#part-2', '#part-2: no heading in docs/a.md has the anchor #part-2'],
    ['docs/a.md', 'b.md', 'b.md: no file docs/b.md'],
    ['docs/a.md', '../policies/p.yaml#L1', '../policies/p.yaml#L1: policies/p.yaml is not a Markdown file, it has no anchors'],
    ['README.md', '../outside.md', '../outside.md: leaves the repository'],
  ])('%s → %s: %s', (file, target, problem) => {
    expect(brokenLink(fake, file, target)).toBe(problem);
  });
});

describe('the documentation', () => {
  const documents = ['README.md', ...markdownUnder('docs'), 'bench/results/history.md'];

  it('has a docs/ tree', () => {
    expect(documents.length).toBeGreaterThan(10);
  });

  it.each(documents)('%s: every relative link and anchor resolves', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken = links(text)
      .map((link) => ({ line: link.line, problem: brokenLink(repository, relative(ROOT, join(ROOT, file)), link.target) }))
      .filter((link) => link.problem !== null)
      .map((link) => `${file}:${link.line}: ${link.problem}`);
    expect(broken).toEqual([]);
  });
});
