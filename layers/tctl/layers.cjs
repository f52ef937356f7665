'use strict';
// serverless.fleet.yml's `provider.layers`: the tctl layer's version ARN (FLEET_TCTL_LAYER_ARN,
// printed by the layer's own stack, serverless.tctl-layer.yml), or none (serverless-offline and
// `npm start` run local/fleet/tctl through TCTL_PATH).
module.exports = () => {
  const arn = (process.env.FLEET_TCTL_LAYER_ARN || '').trim();
  if (arn && !/^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9-_]+:\d+$/.test(arn)) {
    throw new Error('FLEET_TCTL_LAYER_ARN must be a layer version ARN (arn:aws:lambda:<region>:<account>:layer:<name>:<version>)');
  }
  return arn ? [arn] : [];
};
