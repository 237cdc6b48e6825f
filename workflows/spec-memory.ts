/**
 * The spec a run has recorded (workflow-code version 5): observe returns a spec the run already holds
 * by its digest only, and regular steps get the digest instead of the spec, so an unchanged spec is
 * recorded once per run rather than in every observation and every step's input (docs/upgrading.md).
 * Runs of earlier versions pass no digest and get the spec every time, as they were recorded.
 */
import type { ObservedObject } from '../core/activity-contract';

/** The spec of the latest observation that carried one, with its digest. */
export class SpecMemory {
  private recorded: { readonly digest: string; readonly spec: unknown } | undefined;

  constructor(private readonly enabled: boolean) {}

  /** The part of observe's input that names the spec this run holds. */
  observeInput(): { knownSpecDigest?: string } {
    return this.enabled && this.recorded ? { knownSpecDigest: this.recorded.digest } : {};
  }

  /**
   * The observation with its spec: the one this run holds when observe omitted it as unchanged;
   * otherwise the observed spec, now held.
   */
  complete(obs: ObservedObject): ObservedObject {
    if (!this.enabled || obs.specDigest === undefined) return obs;
    if (obs.specUnchanged) {
      if (this.recorded?.digest !== obs.specDigest) {
        throw new Error(`observe omitted spec ${obs.specDigest}, which this run does not hold`);
      }
      return { ...obs, spec: this.recorded.spec };
    }
    this.recorded = { digest: obs.specDigest, spec: obs.spec };
    return obs;
  }
}
