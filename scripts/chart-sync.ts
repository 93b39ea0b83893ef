// Writes the chart's copies of what webhook-config/ holds (its one source): the CRD templates (the
// same objects, with the chart's labels, the `crds.install` switch and Helm's keep policy), and
// the alerting rules and the Grafana dashboard of the monitoring component. The chart tests render
// the chart and `kubectl kustomize` and fail on any difference: run `npm run chart:sync` after
// editing either.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHART = join(ROOT, 'charts/resource-distributor');

/** The Service of spec.conversion, as webhook-config/ names it (the chart's is the release's). */
const CONVERSION_SERVICE = /^( {8}service:\n {10})name: resource-distributor-conversion\n {10}namespace: resource-distributor\n/m;
const METADATA = /^metadata:\n {2}name: (\S+)\n {2}labels:\n {4}app\.kubernetes\.io\/name: resource-distributor\n/m;

/** The storage flags of a CRD serving v1alpha1 and then v1beta1 (which webhook-config/ stores). */
const STORED_VERSIONS = /^( {4}- name: v1alpha1\n {6}served: true\n {6}storage: )false\n([\s\S]*?^ {4}- name: v1beta1\n {6}served: true\n {6}storage: )true\n/m;

/**
 * Helm installing or upgrading over a CRD of `name` that stores v1alpha1 (a release before
 * v1beta1 was served, OpenKruise v1.9) keeps it stored so: writing a v1alpha1 request in v1beta1
 * needs a conversion, and until a pod of this release is up none is served. The pods then make
 * v1beta1 the storage version (src/k8s/crd-conversion.ts); elsewhere (helm template, a new
 * install) the template stores v1beta1 as webhook-config/ does.
 */
function keptStorage(name: string): string {
  return [
    '{{- /* Stores v1alpha1 while the CRD in place does: the pods switch to v1beta1 once they convert (docs/operations/upgrade.md). */}}',
    `{{- $inPlace := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "${name}" }}`,
    '{{- $keepsV1alpha1 := false }}',
    '{{- range (dig "spec" "versions" list $inPlace) }}',
    '{{- if and (eq .name "v1alpha1") .storage }}{{ $keepsV1alpha1 = true }}{{ end }}',
    '{{- end }}',
    '',
  ].join('\n');
}

/** A CRD of webhook-config/crd/ as a chart template. */
export function crdTemplate(file: string, text: string): string {
  // The text goes into a template verbatim: anything Helm would read as template syntax is refused.
  if (text.includes('{{')) throw new Error(`${file}: contains "{{", which Helm would read as a template`);
  const match = METADATA.exec(text);
  if (match === null) throw new Error(`${file}: expected metadata to hold only name and the label app.kubernetes.io/name: resource-distributor`);
  const metadata = [
    'metadata:',
    `  name: ${match[1]}`,
    '  labels:',
    '    {{- include "resource-distributor.labels" . | nindent 4 }}',
    '  annotations:',
    '    # Kept on uninstall and on crds.install=false: deleting a CRD deletes every object of it,',
    '    # and the garbage collector then deletes the copies they own.',
    '    helm.sh/resource-policy: keep',
    '',
  ].join('\n');
  const service = '$1name: {{ include "resource-distributor.fullname" . }}-conversion\n          namespace: {{ .Release.Namespace }}\n';
  let body = text.replace(METADATA, metadata).replace(CONVERSION_SERVICE, service);
  if (text.includes('\n  conversion:') && body.includes('namespace: resource-distributor\n')) throw new Error(`${file}: expected spec.conversion's service to be resource-distributor/resource-distributor-conversion`);
  let storage = '';
  if (text.includes('\n  conversion:')) {
    if (!STORED_VERSIONS.test(body)) throw new Error(`${file}: expected v1alpha1 (storage: false) and then v1beta1 (storage: true)`);
    body = body.replace(STORED_VERSIONS, '$1{{ $keepsV1alpha1 }}\n$2{{ not $keepsV1alpha1 }}\n');
    storage = keptStorage(match[1] ?? '');
  }
  return `# Generated from webhook-config/crd/${file} by \`npm run chart:sync\`: edit that file, not this one.\n{{- if .Values.crds.install }}\n${storage}${body}{{- end }}\n`;
}

/** The rule groups of the monitoring component's PrometheusRule, as a Prometheus rules file. */
export function ruleGroups(prometheusRule: string): string {
  const rule = parse(prometheusRule) as { kind?: string; spec?: { groups?: unknown } };
  if (rule.kind !== 'PrometheusRule' || !Array.isArray(rule.spec?.groups)) throw new Error('prometheus-rule.yaml: expected a PrometheusRule with spec.groups');
  return `# Generated from webhook-config/monitoring/prometheus-rule.yaml by \`npm run chart:sync\`.\n${stringify({ groups: rule.spec.groups }, { lineWidth: 0 })}`;
}

async function write(path: string, text: string): Promise<void> {
  await writeFile(join(CHART, path), text);
  console.log(`charts/resource-distributor/${path}`);
}

async function main(): Promise<void> {
  const crds = join(ROOT, 'webhook-config/crd');
  for (const file of (await readdir(crds)).filter((name) => name.endsWith('.yaml')).sort()) {
    await write(`templates/crds/${file}`, crdTemplate(file, await readFile(join(crds, file), 'utf8')));
  }
  const monitoring = join(ROOT, 'webhook-config/monitoring');
  await write('files/prometheus-rules.yaml', ruleGroups(await readFile(join(monitoring, 'prometheus-rule.yaml'), 'utf8')));
  await write('files/dashboard.json', await readFile(join(monitoring, 'dashboard.json'), 'utf8'));
}

await main();
