import { type AuthChangeEvent, GoTrueClient } from '@supabase/auth-js';
import type { Api } from './api.ts';
import { expectDocumented } from './openapi.ts';

/**
 * fetch, and every answer auth-js gets checked against openapi.json (status, headers, body), as
 * the api tier's own requests are: the document describes the wire auth-js reads.
 */
const documentedFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  expectDocumented(method, url.pathname, { status: res.status, headers: res.headers, text: await res.clone().text() });
  return res;
};

/** @supabase/auth-js as an app sets it up against `api`'s /auth/v1, with its session kept in memory and no timers of its own. */
export const authClient = (api: Pick<Api, 'url'>, { flowType = 'implicit' }: { flowType?: 'implicit' | 'pkce' } = {}) => {
  const store = new Map<string, string>();
  const events: AuthChangeEvent[] = [];
  const auth = new GoTrueClient({
    url: `${api.url}/auth/v1`,
    storageKey: `roster-test-${Math.random()}`,
    storage: {
      getItem: (key) => store.get(key) ?? null,
      setItem: (key, value) => void store.set(key, value),
      removeItem: (key) => void store.delete(key),
    },
    autoRefreshToken: false,
    persistSession: true,
    detectSessionInUrl: false,
    flowType,
    fetch: documentedFetch,
  });
  auth.onAuthStateChange((event) => {
    events.push(event);
  });
  return { auth, events };
};
