import { runAdminCommand } from './cli';

// `npm run admin -- <command>`: the admin command line's process (functions/admin/cli.ts holds the
// commands; the console image's entry runs them the same way as `admin <command>`).
runAdminCommand(process.argv.slice(2))
  .then(({ code, out }) => {
    console.log(out);
    process.exit(code);
  })
  .catch((e) => {
    console.error(`error: ${(e as Error).message}`);
    process.exit(1);
  });
