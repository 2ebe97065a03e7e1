/** Polls `ok` every `everyMs` until it holds; throws, naming `what`, after `timeoutMs`. */
export const until = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 60_000, everyMs = 50): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};
