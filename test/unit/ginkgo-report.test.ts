import { describe, expect, it } from 'vitest';
import { onlyKnownDifferences, summarizeGinkgoReport, type KnownDifference } from '../control-plane/ginkgo-report.js';

const ALPHA = '/root/go/pkg/mod/github.com/openkruise/kruise@v1.9.0/test/e2e/apps/v1alpha1/resourcedistribution.go';
const BETA = '/tmp/kruise/test/e2e/apps/v1beta1/resourcedistribution.go';

function spec(file: string, text: string, state: string, message?: string): Record<string, unknown> {
  return {
    ContainerHierarchyTexts: ['ResourceDistribution', 'distributing functionality'],
    LeafNodeType: 'It',
    LeafNodeText: text,
    LeafNodeLocation: { FileName: file, LineNumber: 1 },
    State: state,
    ...(message === undefined ? {} : { Failure: { Message: message } }),
  };
}

const UNEXPECTED = 'Unexpected error:\n    <*errors.errorString | 0x4c05e10>: \n    no matches for kind "ResourceDistribution" in version "apps.kruise.io/v1beta1"\n    {\n        s: "no matches for kind",\n    }\noccurred';
const LENGTH = 'Expected\n    <[]v1beta1.ResourceDistributionCondition | len:8, cap:8>: [\n        {\n            Type: "GetResourceFailed",\n            Status: "False",\n        },\n    ]\nto have length 6';

describe('summarizeGinkgoReport', () => {
  it.each([
    {
      name: 'every spec passed, one suite file',
      specs: [spec(ALPHA, 'namespace event checker', 'passed'), spec(ALPHA, 'resource event checker', 'passed')],
      want: [{ suite: 'apps/v1alpha1/resourcedistribution.go', passed: 2, failed: 0, skipped: 0, notPassed: [] }],
    },
    {
      name: "failures keep Gomega's words without its dump of Go values",
      specs: [spec(BETA, 'should distribute resources with the beta api', 'failed', UNEXPECTED), spec(ALPHA, 'x', 'passed')],
      want: [
        { suite: 'apps/v1alpha1/resourcedistribution.go', passed: 1, failed: 0, skipped: 0, notPassed: [] },
        {
          suite: 'apps/v1beta1/resourcedistribution.go',
          passed: 0,
          failed: 1,
          skipped: 0,
          notPassed: [
            {
              name: 'ResourceDistribution distributing functionality should distribute resources with the beta api',
              state: 'failed',
              reason: 'Unexpected error: no matches for kind "ResourceDistribution" in version "apps.kruise.io/v1beta1" occurred',
            },
          ],
        },
      ],
    },
    {
      name: 'a panic and a timeout count as failed; filtered-out specs as not run',
      specs: [spec(BETA, 'a', 'panicked', 'boom'), spec(BETA, 'b', 'timedout', LENGTH), spec(BETA, 'c', 'skipped')],
      want: [
        {
          suite: 'apps/v1beta1/resourcedistribution.go',
          passed: 0,
          failed: 2,
          skipped: 1,
          notPassed: [
            { name: 'ResourceDistribution distributing functionality a', state: 'panicked', reason: 'boom' },
            { name: 'ResourceDistribution distributing functionality b', state: 'timedout', reason: 'Expected (len:8) to have length 6' },
          ],
        },
      ],
    },
    {
      name: 'suite setup nodes are not specs',
      specs: [{ ...spec(ALPHA, '', 'failed', 'setup'), LeafNodeType: 'BeforeSuite' }],
      want: [],
    },
  ])('$name', ({ specs, want }) => {
    const got = summarizeGinkgoReport([{ SpecReports: specs }]).map(({ passedNames: _names, ...counts }) => counts);
    expect(got).toEqual(want);
  });

  it('names the passed specs and leaves out the files the filter rejects', () => {
    const report = [{ SpecReports: [spec(ALPHA, 'resource event checker', 'passed'), spec('/k/test/e2e/apps/v1alpha1/cloneset.go', 'scales', 'passed')] }];
    const got = summarizeGinkgoReport(report, (file) => file.endsWith('resourcedistribution.go'));
    expect(got.map((c) => [c.suite, c.passedNames])).toEqual([['apps/v1alpha1/resourcedistribution.go', ['ResourceDistribution distributing functionality resource event checker']]]);
  });

  const KNOWN: KnownDifference[] = [{ spec: 'functionality checker', failure: 'to have length 6', why: 'Ready and Stalled follow the six' }];

  it.each([
    { name: 'the documented failure of a known spec', specs: [spec(BETA, 'functionality checker', 'failed', LENGTH), spec(BETA, 'x', 'passed')], known: ['Ready and Stalled follow the six'], only: true },
    { name: 'the known spec failing for another reason', specs: [spec(BETA, 'functionality checker', 'failed', UNEXPECTED)], known: [undefined], only: false },
    { name: 'another spec failing with the same words', specs: [spec(BETA, 'namespace event checker', 'failed', LENGTH)], known: [undefined], only: false },
    { name: 'the known spec timing out', specs: [spec(BETA, 'functionality checker', 'timedout', LENGTH)], known: [undefined], only: false },
    { name: 'everything passed', specs: [spec(BETA, 'functionality checker', 'passed')], known: [], only: true },
    { name: 'nothing ran', specs: [spec(BETA, 'functionality checker', 'skipped')], known: [], only: false },
  ])('known differences: $name', ({ specs, known, only }) => {
    const counts = summarizeGinkgoReport([{ SpecReports: specs }], () => true, KNOWN);
    expect(counts.flatMap((c) => c.notPassed.map((n) => n.known))).toEqual(known);
    expect(onlyKnownDifferences(counts)).toBe(only);
  });
});
