// The converter's output: the distributions as YAML documents, each under a comment naming what
// it replaces, and the findings as comments at the top, so that a file of it keeps them.
import { Document } from 'yaml';
import type { Conversion } from './convert.js';
import { formatFinding } from './findings.js';

export function formatConversion(conversion: Conversion): string {
  const header = conversion.findings.map((finding) => `# ${formatFinding(finding)}\n`).join('');
  const documents = conversion.distributions.map((distribution) => {
    const document = new Document(distribution.object);
    document.commentBefore = distribution.origins.map((origin) => ` replaces ${origin}`).join('\n');
    return document.toString({ lineWidth: 0 });
  });
  if (documents.length === 0) return `${header}# no distribution\n`;
  return header + documents.join('---\n');
}
