// No Secret or ConfigMap data in a log line or an Event (README: "Reading status"). The soak's
// values are long random strings, so a match is a leak, not a coincidence; each is looked for as
// written and base64-encoded, as the API carries Secret data.
import { violation, type Violation } from './violation.js';

export interface TextSource {
  /** A replica's log, an Event... */
  where: string;
  lines: readonly string[];
}

export function checkLeaks(values: readonly string[], sources: readonly TextSource[]): Violation[] {
  const needles = values.flatMap((value) => [value, Buffer.from(value).toString('base64')]);
  const violations: Violation[] = [];
  for (const source of sources) {
    for (const line of source.lines) {
      const found = needles.find((needle) => line.includes(needle));
      if (found !== undefined) violations.push(violation('data-leaked', source.where, `a distributed value appears: ${line.slice(0, 300)}`));
    }
  }
  return violations;
}
