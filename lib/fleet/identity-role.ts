import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

// The fleet plane's own cluster role, shipped as one file (identity-role.yaml): the fleet CLI
// prints it for the installer, docs/fleet.md shows it, and the fake cluster CLI of the local
// stack enforces it, so a command the role does not grant fails the tests as it would in the
// cluster.

export const IDENTITY_ROLE_FILE = path.join(__dirname, 'identity-role.yaml');
export const IDENTITY_ROLE_NAME = 'fleet-plane';

export interface RoleRule {
  resources: string[];
  verbs: string[];
}
export interface IdentityRole {
  kind: 'role';
  version: string;
  metadata: { name: string; description?: string };
  spec: { allow: { windows_desktop_labels?: Record<string, string | string[]>; rules?: RoleRule[] }; deny: Record<string, unknown> };
}

export const identityRoleYaml = (): string => fs.readFileSync(IDENTITY_ROLE_FILE, 'utf8');
export const identityRole = (): IdentityRole => parse(identityRoleYaml()) as IdentityRole;

/**
 * What the installer prints: the role file, preceded by comments saying how to create it and bind
 * the fleet plane's identity to it (the whole output is the file: `... > fleet-plane-role.yaml`).
 */
export function identityRoleInstructions(): string {
  return [
    `# The fleet plane's own role in the access platform (the spec's identity role, nothing more).`,
    `# 1. Save this output as fleet-plane-role.yaml and create the role (a cluster administrator):`,
    `#      tctl create -f fleet-plane-role.yaml`,
    `# 2. Bind the fleet plane's identity to it. Machine ID (recommended):`,
    `#      tctl bots add ${IDENTITY_ROLE_NAME} --roles=${IDENTITY_ROLE_NAME}`,
    `#    and set ACCESS_MACHINE_ID_IDENTITY to the identity file tbot writes; or an identity file`,
    `#    of a user holding only this role (tctl auth sign --format=file --ttl=...) in`,
    `#    ACCESS_IDENTITY_FILE. Both need ACCESS_AUTH_SERVER. Enable the lock rule only with a`,
    `#    short-lived credential.`,
    identityRoleYaml().replace(/^(#.*\n)+/, ''),
  ].join('\n');
}
