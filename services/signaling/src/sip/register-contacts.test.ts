// The Contacts of a REGISTER's 200 (RFC 3261 §10.3 step 8): the usual single `<uri>` answered as received
// with `;expires=` appended (issue 11: no parse), every other form parsed and formatted with expires set.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatNameAddr, getContacts, parseNameAddr, parseSipMessage, type SipRequest } from '@vms/sip';
import { boundContacts } from './register.handler.ts';

function register(contactLines: readonly string[]): SipRequest {
  const text =
    'REGISTER sip:34020000002000000001@3402000000 SIP/2.0\r\n' +
    'Via: SIP/2.0/UDP 10.0.0.2:5060;rport;branch=z9hG4bK-1\r\n' +
    'From: <sip:34020000001320000001@3402000000>;tag=1\r\n' +
    'To: <sip:34020000001320000001@3402000000>\r\n' +
    'Call-ID: c1\r\nCSeq: 2 REGISTER\r\n' +
    contactLines.map((c) => `Contact: ${c}\r\n`).join('') +
    'Expires: 3600\r\nContent-Length: 0\r\n\r\n';
  return parseSipMessage(Buffer.from(text, 'latin1')) as SipRequest;
}

/** What every form got before the shortcut: parsed, expires set, formatted. */
function byParse(req: SipRequest, expires: number): string[] {
  return getContacts(req)
    .filter((c) => c.wildcard !== true)
    .map((c) => formatNameAddr({ ...c, params: new Map([...c.params, ['expires', String(expires)]]) }));
}

describe('boundContacts', () => {
  it('the usual `<uri>`: as received with expires appended, the same binding the parse would format', () => {
    for (const contact of ['<sip:34020000001320000001@10.0.0.2:5060>', '<sip:34020000001320000001@10.0.0.2:5060;transport=udp>', '<sip:34020000001320000001@[2001:db8::2]:5060>']) {
      const req = register([contact]);
      const got = boundContacts(req, 1800);
      assert.deepEqual(got, [`${contact};expires=1800`]);
      const [fast, parsed] = [parseNameAddr(got[0] as string), parseNameAddr(byParse(req, 1800)[0] as string)];
      assert.deepEqual([fast.uri, [...fast.params]], [parsed.uri, [...parsed.params]], contact);
    }
  });

  it('other forms are formatted from the parse: expires replaced, display names, several contacts, the wildcard left out', () => {
    const cases: string[][] = [
      ['<sip:a@10.0.0.2:5060>;expires=60'],
      ['"Cam 1" <sip:a@10.0.0.2:5060>'],
      ['<sip:a@10.0.0.2:5060>, <sip:b@10.0.0.3>'],
      ['<sip:a@10.0.0.2:5060>', '<sip:b@10.0.0.3>'],
      ['sip:a@10.0.0.2:5060'],
      ['*'],
    ];
    for (const lines of cases) {
      const req = register(lines);
      assert.deepEqual(boundContacts(req, 1800), byParse(req, 1800), lines.join(' | '));
    }
    assert.deepEqual(boundContacts(register(['<sip:a@10.0.0.2:5060>;expires=60']), 1800), ['<sip:a@10.0.0.2:5060>;expires=1800']);
    assert.deepEqual(boundContacts(register(['*']), 0), []);
    assert.deepEqual(boundContacts(register([]), 1800), []);
  });
});
