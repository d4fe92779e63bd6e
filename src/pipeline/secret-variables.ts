import {
  coerceInputValue,
  getNamedType,
  getOperationAST,
  isNonNullType,
  typeFromAST,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { gatewayError } from '../errors.js';

/**
 * Variables of a secret input type (one whose type says `extensions: { secret: true }`, as
 * CredencialesSolInput does) are checked here, before execution, with messages that name the
 * field and the rule broken but never the value: graphql-js prints the whole value of a
 * variable that fails to coerce, SOL user and password included.
 */
export function useSecretVariables(): Plugin {
  /** Per operation: its variables of a secret type (most operations have none). */
  const secretsOf = new WeakMap<OperationDefinitionNode, readonly VariableDefinitionNode[]>();
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation?.variableDefinitions?.length) return;
      let secrets = secretsOf.get(operation);
      if (!secrets) secretsOf.set(operation, (secrets = operation.variableDefinitions.filter((d) => isSecret(args.schema, d))));
      if (secrets.length === 0) return;
      const given = (args.variableValues ?? {}) as Record<string, unknown>;
      const errors: GraphQLError[] = [];
      for (const definition of secrets) {
        const name = definition.variable.name.value;
        const type = typeFromAST(args.schema, definition.type) as GraphQLInputType;
        const value = given[name];
        if (value === undefined) {
          if (isNonNullType(type) && !definition.defaultValue) errors.push(secretError(name, [], 'no se envió'));
          continue;
        }
        coerceInputValue(value, type, (path, _value, error) => errors.push(secretError(name, path, error.message)));
      }
      if (errors.length > 0) setResultAndStopExecution({ errors });
    },
  };
}

function isSecret(schema: GraphQLSchema, definition: VariableDefinitionNode): boolean {
  const type = typeFromAST(schema, definition.type);
  return type !== undefined && getNamedType(type).extensions['secret'] === true;
}

/** The rule broken, without the value: graphql-js ends a scalar's message with it, and may suggest a field. */
function secretError(name: string, path: readonly (string | number)[], reason: string): GraphQLError {
  const rule = reason
    .replace(/\s*Did you mean .*$/s, '')
    .split(': ')[0]!
    .replace(/\.$/, '');
  const at = path.length > 0 ? ` en "${[name, ...path].join('.')}"` : '';
  return gatewayError('BAD_USER_INPUT', `La variable "$${name}" no es válida${at}: ${rule}. Su valor no se muestra: es secreto.`);
}
