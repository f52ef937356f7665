import path from 'node:path';
import { log } from './processes';
import { startStack, stackFile, stopStack } from './stack';

// npm start: the whole local stack, seeded; Ctrl-C stops everything it started.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
async function main() {
  const t0 = Date.now();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('stopping...');
    // HDC_KEEP_DIRECTORY=1 leaves the DCs running (another stack, e.g. npm test, may use them)
    await stopStack('dev', { directory: process.env.HDC_KEEP_DIRECTORY !== '1' });
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const info = await startStack({ profile: 'dev' });
    log(`up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`
  Console (web)    ${info.consoleWebUrl}   <- open this in a browser
  Console API      ${info.consoleUrl}   (health: ${info.consoleUrl}/health/ready, API description: ${info.consoleUrl}/openapi/v1.json)
  Fleet (web)      ${info.fleetWebUrl}   <- the fleet dashboard
  Fleet plane      ${info.fleetUrl}   (local administrator ${info.fleetAdmin.username} / ${info.fleetAdmin.password}; clients ${info.fleetClients.join(', ')};
                   access-platform token: npm run -s fleet:token -- <user> <role>...)
  Store            ${info.storeKind === 'sqlite' ? `SQLite files ${path.dirname(info.stores.console.HDC_SQLITE_FILE)} (kept across restarts; HDC_STORE=dynamodb npm start: DynamoDB Local)` : `DynamoDB Local ${info.dynamodbEndpoint} (in memory)`}
  Directory        ${info.directory.dcs.map((d) => `${d.name} ${d.url}`).join(', ')}   (domain ${info.directory.domain})
  Stack file       ${stackFile('dev')}

  Seeded operators (sign in with POST /api/auth/login { username, password, code }):
${info.accounts.map((a) => `    ${a.username.padEnd(14)} ${a.password.padEnd(20)} ${a.totpSecret ? `TOTP ${a.totpSecret}` : '(no authenticator)'.padEnd(37)}  ${a.note}`).join('\n')}

  Seeded access-platform operators (dev issuer, JWKS ${info.access.jwksUrl}; token: npm run -s access:token -- <user>;
  sign in with POST /api/auth/access, header Teleport-Jwt-Assertion: <token>, plus the CSRF token):
${info.access.operators.map((o) => `    ${o.user.padEnd(14)} roles ${o.roles.join(',').padEnd(16)} windows_logins ${(o.traits.windows_logins ?? []).join(',').padEnd(14)}  ${o.note}`).join('\n')}

  Ctrl-C stops everything.`);
  } catch (e) {
    console.error(`[hdc] start failed: ${(e as Error).message}`);
    await stopStack('dev');
    process.exit(1);
  }
}
void main();
