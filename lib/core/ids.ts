import { randomInt } from 'node:crypto';

/**
 * Integer ids: milliseconds since 2025-01-01 times 2^12, plus 12 random bits. They sort by creation
 * time, stay below 2^53 until about 2094, and need no shared counter item: creates never contend on
 * one hot key. Two creates in the same millisecond clash with odds of 1 in 4096; the item that
 * carries the id is written with attribute_not_exists, and the use case retries with a fresh id.
 */
const EPOCH_MS = Date.UTC(2025, 0, 1);
const RANDOM_BITS = 4096;

export const newId = (now: Date): number => (now.getTime() - EPOCH_MS) * RANDOM_BITS + randomInt(RANDOM_BITS);
