import { identityRoleInstructions } from '../../lib/fleet/identity-role';

// The fleet plane's command line for the installer and operators:
//   npx tsx functions/fleet/cli.ts identity-role   prints the fleet plane's cluster role and how to create it
const USAGE = `usage: npx tsx functions/fleet/cli.ts <command>
  identity-role     print the fleet plane's own cluster role (the spec's identity role) and the
                    tctl commands that create it and bind the fleet plane's identity to it`;

export function runFleetCommand(argv: string[]): { code: number; out: string } {
  switch (argv[0]) {
    case 'identity-role':
      return { code: 0, out: identityRoleInstructions() };
    default:
      return { code: 2, out: USAGE };
  }
}

if (require.main === module) {
  const { code, out } = runFleetCommand(process.argv.slice(2));
  (code === 0 ? process.stdout : process.stderr).write(out.endsWith('\n') ? out : `${out}\n`);
  process.exit(code);
}
