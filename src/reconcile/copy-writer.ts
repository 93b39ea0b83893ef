// The one place copies are written, for the reconciler and the namespace generator alike. Every
// write is conditional (resourceVersion on update, uid precondition on delete), so two writers
// racing each other fail safely and the loser retries from fresh state. Each write is logged at
// debug: its callers say at info what a pass or a namespace came to (a template change over
// 10,000 namespaces is one line, and no CPU spent on 10,000).
import { kindKeyOf, type KindKey } from '../domain/kinds.js';
import type { Action, FailedVerb, Outcome, Resource } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { CopyCache } from '../k8s/caches.js';
import { copyRefOf, type ClusterApi, type CopyRef } from '../k8s/cluster-api.js';
import { describeApiError, isNotFound, isPolicyDenial } from '../k8s/errors.js';
import { POLICY_RETRY_NOTE } from './policy-retries.js';

/**
 * `stale`: the write lost a race (AlreadyExists, Conflict): what we read was out of date. Not a
 * failure to report: the caller reads again and decides afresh.
 */
export type WriteOutcome = Outcome & { stale?: boolean };

export interface CopyWriter {
  /** Applies one planned action. `kind` names the kind for deletes (other actions carry their object). */
  apply(action: Action, kind: KindKey): Promise<WriteOutcome>;
}

export interface CopyWriterDeps {
  api: ClusterApi;
  log: Logger;
  /** Written objects go through to the cache so that the next pass does not see stale copies. */
  copies?: CopyCache;
  /** Each copy written (`sent`) as the API server stored it. */
  onWritten?: (sent: Resource, stored: Resource) => void;
}

/**
 * The object as sent, without managedFields: a PUT that carries them replaces the server's record
 * of who owns which field; one that omits them leaves that record alone.
 */
function outgoing(object: Resource): Resource {
  const sent: Resource = { ...object, metadata: { ...object.metadata } };
  delete sent.metadata.managedFields;
  return sent;
}

/**
 * `stale` marks a 409 (AlreadyExists, Conflict, a uid precondition): the write lost a race against
 * another writer, so what was read is out of date. `forceTransient` marks failures the next pass
 * resolves by itself although the API calls them final (an update of an object deleted meanwhile).
 */
function failure(action: Action, verb: FailedVerb, error: unknown, forceTransient = false): WriteOutcome {
  const info = describeApiError(error);
  // The API server's message names objects and fields, never their data.
  const outcome: WriteOutcome = {
    action,
    ok: false,
    verb,
    message: `${info.reason}: ${info.message}`,
    transient: forceTransient || info.transient,
  };
  if (info.code === 409) outcome.stale = true;
  if (!outcome.transient && isPolicyDenial(info)) {
    outcome.policy = true;
    outcome.message = `${outcome.message} (${POLICY_RETRY_NOTE})`;
  }
  return outcome;
}

export function createCopyWriter(deps: CopyWriterDeps): CopyWriter {
  const { api, log, copies, onWritten } = deps;

  /** A create, or an update (PUT over the resourceVersion the object carries). */
  async function write(verb: 'create' | 'update', action: Action, object: Resource): Promise<WriteOutcome> {
    try {
      const sent = outgoing(object);
      const store = copies?.store(kindKeyOf(object.apiVersion, object.kind));
      const stored = verb === 'create' ? await api.createCopy(sent) : await api.replaceCopy(sent);
      onWritten?.(sent, stored);
      store?.observeWrite(stored, verb === 'create' ? undefined : object.metadata.resourceVersion);
      log.debug({ kind: object.kind, ns: action.namespace, name: object.metadata.name }, verb === 'create' ? 'copy created' : 'copy updated');
      return { action, ok: true };
    } catch (error) {
      // An update of an object deleted meanwhile: the next pass creates it.
      return failure(action, verb, error, verb === 'update' && isNotFound(error));
    }
  }

  /** Resolves once the object with that uid is gone: NotFound counts as done. */
  async function remove(ref: CopyRef, uid: string, resourceVersion?: string): Promise<void> {
    try {
      await api.deleteCopy(ref, uid, resourceVersion);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    copies?.observeDelete(ref, uid);
  }

  async function recreate(action: Extract<Action, { type: 'recreate' }>): Promise<WriteOutcome> {
    try {
      await remove(copyRefOf(action.object), action.existingUid);
    } catch (error) {
      return failure(action, 'delete', error);
    }
    log.debug({ kind: action.object.kind, ns: action.namespace, name: action.object.metadata.name }, 'copy deleted for recreate');
    const object = { ...action.object, metadata: { ...action.object.metadata } };
    delete object.metadata.resourceVersion;
    return write('create', action, object);
  }

  async function deleteCopy(action: Extract<Action, { type: 'delete' }>, kind: KindKey): Promise<WriteOutcome> {
    try {
      await remove({ kind, namespace: action.namespace, name: action.name }, action.uid, action.resourceVersion);
      log.debug({ kind, ns: action.namespace, name: action.name }, 'copy deleted');
      return { action, ok: true };
    } catch (error) {
      return failure(action, 'delete', error);
    }
  }

  /** A copy left to its namespace: written without our markers, it leaves the cache of our copies (as its watch will say). */
  async function release(action: Extract<Action, { type: 'release' }>): Promise<WriteOutcome> {
    const { object } = action;
    try {
      const stored = await api.replaceCopy(outgoing(object));
      copies?.observeDelete(copyRefOf(object), stored.metadata.uid ?? object.metadata.uid ?? '');
      log.debug({ kind: object.kind, ns: action.namespace, name: object.metadata.name }, 'copy released');
      return { action, ok: true };
    } catch (error) {
      return failure(action, 'update', error, isNotFound(error));
    }
  }

  return {
    apply: (action, kind) => {
      switch (action.type) {
        case 'create':
        case 'update':
          return write(action.type, action, action.object);
        case 'recreate':
          return recreate(action);
        case 'delete':
          return deleteCopy(action, kind);
        case 'release':
          return release(action);
        default:
          return Promise.resolve({ action, ok: true });
      }
    },
  };
}
