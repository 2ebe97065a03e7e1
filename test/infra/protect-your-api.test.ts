import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { OrdersApi } from '#docs/examples/protect-your-api.ts';

/** The recipe of docs/protect-your-api.md, synthesized: a user's API behind API Gateway's JWT authorizer with Roster's issuer. */
describe('docs/examples/protect-your-api.ts', () => {
  const issuer = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
  const template = Template.fromStack(new OrdersApi(new App(), 'Orders', { rosterIssuer: issuer }));

  it("checks Roster's tokens at the gateway: a JWT authorizer with Roster's issuer and audience, on the Authorization header", () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: issuer, Audience: ['authenticated'] },
    });
  });

  it('puts the route behind it', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'GET /orders',
      AuthorizationType: 'JWT',
      AuthorizerId: Match.anyValue(),
    });
  });

  it('is the code the page shows', () => {
    const page = readFileSync(new URL('../../docs/protect-your-api.md', import.meta.url), 'utf8');
    const code = readFileSync(new URL('../../docs/examples/protect-your-api.ts', import.meta.url), 'utf8');
    expect(page).toContain(code.trim());
  });
});
