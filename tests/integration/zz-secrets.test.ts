import fs from 'node:fs';
import path from 'node:path';
import { RUN_DIR } from '../../local/processes';
import { bitlockerCanaries, lapsCanaries, profile, stack, store } from '../support/stack';

// Runs last (tests/support/sequencer.js): after every other test signed in, failed, stepped up
// and set up, no password or authenticator secret may appear in a log line or a database item.
describe('secrets never reach logs or the database', () => {
  const secrets = [
    ...Object.values(stack.directory.technicalAccounts).map((a) => a.password),
    ...stack.accounts.map((a) => a.password),
    ...stack.accounts.filter((a) => a.totpSecret).map((a) => a.totpSecret!),
    stack.directory.admin.password,
    ...lapsCanaries(),
    // the BitLocker recovery passwords (issue 33): revealed in tests/integration/bitlocker.test.ts
    ...bitlockerCanaries(),
  ];

  it('has real secrets to look for', () => {
    expect(secrets.length).toBeGreaterThan(25);
    expect(bitlockerCanaries().length).toBeGreaterThan(5);
    expect(secrets.every((s) => s.length >= 8)).toBe(true);
  });

  it.each(['offline', 'password-service'])('no secret in the %s serverless-offline log (every function’s stdout, audit stream included)', (name) => {
    const log = fs.readFileSync(path.join(RUN_DIR, `${profile}-${name}.log`), 'utf8');
    expect(log).toContain('"category":"Audit"');
    for (const s of secrets) expect(log.includes(s)).toBe(false);
  });

  it('no secret in any DynamoDB item', async () => {
    let start: Record<string, unknown> | undefined;
    let items = 0;
    do {
      const page = await store.scan({ ExclusiveStartKey: start });
      for (const it of page.Items ?? []) {
        const text = JSON.stringify(it);
        for (const s of secrets) expect(text.includes(s)).toBe(false);
        items++;
      }
      start = page.LastEvaluatedKey;
    } while (start);
    expect(items).toBeGreaterThan(50);
  });
});
