import { mintToken } from './issuer';

// npm run -s fleet:token -- <user> <role>...   prints a dev access-platform JWT for the fleet
// plane (send it as `Teleport-Jwt-Assertion: <jwt>` or `Authorization: Bearer <jwt>`).
async function main() {
  const args = process.argv.slice(2);
  let ttl: number | undefined;
  const i = args.indexOf('--ttl');
  if (i >= 0) {
    ttl = Number(args[i + 1]);
    args.splice(i, 2);
  }
  const [user, ...roles] = args;
  if (!user) {
    process.stderr.write('usage: npm run -s fleet:token -- <user> <role>... [--ttl seconds]\n');
    process.exit(2);
  }
  process.stdout.write(`${await mintToken(user, roles, { ttlSeconds: ttl })}\n`);
}
void main();
