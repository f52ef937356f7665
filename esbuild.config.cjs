'use strict';
// The one bundling configuration: serverless-esbuild packages every function with it
// (`custom.esbuild.config` in serverless.yml, serverless.fleet.yml, serverless.password-service.yml)
// and `npm run bench:bundles` measures exactly those bundles against the budgets of issue 9.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = __dirname;

/**
 * zod's `z` is a namespace re-exported from its index: `import { z } from 'zod'` makes esbuild keep
 * the whole namespace (every locale, JSON-schema import and export: 450 KB), while
 * `import * as z from 'zod'` is tree-shaken to what is used (~85 KB). The two bind the same object,
 * so every source file keeps the usual spelling and the bundle reads it as a namespace import.
 */
const zodNamespace = {
  name: 'zod-namespace-import',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await fs.promises.readFile(args.path, 'utf8');
      const rewritten = source.replace(/^import \{ z \} from (['"])zod\1;?$/gm, "import * as z from 'zod';");
      return { contents: rewritten, loader: 'ts' };
    });
  },
};

/** esbuild options of every function bundle (deployment and bench). */
const buildOptions = {
  bundle: true,
  minify: true,
  treeShaking: true,
  // class and function names survive minification: logs, `error.name` checks, and the bundle
  // inputs test (no password-service class in a console bundle) read them
  keepNames: true,
  sourcemap: false,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // prefer packages' ES modules: only they can be tree-shaken
  mainFields: ['module', 'main'],
  // the Lambda runtime provides the AWS SDK v3
  external: ['@aws-sdk/*'],
  alias: {
    // ldapts' only use of it is parseURL of an ldaps:// URL (lib/shims/whatwg-url.ts)
    'whatwg-url': path.join(ROOT, 'lib/shims/whatwg-url.ts'),
  },
  // text files imported as strings (lib/text-modules.d.ts): the fleet's console upgrade script
  loader: { '.sh': 'text' },
  tsconfig: path.join(ROOT, 'tsconfig.json'),
  plugins: [zodNamespace],
};

/**
 * serverless-esbuild calls this with the service: its own `custom.esbuild` keys (work folder,
 * watch, exclude) stay in the service's YAML; the esbuild options come from here.
 */
function serverlessEsbuild(serverless) {
  const { config: _config, ...own } = (serverless && serverless.service.custom && serverless.service.custom.esbuild) || {};
  const { external, ...shared } = buildOptions;
  return { ...own, ...shared, exclude: [...new Set([...(own.exclude || []), ...external])] };
}

module.exports = serverlessEsbuild;
module.exports.buildOptions = buildOptions;
