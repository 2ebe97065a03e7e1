import { App, type CfnResource, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import type { RosterDataStack } from '#infra/data-stack.ts';
import { compileCacheEnv } from '#infra/endpoint.ts';
import { rosterStacks, type RosterStack } from '#infra/stack.ts';

/**
 * The app as `cdk synth` builds it (infra/app.ts), minus bundling, read back as templates for the
 * infra tests. The functions' stack refers to the data stack through exports; `json` has each
 * `Fn::ImportValue` replaced by the data stack's exported value, so one comparison works for both
 * (the table ARN is `{ "Fn::GetAtt": [<data stack's table id>, "Arn"] }` in either).
 *
 * The functions' stack is read as one template with its nested stacks (infra/stack.ts
 * FUNCTION_STACKS) merged in: their resources keyed by their own logical ids, each of their
 * parameters replaced by what the parent passes, and each `Fn::GetAtt [<nested stack>, Outputs.X]`
 * of the parent by that output's value. So a reference reads the same wherever the two ends live.
 */
export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  UpdatePolicy?: Record<string, unknown>;
}
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
export interface Output {
  Value: unknown;
  Description?: string;
  Export?: { Name: string };
}
export interface Json {
  Resources: Record<string, Resource>;
  Outputs: Record<string, Output>;
  Parameters?: Record<string, unknown>;
}

/** One CloudFormation stack of the functions' stack: the parent or a nested one, as synthesized. */
export interface StackTemplate {
  /** The construct id: `Roster`, or a FUNCTION_STACKS id. */
  readonly id: string;
  readonly stack: Stack;
  readonly json: Json;
}

export interface Synthesized {
  readonly app: App;
  readonly data: RosterDataStack;
  readonly stack: RosterStack;
  readonly dataJson: Json;
  /** The functions' stack with its nested stacks merged in, references resolved (imports, parameters, outputs). */
  readonly json: Json;
  /** The same merged, nothing resolved. */
  readonly rawJson: Json;
  /** The functions' stack, then each of its nested stacks, each as synthesized. */
  readonly templates: readonly StackTemplate[];
  readonly resources: Record<string, Resource>;
  readonly dataResources: Record<string, Resource>;
  ofType: (type: string) => [string, Resource][];
  only: (type: string) => [string, Resource];
  /** A function's logical id by handler name: an API function or a background one. */
  logicalId: (name: string) => string;
  functionOf: (name: string) => Resource;
  /** Every statement of the function's role: its own policies, inline or attached; no managed ones. */
  statementsOf: (name: string) => Statement[];
  /** Every statement of every role and policy of the functions' stack. */
  allStatements: () => Statement[];
  /** A function's environment variables less the compile cache's, which every function has. */
  variables: (name: string) => Record<string, unknown>;
  /** A function's environment variables, all of them. */
  allVariables: (name: string) => Record<string, unknown>;
}

export const actionsOf = (s: Statement): string[] => [s.Action].flat();

const templateOf = (stack: Stack): Json => {
  const json = Template.fromStack(stack).toJSON() as Partial<Json>;
  return { Resources: json.Resources ?? {}, Outputs: json.Outputs ?? {}, Parameters: json.Parameters ?? {} };
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The only key of an intrinsic function (`{ "Ref": … }`), or undefined. */
const intrinsic = (value: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
};

/** Builds the app with this context (strings, as `-c` gives them) and reads it back. */
export const synth = (context: Record<string, unknown> = {}): Synthesized => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const { data, api: stack } = rosterStacks(app);
  const dataJson = templateOf(data);
  const exported = new Map(Object.values(dataJson.Outputs).flatMap((o) => (o.Export ? [[o.Export.Name, o.Value] as const] : [])));
  const nestedStacks = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
  const templates: StackTemplate[] = [stack, ...nestedStacks].map((s) => ({ id: s.node.id, stack: s, json: templateOf(s) }));
  const templateOfStack = new Map(templates.map((t) => [t.stack, t]));
  /** Each nested stack by its parent and its AWS::CloudFormation::Stack resource's logical id there. */
  const nestedAt = new Map(
    nestedStacks.map((n) => {
      const parent = n.nestedStackParent as Stack;
      return [`${parent.node.path} ${parent.getLogicalId(n.nestedStackResource as CfnResource)}`, n] as const;
    }),
  );

  /** `value` as read in `from`, with imports, parameters and nested stack outputs replaced by what they stand for. */
  const resolve = (value: unknown, from: Stack): unknown => {
    if (Array.isArray(value)) return value.map((item) => resolve(item, from));
    if (!isObject(value)) return value;
    const fn = intrinsic(value);
    if (fn === 'Fn::ImportValue') {
      const name = value[fn] as string;
      if (!exported.has(name)) throw new Error(`${from.node.path} imports ${name}, which the data stack does not export`);
      return exported.get(name);
    }
    const parent = from.nestedStackParent;
    if (fn === 'Ref' && parent && typeof value.Ref === 'string' && value.Ref in (templateOfStack.get(from)?.json.Parameters ?? {})) {
      const resourceId = parent.getLogicalId(from.nestedStackResource as CfnResource);
      const parameters = (templateOfStack.get(parent)?.json.Resources[resourceId]?.Properties.Parameters ?? {}) as Record<string, unknown>;
      if (!(value.Ref in parameters)) throw new Error(`${parent.node.path} passes no parameter ${value.Ref} to ${from.node.path}`);
      return resolve(parameters[value.Ref], parent);
    }
    if (fn === 'Fn::GetAtt') {
      const [id, attribute] = value[fn] as [string, string];
      const nested = nestedAt.get(`${from.node.path} ${id}`);
      if (nested && attribute.startsWith('Outputs.')) {
        const output = templateOfStack.get(nested)?.json.Outputs[attribute.slice('Outputs.'.length)];
        if (!output) throw new Error(`${from.node.path} reads ${attribute} of ${nested.node.path}, which has no such output`);
        return resolve(output.Value, nested);
      }
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, from)]));
  };

  /** Every stack's resources in one record; a logical id in two stacks would make the tests' lookups ambiguous. */
  const merge = (read: (resource: Resource, from: Stack) => Resource): Record<string, Resource> => {
    const merged: Record<string, Resource> = {};
    const home = new Map<string, string>();
    for (const { stack: from, json: template } of templates) {
      for (const [id, resource] of Object.entries(template.Resources)) {
        const other = home.get(id);
        if (other) throw new Error(`logical id ${id} is in both ${other} and ${from.node.path}: give one of the constructs another id`);
        home.set(id, from.node.path);
        merged[id] = read(resource, from);
      }
    }
    return merged;
  };
  const parentJson = templateOfStack.get(stack)?.json as Json;
  const rawJson: Json = { Resources: merge((r) => r), Outputs: parentJson.Outputs };
  const json: Json = {
    Resources: merge((r, from) => resolve(r, from) as Resource),
    Outputs: resolve(parentJson.Outputs, stack) as Record<string, Output>,
  };
  const resources = json.Resources;
  const ofType = (type: string): [string, Resource][] => Object.entries(resources).filter(([, r]) => r.Type === type);
  const only = (type: string): [string, Resource] => {
    const [first, ...more] = ofType(type);
    if (!first || more.length > 0) throw new Error(`expected exactly one ${type}`);
    return first;
  };
  const logicalId = (name: string): string => {
    const fn = stack.endpoints.get(name) ?? stack.background.get(name);
    if (!fn) throw new Error(`no function ${name}`);
    return Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnResource);
  };
  const functionOf = (name: string): Resource => resources[logicalId(name)] as Resource;
  const policyStatements = (p: Resource): Statement[] => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
  const inlineStatements = (role: Resource): Statement[] =>
    ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap((p) => p.PolicyDocument.Statement);
  const statementsOf = (name: string): Statement[] => {
    const roleId = (functionOf(name).Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = resources[roleId] as Resource;
    expect(role.Properties.ManagedPolicyArns ?? []).toEqual([]);
    const attached = ofType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })))
      .flatMap(([, p]) => policyStatements(p));
    return [...inlineStatements(role), ...attached];
  };
  const allStatements = (): Statement[] => [
    ...ofType('AWS::IAM::Role').flatMap(([, r]) => inlineStatements(r)),
    ...ofType('AWS::IAM::Policy').flatMap(([, p]) => policyStatements(p)),
  ];
  const allVariables = (name: string): Record<string, unknown> =>
    ((functionOf(name).Properties.Environment as { Variables?: Record<string, unknown> }) ?? {}).Variables ?? {};
  // Every function carries the compile cache's variables (checked in compile-cache.test.ts): left out here.
  const variables = (name: string): Record<string, unknown> =>
    Object.fromEntries(Object.entries(allVariables(name)).filter(([key]) => !(key in compileCacheEnv())));
  return {
    app,
    data,
    stack,
    dataJson,
    json,
    rawJson,
    templates,
    resources,
    dataResources: dataJson.Resources,
    ofType,
    only,
    logicalId,
    functionOf,
    statementsOf,
    allStatements,
    variables,
    allVariables,
  };
};
