// npm run soak -- --minutes N --seed S [--replicas pods|processes] [--out DIR]

/** How the two replicas run: pods on a node of the soak's own (root only), or local processes. */
export type ReplicaMode = 'pods' | 'processes';

export interface SoakArgs {
  minutes: number;
  seed: number;
  replicas: ReplicaMode;
  /** Where the markdown report goes; default bench/results/. */
  outDir?: string;
}

export class UsageError extends Error {}

const USAGE = 'usage: npm run soak -- --minutes N --seed S [--replicas pods|processes] [--out DIR]';

function positive(flag: string, text: string | undefined, integer: boolean): number {
  const value = Number(text);
  if (text === undefined || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${flag} needs a positive ${integer ? 'integer' : 'number'}, got ${String(text)}`);
  }
  return value;
}

/** A node (kubelet, container runtime, namespaces, cgroups) needs root: pods then, processes otherwise. */
export function defaultReplicaMode(uid: number | undefined): ReplicaMode {
  return uid === 0 ? 'pods' : 'processes';
}

function replicaMode(text: string | undefined, uid: number | undefined): ReplicaMode {
  if (text !== 'pods' && text !== 'processes') throw new UsageError(`--replicas is pods or processes, got ${String(text)}`);
  if (text === 'pods' && uid !== 0) throw new UsageError('--replicas pods needs root (the soak starts a node: a kubelet and a container runtime)');
  return text;
}

export function parseSoakArgs(argv: readonly string[], uid: number | undefined = process.getuid?.()): SoakArgs {
  const args: SoakArgs = { minutes: 2, seed: 1, replicas: defaultReplicaMode(uid) };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, text] = [argv[i], argv[i + 1]];
    if (flag === '--minutes') args.minutes = positive(flag, text, false);
    else if (flag === '--seed') args.seed = positive(flag, text, true);
    else if (flag === '--replicas') args.replicas = replicaMode(text, uid);
    else if (flag === '--out' && text !== undefined) args.outDir = text;
    else throw new UsageError(`unknown argument ${String(flag)}; ${USAGE}`);
  }
  return args;
}
