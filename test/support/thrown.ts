/** Runs fn and returns what it threw, failing the test when it did not throw (tests assert the error's `code`). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
