import { strToU8, zipSync, type Zippable } from 'fflate';
import { z } from 'zod';
import type { AuditActor } from '../../audit';
import { conflict, notFound } from '../../errors';
import type { FleetAccess } from '../access';
import { listClients } from '../clients';
import { listConsoles, type ConsoleRecord } from '../consoles';
import { readPollStates } from '../poll/state';
import type { FleetRuntime } from '../runtime';
import { commentText, shQuote } from '../../scripts/quoting';
import { reportedText, REPORTED_VERSION } from '../poll/reported';
import { levelRank } from '../technicians';
import { listPlanRecords, planOnPack, putPlanIf, type UpgradePlan } from './plans';
import { imageArgument, readUpgradeSettings } from './settings';
// the instance scripts of this release (docs/containers.md): what every console instance runs
import BACKUP_SH from '../../../containers/scripts/backup.sh';
import COMMON_SH from '../../../containers/scripts/common.sh';
import INSTALL_SH from '../../../containers/scripts/install.sh';
import RENEW_TLS_SH from '../../../containers/scripts/renew-tls.sh';
import RESTORE_SH from '../../../containers/scripts/restore.sh';
import UPGRADE_SH from '../../../containers/scripts/upgrade.sh';
import { driftOf, type Drift } from './version';

// Upgrade packs (fleet spec, "Console upgrades"): for consoles behind the target tag, grouped by
// client, the commands to run on each client's host (json) or, per client, a folder with
// README.md, `upgrade-<host>.sh` (a wrapper taking the console's instance directory) and the
// generic `upgrade.sh` (zip): the instance script of docs/containers.md, which backs up, pins the
// image in hdc.env, recreates, waits until healthy and prints the rollback. Generating a pack
// plans the upgrade of each console in it (audited `upgrade.planned` once per plan). The fleet
// plane never runs these commands.

export const UPGRADE_SCRIPT = UPGRADE_SH;
/**
 * Beside the generic upgrade.sh, the scripts it needs (common.sh) and installs into the instance
 * it upgrades (common.sh's CONSOLE_SCRIPTS): run from the pack's folder with --instance, this
 * release's upgrade.sh replaces an instance's older scripts and moves its data when it still runs
 * on DynamoDB Local, which that instance's own upgrade.sh cannot do.
 */
export const PACK_SCRIPTS: Record<string, string> = { 'common.sh': COMMON_SH, 'install.sh': INSTALL_SH, 'upgrade.sh': UPGRADE_SH, 'backup.sh': BACKUP_SH, 'restore.sh': RESTORE_SH, 'renew-tls.sh': RENEW_TLS_SH };
/** The placeholder of the json commands: the fleet does not know where a console's instance lives on its host. */
export const CONSOLE_FOLDER_PLACEHOLDER = '<instance directory>';

export const packRequestSchema = z
  .object({
    consoleIds: z.array(z.uuid()).min(1).max(1000).optional(),
    allBehind: z.literal(true).optional(),
    format: z.enum(['json', 'zip']).default('json'),
  })
  .refine((b) => (b.consoleIds !== undefined) !== (b.allBehind !== undefined), 'either consoleIds or allBehind: true');
export type PackRequest = z.output<typeof packRequestSchema>;

/** May the caller operate consoles of this client (administrators, or operators of the client)? */
export const mayOperate = (access: FleetAccess, code: string): boolean => {
  const l = access.levelOn(code);
  return l === 'admin' || (l !== undefined && levelRank(l) >= levelRank('operator'));
};

export interface PackConsole {
  id: string;
  url: string;
  host: string;
  from: string | null;
  to: string;
  drift: Drift;
  plannedAt: string;
  /** this request made the plan (false: the open plan for this target was already there) */
  newlyPlanned: boolean;
  commands: string[];
  script: string;
}
export interface PackClient {
  code: string;
  name: string;
  consoles: PackConsole[];
}
export interface UpgradePack {
  target: { tag: string; repository: string | null; image: string };
  generatedAt: string;
  clients: PackClient[];
  /** consoles named in the request and left out: already at the target */
  leftOut: Array<{ id: string; reason: 'up_to_date' }>;
}

/** A console's host as a file name part: its host name, plus the port when not 443. */
export function hostPart(url: string): string {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/[^A-Za-z0-9.-]/g, '-');
  return u.port && u.port !== '443' ? `${host}-${u.port}` : host;
}

/**
 * The wrapper `upgrade-<host>.sh`. Every value is a validated field (the image from the upgrade
 * settings, the URL and client code from the registration, the version from the poll, already
 * held to its pattern) and is written either as one single-quoted word or inside a comment line
 * that no character can end (lib/scripts/quoting.ts). The reported version is checked once more
 * here: a comment is no place for a line break either.
 */
export function wrapperScript(c: { url: string; host: string; clientCode: string; from: string | null; to: string; image: string }, generatedAt: string): string {
  const from = c.from === null ? 'an unknown version' : reportedText(REPORTED_VERSION, c.from);
  return [
    '#!/usr/bin/env bash',
    `# Upgrade the console ${commentText(c.url)} (client ${commentText(c.clientCode)}) from ${commentText(from)} to ${commentText(c.to)}.`,
    `# Generated by the fleet plane at ${commentText(generatedAt)}; run it on the console's host, as root:`,
    `#   ./upgrade-${commentText(c.host)}.sh /srv/hdc/<instance>`,
    "# It runs the instance's own upgrade.sh when that one knows the embedded store; otherwise (none,",
    '# or one from before the embedded store) this folder\'s upgrade.sh, which installs its scripts into',
    '# the instance and moves its data off DynamoDB Local. Either: backup first, the image pinned in',
    '# hdc.env, containers recreated, wait until healthy.',
    'set -euo pipefail',
    '[ $# -eq 1 ] || { echo "usage: $0 <instance directory>" >&2; exit 2; }',
    'here=$(cd "$(dirname "$0")" && pwd)',
    'cd "$1"',
    'if [ ! -f hdc.env ] || [ ! -f common.sh ]; then',
    '  echo "$1 is not a console instance directory (no hdc.env, common.sh)" >&2',
    '  exit 2',
    'fi',
    '# hdc.env read as data, with bash alone (the script needs no other program)',
    'embedded=',
    'while IFS= read -r line || [ -n "$line" ]; do [ "$line" = HDC_STORE=sqlite ] && embedded=1; done < hdc.env',
    'if [ -f upgrade.sh ] && [ -n "$embedded" ]; then',
    `  exec ./upgrade.sh ${shQuote(c.image)}`,
    'fi',
    'echo "[hdc] $PWD: this pack\'s upgrade.sh runs (it installs this release\'s scripts there)"',
    `exec "$here/upgrade.sh" --instance "$PWD" ${shQuote(c.image)}`,
    '',
  ].join('\n');
}

export function clientReadme(client: PackClient, pack: UpgradePack): string {
  const rows = client.consoles.map((c) => `| ${c.url} | ${c.from ?? 'unknown'} | ${c.to} | \`upgrade-${c.host}.sh\` |`);
  return [
    `# Console upgrade pack: ${client.name} (${client.code})`,
    '',
    `Generated by the fleet plane at ${pack.generatedAt}. Target: \`${pack.target.image}\`${pack.target.repository ? '' : ' (a tag alone: each instance keeps the image repository of its own hdc.env)'}.`,
    '',
    '| Console | From | To | Script |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## On each console host',
    '',
    "Copy this folder to the host, then, as root, give each script the console's instance directory",
    '(the one holding `hdc.env`, made by `install.sh`):',
    '',
    '```sh',
    ...client.consoles.map((c) => `./upgrade-${c.host}.sh /srv/hdc/<instance>`),
    '```',
    '',
    "or, in the instance directory, with the instance's own script:",
    '',
    '```sh',
    `./upgrade.sh ${shQuote(pack.target.image)}`,
    '```',
    '',
    "`upgrade.sh` here is the instance script of this fleet plane's release, with the scripts it needs",
    "(`common.sh`) and installs. A wrapper runs the instance's own `upgrade.sh` when the instance already",
    'runs on the embedded store; otherwise (no script of its own, or an instance from before the',
    "embedded store, whose script cannot move its data off DynamoDB Local) it runs this folder's, which",
    "installs this release's scripts into the instance and moves its data. It takes a database copy",
    'first (nothing changes if',
    'that fails), pins the new image in `hdc.env`, recreates the console and password service, and',
    'waits until the console answers `/health/ready`. If it does not, it prints how to roll back',
    "(`./upgrade.sh '<previous image>'`, and `./restore.sh --database <copy>` when the new version",
    'already migrated the database). The fleet plane sees the new version at its next poll of the',
    'console; a planned upgrade not visible after the configured delay raises `console_upgrade_overdue`.',
    '',
  ].join('\n');
}

export function packZip(pack: UpgradePack): Buffer {
  const exec = { os: 3, attrs: 0o100755 << 16 } as const;
  const files: Zippable = {};
  for (const client of pack.clients) {
    const folder: Zippable = {
      'README.md': [strToU8(clientReadme(client, pack)), { os: 3, attrs: 0o100644 << 16 }],
    };
    for (const [name, text] of Object.entries(PACK_SCRIPTS)) folder[name] = [strToU8(text), exec];
    for (const c of client.consoles) folder[`upgrade-${c.host}.sh`] = [strToU8(c.script), exec];
    files[client.code] = folder;
  }
  return Buffer.from(zipSync(files, { level: 6, mtime: new Date(pack.generatedAt) }));
}

export interface PackActing {
  actor: AuditActor;
  correlationId: string;
}

/**
 * Build the pack for the consoles chosen (already authorized by the route: explicit ids are the
 * caller's to operate) or, for `allBehind`, every console behind the target that the caller may
 * operate; plan each one, audited once per new plan under its client.
 */
export async function generateUpgradePack(rt: FleetRuntime, access: FleetAccess, req: PackRequest, by: PackActing, now = Date.now()): Promise<UpgradePack> {
  const settings = await readUpgradeSettings(rt.store);
  if (!settings.targetTag) throw conflict('target_not_set');
  const tag = settings.targetTag;
  const image = imageArgument(settings, tag);
  const [consoles, states, clients, records] = await Promise.all([listConsoles(rt.store), readPollStates(rt.store), listClients(rt.store), listPlanRecords(rt.store)]);
  const versionOf = (c: ConsoleRecord) => states.get(c.id)?.status?.instance.version ?? null;

  const leftOut: UpgradePack['leftOut'] = [];
  let chosen: ConsoleRecord[];
  if (req.consoleIds) {
    const byId = new Map(consoles.map((c) => [c.id, c]));
    // an unknown id is 404 for everyone (the route's guard already answered technicians alike)
    if (req.consoleIds.some((id) => !byId.has(id))) throw notFound();
    chosen = [...new Set(req.consoleIds)].map((id) => byId.get(id)!);
    // named explicitly: everything not already at the target (Behind, or Unknown: the caller's call)
    chosen = chosen.filter((c) => {
      const up = driftOf(versionOf(c), tag) === 'up_to_date';
      if (up) leftOut.push({ id: c.id, reason: 'up_to_date' });
      return !up;
    });
  } else {
    // "all behind": only consoles the caller may operate, only those known to be behind
    chosen = consoles.filter((c) => mayOperate(access, c.clientCode) && driftOf(versionOf(c), tag) === 'behind');
  }
  if (chosen.length === 0) throw conflict('nothing_to_upgrade', leftOut.length ? { upToDate: leftOut.map((l) => l.id) } : undefined);

  const generatedAt = new Date(now).toISOString();
  const existing = new Map(records.map((r) => [r.plan.consoleId, r]));
  const byClient = new Map<string, PackConsole[]>();
  for (const c of chosen) {
    const from = versionOf(c);
    let rec = existing.get(c.id);
    let plan: UpgradePlan;
    let created = false;
    // conditional write: two packs at once make one plan and one audit row
    for (let attempt = 0; ; attempt++) {
      const next = planOnPack(rec?.plan, { consoleId: c.id, version: from }, { tag, image }, now, by.actor.name ?? by.actor.id);
      if (next.plan === rec?.plan) {
        plan = next.plan;
        break;
      }
      if (await putPlanIf(rt.store, next.plan, rec?.version ?? 0)) {
        plan = next.plan;
        created = next.created;
        break;
      }
      if (attempt >= 4) throw new Error('upgrade plan write lost five races');
      rec = (await listPlanRecords(rt.store)).find((r) => r.plan.consoleId === c.id);
    }
    if (created) {
      await rt.audit.append({
        event: 'upgrade.planned',
        outcome: 'success',
        actor: by.actor,
        client: c.clientCode,
        target: { id: c.id, name: new URL(c.url).origin, kind: 'console' },
        correlationId: by.correlationId,
        details: { id: c.id, from: plan.from, to: plan.to },
      });
    }
    const host = hostPart(c.url);
    const entry: PackConsole = {
      id: c.id,
      url: c.url,
      host,
      from,
      to: tag,
      drift: driftOf(from, tag),
      plannedAt: plan.plannedAt,
      newlyPlanned: created,
      commands: [`cd ${CONSOLE_FOLDER_PLACEHOLDER}`, `./upgrade.sh ${shQuote(image)}`],
      script: '',
    };
    byClient.set(c.clientCode, [...(byClient.get(c.clientCode) ?? []), entry]);
  }
  // two consoles of one client on the same host name: their wrappers get distinct names
  for (const list of byClient.values()) {
    const seen = new Map<string, number>();
    for (const e of list) {
      const n = (seen.get(e.host) ?? 0) + 1;
      seen.set(e.host, n);
      if (n > 1) e.host = `${e.host}-${n}`;
    }
  }
  const clientOf = new Map(chosen.map((c) => [c.id, c.clientCode]));
  for (const list of byClient.values()) for (const e of list) e.script = wrapperScript({ url: e.url, host: e.host, clientCode: clientOf.get(e.id)!, from: e.from, to: tag, image }, generatedAt);
  const names = new Map(clients.map((c) => [c.code, c.name]));
  return {
    target: { tag, repository: settings.repository, image },
    generatedAt,
    clients: [...byClient.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([code, list]) => ({ code, name: names.get(code) ?? code, consoles: list })),
    leftOut,
  };
}

/** The json answer: the pack without the wrapper scripts' text (those are the zip's). */
export const packJson = (pack: UpgradePack) => ({
  ...pack,
  clients: pack.clients.map((c) => ({ ...c, consoles: c.consoles.map(({ script: _script, ...rest }) => rest) })),
});
