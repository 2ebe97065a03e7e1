import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '../config.ts';

/**
 * One client per process, made at module scope so warm invocations reuse its connections.
 * Timeouts bound every call (by default 1 s to connect, 2 s per attempt, 3 attempts) well inside
 * the function timeout, so a hung database becomes a 503 rather than a gateway timeout.
 */
export const createDocumentClient = (endpoint = config.dynamodbEndpoint): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: config.region,
      maxAttempts: 3,
      requestHandler: new NodeHttpHandler({
        connectionTimeout: config.dynamodbConnectTimeoutMs,
        requestTimeout: config.dynamodbRequestTimeoutMs,
        throwOnRequestTimeout: true,
      }),
      ...(endpoint
        ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
        : {}),
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
