// The Prometheus text format of the product's /metrics, reduced to what the bench reads.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples(name: string): Sample[];
  /** Sum of the samples of `name` whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Scrape {
  const byName = new Map<string, Sample[]>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const [, key = '', raw = ''] of labelText.matchAll(LABEL)) labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const list = byName.get(name) ?? [];
    list.push({ name, labels, value: Number(value) });
    byName.set(name, list);
  }
  return {
    samples: (name) => byName.get(name) ?? [],
    sum: (name, labels = {}) =>
      (byName.get(name) ?? [])
        .filter((sample) => Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
        .reduce((total, sample) => total + sample.value, 0),
  };
}
