/**
 * Roster's alarms, as one construct: sized by signal, not by function. What pages is what a user
 * feels: the API (its availability, latency and refusals, one composite alarm), the table
 * (DynamoDB errors and throttles, which also silences the API's alarm: an outage of DynamoDB pages
 * once), background work (dead letters, a backlog, the stream falling behind, one alarm each over
 * every queue or reader) and, with SES, the account's reputation. Per-function alarms exist only for
 * a gradual deploy (silent, what CodeDeploy rolls back on) or with `-c functionAlarms=true`. The
 * alarms of each signal are made in a file of their own (api-, table-, background- and
 * function-alarms.ts); the dashboard (`-c dashboard=true`) in dashboard.ts; what it all costs is
 * priced from the template by scripts/fixed-cost.ts.
 */
import { ArnFormat, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { CfnBudget } from 'aws-cdk-lib/aws-budgets';
import { Alarm, CfnAlarm, CfnCompositeAlarm, CfnDashboard, ComparisonOperator, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { apiAlarms } from './api-alarms.ts';
import { type AggregateSpec, backlog, deadLetters, mailAlarms, streamBehind } from './background-alarms.ts';
import { type Watched, dashboardBody } from './dashboard.ts';
import { functionAlarm, routeGroupAlarm } from './function-alarms.ts';
import { type AlarmSpec, MAX_ALARM_METRICS, type WatchedFunction, type WatchedQueue, type WatchedStream, routeGroup } from './metrics.ts';
import { acknowledge } from '../nag-acknowledgements.ts';
import { RUNBOOK, RUNBOOK_SECTIONS, type RunbookSection } from './runbook.ts';
import { tableAlarm } from './table-alarms.ts';

export interface MonitoringProps {
  /** An address subscribed to the alarm topic (`-c alarmEmail=…`); without it the topic has no subscriber. */
  readonly alarmEmail?: string;
  /** Gradual deploys: each API function gets alarms for CodeDeploy to roll back on (silent, inputs of the `api` alarm). */
  readonly rollbackAlarms?: boolean;
  /** `-c functionAlarms=true`: every function gets alarms of its own, and they page. */
  readonly functionAlarms?: boolean;
  /** `-c dashboard=true`: a CloudWatch dashboard ($3 a month past an account's first three). */
  readonly dashboard?: boolean;
  /** `-c monthlyBudget=USD`: an AWS Budgets cost budget for the account that notifies the topic. */
  readonly monthlyBudget?: number;
}

/**
 * How long the `api` alarm waits for `table-errors` before it notifies (its children can see an
 * outage before the table's 3 one-minute datapoints are in), and how long it stays silent after
 * `table-errors` leaves ALARM (the API's 5-minute periods and 3-period latency recover after the table).
 */
export const SUPPRESSOR_WAIT_SECONDS = 300;
export const SUPPRESSOR_EXTENSION_SECONDS = 900;

/** CloudWatch takes at most this many characters of a composite alarm's rule. */
export const MAX_ALARM_RULE = 10_240;

/** ...and at most this many alarms in it. */
const MAX_ALARM_RULE_ALARMS = 100;

/** An alarm's ARN, for estimating the length of a rule that names it: a long partition and region. */
const ARN_LENGTH = 'arn:aws-us-gov:cloudwatch:us-gov-west-1:123456789012:alarm:'.length;

type RuleInput = { alarm: IAlarm; name: string };

/** `ALARM(a) OR ALARM(b) …` over `inputs`, within CloudWatch's bounds on a rule (else the synth stops, naming `what`). */
const anyOf = (inputs: readonly RuleInput[], what: string): string => {
  const length = inputs.reduce((sum, { name }) => sum + 'ALARM("") OR '.length + ARN_LENGTH + name.length, 0);
  if (length > MAX_ALARM_RULE)
    throw new Error(`${what}'s rule would take about ${length} characters, CloudWatch takes ${MAX_ALARM_RULE}: group its inputs`);
  if (inputs.length > MAX_ALARM_RULE_ALARMS)
    throw new Error(`${what}'s rule would name ${inputs.length} alarms, CloudWatch takes ${MAX_ALARM_RULE_ALARMS}: group its inputs`);
  return inputs.map(({ alarm }) => `ALARM("${alarm.alarmArn}")`).join(' OR ');
};

/** The members of one alarm over a kind, laid out when the template is written. */
interface AggregateGroup<T> {
  readonly members: T[];
}

export class Monitoring extends Construct {
  /** Every notifying alarm's action, on ALARM and on OK. */
  readonly topic: ITopic;

  private readonly action: SnsAction;
  private readonly props: MonitoringProps;
  /** The alarms that notify (the dashboard's top row). */
  private readonly notifying: IAlarm[] = [];
  /** The inputs of the `api` composite alarm, with their names (to check the rule's length). */
  private readonly apiInputs: RuleInput[] = [];
  /** Per route group, the silent composite over its functions' health alarms: one input of `api` each. */
  private readonly groupHealth = new Map<string, RuleInput[]>();
  /** `table-errors`, once the table is watched: it silences the `api` alarm. */
  private suppressor: IAlarm | undefined;
  /** Each route group's 5xx alarm, made with the group's first function. */
  private readonly groupAlarms = new Map<string, IAlarm>();
  private readonly aggregates = new Map<string, AggregateGroup<unknown>[]>();
  /** What was watched, for the dashboard (laid out once every watch call has run). */
  private readonly watched: {
    -readonly [K in keyof Watched]: Watched[K] extends readonly (infer T)[] ? T[] : Watched[K];
  } = {
    alarms: this.notifying,
    functions: [],
    deadLetters: [],
    backlogs: [],
    streams: [],
    api: undefined,
    table: undefined,
    mail: undefined,
  };

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.props = props;
    const stack = Stack.of(this);

    // SNS encrypts with a key of ours: CloudWatch cannot publish to a topic under the AWS managed
    // SNS key, whose policy cannot grant it. Alarm messages are not data to keep: the key goes with the stack.
    const key = new Key(this, 'TopicKey', {
      description: `Encrypts the ${stack.stackName} alarm topic`,
      // Not rotated: it keeps no data, and each rotation is priced as a key more (nag-acknowledgements.ts).
      enableKeyRotation: false,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    acknowledge('alarmTopicKey', key);
    const topic = new Topic(this, 'Topic', { displayName: `${stack.stackName} alarms`, masterKey: key, enforceSSL: true });
    // Only this account's alarms (and budgets), for the key as for the topic: without the
    // conditions, any account's CloudWatch could use them (the confused deputy). The topic policy
    // replaces SNS's default one, so each service must be allowed by name.
    const alarms = stack.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: '*',
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const budgets = stack.formatArn({ service: 'budgets', region: '', resource: 'budget', resourceName: '*' });
    const publishers: [service: string, sourceArn: string][] = [['cloudwatch.amazonaws.com', alarms]];
    if (props.monthlyBudget !== undefined) publishers.push(['budgets.amazonaws.com', budgets]);
    for (const [service, sourceArn] of publishers) {
      const conditions = { ArnLike: { 'aws:SourceArn': sourceArn }, StringEquals: { 'aws:SourceAccount': stack.account } };
      const principals = [new ServicePrincipal(service)];
      key.addToResourcePolicy(
        new PolicyStatement({ principals, actions: ['kms:Decrypt', 'kms:GenerateDataKey*'], resources: ['*'], conditions }),
      );
      topic.addToResourcePolicy(new PolicyStatement({ principals, actions: ['sns:Publish'], resources: [topic.topicArn], conditions }));
    }
    if (props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.topic = topic;
    this.action = new SnsAction(topic);

    if (props.monthlyBudget !== undefined) this.budget(props.monthlyBudget);
    if (props.dashboard) {
      // Laid out at synthesis, once every watch call has run, so the sections keep a fixed order.
      new CfnDashboard(this, 'Dashboard', { dashboardBody: Lazy.string({ produce: () => dashboardBody(Stack.of(this), this.watched) }) });
    }
  }

  /**
   * A function's alarms, if it gets any; returns those a gradual deploy rolls back on: the
   * function's health and, for an API function, its route group's 5xx. With `rollbackAlarms` an API
   * function's alarms are silent (the function's health is an input of the `api` alarm); with
   * `functionAlarms` every function's page. The alarms are made in `scope` (an API function's
   * nested stack, beside the CodeDeploy group that rolls back on them) and named after it.
   */
  watchFunction(watched: WatchedFunction, scope: Construct = this): IAlarm[] {
    this.watched.functions.push(watched);
    const api = watched.kind === 'api';
    const pages = this.props.functionAlarms === true;
    if (!pages && !(api && this.props.rollbackAlarms)) return [];
    const spec = functionAlarm(watched);
    const health = this.alarm(spec, scope, pages);
    if (!api) return [health];
    const group = routeGroup(watched.name);
    if (!pages) this.healthOf(group).push({ alarm: health, name: this.alarmName(spec.id, scope) });
    let groupAlarm = this.groupAlarms.get(group);
    if (!groupAlarm) {
      groupAlarm = this.alarm(routeGroupAlarm(group), scope, pages);
      this.groupAlarms.set(group, groupAlarm);
    }
    if (Stack.of(groupAlarm) !== Stack.of(scope)) throw new Error(`${watched.name}: its route group ${group}'s alarm is in another stack`);
    return [health, groupAlarm];
  }

  /** The API's availability, latency and refusals: silent inputs of the one `api` alarm that pages. */
  watchApi(api: IHttpApi): void {
    this.watched.api = api;
    for (const spec of apiAlarms(api)) this.apiInputs.push({ alarm: this.alarm(spec, this, false), name: this.alarmName(spec.id) });
    const rule = (): string => anyOf(this.apiInputs, 'the api alarm');
    const composite = new CfnCompositeAlarm(this, 'Api', {
      alarmName: this.alarmName('api'),
      alarmDescription: this.describe('api', 'The API is failing, slow or refusing its callers.'),
      // Laid out at synthesis: the inputs are known once every function is watched.
      alarmRule: Lazy.string({ produce: rule }),
      actionsSuppressor: Lazy.string({ produce: () => this.suppressor?.alarmArn }),
      actionsSuppressorWaitPeriod: Lazy.number({ produce: () => (this.suppressor ? SUPPRESSOR_WAIT_SECONDS : undefined) }),
      actionsSuppressorExtensionPeriod: Lazy.number({ produce: () => (this.suppressor ? SUPPRESSOR_EXTENSION_SECONDS : undefined) }),
      alarmActions: [this.topic.topicArn],
      okActions: [this.topic.topicArn],
    });
    this.notifying.push(Alarm.fromAlarmArn(this, 'ApiAlarm', composite.attrArn));
  }

  /** DynamoDB errors and throttles on the table: one alarm, which pages and silences the `api` alarm. */
  watchTable(table: ITable, indexNames: readonly string[]): void {
    this.watched.table = { table, indexNames };
    this.suppressor = this.alarm(tableAlarm(table), this, true);
  }

  /** A dead-letter queue: one alarm (`dead-letters`) over every one of them. */
  watchQueue(id: string, queue: IQueue, description: string): void {
    const watched: WatchedQueue = { id, queue, description };
    this.watched.deadLetters.push(watched);
    this.aggregate(deadLetters, watched);
  }

  /** A work queue whose consumer may fall behind: one alarm (`backlog`) over every one of them. */
  watchBacklog(id: string, queue: IQueue, description: string): void {
    const watched: WatchedQueue = { id, queue, description };
    this.watched.backlogs.push(watched);
    this.aggregate(backlog, watched);
  }

  /** A reader of the table's stream: one alarm (`stream-iterator-age`) over every one of them. */
  watchStream(fn: IFunction, name: string): void {
    const watched: WatchedStream = { name, fn };
    this.watched.streams.push(watched);
    this.aggregate(streamBehind, watched);
  }

  /**
   * SES's account reputation and the dashboard's mail section, when mail goes through SES (a
   * configuration set is named); under the log transport nothing is sent and nothing is watched.
   */
  watchMail(configurationSetName: string | undefined): void {
    if (configurationSetName === undefined) return;
    this.watched.mail = { configurationSet: true };
    for (const spec of mailAlarms()) this.alarm(spec, this, true);
  }

  /**
   * The health alarms of a route group's functions (with gradual deploys, each function's is silent):
   * a composite over them, silent too, made on the group's first function and an input of `api`. A
   * rule over every function would pass CloudWatch's 100 alarms and 10,240 characters.
   */
  private healthOf(group: string): RuleInput[] {
    const known = this.groupHealth.get(group);
    if (known) return known;
    const inputs: RuleInput[] = [];
    const id = `${group}-functions`;
    const composite = new CfnCompositeAlarm(this, `Functions${group.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase())}`, {
      alarmName: this.alarmName(id),
      alarmDescription: this.describe('api', `A function of the ${group} routes is failing or slow.`),
      alarmRule: Lazy.string({ produce: () => anyOf(inputs, `the ${group} functions' alarm`) }),
      actionsEnabled: false,
    });
    this.apiInputs.push({ alarm: Alarm.fromAlarmArn(this, `${composite.node.id}Alarm`, composite.attrArn), name: this.alarmName(id) });
    this.groupHealth.set(group, inputs);
    return inputs;
  }

  /** The alarm name of `id` made in `scope`: after this stack's name and, in a nested stack, that stack's id. */
  private alarmName(id: string, scope: Construct = this): string {
    const stack = Stack.of(this);
    const nested = Stack.of(scope);
    return nested === stack ? `${stack.stackName}-${id}` : `${stack.stackName}-${nested.node.id}-${id}`;
  }

  /** What happened, the section's first step, the link: what CloudWatch sends in the e-mail (at most 1,024 characters). */
  private describe(section: RunbookSection, summary: string): string {
    return `${summary} ${RUNBOOK_SECTIONS[section]} Runbook: ${RUNBOOK}#${section}`;
  }

  /**
   * An alarm in `scope`, notifying the topic when `notifies`. Named after its stack (an alarm that
   * moves to another stack must change its name, since CloudFormation creates the new one before
   * it deletes the old).
   */
  private alarm(spec: AlarmSpec, scope: Construct, notifies: boolean): Alarm {
    const alarm = new Alarm(scope, spec.id, {
      alarmName: this.alarmName(spec.id, scope),
      alarmDescription: this.describe(spec.section, spec.summary),
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.evaluationPeriods,
      datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
      treatMissingData: spec.treatMissingData,
    });
    if (notifies) {
      alarm.addAlarmAction(this.action);
      alarm.addOkAction(this.action);
      this.notifying.push(alarm);
    }
    return alarm;
  }

  /** Adds `member` to the alarm of its kind, making the kind's first alarm, or the next once one reads MAX_ALARM_METRICS. */
  private aggregate<T>(spec: AggregateSpec<T>, member: T): void {
    const groups = (this.aggregates.get(spec.id) ?? []) as AggregateGroup<T>[];
    let group = groups.at(-1);
    if (!group || group.members.length >= MAX_ALARM_METRICS) {
      const id = groups.length === 0 ? spec.id : `${spec.id}-${groups.length + 1}`;
      const members: T[] = [];
      const description = (): string => {
        const detailed = this.describe(spec.section, spec.summary(members, true));
        return detailed.length <= 1024 ? detailed : this.describe(spec.section, spec.summary(members, false));
      };
      const alarm = new CfnAlarm(this, id, {
        alarmName: this.alarmName(id),
        alarmDescription: Lazy.string({ produce: description }),
        metrics: Lazy.any({ produce: () => spec.queries(members) }),
        threshold: spec.threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: spec.evaluationPeriods,
        datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
        treatMissingData: spec.treatMissingData,
        alarmActions: [this.topic.topicArn],
        okActions: [this.topic.topicArn],
      });
      this.notifying.push(Alarm.fromAlarmArn(this, `${id}Ref`, alarm.attrArn));
      group = { members };
      groups.push(group);
      this.aggregates.set(spec.id, groups as AggregateGroup<unknown>[]);
    }
    group.members.push(member);
  }

  /**
   * The account's monthly cost against `limitUsd` (AWS Budgets: the account's first two budgets are
   * free): the topic hears when the actual cost passes 80% of it, and when the forecast passes it.
   * It covers the whole account: deploy Roster in an account of its own for its cost alone.
   */
  private budget(limitUsd: number): void {
    const thresholds = [
      { notificationType: 'ACTUAL', threshold: 80 },
      { notificationType: 'FORECASTED', threshold: 100 },
    ];
    new CfnBudget(this, 'Budget', {
      budget: {
        budgetName: `${Stack.of(this).stackName}-monthly-cost`,
        budgetType: 'COST',
        timeUnit: 'MONTHLY',
        budgetLimit: { amount: limitUsd, unit: 'USD' },
      },
      notificationsWithSubscribers: thresholds.map((notification) => ({
        notification: { ...notification, comparisonOperator: 'GREATER_THAN', thresholdType: 'PERCENTAGE' },
        subscribers: [{ subscriptionType: 'SNS', address: this.topic.topicArn }],
      })),
    });
  }
}
