// The admin command line's commands, their usage and help (console spec, Command-line operations);
// functions/admin/cli.ts runs them.
interface Command {
  usage: string;
  help: string;
}
export const COMMANDS: Record<string, Command> = {
  'setup-token': { usage: 'setup-token', help: 'issue a setup token while the instance is not configured' },
  'reset-setup': { usage: 'reset-setup --confirm', help: 're-open the setup wizard with a new token (data kept; audited setup.reset)' },
  'allow-password-login': {
    usage: 'allow-password-login --confirm',
    help: "switch the access-platform only mode off (recovery): directory password sign-in works again at the next sign-in, if Authentication:ActiveDirectory:Enabled allows it on this host; audited settings.teleport_only, reason off:recovery",
  },
  'reset-totp': {
    usage: 'reset-totp <operator>',
    help: "clear an operator's authenticator and end their sessions; <operator> is the operator id (objectGUID), the sign-in name or a display name only one operator has; audited operators.totp_reset, reason recovery",
  },
  'reset-authenticators': {
    usage: 'reset-authenticators <operator>',
    help: "remove every passkey of an operator and clear their authenticator, and end their sessions (recovery of a lost passkey); <operator> as for reset-totp; audited operators.authenticators_reset, reason recovery",
  },
  'issue-fleet-token': { usage: 'issue-fleet-token', help: 'issue the bearer token of GET /api/fleet/v1/status (replaces the old one; audited)' },
  'pin-password-service': { usage: 'pin-password-service', help: 'first use: pin the password service to the configured domain and CA (audited)' },
  'verify-audit': { usage: 'verify-audit', help: 'verify the audit hash chain (exit 1 when it does not verify)' },
  'purge-audit': { usage: 'purge-audit', help: 'apply Audit:RetentionDays now (the purge is audited)' },
  'import-roles': {
    usage: 'import-roles <file> [--replace]',
    help: 'import roles from JSON { "roles": [{ "id", "name", "permissions" }] } with the role editor\'s rules: the valid ones are imported, each refused one is reported (exit 1); an existing role is overwritten only with --replace, which never deletes a role the file does not name',
  },
  backup: {
    usage: 'backup',
    help: 'write a consistent copy of the database under Database:BackupFolder (mode 0600) and print its path: on the embedded store one SQLite file (its online backup, taken while writes go on), on DynamoDB one JSON-lines file; audited database.backup',
  },
  'restore-database': {
    usage: 'restore-database <file> --confirm',
    help: 'replace every item of the database with those of a copy written by backup, a SQLite file or JSON lines (the console must be stopped: the container restore does it); audited database.restored',
  },
  migrate: {
    usage: 'migrate',
    help: 'run the pending database migrations after a copy of the data (Database:BackupFolder, else a DynamoDB backup); for Database:AutoMigrate=false; audited database.migrated',
  },
};
export const USAGE = `usage: npm run admin -- <command> [--help]\n${Object.values(COMMANDS)
  .map((c) => `  ${c.usage.padEnd(34)}${c.help}`)
  .join('\n')}`;
export const helpOf = (name: string) => `usage: npm run admin -- ${COMMANDS[name].usage}\n\n${COMMANDS[name].help}`;

