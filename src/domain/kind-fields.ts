// The top-level fields of an allowed kind, read from the API server's OpenAPI v3 document of its
// group version: a template field the kind does not have would be dropped by the API server at
// the first write, and a copy without it made everywhere. The document is passed in: reading it is I/O.
import { asArray, asRecord, asString } from './field-problem.js';

/**
 * The property names of the schema the document declares for group/version/kind
 * (`x-kubernetes-group-version-kind`), in the document's order; undefined when the document does
 * not describe the kind or its schema keeps unknown fields (any field is then the kind's).
 */
export function topLevelFields(document: unknown, group: string, version: string, kind: string): string[] | undefined {
  const schemas = asRecord(asRecord(asRecord(document)?.components)?.schemas) ?? {};
  for (const value of Object.values(schemas)) {
    const schema = asRecord(value);
    const declares = asArray(schema?.['x-kubernetes-group-version-kind']).some((entry) => {
      const gvk = asRecord(entry);
      return asString(gvk?.group) === group && asString(gvk?.version) === version && asString(gvk?.kind) === kind;
    });
    if (!declares) continue;
    if (schema?.['x-kubernetes-preserve-unknown-fields'] === true) return undefined;
    const properties = asRecord(schema?.properties);
    return properties === undefined ? undefined : Object.keys(properties);
  }
  return undefined;
}

/** The path of the OpenAPI v3 document that describes a group version. */
export function openApiPath(group: string, version: string): string {
  return group === '' ? `/openapi/v3/api/${version}` : `/openapi/v3/apis/${group}/${version}`;
}
