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

export interface ImageRuntime {
  /** The Node.js flags of the CMD. */
  nodeFlags: string[];
  /** The final stage's ENV. */
  env: Record<string, string>;
  /** The final stage's USER, as uid and gid. */
  user: { uid: number; gid: number };
}

/** How the image's final stage starts the process: its CMD's flags, ENV and USER (`ENV K=V` and `USER uid:gid` forms). */
export function imageRuntimeOf(dockerfile: string): ImageRuntime {
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const [, name = '', value = ''] of finalStage.matchAll(/^ENV ([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/gm)) env[name] = value;
  const user = /^USER (\d+):(\d+)$/m.exec(finalStage);
  if (user === null) throw new Error('the final stage of the Dockerfile has no numeric USER uid:gid');
  return { nodeFlags: nodeFlagsOfCmd(finalStage), env, user: { uid: Number(user[1]), gid: Number(user[2]) } };
}

export async function imageRuntime(dockerfilePath: string): Promise<ImageRuntime> {
  return imageRuntimeOf(await readFile(dockerfilePath, 'utf8'));
}
