import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { COMMANDS, helpOf, USAGE } from '../../lib/admin/commands';
import { resetOperatorAuthenticators, resetOperatorTotp } from '../../lib/admin/reset-totp';
import { importRoles } from '../../lib/authz/import-roles';
import { createRuntime } from '../../lib/runtime';
import { issueSetupToken } from '../../lib/setup';
import { issueFleetToken } from '../../lib/fleet-status';
import { callPasswordService } from '../../lib/password-service/console-side/client';
import { isApiError } from '../../lib/errors';
import { setAccessOnly } from '../../lib/auth/access-only';
import { readSchema, runMigrations, SCHEMA_VERSION } from '../../lib/migrations';
import { backupDatabase, restoreDatabase } from '../../lib/admin/database';
import { recordMigration } from '../../lib/migrations/startup';
import { storeOfEnvironment } from '../../lib/store';

// The administrative command line (console spec, Command-line operations). Locally, without a
// store named in its environment, it talks to the stack `npm start` runs (local/.run/stack.json).
// Exit codes: 0 done; 1 refused or failed (nothing changed unless the message says so); 2 usage.
/** How the CLI reaches a running local stack's console (the stack file's endpoints, table and key files). */
export function consoleEnvironment(info: { stores: { console: Record<string, string> }; masterKeyFile: string; linkKeyFile: string; passwordServiceEndpoint: string; passwordServiceFunction: string; backupFolder?: string }) {
  return {
    ...(info.backupFolder ? { Database__BackupFolder: info.backupFolder } : {}),
    ...info.stores.console,
    HDC_MASTER_KEY_FILE: info.masterKeyFile,
    HDC_LINK_KEY_FILE: info.linkKeyFile,
    HDC_LAMBDA_ENDPOINT: info.passwordServiceEndpoint,
    HDC_PASSWORD_SERVICE_FUNCTION: info.passwordServiceFunction,
  };
}

function environment(): NodeJS.ProcessEnv {
  const stackFile = path.resolve(__dirname, '../../local/.run/stack.json');
  if (process.env.DYNAMODB_ENDPOINT || process.env.HDC_SQLITE_FILE || process.env.HDC_MASTER_KEY_SECRET_ID || !fs.existsSync(stackFile)) return process.env;
  const stack = JSON.parse(fs.readFileSync(stackFile, 'utf8'));
  return { ...process.env, ...consoleEnvironment(stack) };
}

export async function runAdminCommand(argv: string[], env = environment()): Promise<{ code: number; out: string }> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') return { code: command ? 0 : 2, out: USAGE };
  if (!COMMANDS[command]) return { code: 2, out: `unknown command '${command}'\n${USAGE}` };
  if (args.includes('--help') || args.includes('-h')) return { code: 0, out: helpOf(command) };
  const rt = createRuntime({ env, store: storeOfEnvironment(env) });
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
    case 'allow-password-login': {
      if (!args.includes('--confirm')) return { code: 2, out: `allow-password-login switches the access-platform only mode off: add --confirm\n\n${helpOf(command)}` };
      const { changed } = await setAccessOnly(rt, false, { actor, recovery: true });
      const hostAllows = rt.config.Authentication.ActiveDirectory.Enabled;
      const state = changed ? 'access-platform only mode switched off' : 'access-platform only mode was already off: nothing changed';
      if (!hostAllows) return { code: 1, out: `${state}; directory password sign-in stays off on this host: Authentication:ActiveDirectory:Enabled=false` };
      return { code: 0, out: `${state}; directory password sign-in works again` };
    }
    case 'reset-totp': {
      const who = args.filter((a) => !a.startsWith('--')).join(' ');
      if (!who) return { code: 2, out: helpOf(command) };
      return resetOperatorTotp(rt, who, actor);
    }
    case 'reset-authenticators': {
      const who = args.filter((a) => !a.startsWith('--')).join(' ');
      if (!who) return { code: 2, out: helpOf(command) };
      return resetOperatorAuthenticators(rt, who, actor);
    }
    case 'migrate': {
      const extra = args.find((a) => a !== '--confirm');
      if (extra) return { code: 2, out: helpOf(command) };
      const before = (await readSchema(rt.store)).state.version;
      if (before > SCHEMA_VERSION) return { code: 1, out: `the database is at schema version ${before}, newer than this version of the console (${SCHEMA_VERSION}): nothing changed` };
      try {
        const report = await runMigrations(rt.store, { folder: rt.config.Database.BackupFolder });
        if (!report.ran.length) return { code: 0, out: `no pending migration: the database is at schema version ${report.to}` };
        await recordMigration(rt.audit, report, actor);
        return {
          code: 0,
          out: [`database migrated from schema version ${report.from} to ${report.to}`, `copy of the data taken first: ${report.copy?.location}`, ...report.ran.map((m) => `  ${m.version} ${m.name}: ${m.changed} item(s) changed`)].join('\n'),
        };
      } catch (e) {
        if (isApiError(e)) return { code: 1, out: `migration refused: ${e.code}` };
        throw e;
      }
    }
    case 'backup':
      return args.length ? { code: 2, out: helpOf(command) } : backupDatabase(rt, actor);
    case 'restore-database': {
      const file = args.find((a) => !a.startsWith('--'));
      return !file || !args.includes('--confirm') ? { code: 2, out: helpOf(command) } : restoreDatabase(rt, file, actor);
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
