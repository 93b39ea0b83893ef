// The CRD serves v1alpha1 and v1beta1 (stored), with the same fields, columns and subresources;
// the conversion's table of fields is the CRD's; the conversion route answers ConversionReviews.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { fieldsAt, V1ALPHA1, V1BETA1 } from '../../../src/domain/conversion.js';
import { WEBHOOK_PATHS } from '../../../src/k8s/webhook-config.js';
import { post, testApp } from './review-builder.js';

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
}
interface Version {
  name: string;
  served: boolean;
  storage: boolean;
  subresources: unknown;
  additionalPrinterColumns: unknown;
  schema: { openAPIV3Schema: Schema };
}
const crd = parse(readFileSync('webhook-config/crd/resourcedistributions.apps.kruise.io.yaml', 'utf8')) as {
  spec: { names: { shortNames: string[] }; conversion: unknown; versions: Version[] };
};
const version = (name: string): Version => crd.spec.versions.find((v) => v.name === name)!;

function schemaAt(schema: Schema, place: string): Schema | undefined {
  let at: Schema | undefined = schema;
  for (const step of place.split('.').filter(Boolean)) {
    at = step.endsWith('[]') ? at?.properties?.[step.slice(0, -2)]?.items : at?.properties?.[step];
  }
  return at;
}

describe('the ResourceDistribution CRD', () => {
  it('serves both versions, stores v1beta1, with the short name distributor, converting through our Service', () => {
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1beta1', true, true],
    ]);
    expect(crd.spec.names.shortNames).toEqual(['distributor']);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'resource-distributor-conversion', namespace: 'resource-distributor', path: WEBHOOK_PATHS.conversion, port: 443 } } },
    });
  });

  it('gives both versions the same printer columns and subresources', () => {
    expect(version(V1BETA1).additionalPrinterColumns).toEqual(version(V1ALPHA1).additionalPrinterColumns);
    expect(version(V1BETA1).subresources).toEqual(version(V1ALPHA1).subresources);
  });

  it('has the same schema in both, but for the two fields v1beta1 spells otherwise', () => {
    const renamed = JSON.stringify(version(V1ALPHA1).schema)
      .replaceAll('"namespaceLabelSelector"', '"namespaceSelector"')
      .replaceAll('"failedNamespace"', '"failedNamespaces"')
      .replaceAll('failedNamespace names them', 'failedNamespaces names them')
      .replaceAll('and namespaceLabelSelector are', 'and namespaceSelector are');
    expect(JSON.parse(renamed)).toEqual(version(V1BETA1).schema);
  });

  it.each(['', 'spec', 'spec.targets', 'status', 'status.conditions[]'])('the conversion knows the fields each version has at "%s"', (place) => {
    for (const name of [V1ALPHA1, V1BETA1] as const) {
      const properties = Object.keys(schemaAt(version(name).schema.openAPIV3Schema, place)?.properties ?? {});
      expect([...fieldsAt(name, place)].sort()).toEqual(properties.sort());
    }
  });
});

describe('POST /convert', () => {
  const reviewOf = (objects: unknown[], desiredAPIVersion = 'apps.kruise.io/v1beta1'): object => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'c-1', desiredAPIVersion, objects },
  });
  const stored = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', metadata: { name: 'a' }, spec: { targets: { namespaceLabelSelector: { matchLabels: { a: 'b' } } } } };

  it('converts every object of the review, echoing its uid', async () => {
    const res = await post(testApp().app, WEBHOOK_PATHS.conversion, reviewOf([stored, { ...stored, metadata: { name: 'b' } }]));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { response: { uid: string; result: unknown; convertedObjects: { metadata: { name: string }; spec: unknown }[] } };
    expect(body.response.uid).toBe('c-1');
    expect(body.response.result).toEqual({ status: 'Success' });
    expect(body.response.convertedObjects.map((o) => [o.metadata.name, o.spec])).toEqual([
      ['a', { targets: { namespaceSelector: { matchLabels: { a: 'b' } } } }],
      ['b', { targets: { namespaceSelector: { matchLabels: { a: 'b' } } } }],
    ]);
  });

  it('answers Failure, naming the object, when one cannot be converted', async () => {
    const res = await post(testApp().app, WEBHOOK_PATHS.conversion, reviewOf([stored], 'apps.kruise.io/v2'));
    const body = (await res.json()) as { response: { uid: string; result: { status: string; message: string } } };
    expect(body.response).toEqual({ uid: 'c-1', result: { status: 'Failure', message: expect.stringContaining('resourcedistribution a: cannot convert to apps.kruise.io/v2') as string } });
  });

  it.each([
    ['an AdmissionReview', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }],
    ['a review without objects', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'x', desiredAPIVersion: 'apps.kruise.io/v1beta1' } }],
  ])('refuses %s with 400', async (_name, body) => {
    expect((await post(testApp().app, WEBHOOK_PATHS.conversion, body)).status).toBe(400);
  });
});
