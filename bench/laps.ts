import fs from 'node:fs';
import { Client } from 'ldapts';
import * as OTPAuth from 'otpauth';
import { ConsoleClient } from '../local/console-client';
import { stackFile, type StackInfo } from '../local/stack';

// npm run bench:laps (with `npm start` running): the LAPS reveal round trip (browser → console →
// password service over the signed link → directory → back) beside a raw ldapts read of the same
// attribute (LDAPS connect, bind as the LAPS account, read, unbind), measured in one run.
// The rate window allows 5 reads per computer per 10 minutes: the bench reads 5 computers 4 times.
const stack: StackInfo = JSON.parse(fs.readFileSync(stackFile('dev'), 'utf8'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const code = (secret: string, step: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: step * 30000 });

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
  for (let round = 0; round < 4; round++) {
    for (const t of targets) {
      let t0 = performance.now();
      const r = await c.post(`/api/computers/${t.guid}/laps`, { confirm: true, ticket: 'BENCH' });
      if (r.status !== 200) throw new Error(`reveal ${t.name}: ${r.status} ${r.text}`);
      reveal.push(performance.now() - t0);

      t0 = performance.now();
      const l = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [ca] } });
      await l.bind(laps.upn, laps.password);
      const e = (await l.search(t.dn, { scope: 'base', attributes: ['msLAPS-Password'] })).searchEntries[0];
      await l.unbind();
      if (!e?.['msLAPS-Password']) throw new Error('raw read returned nothing');
      raw.push(performance.now() - t0);
    }
  }
  console.log(`samples               ${reveal.length}`);
  console.log(`reveal round trip     median ${median(reveal).toFixed(1)} ms   (console → password service → directory)`);
  console.log(`raw ldapts read       median ${median(raw).toFixed(1)} ms   (LDAPS connect + bind + read + unbind)`);
  console.log(`ratio reveal / raw    ${(median(reveal) / median(raw)).toFixed(2)}`);
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
