import type { Config } from '../config.js';

/** Exit codes when the port cannot be had, one for each reason, so that a supervisor can tell them apart. */
export const LISTEN_ERRORS = [
  { code: 'EADDRINUSE', exitCode: 78 },
  { code: 'EACCES', exitCode: 77 },
  { code: 'ENOTFOUND', exitCode: 68 },
  { code: 'EADDRNOTAVAIL', exitCode: 69 },
] as const;

/** The one line that says why the gateway cannot listen. */
export function cannotListen(config: Config, code: (typeof LISTEN_ERRORS)[number]['code']): string {
  const where = `${config.host}:${config.port}`;
  switch (code) {
    case 'EACCES':
      return `Cannot listen on ${where}: permission denied (EACCES). Use a port above 1023, or set PORT.`;
    case 'ENOTFOUND':
      return (
        `Cannot listen on ${where}: HOST ${config.host} does not resolve (ENOTFOUND). ` +
        `Set HOST to an address of this machine, such as 0.0.0.0 or 127.0.0.1.`
      );
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${where}: HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL). Set HOST to one, such as 0.0.0.0 or 127.0.0.1.`;
    default:
      return `Cannot listen on ${where}: port ${config.port} is already in use (EADDRINUSE). Stop the other process, or set PORT to a free port.`;
  }
}

/**
 * SIGINT and SIGTERM, every time they come: Ctrl-C, systemd and npm signal the whole process
 * group, so the gateway gets the signal from the terminal and again from npm or tsx. A one-shot
 * listener would let the second one kill it.
 */
export function onStopSignals(stop: (signal: NodeJS.Signals) => void): void {
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
