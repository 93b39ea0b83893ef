import { describe, expect, it } from 'vitest';
import { GeneratorError } from './config.js';
import { base64Lines, collectKeyValues, configMapValue, filesToRead, parseEnvFile, parseFileSource, parseLiteral } from './key-values.js';

const text = (pairs: { key: string; value: Buffer }[]): [string, string][] => pairs.map((pair) => [pair.key, pair.value.toString('utf8')]);

describe('literals', () => {
  it.each([
    ['JAVA_HOME=/opt/java/jdk', 'JAVA_HOME', '/opt/java/jdk'],
    ['JAVA_TOOL_OPTIONS=-agentlib:hprof', 'JAVA_TOOL_OPTIONS', '-agentlib:hprof'],
    ['URL=https://example.com/?a=b', 'URL', 'https://example.com/?a=b'],
    ['EMPTY=', 'EMPTY', ''],
    ['QUOTED="two words"', 'QUOTED', 'two words'],
    ["SINGLE='x'", 'SINGLE', 'x'],
    ['ONE_QUOTE="', 'ONE_QUOTE', '"'],
    ['UNBALANCED="x\'', 'UNBALANCED', '"x\''],
    ['INNER=a"b"', 'INNER', 'a"b"'],
    ['SPACES= a b ', 'SPACES', ' a b '],
  ])('%s', (source, key, value) => {
    expect(text([parseLiteral(source, 'resource.literals[0]')])).toEqual([[key, value]]);
  });

  it.each(['NO_EQUALS', '=value', ''])('refuses %j', (source) => {
    expect(() => parseLiteral(source, 'resource.literals[3]')).toThrow(`resource.literals[3]: ${JSON.stringify(source)} is not a literal: expected KEY=VALUE`);
  });
});

describe('file sources', () => {
  it.each([
    ['application.properties', 'application.properties', 'application.properties'],
    ['config/app.properties', 'app.properties', 'config/app.properties'],
    ['settings=config/app.properties', 'settings', 'config/app.properties'],
    ['/abs/file.txt', 'file.txt', '/abs/file.txt'],
  ])('%s', (source, key, path) => {
    expect(parseFileSource(source, 'resource.files[0]')).toEqual({ key, path });
  });

  it.each([
    ['=app.properties', "has no key before '='"],
    ['key=', "has no file path after '='"],
    ['a=b=c', "holds more than one '='"],
  ])('refuses %s', (source, message) => {
    expect(() => parseFileSource(source, 'resource.files[1]')).toThrow(`resource.files[1]: "${source}" ${message}`);
  });

  it('lists each file to read once, by its path', () => {
    expect(filesToRead({ literals: ['A=b'], envs: ['a.env', 'app.properties'], files: ['app.properties', 'other=app.properties', 'x/y.txt'] })).toEqual([
      'a.env',
      'app.properties',
      'x/y.txt',
    ]);
  });
});

describe('env files', () => {
  it.each<[string, string, [string, string][]]>([
    ['the documented tracing.env', 'ENABLE_TRACING=true\nSAMPLER_TYPE=probabilistic\nSAMPLER_PARAMETERS=0.1\n', [['ENABLE_TRACING', 'true'], ['SAMPLER_TYPE', 'probabilistic'], ['SAMPLER_PARAMETERS', '0.1']]],
    ['comments and blank lines skipped', '# a comment\n\nA=1\n   \n  # indented comment\nB=2', [['A', '1'], ['B', '2']]],
    ['leading spaces ignored, trailing kept', '  A=1  \n\tB= 2', [['A', '1  '], ['B', ' 2']]],
    ['a # inside a value is kept', 'A=1 # not a comment', [['A', '1 # not a comment']]],
    ['the value up to the line end, = included', 'A=b=c', [['A', 'b=c']]],
    ['quotes are kept (unlike literals)', 'A="quoted"', [['A', '"quoted"']]],
    ['no = is an empty value', 'A\nB=', [['A', ''], ['B', '']]],
    ['CRLF line ends', 'A=1\r\nB=2\r\n', [['A', '1'], ['B', '2']]],
    ['a byte order mark at the start dropped', '\uFEFFA=1\n', [['A', '1']]],
    ['a byte order mark on a later line kept', 'A=1\n\uFEFFB=2\n', [['A', '1'], ['\uFEFFB', '2']]],
    ['no last newline', 'A=1', [['A', '1']]],
    ['empty', '', []],
  ])('%s', (_what, content, pairs) => {
    expect(text(parseEnvFile(Buffer.from(content, 'utf8'), 'resource.envs[0] "a.env"'))).toEqual(pairs);
  });

  it.each<[string, Buffer, string]>([
    ['a line that is not UTF-8', Buffer.concat([Buffer.from('A=1\nB='), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]), 'resource.envs[0] "a.env" line 2 is not valid UTF-8'],
    ['a line without key', Buffer.from('A=1\n\n=2\n'), `resource.envs[0] "a.env" line 3 has no key before '='`],
  ])('refuses %s, naming the line', (_what, content, message) => {
    expect(() => parseEnvFile(content, 'resource.envs[0] "a.env"')).toThrow(message);
  });

  it('says where each pair comes from', () => {
    expect(parseEnvFile(Buffer.from('# x\nA=1\n'), 'resource.envs[0] "a.env"').map((pair) => pair.from)).toEqual(['resource.envs[0] "a.env" line 2']);
  });
});

describe('all sources of a resource', () => {
  const contents = new Map([
    ['tracing.env', Buffer.from('ENABLE_TRACING=true\n')],
    ['application.properties', Buffer.from('FOO=Bar\n')],
  ]);

  it('env files, then literals, then files', () => {
    const pairs = collectKeyValues({ envs: ['tracing.env'], literals: ['JAVA_HOME=/opt/java/jdk'], files: ['application.properties'] }, contents, 'ConfigMap cmname');
    expect(text(pairs)).toEqual([
      ['ENABLE_TRACING', 'true'],
      ['JAVA_HOME', '/opt/java/jdk'],
      ['application.properties', 'FOO=Bar\n'],
    ]);
  });

  it.each<[string, { envs: string[]; literals: string[]; files: string[] }, string]>([
    ['a literal and an env file', { envs: ['tracing.env'], literals: ['ENABLE_TRACING=false'], files: [] }, '"ENABLE_TRACING": from resource.envs[0] "tracing.env" line 1 and from resource.literals[0]'],
    ['two literals', { envs: [], literals: ['A=1', 'A=2'], files: [] }, '"A": from resource.literals[0] and from resource.literals[1]'],
    ['a file keyed like a literal', { envs: [], literals: ['ENABLE_TRACING=1'], files: ['ENABLE_TRACING=application.properties'] }, '"ENABLE_TRACING": from resource.literals[0] and from resource.files[0] "application.properties"'],
    ['one file twice', { envs: [], literals: [], files: ['application.properties', 'application.properties'] }, '"application.properties": from resource.files[0] "application.properties" and from resource.files[1] "application.properties"'],
  ])('a key given twice is an error: %s', (_what, sources, message) => {
    expect(() => collectKeyValues(sources, contents, 'ConfigMap cmname')).toThrow(new GeneratorError(`ConfigMap cmname repeats the key ${message}`));
  });

  it('a file nobody read is an error, not an empty value', () => {
    expect(() => collectKeyValues({ envs: [], literals: [], files: ['other.txt'] }, contents, 'ConfigMap cmname')).toThrow('resource.files[0]: "other.txt" was not read');
  });
});

describe('values', () => {
  it.each([
    ['', ''],
    ['admin', 'YWRtaW4='],
    // 51 bytes encode to 68 characters, 52 to 72: from 70 characters on, kustomize writes lines of 70, each ending in a newline.
    ['x'.repeat(51), 'eHh4'.repeat(17)],
    ['x'.repeat(52), `${'eHh4'.repeat(17)}eA\n==\n`],
    ['x'.repeat(105), `${'eHh4'.repeat(35).slice(0, 70)}\n${'eHh4'.repeat(35).slice(70)}\n`],
  ])('base64 of %j', (value, encoded) => {
    expect(base64Lines(Buffer.from(value))).toBe(encoded);
  });

  it.each<[string, Buffer, 'data' | 'binaryData', string]>([
    ['UTF-8 text', Buffer.from('FOO=Bar\nnaïve ✓\n'), 'data', 'FOO=Bar\nnaïve ✓\n'],
    ['a byte order mark is kept in a file', Buffer.from('\uFEFFx'), 'data', '\uFEFFx'],
    ['bytes that are not UTF-8', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00]), 'binaryData', 'iVBORwA='],
    ['an encoded surrogate (not UTF-8 for Go either)', Buffer.from([0xed, 0xa0, 0x80]), 'binaryData', '7aCA'],
  ])('ConfigMap: %s', (_what, value, field, stored) => {
    expect(configMapValue(value)).toEqual({ field, text: stored });
  });
});
