// The fan-out section as markdown: ours, the best client-go loop and OpenKruise's kruise-manager
// side by side (first update after a start and warm rounds apart), then every loop shape.
import { fmtBytes, fmtMs, fmtNumber, table } from './format.js';
import { shapeName, type FanOutResult } from './fan-out.js';
import type { KruisePeer } from './kruise-peer.js';

const rounds = (values: readonly number[]): string => values.map(fmtMs).join(', ');
const ratio = (theirs: number, ours: number): string => fmtNumber(theirs / ours, 2);

function kruiseNote(peer: KruisePeer): string {
  if (peer.state !== 'measured') {
    if (peer.state === 'skipped') return `OpenKruise's kruise-manager: skipped in this run (${peer.reason}).`;
    return `OpenKruise's kruise-manager: FAILED in this run (${peer.reason}); its column is empty.`;
  }
  const { side } = peer;
  return (
    `OpenKruise's kruise-manager ${side.version}, built from its Go module, out of cluster with ${side.flags.map((flag) => `\`${flag}\``).join(' ')} and ResourceDistributionGate on ` +
    `(it has no flag selecting controllers: the others run idle), on a fresh control plane of its own (its CRD stores v1beta1 through its own conversion webhook), after ours, ` +
    `the same namespaces and distribution; created as often as ours, restarted right before each first update, as ours. ` +
    `Its creates: ${rounds(side.createRoundsMs)}; first updates: ${rounds(side.firstRoundsMs)}; update rounds: ${rounds(side.updateRoundsMs)}; warm-up ${rounds(side.warmUpRoundsMs)}.`
  );
}

export function renderFanOut(result: FanOutResult): string {
  const { product, baseline, bestLoop } = result;
  const kruise = result.kruise.state === 'measured' ? result.kruise.side : undefined;
  const k = (value: (side: NonNullable<typeof kruise>) => number, ours: number): [string, string] => (kruise === undefined ? ['—', '—'] : [fmtMs(value(kruise)), ratio(value(kruise), ours)]);
  const rssKruise = kruise === undefined ? ['—', '—'] : [fmtBytes(kruise.rssBytes), ratio(kruise.rssBytes, product.rssBytes)];
  return [
    '## 3. Fan-out',
    '',
    `One ConfigMap distribution over ${result.namespaces} namespaces: created ${times(result.createRounds)} (deleted in between, every copy gone; median); ` +
      `then ${times(result.firstRounds)} the product restarted (as users run it) and its template updated once, the first update after a start (cold process, cold connections; median); ` +
      `then ${plural(result.warmUpRounds, 'warm-up round')} (not counted) and ${plural(result.rounds, 'timed round')} (median). From the create or update request until every copy exists / shows the new content (watch). ` +
      `Best loop: the fastest of the client-go write loops below, figure by figure, each shape's median of as many rounds (HTTP/2, no client rate limit, authenticated with the product's ServiceAccount token), creating, then replacing, ` +
      `${result.namespaces} ConfigMaps of the same shape (data, label, annotations, the ownerReference to the distribution); each loop run is a new process whose clock starts after one request has opened its connection. ` +
      `Ratios: their time ÷ ours (above 1: we are faster; RSS: above 1, we use less).`,
    '',
    table(
      ['', 'ours', 'best client-go loop', 'Kruise', 'best loop ÷ ours', 'Kruise ÷ ours'],
      [
        [`create ${result.namespaces}`, fmtMs(product.createMs), fmtMs(bestLoop.createMs), ...interleave(k((s) => s.createMs, product.createMs), ratio(bestLoop.createMs, product.createMs))],
        [`first update after start`, fmtMs(product.firstUpdateMs), fmtMs(bestLoop.firstUpdateMs), ...interleave(k((s) => s.firstUpdateMs, product.firstUpdateMs), ratio(bestLoop.firstUpdateMs, product.firstUpdateMs))],
        [`update, warm (median)`, fmtMs(product.updateMs), fmtMs(bestLoop.updateMs), ...interleave(k((s) => s.updateMs, product.updateMs), ratio(bestLoop.updateMs, product.updateMs))],
        [`source changed, copies follow (median)`, fmtMs(result.source.updateMs), fmtMs(bestLoop.updateMs), '—', ratio(bestLoop.updateMs, result.source.updateMs), '—'],
        ['RSS after', fmtBytes(product.rssBytes), '—', rssKruise[0] ?? '—', '—', rssKruise[1] ?? '—'],
      ],
    ),
    '',
    kruiseNote(result.kruise),
    '',
    `Every loop shape, in the same run (${times(result.createRounds)} created, after the product's creates; ${plural(result.firstRounds, 'first update')} and ${plural(result.rounds, 'timed round')} each; ` +
      `the product's and the loops' update rounds alternate, and which goes first rotates; medians):`,
    '',
    table(
      ['client-go loop', 'protocol', 'create', 'first update', 'update (median)', 'connections per run'],
      result.loops.map((loop) => [shapeName(loop.shape), loop.protocol, fmtMs(loop.createMs), fmtMs(loop.firstUpdateMs), fmtMs(loop.updateMs), String(loop.connections)]),
    ),
    '',
    `Creates: product ${rounds(product.createRoundsMs)}; ${loopRounds(result, (loop) => loop.createRoundsMs)}. ` +
      `First updates after a start: product ${rounds(product.firstRoundsMs)}; ${loopRounds(result, (loop) => loop.firstRoundsMs)}. ` +
      `Update rounds: product ${rounds(product.updateRoundsMs)}; best loop (${shapeName(baseline.shape)}) ${rounds(baseline.updateRoundsMs)}. ` +
      `Warm-up rounds, not counted: product ${rounds(product.warmUpRoundsMs)}; best loop ${rounds(baseline.warmUpRoundsMs)}. ` +
      `Source changed: a distribution with \`spec.source\` over the same namespaces; the source ConfigMap is replaced and the time runs until every copy carries it (rounds ${rounds(result.source.updateRoundsMs)}).`,
    '',
    `Connections: the product (${plural(result.firstRounds + 1, 'process')}) opened ${product.connectionsOpened} TLS connections for ${product.requests} API requests in this section (applyParallelism ${result.applyParallelism}). ` +
      `Product writes per update: ${product.updateWrites}. ` +
      `A create: the distribution's own create request is answered ${fmtMs(product.createRequestMs)} after it is sent (its admission: the product's mutating and validating webhooks, the conversion to the stored version; median), ` +
      `its first copy shows ${fmtMs(product.createFirstCopyMs)} after it; the loop's clock starts at its first ConfigMap's request. ` +
      `The first copy shows the new content ${fmtMs(product.firstCopyMs)} after the update request (median; admission, the watch event and the first slice of the plan come before the first write), the best loop's first ConfigMap ${fmtMs(baseline.firstCopyMs)} after its first request.`,
    '',
    `CPU time over an update round (median; ${result.machineCores} cores, so a round of T seconds has ${result.machineCores}·T CPU-seconds to share): ` +
      `product's rounds: the product ${fmtMs(product.updateCpu.product)}, kube-apiserver ${fmtMs(product.updateCpu.apiserver)}, etcd ${fmtMs(product.updateCpu.etcd)}, the whole machine ${fmtMs(product.updateCpu.machine)}; ` +
      `the best loop's rounds: the loop ${fmtMs(baseline.loopCpuMs)}, kube-apiserver ${fmtMs(baseline.updateCpu.apiserver)}, etcd ${fmtMs(baseline.updateCpu.etcd)}, the product (idle) ${fmtMs(baseline.updateCpu.product)}, the whole machine ${fmtMs(baseline.updateCpu.machine)}.`,
  ].join('\n');
}

/** [Kruise's figure, its ratio] around the loop's ratio, in the table's column order. */
function interleave([kruiseValue, kruiseRatio]: [string, string], loopRatio: string): string[] {
  return [kruiseValue, loopRatio, kruiseRatio];
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : noun.endsWith('s') ? 'es' : 's'}`;
}

function times(count: number): string {
  return count === 1 ? 'once' : count === 2 ? 'twice' : `${count} times`;
}

/** Every loop shape's rounds of one figure, shape by shape. */
function loopRounds(result: FanOutResult, of: (loop: FanOutResult['loops'][number]) => readonly number[]): string {
  return result.loops.map((loop) => `${shapeName(loop.shape)} ${rounds(of(loop))}`).join('; ');
}
