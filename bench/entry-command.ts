// The command the image starts (the Dockerfile's CMD), so that the benchmark runs the product with
// the same Node.js flags its users get.
import { readFile } from 'node:fs/promises';

/** The Node.js flags between `node` and the script in the Dockerfile's exec-form CMD. */
export function nodeFlagsOfCmd(dockerfile: string): string[] {
  const line = dockerfile.split('\n').find((text) => text.startsWith('CMD '));
  if (line === undefined) throw new Error('the Dockerfile has no CMD');
  const command = JSON.parse(line.slice(4)) as unknown;
  if (!Array.isArray(command) || command[0] !== 'node' || command.at(-1) !== 'dist/main.js') {
    throw new Error(`the Dockerfile's CMD is not ["node", ...flags, "dist/main.js"]: ${line}`);
  }
  return command.slice(1, -1).map(String);
}

export async function imageNodeFlags(dockerfilePath: string): Promise<string[]> {
  return nodeFlagsOfCmd(await readFile(dockerfilePath, 'utf8'));
}
