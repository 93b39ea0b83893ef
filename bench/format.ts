// How the bench's reports write figures: times, sizes, ratios, markdown tables.

const na = (value: number): boolean => !Number.isFinite(value);

export function fmtMs(value: number): string {
  if (na(value)) return 'n/a';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 10) return `${value.toFixed(0)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function fmtBytes(value: number): string {
  if (na(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 2 ** 20) return `${(value / 2 ** 20).toFixed(1)} MiB`;
  if (abs >= 2 ** 10) return `${(value / 2 ** 10).toFixed(1)} KiB`;
  return `${value.toFixed(0)} B`;
}

export function fmtNumber(value: number, digits = 0): string {
  return na(value) ? 'n/a' : value.toFixed(digits);
}

export function fmtRatio(value: number): string {
  return na(value) ? 'n/a' : `${value.toFixed(2)}x`;
}

export function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}
