/** Stopping what a test environment started, in reverse order, collecting every failure. */

/** Stops things in reverse order of starting; every one is stopped even when another fails. */
export class Teardown {
  private readonly steps: { what: string; run: () => Promise<unknown> }[] = [];
  private done: Promise<void> | undefined;

  add(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.done ??= (async () => {
      const errors: Error[] = [];
      for (const step of [...this.steps].reverse()) {
        try {
          await step.run();
        } catch (err) {
          errors.push(new Error(`stopping ${step.what}: ${err instanceof Error ? err.message : String(err)}`));
        }
      }
      if (errors.length === 1) throw errors[0]!;
      if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => e.message).join('; '));
    })();
    return this.done;
  }
}
