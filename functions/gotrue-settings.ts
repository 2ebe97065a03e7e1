import { GOTRUE_SETTINGS } from '#lib/gotrue/views.ts';
import { endpoint } from '#lib/http/endpoint.ts';

/** GET /auth/v1/settings: what this deployment offers, as GoTrue lists it (auth-js reads it). */
export const handler = endpoint('gotrue-settings', () => Promise.resolve(GOTRUE_SETTINGS));
