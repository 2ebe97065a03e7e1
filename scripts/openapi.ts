import { writeFileSync } from 'node:fs';
import { buildDocument } from '#lib/openapi/document.ts';

/** `npm run openapi`: writes openapi.json, which the API serves and the client's types come from. */
const target = new URL('../openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(buildDocument(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
