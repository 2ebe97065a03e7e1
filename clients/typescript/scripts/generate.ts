import { writeFileSync } from 'node:fs';
import { renderSchema, TARGET } from './schema.ts';

writeFileSync(TARGET, await renderSchema());
console.log(`wrote ${TARGET.pathname}`);
