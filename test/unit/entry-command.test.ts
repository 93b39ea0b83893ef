import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeFlagsOfCmd } from '../../bench/entry-command.js';

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
});
