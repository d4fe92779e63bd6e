import { refusal } from '../errors.js';
import type { Checked } from './validation.js';

/** The value of a local check, or an INVALID_INPUT error that costs no query. */
export function valid<T>(checked: Checked<T>): T {
  if (!checked.ok) throw refusal('invalidInput', { why: checked.message });
  return checked.value;
}
