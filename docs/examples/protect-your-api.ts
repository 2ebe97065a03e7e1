import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Code, Function, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

export interface OrdersApiProps extends StackProps {
  /** Roster's `TokenIssuer` stack output (the tokens' `iss`), e.g. https://abc123.execute-api.eu-west-1.amazonaws.com */
  readonly rosterIssuer: string;
}

/**
 * Your own API, which only callers signed in to Roster may call: API Gateway checks each Roster
 * access token itself (signature, issuer, audience, expiry), before your function runs and without
 * a Lambda authorizer. It finds Roster's keys through {rosterIssuer}/.well-known/openid-configuration.
 */
export class OrdersApi extends Stack {
  constructor(scope: Construct, id: string, props: OrdersApiProps) {
    super(scope, id, props);
    const handler = new Function(this, 'Orders', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      // The gateway passes the verified claims: event.requestContext.authorizer.jwt.claims.sub is the Roster user's id.
      code: Code.fromInline(
        'exports.handler = async (event) => ({ statusCode: 200, body: JSON.stringify({ user: event.requestContext.authorizer.jwt.claims.sub }) });',
      ),
    });
    const roster = new HttpJwtAuthorizer('Roster', props.rosterIssuer, {
      // Roster's access tokens say `aud: authenticated`.
      jwtAudience: ['authenticated'],
    });
    const api = new HttpApi(this, 'Api', { defaultAuthorizer: roster });
    api.addRoutes({ path: '/orders', methods: [HttpMethod.GET], integration: new HttpLambdaIntegration('OrdersIntegration', handler) });
    new CfnOutput(this, 'OrdersUrl', { value: `${api.apiEndpoint}/orders` });
  }
}
