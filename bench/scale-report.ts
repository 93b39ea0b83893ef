// The scale section's table (see scale.ts).
import { fmtBytes, fmtMs, table } from './format.js';
import { describeWork, type ScaleResult } from './scale.js';
import type { Summary } from './stats.js';

export type { ScaleResult };

const thousands = (value: number): string => value.toLocaleString('en-US');
const p50p99 = (summary: Summary): string => `p50 ${fmtMs(summary.p50)}, p99 ${fmtMs(summary.p99)}, max ${fmtMs(summary.max)} (${summary.count})`;
const withCall = (r: ScaleResult['newNamespaceByClient']): string =>
  `${p50p99(r.copies)}; the first of them: p50 ${fmtMs(r.firstCopy.p50)}, p99 ${fmtMs(r.firstCopy.p99)}; the namespace create call itself: p50 ${fmtMs(r.createCall.p50)}, p99 ${fmtMs(r.createCall.p99)}`;
/** Whether the product answered each namespace's webhook call and generated it, and what held its event loop meanwhile. */
const withWork = (r: ScaleResult['newNamespaceAtRest']): string => `${withCall(r)}. The product meanwhile: ${describeWork(r.product)}`;

export function renderScale(r: ScaleResult): string {
  const requests = Object.entries(r.restart.requests)
    .map(([request, count]) => `${request}: ${count}`)
    .join(', ');
  return [
    '## Scale',
    '',
    `${thousands(r.namespaces)} namespaces (created in ${fmtMs(r.setupMs)}), ${r.distributions - 1} ConfigMap distributions and one Secret distribution selecting them all: ` +
      `${thousands(r.copies)} copies. Every figure from the product as users run it (node dist/main.js), against this machine's control plane; ` +
      'copies seen through watches as a user would, statuses read through the API server.',
    '',
    table(
      ['what', 'measured'],
      [
        ['fan-out: 11 distributions created → every status reports every namespace succeeded', `${fmtMs(r.fanOutMs)} (${thousands(r.fanOutWrites)} API writes)`],
        [`template update: one ConfigMap distribution → its ${thousands(r.namespaces)} copies carry the new hash`, `${fmtMs(r.updateMs)} (${thousands(r.updateWrites)} API writes)`],
        ['a new namespace → its 11 copies, at rest (namespace create response → last copy seen)', withWork(r.newNamespaceAtRest)],
        [
          'baseline: a namespace outside the distributions, then the same 11 objects created by a client-go loop as soon as its create call answers (create response → last object seen)',
          withCall(r.newNamespaceByClient),
        ],
        [
          `the same while every template changes at once (${thousands(r.copies)} rewrites; template changes the distribution webhook did not answer in time, applied again: ${r.stormRefusals})`,
          withWork(r.newNamespaceDuringUpdates),
        ],
        [
          'the product after a full GC: RSS / heap used / heap per copy',
          `${fmtBytes(r.memory.rss)} / ${fmtBytes(r.memory.heapUsed)} / ${fmtBytes(r.memory.heapPerCopy)} (idle heap ${fmtBytes(r.memory.idleHeapUsed)}; heap committed ${fmtBytes(r.memory.heapTotal)}, external ${fmtBytes(r.memory.external)})`,
        ],
        ['kube-apiserver / etcd RSS at that point', `${fmtBytes(r.servers.apiserverRss)} / ${fmtBytes(r.servers.etcdRss)}`],
        [`${r.sweep.seconds} s with nothing changing (full sweeps)`, `${r.sweep.reconciles} reconciles, ${fmtMs(r.sweep.cpuMs)} CPU, ${r.sweep.writes} writes, ${r.sweep.reads} reads`],
        ['restart (kill -9, then a new process): until /readyz (namespaces, distributions and ObjectSyncs listed; the copies follow)', fmtMs(r.restart.readyMs)],
        ['restart: until every copy is listed and the first full pass is done', `${fmtMs(r.restart.firstPassMs)}, ${r.restart.writes} writes, peak RSS ${fmtBytes(r.restart.peakRss)}`],
      ],
    ),
    '',
    `The restarted process's requests until then: ${requests || 'none'}.`,
  ].join('\n');
}
