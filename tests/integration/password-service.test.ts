import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { loadConfig } from '../../lib/config';
import { loadLinkKey, signRequest } from '../../lib/password-service/link';
import { PasswordService } from '../../lib/password-service/service-side/service';
import { callPasswordService } from '../../lib/password-service/console-side/client';
import { ApiError } from '../../lib/errors';
import { countInWindow, windowKey } from '../../lib/store/window';
import { lapsWindow } from '../../lib/password-service/service-side/service';
import { ROOT } from '../../local/processes';
import { serviceStore, stack, store } from '../support/stack';

// The password service over the signed internal link, called the way the console calls it.
const env = { ...process.env, HDC_LINK_KEY_FILE: stack.linkKeyFile, HDC_LAMBDA_ENDPOINT: stack.passwordServiceEndpoint, HDC_PASSWORD_SERVICE_FUNCTION: stack.passwordServiceFunction };
const lambda = new LambdaClient({ endpoint: stack.passwordServiceEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const invokeRaw = async (payload: unknown) =>
  JSON.parse(Buffer.from((await lambda.send(new InvokeCommand({ FunctionName: stack.passwordServiceFunction, Payload: Buffer.from(JSON.stringify(payload)) }))).Payload!).toString());
const ws = (name: string) => stack.directory.computers.find((c) => c.name === name)!;
const lapsRequest = (name: string, extra: Record<string, unknown> = {}) => ({
  op: 'laps.read' as const,
  computerGuid: ws(name).guid,
  expectedDn: ws(name).dn,
  vipAllowed: false,
  operator: { guid: '00000000-0000-0000-0000-00000000abcd', name: 'link-test' },
  correlationId: `link-test-${Date.now()}`,
  ...extra,
});

describe('the signed internal link', () => {
  it('refuses a replayed request', async () => {
    const envelope = signRequest(await loadLinkKey(env), { op: 'health' });
    expect(await invokeRaw(envelope)).toMatchObject({ ok: true });
    expect(await invokeRaw(envelope)).toEqual({ ok: false, code: 'link_replayed' });
  });

  it('refuses a replayed LAPS read: its nonce was spent with the rate window, the replay counts nothing', async () => {
    const { config } = loadConfig(env);
    const spec = lapsWindow(config, ws('WS-STD-04').guid);
    await serviceStore.delete({ Key: windowKey(spec) });
    const envelope = signRequest(await loadLinkKey(env), lapsRequest('WS-STD-04'));
    const first = await invokeRaw(envelope);
    expect(first.code).not.toBe('link_replayed');
    expect(await countInWindow(serviceStore, spec)).toBe(1);
    expect(await invokeRaw(envelope)).toEqual({ ok: false, code: 'link_replayed' });
    expect(await countInWindow(serviceStore, spec)).toBe(1);
  });

  it('refuses a replay of a LAPS request refused before its rate window (the nonce is spent on every path)', async () => {
    const envelope = signRequest(await loadLinkKey(env), lapsRequest('WS-STD-04', { computerGuid: 'not-a-guid' }));
    expect(await invokeRaw(envelope)).toEqual({ ok: false, code: 'not_found' });
    expect(await invokeRaw(envelope)).toEqual({ ok: false, code: 'link_replayed' });
  });

  it('refuses a wrong MAC, a changed body and a stale timestamp', async () => {
    const key = await loadLinkKey(env);
    const good = signRequest(key, { op: 'health' });
    expect(await invokeRaw({ ...good, mac: '00'.repeat(32) })).toEqual({ ok: false, code: 'link_signature_invalid' });
    expect(await invokeRaw({ ...signRequest(key, { op: 'health' }), body: JSON.stringify({ op: 'pin' }) })).toEqual({ ok: false, code: 'link_signature_invalid' });
    expect(await invokeRaw({ op: 'laps.read' })).toEqual({ ok: false, code: 'link_signature_invalid' });
    const realNow = Date.now;
    Date.now = () => realNow() - 120_000;
    const stale = signRequest(key, { op: 'health' });
    Date.now = realNow;
    expect(await invokeRaw(stale)).toEqual({ ok: false, code: 'link_expired' });
  });

  it('returns the password sealed: nothing readable in the invoke answer', async () => {
    const res = await callPasswordService(lapsRequest('WS-STD-05'), env);
    expect(res.ok).toBe(true);
    expect(JSON.stringify(res)).not.toContain((ws('WS-STD-05') as any).lapsPassword);
  });

  it('answers moved when the computer is not at the DN the decision was made on', async () => {
    const res = await callPasswordService(lapsRequest('WS-STD-01', { expectedDn: 'CN=WS-STD-01,OU=Elsewhere,DC=corp,DC=example,DC=test' }), env);
    expect(res).toEqual({ ok: false, code: 'moved' });
  });

  it('re-classifies: a VIP computer needs the decision’s vip.manage, a never-manageable one is refused', async () => {
    expect(await callPasswordService(lapsRequest('WS-VIP-01'), env)).toEqual({ ok: false, code: 'vip_not_allowed' });
    expect((await callPasswordService(lapsRequest('WS-VIP-01', { vipAllowed: true }), env)).ok).toBe(true);
    expect(await callPasswordService(lapsRequest('WS-SENS-NESTED', { vipAllowed: true }), env)).toEqual({ ok: false, code: 'not_manageable' });
    expect(await callPasswordService(lapsRequest('WS-OTHER-01'), env)).toEqual({ ok: false, code: 'not_managed' });
  });

  it('answers laps_not_configured without the LAPS account (the same class, in-process, without its secret)', async () => {
    const { config } = loadConfig({});
    const svc = new PasswordService(serviceStore, config, {}, () => loadLinkKey(env), store); // the console's settings, as the service reads them
    const res = await svc.handle(signRequest(await loadLinkKey(env), lapsRequest('WS-STD-05')));
    expect(res).toEqual({ ok: false, code: 'laps_not_configured' });
  });

  it('is reported laps_unavailable when it cannot be reached', async () => {
    const err = await callPasswordService({ op: 'health' }, { ...env, HDC_LAMBDA_ENDPOINT: 'http://127.0.0.1:9' }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect([err.status, err.code]).toEqual([503, 'laps_unavailable']);
  });
});

describe('the console never holds the LAPS or reset account', () => {
  const doc = YAML.parse(fs.readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' });
  const svc = YAML.parse(fs.readFileSync(path.join(ROOT, 'serverless.password-service.yml'), 'utf8'), { logLevel: 'error' });
  const secretVars = /LAPS_PASSWORD|LAPS_UPN|RESET_PASSWORD|RESET_UPN/;

  it('gives those variables to the password service (its own service) only', () => {
    expect(Object.keys(doc.provider.environment).filter((k) => secretVars.test(k))).toEqual([]);
    for (const [name, fn] of Object.entries<any>(doc.functions)) {
      expect([name, Object.keys(fn.environment ?? {}).filter((k) => secretVars.test(k))]).toEqual([name, []]);
    }
    expect(doc.functions.passwordService).toBeUndefined();
    expect(Object.keys(svc.functions)).toEqual(['passwordService']);
    expect(Object.keys(svc.provider.environment)).toEqual(expect.arrayContaining(['HDC_LAPS_UPN', 'HDC_LAPS_PASSWORD_FILE', 'HDC_RESET_UPN', 'HDC_RESET_PASSWORD_FILE']));
    expect(Object.keys(svc.provider.environment).filter((k) => /MASTER_KEY/.test(k))).toEqual([]); // nor the console's master key
  });

  // who may invoke the service and read its secrets is proven on the packaged CloudFormation
  // templates: tests/unit/deploy-policy.test.ts

  it('ships no code that reads the LAPS account in any console function bundle', () => {
    const dir = path.join(ROOT, '.esbuild/console-test/.build/functions/console');
    const bundles = fs.readdirSync(dir).filter((f) => f.endsWith('.js'));
    expect(bundles.length).toBeGreaterThan(5);
    for (const f of bundles) {
      const code = fs.readFileSync(path.join(dir, f), 'utf8');
      expect([f, code.includes('ServiceContext'), code.includes('HDC_LAPS_PASSWORD_SECRET_ID'), code.includes('HDC_RESET_PASSWORD_SECRET_ID')]).toEqual([f, false, false, false]);
    }
    // the console's build has no password service at all; the service's own build has it
    expect(fs.existsSync(path.join(ROOT, '.esbuild/console-test/.build/functions/password-service/handler.js'))).toBe(false);
    const svc = fs.readFileSync(path.join(ROOT, '.esbuild/password-service-test/.build/functions/password-service/handler.js'), 'utf8');
    expect([svc.includes('ServiceContext'), svc.includes('HDC_LAPS_PASSWORD_SECRET_ID'), svc.includes('HDC_RESET_PASSWORD_SECRET_ID')]).toEqual([true, true, true]);
  });
});
