/** A paid call the operation's allowance could not cover: it was not sent. */
export class OperationCostError extends Error {
  override readonly name = 'OperationCostError';
  constructor(
    readonly limit: number,
    readonly spent: number,
    readonly cost: number,
  ) {
    super(`operation cost limit: ${spent} of ${limit} plan queries spent, ${cost} more asked`);
  }
}

/**
 * What one operation may still spend on paid calls (MAX_OPERATION_COST): each call takes its
 * price before it is sent and gives back what it was not billed. The estimate refuses up front
 * what it can see; this holds when a list turns out longer than the estimate assumed.
 */
export class OperationSpend {
  #taken = 0;

  constructor(readonly limit: number) {}

  /** Takes `cost` for a call about to be sent, or says false (the call is then not sent: `refusal` says why). */
  mayTake(cost: number): boolean {
    if (this.#taken + cost > this.limit) return false;
    this.#taken += cost;
    return true;
  }

  /** Why a call of `cost` was not sent. */
  refusal(cost: number): OperationCostError {
    return new OperationCostError(this.limit, this.#taken, cost);
  }

  /** What a call took and was not billed for. */
  giveBack(queries: number): void {
    this.#taken = Math.max(0, this.#taken - queries);
  }

  /** Plan queries taken and not given back. */
  get taken(): number {
    return this.#taken;
  }
}
