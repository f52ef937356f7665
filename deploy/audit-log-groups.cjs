'use strict';
// Every function's log group carries the audit stream (logger category `Audit`), so it outlives
// its stack and keeps its lines as long as the audit setting says (issue 25, finding 7):
//   - DeletionPolicy and UpdateReplacePolicy Retain: deleting or replacing the stack leaves the
//     audit trail in CloudWatch Logs;
//   - RetentionInDays from the stage's `audit.retentionDays` (deploy/stages/<stage>.yml, the
//     console's Audit:RetentionDays): the shortest CloudWatch period at least that long; none
//     (never expire) for 0, the default, which keeps every audit row too; the fleet plane, which
//     keeps its audit chain whole, never expires its log groups;
//   - the console's functions get the same value as `Audit__RetentionDays` when the stage sets it
//     (otherwise their configuration file decides, as before).
// The gateway's access log (HttpApiLogGroup: the route, no audit row) is left as it is.
const { require: tsxRequire } = require('tsx/cjs/api');

const network = () => tsxRequire('./network.ts', __filename);

class AuditLogGroups {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'before:package:compileFunctions': () => this.environment(),
      'after:aws:package:finalize:mergeCustomProviderResources': () => this.retain(),
    };
  }

  retentionDays() {
    return network().readAuditRetentionDays(this.serverless.getProvider('aws').getStage());
  }

  environment() {
    if (this.serverless.service.service !== 'hdc-console') return;
    const days = this.retentionDays();
    if (days === undefined) return;
    const provider = this.serverless.service.provider;
    provider.environment = { ...(provider.environment ?? {}), Audit__RetentionDays: String(days) };
  }

  retain() {
    // the fleet plane has no audit retention (its chain is kept whole): its log groups never expire
    const days = this.serverless.service.service === 'hdc-fleet' ? 0 : (this.retentionDays() ?? 0);
    const keep = network().logGroupRetentionDays(days);
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    for (const resource of Object.values(resources)) {
      if (resource.Type !== 'AWS::Logs::LogGroup') continue;
      const name = resource.Properties?.LogGroupName;
      if (typeof name !== 'string' || !name.startsWith('/aws/lambda/')) continue;
      resource.DeletionPolicy = 'Retain';
      resource.UpdateReplacePolicy = 'Retain';
      if (keep === undefined) delete resource.Properties.RetentionInDays;
      else resource.Properties.RetentionInDays = keep;
    }
  }
}

module.exports = AuditLogGroups;
