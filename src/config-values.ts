// Parsers for the value syntaxes the configuration accepts (durations, byte sizes).

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** `500ms`, `10s`, `5m`, `1h`, `90d` (or a sum such as `1h30m`) to milliseconds; `0` alone is allowed. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (value === '0') return 0;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const match of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  K: 1000,
  M: 1000 ** 2,
  G: 1000 ** 3,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};

/** Kubernetes quantity style sizes: `1048576`, `512Ki`, `3Mi`, `1M`. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * (SIZE_UNITS[match[2] ?? ''] ?? NaN);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
