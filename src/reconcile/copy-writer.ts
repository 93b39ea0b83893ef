// The one place copies are written, for the reconciler and the namespace generator alike. Every
// write is conditional (resourceVersion on update, uid precondition on delete), so two writers
// racing each other fail safely and the loser retries from fresh state.
import type { Action, DistributedKind, FailedVerb, Outcome, Resource } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { CopyCache } from '../k8s/caches.js';
import { copyRefOf, type ClusterApi, type CopyRef } from '../k8s/cluster-api.js';
import { describeApiError, isAlreadyExists, isNotFound } from '../k8s/errors.js';

/**
 * `stale`: the write lost a race (AlreadyExists, Conflict): what we read was out of date. Not a
 * failure to report: the next pass reads again and decides afresh.
 */
export type WriteOutcome = Outcome & { stale?: boolean };

export interface CopyWriter {
  /** Applies one planned action. `kind` names the kind for deletes (other actions carry their object). */
  apply(action: Action, kind: DistributedKind): Promise<WriteOutcome>;
}

export interface CopyWriterDeps {
  api: ClusterApi;
  log: Logger;
  /** Written objects go through to the cache so that the next pass does not see stale copies. */
  copies?: CopyCache;
}

/** The object as sent: the server keeps managedFields itself, and never wants stringData back. */
function outgoing(object: Resource): Resource {
  const sent: Resource = { ...object, metadata: { ...object.metadata } };
  delete sent.metadata.managedFields;
  return sent;
}

function failure(action: Action, verb: FailedVerb, error: unknown, forceTransient = false): WriteOutcome {
  const info = describeApiError(error);
  const stale = info.code === 409;
  // The API server's message names objects and fields, never their data.
  const outcome: WriteOutcome = {
    action,
    ok: false,
    verb,
    message: `${info.reason}: ${info.message}`,
    transient: forceTransient || info.transient,
  };
  if (stale) outcome.stale = true;
  return outcome;
}

export function createCopyWriter(deps: CopyWriterDeps): CopyWriter {
  const { api, log, copies } = deps;

  async function create(action: Action, object: Resource): Promise<WriteOutcome> {
    try {
      const created = await api.createCopy(outgoing(object));
      copies?.storeFor(created.kind).observeWrite(created);
      log.info({ kind: object.kind, ns: action.namespace, name: object.metadata.name }, 'copy created');
      return { action, ok: true };
    } catch (error) {
      // Someone created it first: the next pass reads it and classifies it.
      return failure(action, 'create', error, isAlreadyExists(error));
    }
  }

  async function update(action: Action, object: Resource): Promise<WriteOutcome> {
    try {
      const replaced = await api.replaceCopy(outgoing(object));
      copies?.storeFor(replaced.kind).observeWrite(replaced, object.metadata.resourceVersion);
      log.info({ kind: object.kind, ns: action.namespace, name: object.metadata.name }, 'copy updated');
      return { action, ok: true };
    } catch (error) {
      // Gone meanwhile: the next pass creates it.
      return failure(action, 'update', error, isNotFound(error));
    }
  }

  /** true when the object with that uid is gone (also when it was gone already). */
  async function remove(ref: CopyRef, uid: string): Promise<true> {
    try {
      await api.deleteCopy(ref, uid);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    copies?.storeFor(ref.kind).observeDelete(`${ref.namespace}/${ref.name}`, uid);
    return true;
  }

  async function recreate(action: Extract<Action, { type: 'recreate' }>): Promise<WriteOutcome> {
    try {
      await remove(copyRefOf(action.object), action.existingUid);
    } catch (error) {
      return failure(action, 'delete', error);
    }
    log.info({ kind: action.object.kind, ns: action.namespace, name: action.object.metadata.name }, 'copy deleted for recreate');
    const object = { ...action.object, metadata: { ...action.object.metadata } };
    delete object.metadata.resourceVersion;
    return create(action, object);
  }

  async function deleteCopy(action: Extract<Action, { type: 'delete' }>, kind: DistributedKind): Promise<WriteOutcome> {
    try {
      await remove({ kind, namespace: action.namespace, name: action.name }, action.uid);
      log.info({ kind, ns: action.namespace, name: action.name }, 'copy deleted');
      return { action, ok: true };
    } catch (error) {
      return failure(action, 'delete', error);
    }
  }

  return {
    apply: (action, kind) => {
      switch (action.type) {
        case 'create':
          return create(action, action.object);
        case 'update':
          return update(action, action.object);
        case 'recreate':
          return recreate(action);
        case 'delete':
          return deleteCopy(action, kind);
        default:
          return Promise.resolve({ action, ok: true });
      }
    },
  };
}
