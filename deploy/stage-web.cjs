'use strict';
// serverless.yml and serverless.fleet.yml render their web app's bucket and distribution from
// here (`${file(./deploy/stage-web.cjs):console}`), computed by static-site.ts.
const { require: tsxRequire } = require('tsx/cjs/api');

const site = () => tsxRequire('./static-site.ts', __filename);

module.exports = {
  console: async ({ resolveVariable }) => site().consoleSite(await resolveVariable('sls:stage')),
  fleet: async ({ resolveVariable }) => site().fleetSite(await resolveVariable('sls:stage')),
};
