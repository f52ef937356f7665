import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createTable, type Store } from '../store';
import { processEnvironment } from '../config/environment';

// The fleet plane's table client. Unlike the SDK default it bounds every request: a half-closed
// keep-alive socket otherwise hangs a call until the Lambda times out (seen under
// serverless-offline, whose workers keep sockets idle between invocations); the SDK retries.
export function createFleetStore(opts: { endpoint?: string; tableName: string }): Store {
  const client = new DynamoDBClient({
    ...(opts.endpoint
      ? { endpoint: opts.endpoint, region: processEnvironment().AWS_REGION ?? 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    requestHandler: { connectionTimeout: 2000, requestTimeout: 5000 },
    maxAttempts: 4,
  });
  const documentClient = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { documentClient, table: createTable(documentClient, opts.tableName), tableName: opts.tableName };
}
