import type * as z from 'zod/mini';
import { type REQUESTS, type Request, apiRequestOf } from './requests.ts';
import { type GOTRUE_REQUESTS, gotrueRequestOf } from './requests-gotrue.ts';
import { type RouteName, routeNamed } from './routes.ts';

// Both maps; endpoint.ts imports these types only, so a function bundles its own family's map alone.
type Requests = typeof REQUESTS & typeof GOTRUE_REQUESTS;
type Part<N, K extends keyof Request> = N extends keyof Requests
  ? Requests[N] extends Record<K, infer S extends z.ZodMiniType>
    ? z.output<S>
    : undefined
  : undefined;

/** The parsed body and query of route N (undefined when it reads none). */
export type BodyOf<N extends RouteName> = Part<N, 'body'>;
export type QueryOf<N extends RouteName> = Part<N, 'query'>;

/** Any route's body and query schemas, for the OpenAPI document and the tests (no function bundles this). */
export const requestOf = (name: RouteName): Request => (routeNamed(name).dialect === 'gotrue' ? gotrueRequestOf(name) : apiRequestOf(name));
