import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'ldapts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { createStore } from '../lib/store';
import * as OTPAuth from 'otpauth';
import { ConsoleClient } from '../local/console-client';
import { RUN_DIR } from '../local/processes';
import { stackFile, type StackInfo } from '../local/stack';

// npm run bench:laps (with `npm start` running): the LAPS reveal round trip (browser → console →
// password service over the signed link → directory → back) beside a raw ldapts read of the same
// attribute (LDAPS connect, bind as the LAPS account, read, unbind), measured in one run, with a
// per-hop breakdown from the `laps_timing` lines both sides log under the request's correlation id.
// The rate window allows 5 reads per computer per 10 minutes: one warm-up and 4 measured reads
// per computer (run it once per fresh stack, or wait out the window).
const stack: StackInfo = JSON.parse(fs.readFileSync(stackFile('dev'), 'utf8'));
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const code = (secret: string, step: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: step * 30000 });
const ROUNDS = 4;

interface Timing {
  correlationId: string;
  hops: Record<string, number>;
  total: number;
}
/** The `laps_timing` lines of a process log, by correlation id. */
function timings(logFile: string): Map<string, Timing> {
  const out = new Map<string, Timing>();
  if (!fs.existsSync(logFile)) return out;
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    const i = line.indexOf('{');
    if (i < 0 || !line.includes('laps_timing')) continue;
    try {
      const j = JSON.parse(line.slice(i));
      if (j.message === 'laps_timing' && j.correlationId) out.set(j.correlationId, j);
    } catch {
      /* not a JSON line */
    }
  }
  return out;
}

async function main() {
  const admin = stack.accounts.find((a) => a.username === 'op-super')!;
  const c = new ConsoleClient(stack.consoleUrl);
  const step = Math.floor(Date.now() / 30000);
  const login = await c.login(admin.username, admin.password, code(admin.totpSecret!, step));
  if (login.status !== 200) throw new Error(`sign-in: ${login.status} ${login.text} (wait 30 s if a code was just used)`);
  const up = await c.post('/api/auth/reauth', { code: code(admin.totpSecret!, step + 1) });
  if (up.status !== 200) throw new Error(`step-up: ${up.status} ${up.text}`);

  const targets = stack.directory.computers.filter((x) => ['WS-STD-01', 'WS-STD-05', 'WS-VIP-01', 'WS-BR-01'].includes(x.name));
  const laps = stack.directory.technicalAccounts.laps;
  const ca = fs.readFileSync(stack.directory.caFile);
  const reveal: number[] = [];
  const raw: number[] = [];
  // the floors, measured in the same rounds: a signed-in request that reads nothing else (gateway,
  // session, rights) and one conditional two-item transaction on the same DynamoDB Local
  const signedIn: number[] = [];
  const storeWrite: number[] = [];
  const store = createStore({ endpoint: stack.dynamodbEndpoint, tableName: stack.tableName });
  const ids: Array<{ id: string; ms: number }> = [];
  for (const t of targets) {
    const w = await c.post(`/api/computers/${t.guid}/laps`, { confirm: true, ticket: 'BENCH' }); // warm-up (connections, caches that may be lost)
    if (w.status !== 200) throw new Error(`reveal ${t.name}: ${w.status} ${w.text}`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      let t0 = performance.now();
      const r = await c.post(`/api/computers/${t.guid}/laps`, { confirm: true, ticket: 'BENCH' });
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`reveal ${t.name}: ${r.status} ${r.text}`);
      reveal.push(ms);
      ids.push({ id: String(r.headers['x-correlation-id'] ?? ''), ms });

      t0 = performance.now();
      const l = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [ca] } });
      await l.bind(laps.upn, laps.password);
      const e = (await l.search(t.dn, { scope: 'base', attributes: ['msLAPS-Password'] })).searchEntries[0];
      await l.unbind();
      if (!e?.['msLAPS-Password']) throw new Error('raw read returned nothing');
      raw.push(performance.now() - t0);

      t0 = performance.now();
      const me = await c.get('/api/auth/me');
      if (me.status !== 200) throw new Error(`me: ${me.status}`);
      signedIn.push(performance.now() - t0);

      t0 = performance.now();
      const id = `${round}-${t.name}`;
      await store.documentClient.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: stack.tableName, Item: { pk: 'BENCH#laps', sk: `row#${id}` }, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: stack.tableName, Item: { pk: 'BENCH#laps', sk: `head#${id}` } } },
          ],
        }),
      );
      storeWrite.push(performance.now() - t0);
    }
  }
  console.log(`samples               ${reveal.length}`);
  console.log(`reveal round trip     median ${median(reveal).toFixed(1)} ms   (console → password service → directory)`);
  console.log(`raw ldapts read       median ${median(raw).toFixed(1)} ms   (LDAPS connect + bind + read + unbind)`);
  console.log(`ratio reveal / raw    ${(median(reveal) / median(raw)).toFixed(2)}`);
  console.log('');
  console.log('floors measured in the same rounds');
  console.log(`signed-in GET /api/auth/me        median ${median(signedIn).toFixed(1)} ms   (gateway + session + settings + rights, no directory)`);
  console.log(`DynamoDB transaction (2 puts)     median ${median(storeWrite).toFixed(1)} ms   (the reveal waits on 3 in a row: nonce + rate window, service audit, console audit)`);
  console.log(`ratio (reveal − 3 transactions) / raw   ${((median(reveal) - 3 * median(storeWrite)) / median(raw)).toFixed(2)}   (what the store's write latency leaves)`);

  // per hop: medians over the measured reveals whose timing lines were found in both logs
  await new Promise((r) => setTimeout(r, 500)); // let the processes flush their logs
  const consoleT = timings(path.join(RUN_DIR, 'dev-offline.log'));
  const serviceT = timings(path.join(RUN_DIR, 'dev-password-service.log'));
  const rows: Record<string, number[]> = {};
  const add = (k: string, v: number | undefined) => v !== undefined && Number.isFinite(v) && (rows[k] ??= []).push(v);
  let matched = 0;
  for (const { id, ms } of ids) {
    const ct = consoleT.get(id);
    const st = serviceT.get(id);
    if (!ct || !st) continue;
    matched++;
    add('request pipeline (gateway, session, CSRF, rights) = round trip − console handler', ms - ct.total);
    for (const [k, v] of Object.entries(ct.hops)) add(k, v);
    for (const [k, v] of Object.entries(st.hops)) add(k, v);
    add('service total', st.total);
    add('invoke overhead = console.invoke − service total', (ct.hops['console.invoke'] ?? NaN) - st.total);
  }
  console.log('');
  console.log(`per hop (median ms over ${matched} reveals; hops in one line of the console ran together)`);
  if (!matched) console.log('  no laps_timing lines matched (are the logs in local/.run/dev-*.log?)');
  for (const [k, v] of Object.entries(rows)) console.log(`  ${k.padEnd(72)} ${median(v).toFixed(1).padStart(7)}`);
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
