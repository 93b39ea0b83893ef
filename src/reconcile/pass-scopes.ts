// What the next pass over each distribution must look at. A namespace that appeared, changed or
// went, or a copy written or edited in one namespace, concerns that namespace alone: the pass
// then plans only there and keeps what the last pass found everywhere else (see last-passes.ts),
// instead of going over every target again. Any other change (the distribution, its source, a
// sweep, a retry) asks for a full pass. The queue still holds names only: this is what the name
// stands for when its turn comes.
export type PassScope = 'all' | ReadonlySet<string>;

export class PassScopes {
  private readonly pending = new Map<string, Set<string> | 'all'>();

  /** Changes that concern only `namespace` of each distribution named; without one, anything. */
  note(names: Iterable<string>, namespace?: string): void {
    for (const name of names) {
      const scope = this.pending.get(name);
      if (namespace === undefined) this.pending.set(name, 'all');
      else if (scope === undefined) this.pending.set(name, new Set([namespace]));
      else if (scope !== 'all') scope.add(namespace);
    }
  }

  /** The scope of the pass starting now (a name nobody noted gets a full pass). */
  take(name: string): PassScope {
    const scope = this.pending.get(name) ?? 'all';
    this.pending.delete(name);
    return scope;
  }

  /** The pass did not finish: the next one goes over everything. */
  widen(name: string): void {
    this.pending.set(name, 'all');
  }
}
