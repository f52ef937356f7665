import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { plainSrvQuery } from '../../lib/directory/discovery';

// DC discovery's fallback (Node 22's c-ares refuses Samba's answer to an SRV query carrying EDNS):
// the plain UDP question and the parse of the answer, against a stand-in DNS server that answers
// with the bytes Samba's DNS sent for _ldap._tcp.dc._msdcs.corp.example.test (captured
// 2026-11-27: two SRV answers with compressed names, one SOA in the authority section).
const SAMBA_ANSWER =
  '123485000001000200010000055f6c646170045f746370026463065f6d7364637304636f7270076578616d706c6504746573740000210001c00c0021000100000384000c00000064018503646331c021c00c0021000100000384000c00000064018503646332c021c01a0006000100000e100023c04a0a686f73746d6173746572c0210000000c00000384000002580001518000000e10';

let server: Socket;
let port: number;
let answer = (q: Buffer) => Buffer.concat([q.subarray(0, 2), Buffer.from(SAMBA_ANSWER, 'hex').subarray(2)]);
const asked: Buffer[] = [];
beforeAll(async () => {
  server = createSocket('udp4');
  server.on('message', (q, peer) => {
    asked.push(q);
    server.send(answer(q), peer.port, peer.address);
  });
  await new Promise<void>((r) => server.bind(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

test('asks one plain SRV question (no EDNS record) and reads both SRV answers through name compression', async () => {
  const records = await plainSrvQuery('_ldap._tcp.dc._msdcs.corp.example.test', `127.0.0.1:${port}`, 2000);
  expect(records).toEqual([
    { priority: 0, weight: 100, port: 389, name: 'dc1.corp.example.test' },
    { priority: 0, weight: 100, port: 389, name: 'dc2.corp.example.test' },
  ]);
  const q = asked[asked.length - 1];
  expect(q.readUInt16BE(4)).toBe(1); // one question
  expect(q.readUInt16BE(10)).toBe(0); // no additional record: no EDNS OPT
});

test('a name that does not exist is ENOTFOUND; an answer of another id is never taken (timeout)', async () => {
  answer = (q) => {
    const a = Buffer.from(SAMBA_ANSWER, 'hex');
    q.copy(a, 0, 0, 2);
    a[3] = (a[3] & 0xf0) | 3; // NXDOMAIN
    return a;
  };
  await expect(plainSrvQuery('_ldap._tcp.dc._msdcs.nowhere.test', `127.0.0.1:${port}`, 2000)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  answer = () => Buffer.from(SAMBA_ANSWER, 'hex'); // id 0x1234, not the question's
  await expect(plainSrvQuery('_ldap._tcp.dc._msdcs.corp.example.test', `127.0.0.1:${port}`, 300)).rejects.toMatchObject({ code: 'ETIMEOUT' });
});
