import { describe, expect, it } from 'vitest';
import { ResponseReader } from '../../../src/k8s/response-reader.js';

const CRLF = '\r\n';
const head = (...lines: string[]): string => [...lines, '', ''].join(CRLF);

/** Feeds `bytes` in pieces of `size` (0: at once); the response and what was pushed after it completed. */
function read(bytes: Buffer, size: number, reader = new ResponseReader()): { status: number; body: string; close: boolean } | 'incomplete' {
  const pieces = size === 0 ? [bytes] : Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  for (const [i, piece] of pieces.entries()) {
    const response = reader.push(piece);
    if (response !== undefined) {
      expect(i).toBe(pieces.length - 1);
      return { status: response.status, body: Buffer.concat(response.body).toString('utf8'), close: response.close };
    }
  }
  return 'incomplete';
}

// A body of several bytes per character: a split inside one must not garble it.
const UNICODE = '{"note":"héllo ✓ 日本"}';
const chunked = (...pieces: string[]): string => pieces.map((p) => `${Buffer.byteLength(p).toString(16)}${CRLF}${p}${CRLF}`).join('') + `0${CRLF}${CRLF}`;

describe('a complete response, whole or split at every byte', () => {
  it.each<[string, string, { status: number; body: string; close: boolean }]>([
    ['Content-Length', head('HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(UNICODE)}`) + UNICODE, { status: 200, body: UNICODE, close: false }],
    ['Content-Length 0', head('HTTP/1.1 201 Created', 'Content-Length: 0'), { status: 201, body: '', close: false }],
    ['header names in any case', head('HTTP/1.1 200 OK', 'CONTENT-LENGTH: 2', 'connection: Close') + '{}', { status: 200, body: '{}', close: true }],
    ['chunked, several chunks', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + chunked('{"items":', '[1,2]', '}'), { status: 200, body: '{"items":[1,2]}', close: false }],
    ['chunked with multi-byte characters split over chunks', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + chunked('{"note":"hé', 'llo ✓ 日本"}'), { status: 200, body: UNICODE, close: false }],
    [
      'chunked with an extension, upper-case hex and a trailer',
      head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `A;name=value${CRLF}0123456789${CRLF}0${CRLF}Trailer-Field: x${CRLF}${CRLF}`,
      { status: 200, body: '0123456789', close: false },
    ],
    ['a status without a reason phrase', head('HTTP/1.1 404', 'Content-Length: 2') + '{}', { status: 404, body: '{}', close: false }],
    ['an error answer with its Status', head('HTTP/1.1 409 Conflict', 'Content-Length: 17') + '{"reason":"Gone"}', { status: 409, body: '{"reason":"Gone"}', close: false }],
    ['204: no body whatever the headers', head('HTTP/1.1 204 No Content', 'Content-Length: 5'), { status: 204, body: '', close: false }],
    ['an interim 100 Continue before the answer', head('HTTP/1.1 100 Continue') + head('HTTP/1.1 200 OK', 'Content-Length: 2') + '{}', { status: 200, body: '{}', close: false }],
    ['HTTP/1.0: the connection closes after it', head('HTTP/1.0 200 OK', 'Content-Length: 2') + '{}', { status: 200, body: '{}', close: true }],
  ])('%s', (_, text, expected) => {
    const bytes = Buffer.from(text, 'utf8');
    for (const size of [0, 1, 2, 3, 7, 64]) expect(read(bytes, size)).toEqual(expected);
  });
});

describe('a body that runs until the server closes', () => {
  it.each<[string, string[], string]>([
    ['no length and not chunked', [head('HTTP/1.1 200 OK'), '{"a":', '1}'], '{"a":1}'],
    ['no length, empty', [head('HTTP/1.1 200 OK')], ''],
  ])('%s: complete only at the end', (_, pieces, body) => {
    const reader = new ResponseReader();
    for (const piece of pieces) expect(reader.push(Buffer.from(piece))).toBeUndefined();
    const response = reader.end();
    expect({ status: response.status, body: Buffer.concat(response.body).toString(), close: response.close }).toEqual({ status: 200, body, close: true });
  });
});

describe('an answer cut short by the server closing', () => {
  it.each<[string, string, RegExp]>([
    ['before a byte of it', '', /before answering/],
    ['in the head', 'HTTP/1.1 200 OK\r\nContent-Le', /in the middle/],
    ['in a sized body', head('HTTP/1.1 200 OK', 'Content-Length: 10') + '{"a"', /in the middle/],
    ['in a chunked body', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `5${CRLF}{"a"`, /in the middle/],
    ['before the last chunk', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + chunked('{}').slice(0, -5), /in the middle/],
  ])('%s: ECONNRESET, a transient failure', (_, text, message) => {
    const reader = new ResponseReader();
    if (text !== '') expect(reader.push(Buffer.from(text))).toBeUndefined();
    expect(() => reader.end()).toThrow(message);
    try {
      reader.end();
    } catch (error) {
      expect(error).toMatchObject({ code: 'ECONNRESET' });
    }
  });
});

describe('what no API server sends', () => {
  it.each<[string, string, RegExp]>([
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n', /not an HTTP\/1.1 status line/],
    ['HTTP/2 framing', 'HTTP/2 200\r\n\r\n', /not an HTTP\/1.1 status line/],
    ['a header line without a colon', head('HTTP/1.1 200 OK', 'Content-Length 2') + '{}', /malformed header line/],
    ['a negative Content-Length', head('HTTP/1.1 200 OK', 'Content-Length: -1'), /bad Content-Length/],
    ['two different Content-Lengths', head('HTTP/1.1 200 OK', 'Content-Length: 2', 'Content-Length: 3') + '{}', /bad Content-Length/],
    ['a chunk size that is not hex', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `zz${CRLF}`, /bad chunk size/],
    ['chunk data longer than its size', head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `2${CRLF}{}}${CRLF}`, /not followed by CRLF/],
    ['bytes after the end of the response', head('HTTP/1.1 200 OK', 'Content-Length: 2') + '{}extra', /5 bytes after the end/],
    ['a head that never ends', 'HTTP/1.1 200 OK\r\n' + 'X: y\r\n'.repeat(12_000), /response head over 65536 bytes/],
  ])('%s: an EPROTO error', (_, text, message) => {
    const reader = new ResponseReader();
    expect(() => reader.push(Buffer.from(text))).toThrow(message);
    try {
      new ResponseReader().push(Buffer.from(text));
    } catch (error) {
      expect(error).toMatchObject({ code: 'EPROTO' });
    }
  });

  it('reads a HEAD answer as bodiless whatever its Content-Length', () => {
    expect(read(Buffer.from(head('HTTP/1.1 200 OK', 'Content-Length: 1234')), 0, new ResponseReader(true))).toEqual({ status: 200, body: '', close: false });
  });
});
