/* eslint-disable no-console -- the one place that writes logs */
/**
 * Structured logs on stdout/stderr. Lambda's JSON log format adds the timestamp, level and request
 * id; locally the same lines go to the terminal. Error causes are logged by name and message only.
 */
const describe = (error: unknown) =>
  error instanceof Error ? { error: error.name, detail: error.message } : { error: String(error) };

export const log = {
  info: (message: string, fields: Record<string, unknown> = {}): void => console.info(JSON.stringify({ message, ...fields })),
  error: (message: string, error: unknown, fields: Record<string, unknown> = {}): void =>
    console.error(JSON.stringify({ message, ...describe(error), ...fields })),
};
