import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { processEnvironment, type Environment } from '../../config/environment';
import { logger } from '../../log';
import { outboundTrust } from '../../outbound/https';
import { fleetChannelPolicy } from '../alerts/channels';
import { notifyTransitions } from '../alerts/notify';
import type { FleetRuntime } from '../runtime';
import { readRoundFacts } from './facts';
import { runPollInvocation, type InvocationReport } from './round';

export { runPollInvocation, readRound, type InvocationReport, type RoundDeps } from './round';

// The scheduled poll (serverless.fleet.yml: rate(1 minute)) composed from the fleet runtime.
// An invocation that leaves consoles unpolled asks for a continuation: in AWS a message on the
// poll's queue (FLEET_POLL_QUEUE_URL), which invokes the poll again; under serverless-offline an
// asynchronous invoke of its own function (FLEET_POLL_FUNCTION through FLEET_LAMBDA_ENDPOINT);
// without either the next scheduled run continues the round.

/** Time kept back from the Lambda's remaining time: one poll's timeout, the evaluation and the notifications. */
export const POLL_RESERVE_MS = 15_000;

export async function runScheduledPoll(rt: FleetRuntime, remainingMs: number, env: Environment = processEnvironment()): Promise<InvocationReport> {
  const trust = outboundTrust(rt.config.FLEET_OUTBOUND_ALLOWED_TARGETS);
  const report = await runPollInvocation(
    {
      store: rt.store,
      masterKey: rt.masterKey,
      concurrency: rt.config.FLEET_POLL_CONCURRENCY,
      trust,
      facts: () => readRoundFacts(rt.cli, rt.config, trust),
      notify: async (transitions) => {
        let policy;
        try {
          policy = fleetChannelPolicy(rt.config);
        } catch {
          logger.warn('SECRETS_ENCRYPTION_KEY is not set: alert channels cannot be read');
        }
        await notifyTransitions({ store: rt.store, policy, publicOrigin: rt.config.FLEET_PUBLIC_ORIGIN, trust }, transitions);
      },
    },
    { deadline: Date.now() + Math.max(12_000, remainingMs - POLL_RESERVE_MS) },
  );
  logger.info('poll invocation', { ...report });
  if (report.outcome === 'partial') await continueRound(env);
  return report;
}

async function continueRound(env: Environment) {
  const fn = env.FLEET_POLL_FUNCTION || env.AWS_LAMBDA_FUNCTION_NAME;
  try {
    if (env.FLEET_POLL_QUEUE_URL) {
      await new SQSClient({}).send(new SendMessageCommand({ QueueUrl: env.FLEET_POLL_QUEUE_URL, MessageBody: JSON.stringify({ continuation: true }) }));
      return;
    }
    if (!fn) return;
    const endpoint = env.FLEET_LAMBDA_ENDPOINT;
    const client = new LambdaClient(endpoint ? { endpoint, region: env.AWS_REGION ?? 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 } : {});
    await client.send(new InvokeCommand({ FunctionName: fn, InvocationType: 'Event', Payload: Buffer.from(JSON.stringify({ continuation: true })) }));
  } catch (e) {
    logger.warn('poll continuation not started: the next scheduled run continues the round', { error: (e as Error).name });
  }
}
