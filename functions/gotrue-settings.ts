import { gotrueSettings } from '#lib/gotrue/views.ts';
import { gotrueEndpoint } from '#lib/http/gotrue-endpoint.ts';

/** GET /auth/v1/settings: what this deployment offers, as GoTrue lists it (auth-js reads it). */
export const handler = gotrueEndpoint('gotrue-settings', () => Promise.resolve(gotrueSettings()));
