import { main as installTls } from '../functions/fleet/install-tls';
import { identityRoleInstructions } from '../lib/fleet/identity-role';
import { setLocalAdminPassword } from '../lib/fleet/local-admin';
import { isApiError } from '../lib/errors';
import { storeOfEnvironment } from '../lib/store';

// The fleet image's commands for its instance scripts (containers/scripts/fleet, docs/containers.md):
//   set-admin-password    the local administrator's password, read from standard input (never an argument)
//   install-tls <options> the DNS-01 certificate (functions/fleet/install-tls.ts), also its renewal
//   identity-role         the fleet plane's cluster role and the tctl commands that bind it

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function runFleetInstanceCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string }> {
  const [command, ...args] = argv;
  switch (command) {
    case 'set-admin-password': {
      if (args.length) return { code: 2, out: 'usage: set-admin-password < password-file (one line)' };
      const password = (await readStdin()).split(/\r?\n/)[0] ?? '';
      const store = storeOfEnvironment(env);
      await store.ensure();
      try {
        await setLocalAdminPassword(store, env.FLEET_ADMIN_USERNAME || 'admin', password);
      } catch (e) {
        if (isApiError(e)) return { code: 2, out: `password refused: ${String(e.body().message ?? e.code)}` };
        throw e;
      }
      return { code: 0, out: `local administrator ${env.FLEET_ADMIN_USERNAME || 'admin'}: password set (tokens issued before it are revoked)` };
    }
    case 'install-tls':
      return { code: await installTls(args), out: '' };
    case 'identity-role':
      return { code: 0, out: identityRoleInstructions() };
    default:
      return { code: 2, out: 'usage: set-admin-password | install-tls <options> | identity-role' };
  }
}
