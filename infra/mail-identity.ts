import { CfnOutput, Fn, RemovalPolicy } from 'aws-cdk-lib';
import { DkimIdentity, EasyDkimSigningKeyLength, EmailIdentity, Identity } from 'aws-cdk-lib/aws-ses';
import { Construct } from 'constructs';

/** The outputs naming the DNS records that verify the domain: `DkimCname1` … `DkimCname3`. */
export const DKIM_OUTPUTS = ['DkimCname1', 'DkimCname2', 'DkimCname3'] as const;

/**
 * The SES domain identity Roster sends as (`-c sesDomain=example.com`), with Easy DKIM: SES makes
 * the signing keys and names three CNAME records, output here as `<name> CNAME <value>`, which the
 * operator adds to the domain's DNS. SES verifies the domain (and starts signing) once it sees them.
 * It lives in the data stack: the records stay valid however often the functions' stack is replaced.
 * Retained when it leaves the template (SES turned off): the data stack deploys before the
 * functions' stack, whose mailer would otherwise send through a deleted identity until it is
 * updated; the operator deletes it once no function sends (docs/operations.md, "Turning SES off").
 */
export class MailIdentity extends Construct {
  readonly identity: EmailIdentity;

  constructor(scope: Construct, id: string, domain: string) {
    super(scope, id);
    this.identity = new EmailIdentity(this, 'Identity', {
      identity: Identity.domain(domain),
      dkimIdentity: DkimIdentity.easyDkim(EasyDkimSigningKeyLength.RSA_2048_BIT),
    });
    this.identity.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.identity.dkimRecords.forEach((record, i) => {
      new CfnOutput(scope, DKIM_OUTPUTS[i] as string, {
        description: `DNS record ${i + 1} of 3 to add for ${domain} (Easy DKIM): SES verifies the domain once all three resolve`,
        value: Fn.join(' ', [record.name, 'CNAME', record.value]),
      });
    });
  }
}
