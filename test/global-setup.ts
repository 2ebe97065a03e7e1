import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../infra/dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

/**
 * One DynamoDB Local for the whole run, in memory. If it cannot start (no Java), the run fails
 * here: no test falls back to a fake. DYNAMODB_ENDPOINT may point at one already running.
 */
export default async function setup(project: TestProject) {
  const existing = process.env.DYNAMODB_ENDPOINT;
  if (existing) {
    project.provide('dynamodbEndpoint', existing);
    return;
  }
  const dynamo = await startDynamoDbLocal();
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  return () => dynamo.stop();
}
