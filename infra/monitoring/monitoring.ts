/**
 * Roster's alarms and dashboard, as one construct; the alarms of each signal are made in a file of their own
 * (function-, api-, table- and background-alarms.ts), the dashboard in dashboard.ts. Every alarm notifies one SNS topic (on ALARM and
 * on OK), names its runbook section in docs/operations.md, and is built so that it can fire:
 * summed metrics are FILL-wrapped, API functions are watched through the EMF metrics the code
 * emits (lib/core/metric-names.ts) since Middy turns their errors into answers.
 */
import { ArnFormat, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, CfnDashboard, ComparisonOperator, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { accountAlarms, apiAlarms } from './api-alarms.ts';
import { backlogAlarm, deadLetterAlarms, mailAlarms, streamAlarm } from './background-alarms.ts';
import { type Watched, dashboardBody } from './dashboard.ts';
import { functionAlarms } from './function-alarms.ts';
import type { AlarmSpec, WatchedFunction } from './metrics.ts';
import { RUNBOOK, RUNBOOK_SECTIONS } from './runbook.ts';
import { tableAlarms } from './table-alarms.ts';

export interface MonitoringProps {
  /** An address subscribed to the alarm topic (`-c alarmEmail=…`); without it the topic has no subscriber. */
  readonly alarmEmail?: string;
}

export class Monitoring extends Construct {
  /** Every alarm's action, on ALARM and on OK. */
  readonly topic: ITopic;
  /** The dashboard's name (for a console link: cloudwatch/home#dashboards/dashboard/<name>). */
  readonly dashboardName: string;

  private readonly action: SnsAction;
  /** What was watched, for the dashboard (laid out once every watch call has run). */
  private readonly watched: {
    -readonly [K in keyof Watched]: Watched[K] extends readonly (infer T)[] ? T[] : Watched[K];
  } = { functions: [], serviceAlarms: [], queues: [], streams: [], api: undefined, table: undefined, mail: undefined };

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stack = Stack.of(this);

    // SNS encrypts with a key of ours: CloudWatch cannot publish to a topic under the AWS managed
    // SNS key, whose policy cannot grant it. Alarm messages are not data to keep: the key goes with the stack.
    const key = new Key(this, 'TopicKey', {
      description: `Encrypts the ${stack.stackName} alarm topic`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Only this account's alarms, for the key as for the topic: without the conditions, any
    // account's CloudWatch could use the key (the confused deputy).
    const fromOurAlarms = {
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
      StringEquals: { 'aws:SourceAccount': stack.account },
    };
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    const topic = new Topic(this, 'Topic', { displayName: `${stack.stackName} alarms`, masterKey: key, enforceSSL: true });
    // The topic policy replaces SNS's default one, so CloudWatch must be allowed by name.
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
    if (props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.topic = topic;
    this.action = new SnsAction(topic);

    this.watched.serviceAlarms.push(...accountAlarms().map((spec) => this.alarm(spec)));

    const dashboard = new CfnDashboard(this, 'Dashboard', {
      // Laid out at synthesis, once every watch call has run, so the sections keep a fixed order.
      dashboardBody: Lazy.string({ produce: () => dashboardBody(Stack.of(this), this.watched) }),
    });
    this.dashboardName = dashboard.ref;
  }

  /**
   * Alarms on one function; returns those a gradual deploy rolls back on (its 5xx or errors, and
   * its p99 duration; not throttles, which say nothing about the new code). The alarms are made in
   * `scope` (an API function's nested stack, beside the CodeDeploy group that rolls back on them),
   * notify this topic, and are named after it (`alarmName`); the dashboard, here, shows the function.
   */
  watchFunction(watched: WatchedFunction, scope: Construct = this): IAlarm[] {
    this.watched.functions.push(watched);
    return functionAlarms(watched).map((spec) => this.alarm(spec, scope));
  }

  /** The API's 5xx and 429 rates. */
  watchApi(api: IHttpApi): void {
    this.watched.api = api;
    this.watched.serviceAlarms.push(...apiAlarms(api).map((spec) => this.alarm(spec)));
  }

  /** DynamoDB throttles and system errors per operation and per index, and transaction conflicts. */
  watchTable(table: ITable, indexNames: readonly string[]): void {
    this.watched.table = { table, indexNames };
    this.watched.serviceAlarms.push(...tableAlarms(table, indexNames).map((spec) => this.alarm(spec)));
  }

  /** A dead-letter queue (background-alarms.ts deadLetterAlarms). */
  watchQueue(id: string, queue: IQueue, description: string): void {
    this.watched.queues.push({ id, queue });
    this.watched.serviceAlarms.push(...deadLetterAlarms(id, queue, description).map((spec) => this.alarm(spec)));
  }

  /** A queue whose consumers may fall behind (background-alarms.ts backlogAlarm). */
  watchBacklog(id: string, queue: IQueue, description: string): void {
    this.watched.serviceAlarms.push(this.alarm(backlogAlarm(id, queue, description)));
  }

  /** The iterator age of a function fed by the table's stream. */
  watchStream(fn: IFunction, name: string): void {
    this.watched.streams.push({ name, fn });
    this.watched.serviceAlarms.push(this.alarm(streamAlarm(fn, name)));
  }

  /**
   * SES's account reputation, and the mail section of the dashboard; the bounce, complaint and
   * suppression counts only when a configuration set reports them (`configurationSetName`).
   */
  watchMail(configurationSetName: string | undefined): void {
    this.watched.mail = { configurationSet: configurationSetName !== undefined };
    this.watched.serviceAlarms.push(...mailAlarms().map((spec) => this.alarm(spec)));
  }

  /**
   * An alarm in `scope` that notifies the topic. Its name starts with this stack's name and, in a
   * nested stack, that stack's id as well (`Roster-Auth-auth-signin-5xx`): an alarm that moves to
   * another stack must change its name, since CloudFormation creates the new one before it deletes the old.
   */
  private alarm(spec: AlarmSpec, scope: Construct = this): Alarm {
    const stack = Stack.of(this);
    const nested = Stack.of(scope);
    const prefix = nested === stack ? stack.stackName : `${stack.stackName}-${nested.node.id}`;
    const alarm = new Alarm(scope, spec.id, {
      alarmName: `${prefix}-${spec.id}`,
      alarmDescription: `${spec.summary} ${RUNBOOK_SECTIONS[spec.section]} Runbook: ${RUNBOOK}#${spec.section}`,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: spec.evaluationPeriods,
      datapointsToAlarm: spec.datapointsToAlarm ?? spec.evaluationPeriods,
      treatMissingData: spec.treatMissingData,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    return alarm;
  }
}
