import { securityHeaders } from '../lib/http/browser';

// A web app (web/console/dist, web/fleet/dist) as AWS serves it: a private S3 bucket read only by
// its CloudFront distribution (origin access control), which also passes the API's paths to the
// HTTP API: one origin for the app and the API, so the __Host- cookie and the CSRF/Origin check
// work as locally. The response-headers policy carries the headers lib/http/browser.ts sends with
// every API answer, so the app's files and CloudFront's own errors carry them too.
// serverless.yml and serverless.fleet.yml render it through deploy/static-site.cjs.

export interface SiteOptions {
  /** logical id prefix: `Web` (console, kept from before), `FleetWeb` */
  prefix: string;
  /** resource names: hdc-console-web-<stage>, hdc-fleet-web-<stage> */
  name: string;
  /** the app, for descriptions and outputs */
  title: string;
  /** the output naming the public origin */
  urlOutput: string;
  bucketOutput: string;
  /** path patterns passed to the HTTP API */
  apiPaths: string[];
  hstsMaxAge: number;
}

// CloudFront's managed policies (ids are the same in every account)
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
/** Origin, Cookie, X-CSRF-TOKEN and the query pass; Host is the API's own */
const ALL_VIEWER_EXCEPT_HOST = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

/** lib/http/browser.ts's headers as a CloudFront response-headers policy (HSTS only with a max-age). */
export function headersPolicyConfig(name: string, hstsMaxAge: number) {
  const { 'content-security-policy': csp, 'x-frame-options': frame, 'referrer-policy': referrer, 'x-content-type-options': nosniff, 'strict-transport-security': hsts, ...custom } =
    securityHeaders({ publicOrigin: 'https://cloudfront', hstsMaxAge });
  if (frame !== 'DENY' || nosniff !== 'nosniff') throw new Error('lib/http/browser.ts changed a header CloudFront sets by name: update deploy/static-site.ts');
  return {
    Name: name,
    Comment: 'the security headers of lib/http/browser.ts',
    SecurityHeadersConfig: {
      ContentSecurityPolicy: { ContentSecurityPolicy: csp, Override: true },
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: 'DENY', Override: true },
      ReferrerPolicy: { ReferrerPolicy: referrer, Override: true },
      ...(hsts ? { StrictTransportSecurity: { AccessControlMaxAgeSec: hstsMaxAge, IncludeSubdomains: hsts.includes('includeSubDomains'), Preload: false, Override: true } } : {}),
    },
    CustomHeadersConfig: { Items: Object.entries(custom).map(([Header, Value]) => ({ Header, Value, Override: true })) },
  };
}

export function staticSite(stage: string, o: SiteOptions) {
  const id = (s: string) => `${o.prefix}${s}`;
  const apiBehaviour = (PathPattern: string) => ({
    PathPattern,
    TargetOriginId: 'api',
    ViewerProtocolPolicy: 'https-only',
    AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'POST', 'PATCH', 'DELETE'],
    CachePolicyId: CACHING_DISABLED,
    OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST,
    ResponseHeadersPolicyId: { Ref: id('SecurityHeaders') },
  });
  return {
    Resources: {
      [id('Bucket')]: {
        Type: 'AWS::S3::Bucket',
        Properties: {
          PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
          BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
          OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        },
      },
      [id('OriginAccessControl')]: {
        Type: 'AWS::CloudFront::OriginAccessControl',
        Properties: { OriginAccessControlConfig: { Name: o.name, OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' } },
      },
      // only this distribution reads the bucket; nobody else, and nothing writes through it
      [id('BucketPolicy')]: {
        Type: 'AWS::S3::BucketPolicy',
        Properties: {
          Bucket: { Ref: id('Bucket') },
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'cloudfront.amazonaws.com' },
                Action: 's3:GetObject',
                Resource: { 'Fn::Sub': `\${${id('Bucket')}.Arn}/*` },
                Condition: { StringEquals: { 'AWS:SourceArn': { 'Fn::Sub': `arn:\${AWS::Partition}:cloudfront::\${AWS::AccountId}:distribution/\${${id('Distribution')}}` } } },
              },
            ],
          },
        },
      },
      // an app path (/computers/…, /approvals/<id> from a notification link) is the app itself; a
      // distribution-wide error page would also rewrite the API's own 404 answers
      [id('AppPaths')]: {
        Type: 'AWS::CloudFront::Function',
        Properties: {
          Name: `${o.name}-paths`,
          AutoPublish: true,
          FunctionConfig: { Comment: 'app paths to /index.html', Runtime: 'cloudfront-js-2.0' },
          FunctionCode: 'function handler(event) {\n  var r = event.request;\n  if (!/\\.[A-Za-z0-9]+$/.test(r.uri)) r.uri = \'/index.html\';\n  return r;\n}\n',
        },
      },
      [id('SecurityHeaders')]: {
        Type: 'AWS::CloudFront::ResponseHeadersPolicy',
        Properties: { ResponseHeadersPolicyConfig: headersPolicyConfig(o.name, o.hstsMaxAge) },
      },
      [id('Distribution')]: {
        Type: 'AWS::CloudFront::Distribution',
        Properties: {
          DistributionConfig: {
            Enabled: true,
            Comment: `hdc ${o.title} ${stage}`,
            HttpVersion: 'http2and3',
            PriceClass: 'PriceClass_100',
            DefaultRootObject: 'index.html',
            Origins: [
              { Id: 'web', DomainName: { 'Fn::GetAtt': [id('Bucket'), 'RegionalDomainName'] }, OriginAccessControlId: { 'Fn::GetAtt': [id('OriginAccessControl'), 'Id'] }, S3OriginConfig: { OriginAccessIdentity: '' } },
              {
                Id: 'api',
                DomainName: { 'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': ['HttpApi', 'ApiEndpoint'] }] }] },
                CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] },
              },
            ],
            DefaultCacheBehavior: {
              TargetOriginId: 'web',
              ViewerProtocolPolicy: 'redirect-to-https',
              Compress: true,
              CachePolicyId: CACHING_OPTIMIZED,
              ResponseHeadersPolicyId: { Ref: id('SecurityHeaders') },
              FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [id('AppPaths'), 'FunctionARN'] } }],
            },
            CacheBehaviors: o.apiPaths.map(apiBehaviour),
          },
        },
      },
    },
    Outputs: {
      [o.urlOutput]: { Description: `the ${o.title}'s public origin`, Value: { 'Fn::Sub': `https://\${${id('Distribution')}.DomainName}` } },
      [o.bucketOutput]: { Description: `where the ${o.title}'s built files are synced`, Value: { Ref: id('Bucket') } },
    },
  };
}

const maxAge = (v: string | undefined) => (v === undefined || v === '' ? 31536000 : Number(v));

/** The console's web app (web/console/dist) and its API paths. */
export const consoleSite = (stage: string, env: NodeJS.ProcessEnv = process.env) =>
  staticSite(stage, {
    prefix: 'Web',
    name: `hdc-console-web-${stage}`,
    title: 'console',
    urlOutput: 'ConsoleWebUrl',
    bucketOutput: 'WebBucketName',
    apiPaths: ['/api/*', '/health/*', '/openapi/*'],
    hstsMaxAge: maxAge(env.Hosting__HstsMaxAge),
  });

/** The fleet dashboard (web/fleet/dist) and its API paths. */
export const fleetSite = (stage: string, env: NodeJS.ProcessEnv = process.env) =>
  staticSite(stage, {
    prefix: 'FleetWeb',
    name: `hdc-fleet-web-${stage}`,
    title: 'fleet dashboard',
    urlOutput: 'FleetWebUrl',
    bucketOutput: 'FleetWebBucketName',
    apiPaths: ['/api/*', '/health/*', '/openapi/*'],
    hstsMaxAge: maxAge(env.FLEET_HSTS_MAX_AGE),
  });
