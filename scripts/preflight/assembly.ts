/**
 * What the deploy would need, read from a synth of the app itself (cdk.json's `app`, as `cdk deploy`
 * runs it, bundling skipped): the stacks, the bootstrap version aws-cdk-lib requires of them, and
 * their templates (reserved concurrency, SES identities, retained resources).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `cdk bootstrap`'s stack name unless cdk.json or the command line says otherwise. */
export const DEFAULT_TOOLKIT_STACK = 'CDKToolkit';

export type Context = Record<string, unknown>;

/** The part of cdk.json the CLI would use. */
export interface CdkJson {
  app: string;
  context: Context;
  toolkitStackName: string;
}

export const readCdkJson = async (root = ROOT): Promise<CdkJson> => {
  const raw = JSON.parse(await readFile(join(root, 'cdk.json'), 'utf8')) as {
    app?: unknown;
    context?: Context;
    toolkitStackName?: unknown;
  };
  if (typeof raw.app !== 'string') throw new Error('cdk.json has no "app" command');
  return {
    app: raw.app,
    context: raw.context ?? {},
    toolkitStackName: typeof raw.toolkitStackName === 'string' ? raw.toolkitStackName : DEFAULT_TOOLKIT_STACK,
  };
};

export interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  Metadata?: Record<string, unknown>;
}

export interface Template {
  Resources?: Record<string, Resource>;
}

export interface AssemblyStack {
  /** The CloudFormation stack name. */
  name: string;
  template: Template;
}

export interface Assembly {
  stacks: AssemblyStack[];
  /** The highest `requiresBootstrapStackVersion` among the stacks and their asset manifests. */
  requiredBootstrapVersion: number;
  /** The SSM parameter holding the bootstrapped version (it carries the bootstrap qualifier). */
  bootstrapParameter: string;
}

interface Manifest {
  artifacts?: Record<
    string,
    {
      type: string;
      properties?: {
        templateFile?: string;
        stackName?: string;
        requiresBootstrapStackVersion?: number;
        bootstrapStackVersionSsmParameter?: string;
      };
    }
  >;
}

/**
 * A stack's template with the resources of its nested stacks added (the functions' stack keeps its
 * API functions in nested stacks, infra/stack.ts): what one deploy of the stack creates. CDK names
 * each nested template in its AWS::CloudFormation::Stack's asset metadata.
 */
const readTemplate = async (dir: string, file: string): Promise<Template> => {
  const template = JSON.parse(await readFile(join(dir, file), 'utf8')) as Template;
  const resources = { ...template.Resources };
  for (const resource of Object.values(template.Resources ?? {})) {
    const nested = resource.Type === 'AWS::CloudFormation::Stack' ? resource.Metadata?.['aws:asset:path'] : undefined;
    if (typeof nested === 'string') Object.assign(resources, (await readTemplate(dir, nested)).Resources);
  }
  return { ...template, Resources: resources };
};

/** Reads a cloud assembly directory (`cdk.out`) as the CLI would deploy it. */
export const readAssembly = async (dir: string): Promise<Assembly> => {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const stacks: AssemblyStack[] = [];
  let requiredBootstrapVersion = 0;
  let bootstrapParameter: string | undefined;
  for (const [id, artifact] of Object.entries(manifest.artifacts ?? {})) {
    const props = artifact.properties ?? {};
    if (artifact.type !== 'aws:cloudformation:stack' && artifact.type !== 'cdk:asset-manifest') continue;
    requiredBootstrapVersion = Math.max(requiredBootstrapVersion, props.requiresBootstrapStackVersion ?? 0);
    bootstrapParameter ??= props.bootstrapStackVersionSsmParameter;
    if (artifact.type === 'aws:cloudformation:stack' && props.templateFile) {
      stacks.push({ name: props.stackName ?? id, template: await readTemplate(dir, props.templateFile) });
    }
  }
  if (stacks.length === 0 || bootstrapParameter === undefined)
    throw new Error(`${dir} holds no stack synthesized for a bootstrapped environment`);
  return { stacks, requiredBootstrapVersion, bootstrapParameter };
};

/**
 * The line a failed app printed that says why, not its stack trace: Node's `Error: <message>`, or
 * aws-cdk-lib's `«Code» <message>` for its own errors.
 */
export const reasonOf = (stderr: string): string => {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  for (const pattern of [/^(?:[A-Z]\w*)?Error: (.+)$/, /^«\w+» (.+)$/]) {
    const reason = lines.map((line) => pattern.exec(line)?.[1]).find(Boolean);
    if (reason) return reason;
  }
  return lines.find((line) => !line.startsWith('Node.js v')) ?? 'the app exited without a message';
};

/**
 * Synthesizes the app the way `cdk deploy` does (its command from cdk.json, run by the shell, the
 * context in CDK_CONTEXT_JSON, CDK_DEFAULT_ACCOUNT/REGION set) into a temporary directory, without
 * bundling the functions (their code does not change what is checked), and reads it. A bad option
 * throws the app's one sentence.
 */
export const synthesize = async (cdk: CdkJson, context: Context, target: { account: string; region: string }): Promise<Assembly> => {
  const outdir = await mkdtemp(join(tmpdir(), 'roster-preflight-'));
  try {
    const child = spawn(cdk.app, {
      shell: true,
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        // `node` in the app command is this Node (24), whatever the shell's PATH has first.
        PATH: [dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter),
        CDK_OUTDIR: outdir,
        // Asset metadata as `cdk deploy` writes it: it names the nested stacks' templates (readTemplate).
        CDK_CONTEXT_JSON: JSON.stringify({
          ...cdk.context,
          ...context,
          'aws:cdk:bundling-stacks': [],
          'aws:cdk:enable-asset-metadata': true,
        }),
        CDK_DEFAULT_ACCOUNT: target.account,
        CDK_DEFAULT_REGION: target.region,
      },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
    if (code !== 0) throw new Error(reasonOf(stderr));
    return await readAssembly(outdir);
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
};

/** Concurrency the template reserves: the functions' literal `ReservedConcurrentExecutions`. */
export const reservedConcurrency = (template: Template): number =>
  Object.values(template.Resources ?? {})
    .filter((resource) => resource.Type === 'AWS::Lambda::Function')
    .reduce(
      (sum, resource) =>
        sum +
        (typeof resource.Properties?.ReservedConcurrentExecutions === 'number' ? resource.Properties.ReservedConcurrentExecutions : 0),
      0,
    );

/** The SES identities the template creates (`AWS::SES::EmailIdentity`), in lower case. */
export const createdIdentities = (template: Template): string[] =>
  Object.values(template.Resources ?? {})
    .filter((resource) => resource.Type === 'AWS::SES::EmailIdentity' && typeof resource.Properties?.EmailIdentity === 'string')
    .map((resource) => (resource.Properties?.EmailIdentity as string).toLowerCase());
