import { installTls } from '../../lib/fleet/acme/install';
import { InstallOptionError, parseTlsInstallOptions } from '../../lib/fleet/acme/options';
import { DnsProviderError } from '../../lib/fleet/acme/dns-main';

// The installer step for the fleet plane's own certificate by DNS-01 (docs/fleet.md):
//   npx tsx functions/fleet/install-tls.ts --name fleet.msp.example --public-url https://fleet.msp.example:8443 \
//     --https-port 8443 --tls acme-dns --dns-provider dns_main --dns-setting DNSMAIN_END_POINT=main-eu \
//     --dns-credentials-file /root/dnsmain.env --acme-email ops@msp.example [--instance-dir /opt/hdc-fleet]
// Run again (a daily timer) to renew. Secrets: the credentials file, the kept copy, or typed here.

/** Ask on the terminal without echo (credentials are typed on the server, never passed as arguments). */
function hiddenPrompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    if (!stdin.isTTY) return reject(new InstallOptionError('no terminal to type the DNS credentials on: give --dns-credentials-file'));
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let value = '';
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stderr.write('\n');
          return resolve(value);
        }
        if (ch === '\u0003') process.exit(130);
        value = ch === '\u007f' ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on('data', onData);
  });
}

export async function main(argv: string[]): Promise<number> {
  try {
    const opts = parseTlsInstallOptions(argv);
    const r = await installTls(opts, { prompt: process.stdin.isTTY ? hiddenPrompt : undefined, log: (l) => process.stderr.write(`${l}\n`) });
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return 0;
  } catch (e) {
    const known = e instanceof InstallOptionError || e instanceof DnsProviderError;
    process.stderr.write(`install-tls: ${known ? (e as Error).message : `ACME failed: ${(e as Error).message}`}\n`);
    return known && e instanceof InstallOptionError ? 2 : 1;
  }
}

// run as a script (tsx); bundled into the fleet image, `main` is called by its `install-tls` command
if (require.main === module && /install-tls\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) void main(process.argv.slice(2)).then((code) => process.exit(code));
