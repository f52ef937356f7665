import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { resetAuthenticator } from '../../lib/auth/operators';
import { importRoles } from '../../lib/authz/import-roles';
import { isGuid } from '../../lib/directory';
import { createRuntime } from '../../lib/runtime';
import { issueSetupToken } from '../../lib/setup';
import { issueFleetToken } from '../../lib/fleet-status';
import { callPasswordService } from '../../lib/password-service/console-side/client';
import { isApiError } from '../../lib/errors';
import { queryRecords } from '../../lib/store/records';
import { createStore } from '../../lib/store';

// The administrative command line (console spec, Command-line operations). Locally, without
// DYNAMODB_ENDPOINT set, it talks to the stack `npm start` runs (local/.run/stack.json).
const USAGE = `usage: npm run admin -- <command>
  setup-token                 issue a setup token while the instance is not configured
  reset-setup --confirm       re-open the setup wizard with a new token (data kept; audited)
  reset-totp <operator>       clear an operator's authenticator and end their sessions (objectGUID or user name; audited)
  issue-fleet-token           issue the bearer token of GET /api/fleet/v1/status (replaces the old one; audited)
  pin-password-service        first use: pin the password service to the configured domain and CA
  verify-audit                verify the audit hash chain
  purge-audit                 apply Audit:RetentionDays now (the purge is audited)
  import-roles <file> [--replace]
                              import roles from JSON { "roles": [{ "id", "name", "permissions" }] }
                              with the role editor's rules: the valid ones are imported, each refused
                              one is reported (exit 1); an existing role is overwritten only with
                              --replace, which never deletes a role the file does not name`;

/** How the CLI reaches a running local stack's console (the stack file's endpoints, table and key files). */
export function consoleEnvironment(info: { dynamodbEndpoint: string; tableName: string; masterKeyFile: string; linkKeyFile: string; passwordServiceEndpoint: string; passwordServiceFunction: string }) {
  return {
    DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
    HDC_TABLE: info.tableName,
    HDC_MASTER_KEY_FILE: info.masterKeyFile,
    HDC_LINK_KEY_FILE: info.linkKeyFile,
    HDC_LAMBDA_ENDPOINT: info.passwordServiceEndpoint,
    HDC_PASSWORD_SERVICE_FUNCTION: info.passwordServiceFunction,
  };
}

function environment(): NodeJS.ProcessEnv {
  const stackFile = path.resolve(__dirname, '../../local/.run/stack.json');
  if (process.env.DYNAMODB_ENDPOINT || process.env.HDC_MASTER_KEY_SECRET_ID || !fs.existsSync(stackFile)) return process.env;
  const stack = JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  return { ...process.env, ...consoleEnvironment(stack) };
}

export async function runAdminCommand(argv: string[], env = environment()): Promise<{ code: number; out: string }> {
  const [command, ...args] = argv;
  const rt = createRuntime({ env, store: createStore({ endpoint: env.DYNAMODB_ENDPOINT, tableName: env.HDC_TABLE }) });
  const actor = { name: 'admin-cli', provider: 'cli' };
  switch (command) {
    case 'setup-token': {
      if (await rt.settings()) return { code: 2, out: 'the instance is configured: use reset-setup --confirm to re-open setup' };
      return { code: 0, out: `setup token: ${await issueSetupToken(rt.store)}` };
    }
    case 'reset-setup': {
      if (!args.includes('--confirm')) return { code: 2, out: 'reset-setup re-opens the setup wizard: add --confirm' };
      const token = await issueSetupToken(rt.store);
      await rt.audit.append({ event: 'setup.reset', outcome: 'success', actor, reason: 'recovery' });
      return { code: 0, out: `setup re-opened; setup token: ${token}` };
    }
    case 'reset-totp': {
      const who = args[0];
      if (!who) return { code: 2, out: USAGE };
      const ops = (await queryRecordsByPrefix(rt)).filter((o) => (isGuid(who) ? o.guid.toLowerCase() === who.toLowerCase() : o.username.toLowerCase() === who.toLowerCase()));
      if (ops.length !== 1) return { code: 2, out: ops.length ? `'${who}' is ambiguous: give the objectGUID` : `no operator '${who}'` };
      // the authenticator and every session of the operator end together
      const { sessionsEnded } = await resetAuthenticator(rt.store, ops[0].guid);
      await rt.audit.append({ event: 'operators.totp_reset', outcome: 'success', actor, reason: 'recovery', target: { id: ops[0].guid, name: ops[0].username }, details: { sessionsEnded } });
      return { code: 0, out: `authenticator of ${ops[0].username} cleared and ${sessionsEnded} session(s) ended: they enrol again at their next sign-in` };
    }
    case 'issue-fleet-token': {
      const token = await issueFleetToken(rt);
      await rt.audit.append({ event: 'settings.fleet_token', outcome: 'success', actor, reason: 'issued' });
      return { code: 0, out: `fleet status token (shown once): ${token}` };
    }
    case 'pin-password-service': {
      const res = await callPasswordService({ op: 'pin' }, env);
      await rt.audit.append({ event: 'settings.password_service_pin', outcome: res.ok ? 'success' : 'failure', actor, reason: res.ok ? `pinned:${res.pinned}` : res.code });
      return res.ok ? { code: 0, out: `password service pinned to ${res.pinned}` } : { code: 1, out: `refused: ${res.code}` };
    }
    case 'verify-audit': {
      const v = await rt.audit.verify();
      return { code: v.ok ? 0 : 1, out: JSON.stringify(v) };
    }
    case 'purge-audit': {
      const n = await rt.audit.purge(rt.config.Audit.RetentionDays, actor);
      return { code: 0, out: `${n} audit rows purged (Audit:RetentionDays=${rt.config.Audit.RetentionDays})` };
    }
    case 'import-roles': {
      const file = args.find((a) => !a.startsWith('--'));
      const unknownFlag = args.find((a) => a.startsWith('--') && a !== '--replace');
      if (!file || unknownFlag) return { code: 2, out: USAGE };
      let parsed: unknown;
      try {
        parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
      } catch (e) {
        return { code: 2, out: `cannot read ${file} as JSON: ${(e as NodeJS.ErrnoException).code ?? 'invalid JSON'}` };
      }
      try {
        const s = await importRoles({ rt, actor, correlationId: randomUUID() }, parsed, { replace: args.includes('--replace') });
        if (s.refused.length) return { code: 1, out: `${s.refused.length} role(s) refused, the others imported: ${JSON.stringify(s)}` };
        return { code: 0, out: `roles imported: ${JSON.stringify(s)}` };
      } catch (e) {
        if (isApiError(e)) return { code: 1, out: `import refused, nothing changed: ${JSON.stringify(e.body())}` };
        throw e;
      }
    }
    default:
      return { code: 2, out: USAGE };
  }
}

async function queryRecordsByPrefix(rt: ReturnType<typeof createRuntime>) {
  // operators are few (one record each); a scan of the operator partition prefix is not possible
  // with pk-per-operator, so operator records are also indexed under OPERATORS (see lib/auth/operators)
  return (await queryRecords<{ guid: string; username: string }>(rt.store, 'OPERATORS')).map((r) => r.data);
}

if (require.main === module) {
  runAdminCommand(process.argv.slice(2))
    .then(({ code, out }) => {
      console.log(out);
      process.exit(code);
    })
    .catch((e) => {
      console.error(`error: ${(e as Error).message}`);
      process.exit(1);
    });
}
