#!/usr/bin/env node
'use strict';
// Assembles the `tctl` layer (docs/decisions.md, "The cluster CLI is a layer"): Lambda mounts a
// layer under /opt, so the fleet functions run /opt/bin/tctl (TCTL_PATH in serverless.fleet.yml).
//   TCTL_BINARY=/path/to/tctl node layers/tctl/build.cjs   the access platform's own tctl (the
//                                                         cluster's major version, linux arm64)
//   node layers/tctl/build.cjs --fake                      the local stack's fake tctl and its
//                                                         fixtures (a test stage in AWS)
// Then: npx serverless deploy -c serverless.tctl-layer.yml --stage <stage>, and deploy the fleet
// plane with FLEET_TCTL_LAYER_ARN set to the version ARN it printed.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const OUT = path.join(__dirname, '.build');

function build({ fake, binary }) {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(path.join(OUT, 'bin'), { recursive: true });
  if (fake) {
    // the fake reads its fixtures next to itself (local/fleet/tctl, local/fleet/fixtures)
    fs.copyFileSync(path.join(ROOT, 'local/fleet/tctl'), path.join(OUT, 'bin/tctl'));
    fs.cpSync(path.join(ROOT, 'local/fleet/fixtures'), path.join(OUT, 'fixtures'), { recursive: true });
  } else {
    if (!binary || !fs.existsSync(binary)) throw new Error('set TCTL_BINARY to the tctl executable (or pass --fake for a test stage)');
    fs.copyFileSync(binary, path.join(OUT, 'bin/tctl'));
  }
  fs.chmodSync(path.join(OUT, 'bin/tctl'), 0o755);
  return path.join(OUT, 'bin/tctl');
}

module.exports = { build, OUT };

if (require.main === module) {
  try {
    const out = build({ fake: process.argv.includes('--fake'), binary: process.env.TCTL_BINARY });
    process.stdout.write(`tctl layer content in ${path.relative(ROOT, OUT)} (${out})\n`);
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
}
