import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import {
  type AddToPrincipalPolicyResult,
  PolicyDocument,
  PolicyStatement,
  Role,
  type RoleProps,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { BuildOptions } from 'esbuild';
import type { IndexName } from '#lib/db/entities/table.ts';
import { type DynamoAction, FUNCTION_DEFAULTS } from '#lib/http/routes.ts';
import { COMPILE_CACHE_DIR } from './compile-cache.ts';
import { acknowledge } from './nag-acknowledgements.ts';

/**
 * An ESM bundle has no `require`: a CommonJS dependency that requires a module esbuild leaves
 * outside the bundle would throw "Dynamic require of … is not supported" on first use (middy
 * docs/best-practices/bundling). Node's builtins come through BUILTINS below instead; the banner
 * stays for anything else left outside (the SDK's optional `require` of its CRT signer, in a try).
 */
export const REQUIRE_BANNER = "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);";

/**
 * The Node builtins the bundles use, each reached through `process.getBuiltinModule` (infra/builtins/)
 * instead of an ESM `import`: for an imported builtin Node builds a module facade by reading every
 * export, and some exports are lazy getters that load more of Node (node:http's load undici, some
 * 50 ms; node:process's and node:fs's 10 ms more). The builtins' own objects are used as they are.
 * esbuild's alias of a name also takes its sub-paths (`stream` would turn `stream/promises` into
 * `…/stream.cjs/promises`), so each sub-path of a listed builtin has a shim of its own. The
 * 'bundle' tests of test/infra/stack.test.ts fail when a function's bundle still imports a builtin,
 * or a sub-path lacks its shim.
 */
export const BUILTINS = [
  'async_hooks',
  'child_process',
  'crypto',
  'dns',
  'dns/promises',
  'events',
  'fs',
  'fs/promises',
  'http',
  'https',
  'net',
  'os',
  'path',
  'path/posix',
  'path/win32',
  'process',
  'stream',
  'stream/consumers',
  'stream/promises',
  'stream/web',
  'timers',
  'timers/promises',
  'tls',
  'url',
  'util',
  'util/types',
  'zlib',
] as const;

const builtinShims = Object.fromEntries(
  BUILTINS.flatMap((name) => {
    const shim = fileURLToPath(new URL(`./builtins/${name.replace('/', '-')}.cjs`, import.meta.url));
    return [
      [`node:${name}`, shim],
      [name, shim],
    ];
  }),
);

/**
 * Modules replaced in the bundles only (tests and local runs use the real ones):
 * - Lambda's credentials are always in environment variables, so the SDK's default chain (SSO, INI
 *   files, STS, instance metadata: a third of every bundle) is swapped for the environment source;
 * - ElectroDB's model check, whose models are constants checked by every test run (ElectroDB uses
 *   `jsonschema` for nothing else: test/unit/entities.test.ts fails on an upgrade that does);
 * - the DynamoDB client packages, for the subset of their commands used (infra/sdk-subsets/): a
 *   `require` of lib-dynamodb by ElectroDB otherwise keeps and initialises all of both at import
 *   (some 50 KiB, 10-20 ms of each import);
 * - Node's builtins, for shims that skip the ESM facade (BUILTINS above).
 */
export const ALIASES = {
  ...builtinShims,
  '@aws-sdk/credential-provider-node': fileURLToPath(new URL('../lib/core/lambda-credentials.ts', import.meta.url)),
  jsonschema: fileURLToPath(new URL('../lib/db/models-checked-in-tests.ts', import.meta.url)),
  '@aws-sdk/lib-dynamodb': fileURLToPath(new URL('./sdk-subsets/lib-dynamodb.mjs', import.meta.url)),
  '@aws-sdk/client-dynamodb': fileURLToPath(new URL('./sdk-subsets/client-dynamodb.mjs', import.meta.url)),
};

/** How every function is built, in esbuild's own terms, so a benchmark can build the same bundle. */
export const ESBUILD = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minify: true,
  // None by default (`-c sourceMaps=true` ships one and loads it: EndpointProps.sourceMaps): the
  // 2.5 MB map would be in every zip, and its `sources` are paths relative to the synth's output
  // folder, which would give every function a new asset hash from each checkout.
  sourcemap: false,
  // ESM builds of dependencies first: they tree-shake better than the CommonJS ones.
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_BANNER },
  alias: ALIASES,
} as const satisfies BuildOptions;

/** The same settings for NodejsFunction (which adds `bundle` and `platform` itself). */
export const BUNDLING = {
  target: ESBUILD.target,
  format: OutputFormat.ESM,
  minify: ESBUILD.minify,
  sourceMap: ESBUILD.sourcemap,
  mainFields: [...ESBUILD.mainFields],
  banner: ESBUILD.banner.js,
  esbuildArgs: Object.fromEntries(Object.entries(ALIASES).map(([from, to]) => [`--alias:${from}`, to])),
  // Bundle the AWS SDK too: the version in package-lock.json, the one tested here, not the
  // runtime's copy, which changes under us and loads from disk module by module.
  externalModules: [],
} satisfies BundlingOptions;

/**
 * Where Lambda unpacks a function's code, and the variables that make Node read the compile cache
 * shipped there (infra/compile-cache.ts, `-c compileCache=true`) instead of compiling the bundle on
 * every cold start. A variable and not an entry module that enables the cache: Node enables it
 * before the runtime imports the handler, and the handler stays `index.handler` beside its source map.
 */
export const TASK_ROOT = '/var/task';
export const compileCacheEnv = (taskRoot: string = TASK_ROOT): Record<string, string> => ({
  NODE_COMPILE_CACHE: `${taskRoot}/${COMPILE_CACHE_DIR}`,
  NODE_COMPILE_CACHE_PORTABLE: '1',
});

const COMPILE_CACHE_SCRIPT = fileURLToPath(new URL('./compile-cache.ts', import.meta.url));

/**
 * What runs in esbuild's output directory (the function's code) once the bundle is there: the
 * route's files copied beside it, then, with `compileCache`, its compile cache written by the Node
 * that runs this (the cache only serves the Node version, architecture and user it was made with:
 * infra/compile-cache.ts). bench/bundles.ts runs the same commands.
 */
export const afterBundling = (inputDir: string, outputDir: string, files: readonly string[], compileCache: boolean): string[] => [
  ...files.map((file) => `cp "${inputDir}/${file}" "${outputDir}/"`),
  ...(compileCache ? [`"${process.execPath}" "${COMPILE_CACHE_SCRIPT}" "${outputDir}"`] : []),
];

const commandHooks = (files: readonly string[], compileCache: boolean): ICommandHooks => ({
  beforeBundling: () => [],
  beforeInstall: () => [],
  afterBundling: (inputDir, outputDir) => afterBundling(inputDir, outputDir, files, compileCache),
});

export const LOG_RETENTION = RetentionDays.ONE_MONTH;

/**
 * A role whose every statement, granted now or later (CDK's grants and event sources included), is
 * an inline policy of the AWS::IAM::Role itself instead of a separate AWS::IAM::Policy: one
 * CloudFormation resource fewer per function (the functions' stack must stay under
 * CloudFormation's 500), and a function is only created once its role can do all it will do.
 * CDK keeps the separate policy to break cycles between a role and what it grants on; nothing a
 * function here is granted refers back to its role.
 */
export class InlineRole extends Role {
  private readonly statements: PolicyDocument;

  constructor(scope: Construct, id: string, props: RoleProps) {
    const statements = new PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { ...props.inlinePolicies, function: statements } });
    this.statements = statements;
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    this.statements.addStatements(statement);
    return { statementAdded: true, policyDependable: this };
  }
}

export interface EndpointProps {
  /** The handler's file in functions/: a route name, FALLBACK, or a background function's name. */
  readonly name: string;
  readonly environment?: Record<string, string>;
  /** Concurrency reserved for (and capping) the function (route.reservedConcurrency). */
  readonly reservedConcurrency?: number | undefined;
  /** Files (paths inside the project) copied beside the bundle, for the function to read at run time. */
  readonly files?: readonly string[];
  /** A background function's own timeout (an API function's is FUNCTION_DEFAULTS', capped by the gateway's 29 s). */
  readonly timeoutSeconds?: number;
  /** Lambda active tracing (`-c tracing=true`): Lambda records a segment per invocation; no X-Ray SDK in the bundle. */
  readonly tracing?: boolean;
  /** Ship the bundle's V8 compile cache and point Node at it (`-c compileCache=true`; docs/operations.md). */
  readonly compileCache?: boolean;
  /** Ship the bundle's source map and load it (`-c sourceMaps=true`: NODE_OPTIONS=--enable-source-maps). */
  readonly sourceMaps?: boolean;
}

/**
 * One function (a route's, the fallback, or a background one) with the project's defaults: Node 24
 * on ARM, a minified ESM bundle (no source map unless asked for), JSON logs into its own log group with a retention, and a
 * role that may write only to that log group. Anything else it may touch is granted explicitly
 * with the methods below.
 *
 * Logs: lib/core/log.ts writes each line as a JSON object of its own, which Lambda's JSON format keeps
 * as is (a line without `level` counts as INFO), so Logs Insights sees its fields and CloudWatch
 * reads the embedded metric documents. Application lines from INFO up; of Lambda's own lines only
 * WARN and worse: START and REPORT would add two lines to every request, and the request line
 * already holds the duration and cold start (REPORT's init duration and memory are lost).
 */
export class Endpoint extends NodejsFunction {
  constructor(
    scope: Construct,
    id: string,
    {
      name,
      environment = {},
      reservedConcurrency,
      files = [],
      timeoutSeconds,
      tracing = false,
      compileCache = false,
      sourceMaps = false,
    }: EndpointProps,
  ) {
    // Made before super() because the function takes them as props; they sit beside it in scope.
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: LOG_RETENTION });
    // Our own role instead of AWSLambdaBasicExecutionRole, which allows logs:* on every log group.
    const role = new InlineRole(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Roster ${name} function`,
    });
    super(scope, id, {
      entry: fileURLToPath(new URL(`../functions/${name}.ts`, import.meta.url)),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: FUNCTION_DEFAULTS.memoryMb,
      timeout: Duration.seconds(timeoutSeconds ?? FUNCTION_DEFAULTS.timeoutSeconds),
      bundling: { ...BUNDLING, sourceMap: sourceMaps, commandHooks: commandHooks(files, compileCache) },
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      logGroup,
      ...(tracing ? { tracing: Tracing.ACTIVE } : {}),
      role,
      environment: {
        ...environment,
        ...(compileCache ? compileCacheEnv() : {}),
        ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
      ...(reservedConcurrency ? { reservedConcurrentExecutions: reservedConcurrency } : {}),
    });
    logGroup.grantWrite(role);
    if (tracing) acknowledge('xrayTracing', role);
  }

  /**
   * Exactly these DynamoDB actions on the table and on the named indexes (a Query on an index
   * needs the index ARN). Not `table.grant*`: those add more actions and `<table>/index/*`. With
   * `partitions`, only items whose partition key is one of these (`dynamodb:LeadingKeys`).
   */
  allowTable(table: ITable, actions: readonly DynamoAction[], indexes: readonly IndexName[], partitions?: readonly string[]): void {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn, ...indexes.map((index) => `${table.tableArn}/index/${index}`)],
        ...(partitions ? { conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...partitions] } } } : {}),
      }),
    );
  }

  /**
   * `actions` on the table's partitions whose keys match `patterns` only (`dynamodb:LeadingKeys`
   * with StringLike: lib/db/partition-patterns.ts), for every key a request names.
   */
  allowTablePartitions(table: ITable, actions: readonly DynamoAction[], patterns: readonly string[]): void {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...patterns] } },
      }),
    );
  }

  /** Reading the secret's value only (not `grantRead`, which adds DescribeSecret). */
  allowSecretRead(secret: ISecret): void {
    this.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }));
  }

  /**
   * What a rotation function needs on its one secret (AWS "Lambda rotation function execution role
   * permissions"), minus GetRandomPassword on `*`, which CDK's RotationSchedule would add: our
   * function makes its keys itself.
   */
  allowSecretRotation(secret: ISecret): void {
    this.addToRolePolicy(
      new PolicyStatement({
        actions: [
          'secretsmanager:DescribeSecret',
          'secretsmanager:GetSecretValue',
          'secretsmanager:PutSecretValue',
          'secretsmanager:UpdateSecretVersionStage',
        ],
        resources: [secret.secretArn],
      }),
    );
  }
}
