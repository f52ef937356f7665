// wait.mjs TIMEOUT_MS URL[,PIDFILE]... : wait until an LDAPS bind as Administrator works on every
// URL (in parallel). Gives up early when the process named in PIDFILE has died. Used by dc.sh.
import fs from 'node:fs';
import { ADMIN_UPN, adminPassword, connect, sleep } from './common.mjs';

const [timeoutArg, ...targets] = process.argv.slice(2);
const timeout = Number(timeoutArg);
const password = adminPassword();
const t0 = Date.now();

const alive = (pidFile) => {
  if (!pidFile || !fs.existsSync(pidFile)) return true;
  try { process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 0); return true; } catch { return false; }
};

async function waitFor(target) {
  const [url, pidFile] = target.split(',');
  let last;
  while (Date.now() - t0 < timeout) {
    if (!alive(pidFile)) throw new Error(`${url}: samba exited during start`);
    try {
      const c = await connect(url, ADMIN_UPN, password, { timeout: 5000 });
      await c.unbind();
      console.log(`[directory] ${url} answers LDAPS (${Date.now() - t0} ms)`);
      return;
    } catch (err) {
      last = err;
    }
    await sleep(150);
  }
  throw new Error(`${url}: no LDAPS bind within ${timeout} ms (last error: ${last?.message})`);
}

const results = await Promise.allSettled(targets.map(waitFor));
const failed = results.filter((r) => r.status === 'rejected');
for (const f of failed) console.error(`[directory] ${f.reason.message}`);
process.exit(failed.length ? 1 : 0);
