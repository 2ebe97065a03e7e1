/**
 * The cold-start baseline: `GET /api/teams/{slug}` written the naive way on the users' stack, as an
 * outside harness's naive baseline is described (this code is our own). Middy with
 * its JSON body parser, an HS256 token checked with jose, the path checked with zod, one ElectroDB
 * get: one GetItem. No sessions, no key rotation, no limits. bench/cold-start.ts bundles it the
 * plain way (bundleBaseline) and times it in the same rounds as Roster's functions, so the ratio of
 * each function to it holds however busy the machine is.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { Entity } from 'electrodb';
import { jwtVerify } from 'jose';
import * as z from 'zod';

/** The HS256 secret of the baseline's tokens: a benchmark fixture, signed with by bench/cold-start.ts. */
export const BASELINE_SECRET = 'roster-bench-baseline-secret-of-32-bytes';
export const BASELINE_TEAM = { slug: 'baseline-team', name: 'Baseline team' };

const client = DynamoDBDocumentClient.from(
  new DynamoDBClient(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
);

export const baselineTeam = new Entity(
  {
    model: { entity: 'baselineTeam', version: '1', service: 'bench' },
    attributes: { slug: { type: 'string', required: true }, name: { type: 'string', required: true } },
    indexes: {
      primary: {
        pk: { field: 'pk', composite: ['slug'] },
        sk: { field: 'sk', composite: [] },
      },
    },
  },
  { client, table: process.env.TABLE_NAME ?? 'roster' },
);

const path = z.object({ slug: z.string().min(1).max(64) });
const secret = new TextEncoder().encode(BASELINE_SECRET);

const getTeam = async (event: APIGatewayProxyEventV2) => {
  const token = event.headers.authorization?.replace(/^Token /, '') ?? '';
  try {
    await jwtVerify(token, secret, { algorithms: ['HS256'] });
  } catch {
    return { statusCode: 401, body: JSON.stringify({ error: 'unauthorized' }) };
  }
  const params = path.safeParse(event.pathParameters ?? {});
  if (!params.success) return { statusCode: 422, body: JSON.stringify({ error: 'invalid' }) };
  const { data } = await baselineTeam.get({ slug: params.data.slug }).go();
  if (!data) return { statusCode: 404, body: JSON.stringify({ error: 'not found' }) };
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data }) };
};

export const handler = middy(getTeam).use(httpJsonBodyParser({ disableContentTypeError: true }));
