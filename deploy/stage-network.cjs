'use strict';
// serverless.yml and serverless.password-service.yml render their network from here
// (`${file(./deploy/stage-network.cjs):console.vpc}` …), computed by network.ts from the stage's
// parameter file; an invalid or missing file fails the package/deploy with its reason.
const { require: tsxRequire } = require('tsx/cjs/api');

const network = () => tsxRequire('./network.ts', __filename);
/** serverless' own command line: package and deploy build something deployable. */
const command = () => process.argv.slice(2).find((a) => a === 'package' || a === 'deploy');

const render = (service) => async ({ resolveVariable }) => network().renderNetwork(service, await resolveVariable('sls:stage'), command());

module.exports = {
  console: render('console'),
  'password-service': render('password-service'),
  // serverless.network.yml: the optional stack of VPC endpoints
  endpoints: async ({ resolveVariable }) => network().renderEndpointsStack(await resolveVariable('sls:stage'), command()),
};
