import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { processEnvironment } from '../config/environment';

// The DynamoDB client of a function, without the table model (dynamodb-toolbox): what the health
// probe needs, and what lib/store builds its table on.
export function createDocumentClient(endpoint = processEnvironment().DYNAMODB_ENDPOINT): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    // bounded requests: a socket that never answers is retried, never waited on until the Lambda times out
    requestHandler: { connectionTimeout: 2000, requestTimeout: 5000 },
    maxAttempts: 4,
    ...(endpoint
      ? { endpoint, region: processEnvironment().AWS_REGION ?? 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** The table answers (the readiness probe): HDC_TABLE of this function's environment by default. */
export async function ping(documentClient: DynamoDBDocumentClient, tableName = processEnvironment().HDC_TABLE ?? 'hdc-local'): Promise<void> {
  await documentClient.send(new DescribeTableCommand({ TableName: tableName }));
}
