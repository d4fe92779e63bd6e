import { builder } from './builder.js';
import './errors.js';
import './contribuyente.js';
import './licencia.js';
import './comprobantes.js';

export const schema = builder.toSchema();
