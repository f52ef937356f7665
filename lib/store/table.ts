import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Table } from 'dynamodb-toolbox/table';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { processEnvironment } from '../config/environment';

// Single-table design (declared in serverless.yml as HdcTable). Keys:
//   pk/sk strings; `ttl` (epoch seconds) is the table's time-to-live attribute.
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

export function createTable(documentClient: DynamoDBDocumentClient, name = processEnvironment().HDC_TABLE ?? 'hdc-local') {
  return new Table({
    documentClient,
    name,
    partitionKey: { name: 'pk', type: 'string' },
    sortKey: { name: 'sk', type: 'string' },
    entityAttributeSavedAs: '_et',
  });
}

export type HdcTable = ReturnType<typeof createTable>;

/** The table definition used by serverless.yml and by the local stack / tests to create the table. */
export const TABLE_DEFINITION: Omit<CreateTableCommandInput, 'TableName'> = {
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  BillingMode: 'PAY_PER_REQUEST',
};
