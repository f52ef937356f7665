'use strict';
// serverless.yml reads the schedule rates from here (a file variable), computed by schedules.ts
// from the application's own configuration loader; an invalid value fails the package/start.
const { require: tsxRequire } = require('tsx/cjs/api');

module.exports = () => tsxRequire('./schedules.ts', __filename).scheduleRatesFromEnv(process.env);
