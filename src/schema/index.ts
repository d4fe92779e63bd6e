import { specifiedDirectives } from 'graphql';
import { costDirectives } from '../pipeline/billed.js';
import { builder } from './builder.js';
import './errors.js';
import './contribuyente.js';
import './licencia.js';
import './comprobantes.js';

// The given directives replace graphql-js's own (@skip, @include, ...) unless they are named too.
export const schema = builder.toSchema({ directives: [...specifiedDirectives, ...costDirectives] });
