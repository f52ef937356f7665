import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { AuditChain, type AuditRow } from '../../lib/audit';
import { callPasswordService } from '../../lib/password-service/console-side/client';
import { loadLinkKey, signRequest } from '../../lib/password-service/link';
import { environOfRecorded } from '../../local/processes';
import { lapsCanaries, profile, serviceStore, stack, store } from '../support/stack';

// The password service runs as its own process with its own environment, as in AWS: the
// console's serverless-offline process (PID recorded by the stack) holds no LAPS or reset
// account, path or secret. And the service keeps its own audit chain: a request signed with the
// link key leaves a row whoever made it (here: outside the console), refused ones included.

const environOf = (name: string) => environOfRecorded(`${profile}-${name}`);
const secretsDir = path.dirname(stack.linkKeyFile);
const tech = stack.directory.technicalAccounts as unknown as Record<'laps' | 'reset', { upn: string; password: string }>;

describe('the console process never holds the password service secrets', () => {
  it('has no LAPS or reset variable, path, account or password in its environment', () => {
    const env = environOf('offline');
    expect(Object.keys(env).filter((k) => /LAPS|RESET|PWD_DOMAIN/.test(k) && !/^Helpdesk__LapsIdentityUpn$/.test(k))).toEqual([]);
    const all = Object.values(env).join('\n');
    for (const needle of [path.join(secretsDir, 'laps.password'), path.join(secretsDir, 'reset.password'), 'laps.password', 'reset.password', tech.laps.password, tech.reset.password, tech.reset.upn]) {
      expect([needle, all.includes(needle)]).toEqual([needle, false]);
    }
    // what it does hold: its own master key file and the service only as an endpoint to invoke
    expect(env.HDC_MASTER_KEY_FILE).toBe(stack.masterKeyFile);
    expect(env.HDC_LAMBDA_ENDPOINT).toBe(stack.passwordServiceEndpoint);
  });

  it('while the password service process holds them, and not the console master key', () => {
    const env = environOf('password-service');
    expect(env.HDC_LAPS_PASSWORD_FILE).toBe(path.join(secretsDir, 'laps.password'));
    expect(env.HDC_RESET_PASSWORD_FILE).toBe(path.join(secretsDir, 'reset.password'));
    expect(env.HDC_MASTER_KEY_FILE).toBeUndefined();
  });

  it('serves no password service function on the console’s own Lambda endpoint', async () => {
    const lambda = new LambdaClient({ endpoint: stack.lambdaEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    for (const fn of [`hdc-console-${profile === 'dev' ? 'local' : 'test'}-passwordService`, stack.passwordServiceFunction]) {
      const err = await lambda.send(new InvokeCommand({ FunctionName: fn, Payload: Buffer.from('{}') })).then(() => undefined, (e: Error) => e);
      expect([fn, err?.name]).toEqual([fn, 'ResourceNotFoundException']);
    }
  });
});

describe('the password service audits every operation in its own chain', () => {
  const chain = new AuditChain(serviceStore, 'password-service');
  const env = { ...process.env, HDC_LINK_KEY_FILE: stack.linkKeyFile, HDC_LAMBDA_ENDPOINT: stack.passwordServiceEndpoint, HDC_PASSWORD_SERVICE_FUNCTION: stack.passwordServiceFunction };
  // WS-STD-05: a Windows LAPS password (laps.test reads it twice in the window, password-service.test once)
  const ws = stack.directory.computers.find((c) => c.name === 'WS-STD-05')!;
  const noLaps = stack.directory.computers.find((c) => c.name === 'WS-STD-04')!;
  const mark = async () => {
    for await (const row of chain.rows({ reverse: true })) return row.seq;
    return 0;
  };
  const since = async (seq: number) => {
    const rows: AuditRow[] = [];
    for await (const row of chain.rows({ afterSeq: seq })) rows.push(row);
    return rows;
  };
  const read = (correlationId: string, extra: Record<string, unknown> = {}) => ({
    op: 'laps.read' as const,
    computerGuid: ws.guid,
    expectedDn: ws.dn,
    vipAllowed: false,
    operator: { guid: '00000000-0000-4000-8000-0000000beef1', name: 'not-through-the-console' },
    correlationId,
    ...extra,
  });

  it('a read signed with the link key outside the console leaves its row, written with its admission (never the password)', async () => {
    const m = await mark();
    const res = await callPasswordService(read('outside-read-1'), env);
    expect(res.ok).toBe(true);
    const rows = await since(m);
    expect(rows).toHaveLength(1);
    expect(rows[0].reason).toBeUndefined();
    expect(rows[0]).toMatchObject({
      event: 'laps.read',
      outcome: 'admitted',
      actor: { id: '00000000-0000-4000-8000-0000000beef1', name: 'not-through-the-console', provider: 'link' },
      target: { id: ws.guid, kind: 'computer' },
      correlationId: 'outside-read-1',
    });
    const text = JSON.stringify(rows);
    for (const secret of lapsCanaries()) expect(text).not.toContain(secret);
    expect(text).not.toContain((res as { sealed?: string }).sealed!);
  });

  it('a refused one too (moved, not managed: admitted, then refused), and an envelope that does not verify', async () => {
    const m = await mark();
    expect(await callPasswordService(read('outside-read-2', { computerGuid: noLaps.guid, expectedDn: `CN=${noLaps.name},OU=Elsewhere,${stack.directory.baseDn}` }), env)).toEqual({ ok: false, code: 'moved' });
    const other = stack.directory.computers.find((c) => c.name === 'WS-OTHER-01')!;
    expect(await callPasswordService(read('outside-read-3', { computerGuid: other.guid, expectedDn: other.dn }), env)).toEqual({ ok: false, code: 'not_managed' });
    const lambda = new LambdaClient({ endpoint: stack.passwordServiceEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const forged = { ...signRequest(await loadLinkKey(env), read('outside-read-4')), mac: '00'.repeat(32) };
    const out = await lambda.send(new InvokeCommand({ FunctionName: stack.passwordServiceFunction, Payload: Buffer.from(JSON.stringify(forged)) }));
    expect(JSON.parse(Buffer.from(out.Payload!).toString())).toEqual({ ok: false, code: 'link_signature_invalid' });
    const rows = await since(m);
    // the directory's answer comes after the admission (counted in the rate window): its own row
    expect(rows.map((r) => [r.event, r.outcome, r.reason, r.correlationId])).toEqual([
      ['laps.read', 'admitted', undefined, 'outside-read-2'],
      ['laps.read', 'failure', 'moved', 'outside-read-2'],
      ['laps.read', 'admitted', undefined, 'outside-read-3'],
      ['laps.read', 'failure', 'not_managed', 'outside-read-3'],
      ['link.refused', 'failure', 'link_signature_invalid', undefined],
    ]);
    // nothing of the forged request is taken as true
    expect(rows[4].actor).toEqual({ name: 'helpdesk-link', provider: 'link' });
    expect(rows[4].target).toBeUndefined();
  });

  it('is a hash chain of its own that verifies, apart from the console’s', async () => {
    expect(await chain.verify('full')).toMatchObject({ ok: true });
    const consoleRows: AuditRow[] = [];
    for await (const row of new AuditChain(store, 'console').rows({ reverse: true })) {
      consoleRows.push(row);
      if (consoleRows.length >= 20) break;
    }
    expect(consoleRows.filter((r) => r.correlationId?.startsWith('outside-read-'))).toEqual([]);
  });
});
