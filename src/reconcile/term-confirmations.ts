// A replica that takes the lead may hold an older distribution (or source) than the copies it
// finds: the last leader wrote them from what its own watches had delivered, and this replica's
// watch of distributions can run behind its watch of copies (it passes through the conversion
// webhook, whose pods are the very ones replaced during an upgrade). A pass planned from the older
// version would put the previous data back into every copy until the watch catches up: a write
// per copy for nothing, and a moment when copies hold what was already replaced. So the first
// pass over each distribution in a term of leadership confirms, against the API server, that the
// cache holds the distribution and its source as they are now, before its first write; until it
// does, the pass writes nothing and is retried (the watch event that brings the newer version
// comes meanwhile). Creates need it as much as updates: a namespace the newer version no longer
// targets, whose copy the last leader deleted, would get it back. Later passes in the same term
// need no confirmation: every copy since was written from this cache, which only moves forward.
import type { KindRegistry } from '../domain/kinds.js';
import type { Resource, ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import type { DistributionCatalog } from './distribution-catalog.js';

export interface TermConfirmationsDeps {
  api: Pick<ClusterApi, 'listSource'>;
  kinds: Pick<KindRegistry, 'find'>;
  catalog: Pick<DistributionCatalog, 'current'>;
  log: Logger;
}

/** Thrown before a pass's first write while the cache is behind: the pass ends without writing and is retried. */
export class CacheBehind extends Error {
  constructor(name: string) {
    super(`distribution ${name}: the cache is behind the API server`);
  }
}

/** What a pass awaits before its first write (at once when its distribution was confirmed in this term). */
export interface Confirmation {
  /** Rejects with CacheBehind while the cache is behind, or with the error of the question. */
  check(): Promise<void>;
}

export class TermConfirmations {
  /** The term the answers below belong to (the queue's signal, a new one per term of leadership). */
  private term: AbortSignal | undefined;
  /**
   * Per distribution, the answer of this term, asked or still coming: one question however many
   * passes start meanwhile (the turns of a sliced pass). An answer that the cache is behind, or a
   * failed question, is dropped, so that the next pass asks again.
   */
  private answers = new Map<string, Promise<boolean>>();

  constructor(private readonly deps: TermConfirmationsDeps) {}

  /**
   * For a pass over `rd` (read with `source` from the caches) in the term `term` stands for. The
   * question goes out at once, while the pass reads and plans, and is awaited before its first
   * write only: a pass that writes nothing never waits for it.
   */
  begin(rd: ResourceDistribution, source: Resource | undefined, term: AbortSignal): Confirmation {
    if (term !== this.term) {
      this.term = term;
      this.answers = new Map();
    }
    const { name } = rd.metadata;
    const answer = this.answers.get(name) ?? this.ask(rd, source);
    return {
      check: async () => {
        if (!(await answer)) throw new CacheBehind(name);
      },
    };
  }

  /** Asks, and keeps the answer for this term unless it says the cache is behind or the question fails. */
  private ask(rd: ResourceDistribution, source: Resource | undefined): Promise<boolean> {
    const { name } = rd.metadata;
    const answers = this.answers;
    const asked = this.current(rd, source);
    answers.set(name, asked);
    const drop = (): void => {
      if (answers.get(name) === asked) answers.delete(name);
    };
    // Not awaited by a pass that writes nothing: its failure only drops the answer.
    asked.then((current) => current || drop(), drop);
    return asked;
  }

  forget(name: string): void {
    this.answers.delete(name);
  }

  private async current(rd: ResourceDistribution, source: Resource | undefined): Promise<boolean> {
    const [distribution, ofSource] = await Promise.all([this.deps.catalog.current(rd), this.sourceCurrent(rd, source)]);
    if (distribution && ofSource) return true;
    this.deps.log.info({ name: rd.metadata.name, distribution, source: ofSource }, 'cache behind the API server after taking the lead: waiting for its watch before writing');
    return false;
  }

  /** Whether the source's cached version (none when it is missing) is the API server's. */
  private async sourceCurrent(rd: ResourceDistribution, cached: Resource | undefined): Promise<boolean> {
    const ref = rd.spec.source;
    // A source of a kind not allowed is never read, and nothing is copied from it.
    if (ref === undefined || this.deps.kinds.find(ref.apiVersion, ref.kind) === undefined) return true;
    const [live] = (await this.deps.api.listSource(ref)).items;
    return live?.metadata.resourceVersion === cached?.metadata.resourceVersion;
  }
}
