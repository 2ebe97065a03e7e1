import type { Context } from 'aws-lambda';
import { type RotationEvent, rotationStep } from '#lib/auth/key-rotation.ts';
import { secretsManager } from '#lib/auth/secret-store.ts';
import { log } from '#lib/core/log.ts';
import { db } from '#lib/db/service.ts';

/** Secrets Manager's rotation function for the signing-key secret: one step per call (lib/auth/key-rotation.ts). */
export const handler = async (event: RotationEvent, context: Context): Promise<void> => {
  log.info('rotation step', { step: event.Step, requestId: context.awsRequestId });
  await rotationStep(secretsManager(), db(), event, new Date());
};
