// npm run soak -- --minutes N --seed S [--out DIR]

export interface SoakArgs {
  minutes: number;
  seed: number;
  /** Where the markdown report goes; default bench/results/. */
  outDir?: string;
}

export class UsageError extends Error {}

function positive(flag: string, text: string | undefined, integer: boolean): number {
  const value = Number(text);
  if (text === undefined || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${flag} needs a positive ${integer ? 'integer' : 'number'}, got ${String(text)}`);
  }
  return value;
}

export function parseSoakArgs(argv: readonly string[]): SoakArgs {
  const args: SoakArgs = { minutes: 2, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, text] = [argv[i], argv[i + 1]];
    if (flag === '--minutes') args.minutes = positive(flag, text, false);
    else if (flag === '--seed') args.seed = positive(flag, text, true);
    else if (flag === '--out' && text !== undefined) args.outDir = text;
    else throw new UsageError(`unknown argument ${String(flag)}; usage: npm run soak -- --minutes N --seed S [--out DIR]`);
  }
  return args;
}
