import type { Logger } from 'pino';
import { Register, type RegisterOptions } from './register.js';

/** SUNAT's register (PADRON) opened from disk and refreshed in the background, its state told to `observe`; the start does not wait for it. */
export function startRegister(
  padron: Omit<RegisterOptions, 'source' | 'logger'> & { source: string },
  logger: Logger,
  observe: (state: () => ReturnType<Register['state']>) => void,
): Register {
  const register = new Register({ ...padron, source: padron.source === 'sunat' ? 'sunat' : new URL(padron.source), logger });
  observe(() => register.state());
  void register.start();
  return register;
}
