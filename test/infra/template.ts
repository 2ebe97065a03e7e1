import { App, type CfnResource } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import type { RosterDataStack } from '../../infra/data-stack.ts';
import { compileCacheEnv } from '../../infra/endpoint.ts';
import { rosterStacks, type RosterStack } from '../../infra/stack.ts';

/**
 * The app as `cdk synth` builds it (infra/app.ts), minus bundling, read back as templates for the
 * infra tests. The functions' stack refers to the data stack through exports; `api` has each
 * `Fn::ImportValue` replaced by the data stack's exported value, so one comparison works for both
 * (the table ARN is `{ "Fn::GetAtt": [<data stack's table id>, "Arn"] }` in either).
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
}

export interface Synthesized {
  readonly app: App;
  readonly data: RosterDataStack;
  readonly stack: RosterStack;
  readonly dataJson: Json;
  /** The functions' stack, imports resolved. */
  readonly json: Json;
  /** The functions' stack as synthesized: imports not resolved. */
  readonly rawJson: Json;
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

const templateOf = (stack: RosterDataStack | RosterStack): Json => {
  const json = Template.fromStack(stack).toJSON() as Partial<Json>;
  return { Resources: json.Resources ?? {}, Outputs: json.Outputs ?? {} };
};

/** Builds the app with this context (strings, as `-c` gives them) and reads it back. */
export const synth = (context: Record<string, unknown> = {}): Synthesized => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const { data, api: stack } = rosterStacks(app);
  const dataJson = templateOf(data);
  const rawJson = templateOf(stack);
  const exported = new Map(Object.values(dataJson.Outputs).flatMap((o) => (o.Export ? [[o.Export.Name, o.Value] as const] : [])));
  const json = JSON.parse(JSON.stringify(rawJson), (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || !('Fn::ImportValue' in value)) return value;
    const name = (value as { 'Fn::ImportValue': string })['Fn::ImportValue'];
    if (!exported.has(name)) throw new Error(`import of ${name}, which the data stack does not export`);
    return exported.get(name);
  }) as Json;
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
    return stack.getLogicalId(fn.node.defaultChild as CfnResource);
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
