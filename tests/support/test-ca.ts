import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A test CA made in the test with the openssl CLI (Debian's), and server certificates for
// loopback signed by it: valid, expiring soon, expired (openssl ca with explicit dates).

export interface TestCa {
  dir: string;
  caPem: string;
  /** `san`: the certificate's subjectAltName (default DNS:localhost,IP:127.0.0.1) */
  issue(name: string, opts?: { days?: number; startdate?: string; enddate?: string; san?: string }): { key: string; cert: string };
}

const run = (cwd: string, args: string[]) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

export function makeTestCa(label: string): TestCa {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hdc-ca-${label}-`));
  run(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30', '-subj', `/O=hdc tests/CN=${label} test CA`, '-keyout', 'ca.key', '-out', 'ca.pem']);
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  fs.writeFileSync(path.join(dir, 'serial'), '1000\n');
  fs.writeFileSync(
    path.join(dir, 'ca.cnf'),
    ['[ca]', 'default_ca = d', '[d]', 'database = index.txt', 'new_certs_dir = .', 'serial = serial', 'default_md = sha256', 'policy = p', 'unique_subject = no', 'copy_extensions = none', '[p]', 'commonName = supplied', ''].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  return {
    dir,
    caPem: fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8'),
    issue(name, opts = {}) {
      const ext = opts.san ? `${name}.ext.cnf` : 'ext.cnf';
      if (opts.san) fs.writeFileSync(path.join(dir, ext), `subjectAltName=${opts.san}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
      run(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
      if (opts.startdate) {
        run(dir, ['ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', `${name}.csr`, '-out', `${name}.pem`, '-startdate', opts.startdate, '-enddate', opts.enddate!, '-extfile', ext, '-notext']);
      } else {
        run(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', String(opts.days ?? 30), '-extfile', ext, '-out', `${name}.pem`]);
      }
      return { key: fs.readFileSync(path.join(dir, `${name}.key`), 'utf8'), cert: fs.readFileSync(path.join(dir, `${name}.pem`), 'utf8') };
    },
  };
}
