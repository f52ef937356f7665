import { ACCESS_OPERATORS, mintConsoleToken } from './access-platform';

// npm run -s access:token -- <platform user> [--ttl seconds]   prints a dev access-platform JWT for
// the console; sign in with it: POST /api/auth/access with header `Teleport-Jwt-Assertion: <jwt>`
// (and the CSRF token of GET /api/auth/antiforgery), as the platform's proxy would send it.
async function main() {
  const args = process.argv.slice(2);
  let ttl: number | undefined;
  const i = args.indexOf('--ttl');
  if (i >= 0) {
    ttl = Number(args[i + 1]);
    args.splice(i, 2);
  }
  const [user] = args;
  if (!user) {
    process.stderr.write(`usage: npm run -s access:token -- <platform user> [--ttl seconds]\nseeded: ${ACCESS_OPERATORS.map((o) => o.user).join(', ')}\n`);
    process.exit(2);
  }
  process.stdout.write(`${await mintConsoleToken(user, { ttlSeconds: ttl })}\n`);
}
void main();
