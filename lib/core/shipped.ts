import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads a file that a route's function reads at run time instead of bundling it (the route's
 * `files` in lib/http/routes.ts, given as paths inside the project). The stack copies each beside
 * the bundle, where Lambda's task root has it; run from the project, it is read in place.
 */
export const readShipped = (projectPath: string): string => {
  const taskRoot = process.env.LAMBDA_TASK_ROOT;
  const path = taskRoot ? join(taskRoot, basename(projectPath)) : fileURLToPath(new URL(`../../${projectPath}`, import.meta.url));
  return readFileSync(path, 'utf8');
};
