// What the next pass over each distribution must look at. A namespace that appeared, changed or
// went, or a copy written or edited in one namespace, concerns that namespace alone: the pass
// then plans only there and keeps what the last pass found everywhere else (see last-passes.ts),
// instead of going over every target again. Any other change (the distribution, its source, a
// sweep, a retry) asks for a full pass. The queue still holds names only: this is what the name
// stands for when its turn comes.
//
// A full pass over many namespaces that stands on a last pass still holding (a sweep, mostly) is
// made in slices, one per turn of the name in the queue (see reconciler.ts): the slices still to
// go are kept here. A namespace that changes meanwhile is planned at the name's next turn, ahead
// of the slices, instead of after the whole pass.
export type PassScope = 'all' | ReadonlySet<string>;

/** A full pass made in slices: its namespaces, how many of them are planned, and every namespace planned since it began. */
export interface SlicedPass {
  namespaces: readonly string[];
  done: number;
  visited: Set<string>;
}

const NOTHING: ReadonlySet<string> = new Set();

export class PassScopes {
  private readonly pending = new Map<string, Set<string> | 'all'>();
  private readonly sliced = new Map<string, SlicedPass>();

  /** Changes that concern only `namespace` of each distribution named; without one, anything. */
  note(names: Iterable<string>, namespace?: string): void {
    for (const name of names) {
      const scope = this.pending.get(name);
      if (namespace === undefined) this.widen(name);
      else if (scope === undefined) this.pending.set(name, new Set([namespace]));
      else if (scope !== 'all') scope.add(namespace);
    }
  }

  /**
   * The scope of the pass starting now: a name nobody noted gets a full pass, unless a sliced
   * pass over it goes on (then nothing more than its next slice).
   */
  take(name: string): PassScope {
    const scope = this.pending.get(name) ?? (this.sliced.has(name) ? NOTHING : 'all');
    this.pending.delete(name);
    return scope;
  }

  /** The pass did not finish, or everything may have changed: the next one goes over everything, from the start. */
  widen(name: string): void {
    this.pending.set(name, 'all');
    this.sliced.delete(name);
  }

  /** The sliced pass over `name` going on, if any. */
  slicedPass(name: string): SlicedPass | undefined {
    return this.sliced.get(name);
  }

  /** A sliced pass over these namespaces begins. */
  beginSliced(name: string, namespaces: readonly string[]): SlicedPass {
    const pass = { namespaces, done: 0, visited: new Set<string>() };
    this.sliced.set(name, pass);
    return pass;
  }

  /** No sliced pass goes on over `name` any more (it ended, or a full pass of another kind replaces it). */
  endSliced(name: string): void {
    this.sliced.delete(name);
  }
}
