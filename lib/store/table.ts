import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Table } from 'dynamodb-toolbox/table';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { processEnvironment } from '../config/environment';

export { createDocumentClient } from './client';

// Single-table design (declared in serverless.yml as HdcTable). Keys:
//   pk/sk strings; `ttl` (epoch seconds) is the table's time-to-live attribute.
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
