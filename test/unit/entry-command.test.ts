import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { imageRuntimeOf, nodeFlagsOfCmd } from '../../bench/entry-command.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the entry command', () => {
  it.each([
    ['CMD ["node", "dist/main.js"]', []],
    ['CMD ["node", "--max-semi-space-size=1", "dist/main.js"]', ['--max-semi-space-size=1']],
  ])('reads the Node.js flags of %s', (cmd, flags) => {
    expect(nodeFlagsOfCmd(`FROM x\n${cmd}\n`)).toEqual(flags);
  });

  it.each(['CMD node dist/main.js', 'CMD ["npm", "start"]', 'FROM x'])('refuses %s', (text) => {
    expect(() => nodeFlagsOfCmd(text)).toThrow();
  });

  it('is the same for `npm start` as for the image', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe(['node', ...nodeFlagsOfCmd(read('Dockerfile')), 'dist/main.js'].join(' '));
  });

  it('reads how the final stage starts the process: flags, environment, user', () => {
    expect(imageRuntimeOf(read('Dockerfile'))).toEqual({ nodeFlags: ['--max-semi-space-size=8', '--compact-on-every-full-gc'], env: { NODE_ENV: 'production' }, user: { uid: 1000, gid: 1000 } });
  });

  it('builds the image contents with the commands of the Dockerfile (scripts/image-contents.sh)', () => {
    const dockerfile = read('Dockerfile');
    const script = read('scripts/image-contents.sh');
    const npmCommands = [...dockerfile.matchAll(/^RUN (npm .+)$/gm)].map((m) => m[1] ?? '').filter((command) => command !== 'npm ci --no-audit --no-fund');
    expect(npmCommands).toEqual(['npm run build', 'npm ci --omit=dev --ignore-scripts --no-audit --no-fund']);
    expect(script).toContain('npm run --silent build');
    expect(script).toContain('npm ci --omit=dev --ignore-scripts --no-audit --no-fund');
    // What the runtime stage copies, and the script too.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const copied = [...runtime.matchAll(/^COPY (?:--from=\S+ )?(\S+) \.\/(\S*)$/gm)].map((m) => m[2] || m[1]).sort();
    expect(copied).toEqual(['dist', 'node_modules', 'package.json', 'webhook-config/crd']);
    const scriptCopies = [...script.matchAll(/^cp (?:-r )?(?:\S+ )*"\$dir\/(\S*)"$/gm)].map((m) => m[1] || 'package.json').sort();
    expect(scriptCopies).toEqual(copied);
  });
});
