/**
 * Collects the calls made within one turn of the event loop and hands them to `send` together (one statement, one
 * round trip, one commit for all of them). `send` answers each item with a promise of its own, so every caller
 * waits for exactly the statement that carries its item.
 */
export class TickBatch<Item, Answer> {
  readonly #send: (items: Item[]) => Array<Promise<Answer>>;
  #pending: Array<{ item: Item; resolve: (answer: Promise<Answer>) => void }> = [];

  /** `send` answers the items in their order. */
  constructor(send: (items: Item[]) => Array<Promise<Answer>>) {
    this.#send = send;
  }

  add(item: Item): Promise<Answer> {
    return new Promise((resolve) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({ item, resolve });
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    let answers: Array<Promise<Answer>>;
    try {
      answers = this.#send(batch.map((call) => call.item));
    } catch (error) {
      answers = batch.map(() => Promise.reject(error));
    }
    for (const [i, call] of batch.entries()) call.resolve(answers[i]!);
  }
}
