import { admitChannelUrl, applyChannelInput, MAX_CHANNELS, type ChannelInput, type ChannelPolicy, type ChannelRecord } from '../../channels';
import { conflict, notFound, unavailable } from '../../errors';
import { outboundTrust } from '../../outbound/https';
import type { Store } from '../../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../../store/records';
import type { FleetConfig } from '../config';

// The fleet plane's alert channels (pk ALERTCHANNEL, sk <id>): at most 20, each can be disabled
// without deletion, secrets sealed with SECRETS_ENCRYPTION_KEY (fleet spec, Notification channel).

const PK = 'ALERTCHANNEL';
export const FLEET_CHANNEL_AAD = 'fleet-channel';

/** The sealing policy; 503 secrets_key_missing when SECRETS_ENCRYPTION_KEY is not configured. */
export function fleetChannelPolicy(config: Pick<FleetConfig, 'SECRETS_ENCRYPTION_KEY' | 'FLEET_OUTBOUND_ALLOWED_TARGETS'>): ChannelPolicy {
  if (!config.SECRETS_ENCRYPTION_KEY) throw unavailable('secrets_key_missing');
  return { key: Buffer.from(config.SECRETS_ENCRYPTION_KEY, 'base64'), aad: FLEET_CHANNEL_AAD, secretMin: 8, targets: outboundTrust(config.FLEET_OUTBOUND_ALLOWED_TARGETS) };
}

export async function listFleetChannels(store: Store): Promise<ChannelRecord[]> {
  return (await queryRecords<ChannelRecord>(store, PK)).map((r) => r.data).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export async function getFleetChannel(store: Store, id: string): Promise<ChannelRecord | undefined> {
  return (await getRecord<ChannelRecord>(store, PK, id))?.data;
}

export async function createFleetChannel(store: Store, policy: ChannelPolicy, input: ChannelInput): Promise<ChannelRecord> {
  if ((await listFleetChannels(store)).length >= MAX_CHANNELS) throw conflict('too_many_channels', { max: MAX_CHANNELS });
  await admitChannelUrl(input, policy);
  const { record } = applyChannelInput(undefined, input, policy);
  await putRecord(store, PK, record.id, record, { expectVersion: 0 });
  return record;
}

export async function updateFleetChannel(store: Store, policy: ChannelPolicy, id: string, input: ChannelInput) {
  await admitChannelUrl(input, policy);
  for (let i = 0; i < 5; i++) {
    const cur = await getRecord<ChannelRecord>(store, PK, id);
    if (!cur) throw notFound();
    const out = applyChannelInput(cur.data, input, policy);
    if (await putRecord(store, PK, id, out.record, { expectVersion: cur.version })) return { ...out, old: cur.data };
  }
  throw new Error('channel update lost five races');
}

export async function deleteFleetChannel(store: Store, id: string): Promise<ChannelRecord> {
  const cur = await getFleetChannel(store, id);
  if (!cur) throw notFound();
  await deleteRecord(store, PK, id);
  return cur;
}

/** Remember each channel's last delivery (shown in the channel list). */
export async function recordLastDelivery(store: Store, results: Array<{ channelId: string; at: string; ok: boolean; status?: number; error?: string }>): Promise<void> {
  for (const r of results) {
    const cur = await getRecord<ChannelRecord>(store, PK, r.channelId);
    if (!cur) continue;
    await putRecord(store, PK, r.channelId, { ...cur.data, lastDelivery: { at: r.at, ok: r.ok, ...(r.status ? { status: r.status } : {}), ...(r.error ? { error: r.error } : {}) } }, { expectVersion: cur.version });
  }
}
