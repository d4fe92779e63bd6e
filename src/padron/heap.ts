/**
 * A min-heap of numbers (a sorted run's, a stream's) ordered by `less` on what each stands for, kept apart in the caller's arrays.
 * By hand: its items index the caller's keys, so a key changes in place and the top sinks once, with no object per item.
 */
export class Heap {
  readonly #items: number[] = [];
  constructor(readonly less: (a: number, b: number) => boolean) {}
  get size() {
    return this.#items.length;
  }
  get top() {
    return this.#items[0]!;
  }
  push(item: number) {
    const items = this.#items;
    items.push(item);
    for (let i = items.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!this.less(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }
  /** After the top's key changed: sinks it to its place, or drops it when it is `gone`. */
  fix(gone: boolean) {
    const items = this.#items;
    if (gone) {
      const last = items.pop()!;
      if (items.length === 0) return;
      items[0] = last;
    }
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < items.length && this.less(items[l]!, items[m]!)) m = l;
      if (r < items.length && this.less(items[r]!, items[m]!)) m = r;
      if (m === i) return;
      [items[i], items[m]] = [items[m]!, items[i]!];
      i = m;
    }
  }
}
