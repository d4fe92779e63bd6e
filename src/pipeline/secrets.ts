import {
  Kind,
  coerceInputValue,
  getNamedType,
  getOperationAST,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { refusal } from '../errors.js';

/** Is this input type secret (its `extensions` say so, as CredencialesSolInput's do)? */
const isSecretType = (type: { extensions?: Readonly<Record<string, unknown>> } | undefined) => type?.extensions?.['secret'] === true;

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
  return type !== undefined && isSecretType(getNamedType(type));
}

/** Documents that held a secret written in them: never kept by any cache (src/pipeline/document-cache.ts reads it). */
const holdingSecrets = new WeakSet<DocumentNode>();
export const holdsSecret = (document: DocumentNode): boolean => holdingSecrets.has(document);

/**
 * A value of a secret input type written in the document itself (an argument, a field of an
 * input object, a variable's default value), rather than sent in a variable, is refused: the
 * document's text is what clients log, caches keep and APQ registers. Every other error of
 * that document is dropped with it, since graphql-js's own quote the value they find wrong.
 */
export function useNoSecretsInDocuments(): Plugin {
  const rule: ValidationRule = (context) => {
    const check = (node: ValueNode) => {
      if (node.kind === Kind.VARIABLE || node.kind === Kind.NULL) return;
      const type = context.getInputType();
      if (type && isSecretType(getNamedType(type))) {
        holdingSecrets.add(context.getDocument());
        context.reportError(refusal('secretInDocument'));
      }
    };
    // Each kind of value, where it stands: a whole object or a scalar where a secret type is expected.
    return {
      ObjectValue: check,
      StringValue: check,
      IntValue: check,
      FloatValue: check,
      BooleanValue: check,
      EnumValue: check,
      ListValue: check,
    };
  };
  return {
    onValidate({ addValidationRule, params }) {
      addValidationRule(rule);
      return ({ result, setResult }) => {
        if (!holdsSecret(params.documentAST)) return;
        // Once, however many places: one error that quotes nothing, with no location inside the value.
        setResult([result.find((e) => e.extensions['code'] === 'SECRET_IN_DOCUMENT')!]);
      };
    },
  };
}

/** The rule broken, without the value: graphql-js ends a scalar's message with it, and may suggest a field. */
function secretError(name: string, path: readonly (string | number)[], reason: string): GraphQLError {
  const rule = reason
    .replace(/\s*Did you mean .*$/s, '')
    .split(': ')[0]!
    .replace(/\.$/, '');
  const at = path.length > 0 ? ` en "${[name, ...path].join('.')}"` : '';
  return refusal('secretVariable', { name, at, rule });
}
