import { describe, expect, it } from 'vitest';
import { signOf, signsFor } from '../../src/padron/names.js';

describe('the signs of a word', () => {
  it('let a word of four characters through the words whose 4th character is its own, and no other', () => {
    const allowed = signsFor('CARL')!;
    for (const word of ['CARL', 'CARLA', 'CARLOS', 'CARLITO', 'CARL1']) expect(allowed[signOf(word)], word).toBe(1);
    // Surnames of the same bucket whose 4th and 5th characters once shared CARL's hash: thousands of names to read.
    for (const word of ['CARBAJAL', 'CARHUAS', 'CARHUAYO', 'CARDENAS', 'CARRASCO', 'CARMEN', 'CAR'])
      expect(allowed[signOf(word)], word).toBe(0);
  });

  it('let a word of five characters or more through the signs of its 4th and 5th alone', () => {
    const allowed = signsFor('CARLO')!;
    expect(allowed.reduce((n, s) => n + s, 0)).toBe(1);
    expect(allowed[signOf('CARLOS')]).toBe(1);
    expect(allowed[signOf('CARLA')]).toBe(0);
    expect(signsFor('CAR')).toBeUndefined();
  });
});
