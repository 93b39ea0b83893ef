import { describe, expect, it } from 'vitest';
import { ManifestError, parseManifests } from './manifests.js';

describe('the converter input', () => {
  it.each([
    ['multi-document YAML', 'kind: Secret\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n', ['a', 'b']],
    ['a v1 List, as kubectl get -o yaml prints it', 'apiVersion: v1\nkind: List\nitems:\n- {kind: Secret, metadata: {name: a}}\n- {kind: ConfigMap, metadata: {name: b}}\nmetadata: {resourceVersion: ""}\n', ['a', 'b']],
    ['a typed list, as kubectl get secrets -o json prints it', '{"apiVersion": "v1", "kind": "SecretList", "items": [{"kind": "Secret", "metadata": {"name": "a"}}]}', ['a']],
    ['empty documents and scalars', '---\n---\nhello\n---\nkind: Secret\nmetadata: {name: a}\n', ['a']],
  ])('reads %s', (_, text, names) => {
    expect(parseManifests(text, 'in').map((object) => object.metadata?.name)).toEqual(names);
  });

  it('names the input and line of bad YAML, never its text', () => {
    const text = 'kind: Secret\ndata:\n  key: c2VjcmV0\n  - [oops';
    expect(() => parseManifests(text, 'secrets.yaml')).toThrow(ManifestError);
    expect(() => parseManifests(text, 'secrets.yaml')).toThrow(/^secrets\.yaml: not YAML \(\w+ at line \d+\)$/);
  });
});
