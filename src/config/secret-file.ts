import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** A variable naming a file that holds a secret (a mounted secret): read once at start, trimmed; missing or empty is a bad value. */
export const secretFile = () =>
  z.string().transform((path, ctx) => {
    try {
      const secret = readFileSync(path, 'utf8').trim();
      if (secret) return secret;
      ctx.addIssue({ code: 'custom', message: `${path} está vacío` });
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `no se pudo leer ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}` });
    }
    return z.NEVER;
  });
