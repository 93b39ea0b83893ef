// What the soak knows beyond the cluster's own objects: what it wrote itself and where the product
// must leave things alone. Built by the model (test/soak/model.ts) from the operations that succeeded.
import type { CopyKind } from './snapshot-types.js';

export interface ForeignObject {
  kind: CopyKind;
  namespace: string;
  name: string;
  uid: string;
  data: Record<string, string>;
  labels: Record<string, string>;
  /**
   * A distribution copying this name was under writePolicy overwrite at some point since the object
   * was made, so it may have been taken over, as promised: then nothing is checked about it.
   */
  mayBeTakenOver: boolean;
}

/** An object the soak made annotated and labelled for adoption by `distribution` this round. */
export interface AdoptableObject {
  kind: CopyKind;
  namespace: string;
  name: string;
  uid: string;
  distribution: string;
}

export interface Expectations {
  /** RD_NAMESPACE of the replicas: never targeted. */
  ownNamespace: string;
  /** Distributions deleted with propagationPolicy Orphan: their copies stay, wherever they are. */
  orphaned: ReadonlySet<string>;
  foreign: readonly ForeignObject[];
  /**
   * Made this round for adoption, with nothing since that could legitimately replace them (the
   * distribution's targets or template, the namespace's labels, a by-hand change of that object).
   */
  adoptable: readonly AdoptableObject[];
  /** Distributions created by AUTHOR (their names are never reused). */
  authored: ReadonlySet<string>;
}

/**
 * Labels and annotations under this prefix are only ever set by templates and sources (hand edits
 * and foreign objects use others), so a copy must carry exactly the template's ones: a key the
 * template dropped must have been removed (README: "What a copy looks like").
 */
export const TEMPLATE_KEY_PREFIX = 'tmpl.soak.example/';
