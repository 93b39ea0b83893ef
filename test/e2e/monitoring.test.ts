// The alerts and the dashboard: promtool checks the rules and runs their unit tests
// (test/monitoring/alerts.test.yaml); every series, metric and label they use is one the product's
// /metrics really has.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createMetrics } from '../../src/metrics.js';
import { run } from './support/tools.js';

const RULES = 'charts/resource-distributor/files/prometheus-rules.yaml';
const RULE_TESTS = 'test/monitoring/alerts.test.yaml';
const DASHBOARD = 'webhook-config/monitoring/dashboard.json';
/** Labels Prometheus adds to what it scrapes; everything else must come from /metrics. */
const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod', 'service', 'endpoint', 'container']);

/** Every series name of the product's /metrics with its label names (histograms as Prometheus stores them). */
function exposedSeries(): Map<string, string[]> {
  const { registry } = createMetrics({ defaultMetrics: true });
  const series = new Map<string, string[]>();
  for (const metric of registry.getMetricsAsArray() as unknown as { name: string; labelNames?: string[]; constructor: { name: string } }[]) {
    const labels = [...(metric.labelNames ?? [])].sort();
    if (metric.constructor.name === 'Histogram') {
      series.set(`${metric.name}_bucket`, [...labels, 'le'].sort());
      series.set(`${metric.name}_sum`, labels);
      series.set(`${metric.name}_count`, labels);
    } else {
      series.set(metric.name, labels);
    }
  }
  return series;
}

const METRIC_NAME = /\bresource_distributor_[a-z_]+\b/g;

interface RuleTests {
  rule_files: string[];
  tests: { input_series: { series: string }[]; alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}
interface Rules {
  groups: { rules: { alert: string; expr: string }[] }[];
}

describe('alerts (promtool)', () => {
  it('are valid rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', RULES]);
    expect(stdout).toContain('SUCCESS: 6 rules found');
  });

  it('pass their unit tests', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', RULE_TESTS]);
    expect(stdout).toContain('SUCCESS');
  });

  it('are each tested firing and not firing', async () => {
    const rules = parse(await readFile(RULES, 'utf8')) as Rules;
    const tests = parse(await readFile(RULE_TESTS, 'utf8')) as RuleTests;
    const alerts = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    const cases = tests.tests.flatMap((test) => test.alert_rule_test);
    for (const alert of alerts) {
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0), `${alert} firing`).toBe(true);
      expect(cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0), `${alert} quiet`).toBe(true);
    }
  });

  it('are tested on series shaped like the product’s /metrics', async () => {
    const exposed = exposedSeries();
    const tests = parse(await readFile(RULE_TESTS, 'utf8')) as RuleTests;
    for (const { series } of tests.tests.flatMap((test) => test.input_series)) {
      const match = /^([a-z_:]+)\{(.*)\}$/.exec(series);
      expect(match, series).not.toBeNull();
      const [, name = '', labels = ''] = match ?? [];
      const own = [...labels.matchAll(/([a-zA-Z_]+)="/g)].map((m) => m[1] ?? '').filter((label) => !TARGET_LABELS.has(label)).sort();
      expect(exposed.has(name), `${name} is not a series of /metrics`).toBe(true);
      expect(own, series).toEqual(exposed.get(name));
    }
  });

  it('use only metrics the product exposes', async () => {
    const exposed = exposedSeries();
    const rules = parse(await readFile(RULES, 'utf8')) as Rules;
    const used = rules.groups.flatMap((group) => group.rules.flatMap((rule) => rule.expr.match(METRIC_NAME) ?? []));
    expect(used.filter((name) => !exposed.has(name))).toEqual([]);
  });
});

describe('the Grafana dashboard', () => {
  interface Panel {
    title: string;
    datasource: { uid: string };
    targets: { expr: string }[];
  }
  it('queries only metrics the product exposes, through the data source variable', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
    expect(dashboard.uid).toBe('resource-distributor');
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource' }));
    const exposed = exposedSeries();
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid, panel.title).toBe('${datasource}');
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      const used = panel.targets.flatMap((target) => target.expr.match(METRIC_NAME) ?? []);
      expect(used.filter((name) => !exposed.has(name)), panel.title).toEqual([]);
    }
  });
});
