// kustomize's exec function protocol (KRM functions): a ResourceList on stdin, its functionConfig
// the generator's own config and its items the resources so far; a ResourceList on stdout, the
// items passed through and the generated ones appended.
import { parseDocument, visit } from 'yaml';
import { asArray, asRecord } from '../domain/field-problem.js';
import { GeneratorError } from './config.js';

export const RESOURCE_LIST = { apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList' } as const;

export interface ResourceList {
  functionConfig: unknown;
  items: unknown[];
}

const HOW_TO_RUN = 'this program is a kustomize exec function: list its config under generators: and run kustomize build --enable-alpha-plugins --enable-exec';

/**
 * Reads the ResourceList kustomize writes. In functionConfig a number keeps its text (`1.0` stays
 * "1.0"), as it does when kruise-tools reads it into a string field; the items are left as they are.
 */
export function parseResourceList(text: string): ResourceList {
  const document = parseDocument(text);
  if (document.errors.length > 0) throw new GeneratorError(`stdin is not a YAML ResourceList (${HOW_TO_RUN}): ${document.errors[0]?.message ?? ''}`);
  const items = asArray(asRecord(document.toJS())?.items);
  visit(document, {
    Scalar(_key, node) {
      if (typeof node.value === 'number') node.value = node.source ?? String(node.value);
    },
  });
  const list = asRecord(document.toJS());
  if (list?.kind !== RESOURCE_LIST.kind || list.functionConfig === undefined || list.functionConfig === null) {
    throw new GeneratorError(`stdin holds no ResourceList with a functionConfig (${HOW_TO_RUN})`);
  }
  return { functionConfig: list.functionConfig, items };
}

/** The ResourceList for stdout, as JSON (which is YAML: every string quoted, nothing left to a YAML version's reading). */
export function formatResourceList(items: readonly unknown[]): string {
  return `${JSON.stringify({ ...RESOURCE_LIST, items }, null, 2)}\n`;
}
