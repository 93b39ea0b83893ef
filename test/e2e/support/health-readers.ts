// What the tools that judge health make of an object, asked of the tools themselves: kstatus (the
// status reader of Flux and kpt, our Go program over sigs.k8s.io/cli-utils) and Argo CD's health
// check (integrations/argocd/health.lua, run under Lua 5.1 as Argo CD's gopher-lua runs it).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { REPO_ROOT } from '../../control-plane/index.js';
import { run } from './tools.js';

export const ARGOCD_HEALTH_CHECK = join(REPO_ROOT, 'integrations/argocd/health.lua');

export interface Verdict {
  status: string;
  message: string;
}

/** kstatus's status (Current, InProgress, Failed, ...) and message for each object, in order. */
export async function kstatusOf(objects: readonly object[]): Promise<Verdict[]> {
  const { stdout } = await run('kstatus', [], { input: JSON.stringify(objects) });
  return (JSON.parse(stdout) as { status: string; message: string }[]).map(({ status, message }) => ({ status, message }));
}

function luaString(text: string): string {
  // Decimal escapes of three digits: a digit after one is never read as part of it.
  const escaped = [...text]
    .map((c) => {
      const code = c.charCodeAt(0);
      if (c === '\\' || c === '"') return `\\${c}`;
      return code < 0x20 || code === 0x7f ? `\\${String(code).padStart(3, '0')}` : c;
    })
    .join('');
  return `"${escaped}"`;
}

/** A JSON value as a Lua 5.1 table constructor: what Argo CD hands its health checks as `obj`. */
export function luaLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') return luaString(value);
  if (Array.isArray(value)) return `{${value.map(luaLiteral).join(', ')}}`;
  return `{${Object.entries(value as Record<string, unknown>).map(([key, field]) => `[${luaString(key)}] = ${luaLiteral(field)}`).join(', ')}}`;
}

/** Argo CD's health status (Healthy, Progressing, Degraded) and message for `object`. */
export async function argoCdHealthOf(object: object, script = ARGOCD_HEALTH_CHECK): Promise<Verdict> {
  const program = [
    `local check = assert(loadfile(${luaString(script)}))`,
    `obj = ${luaLiteral(object)}`,
    'local hs = check()',
    'io.write(tostring(hs.status), "\\n", tostring(hs.message or ""))',
  ].join('\n');
  const child = promisify(execFile)(inject('lua'), ['-'], { maxBuffer: 16 * 1024 * 1024 });
  child.child.stdin?.end(program);
  const { stdout } = await child;
  const [status = '', ...message] = stdout.split('\n');
  return { status, message: message.join('\n') };
}
