// Devices paired over the local network (`anima serve --listen`): the `devices` table (migration 030),
// the one-time pairing secret, and the check of a device's token on every request of the LAN listener.
//
// A token is 32 random bytes (base64url) and is stored only as its SHA-256 digest; the pairing secret
// lives in memory only (one at a time, PAIRING_SECRET_MS, used up by the first device that brings it).
// Revoking refuses the token from the next request on and tells the listener (onRevoke) so open event
// streams of that device are closed at once. This object outlives a restore: it reads the database
// through `db()`, which names the current one.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import os from 'node:os';

import { ApiError, PAIRING_SECRET_MS, type Device, type DevicesList, type DevicesListening, type PairingStart, type PairResult } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import type { HostEvents } from '../events/events.js';

/** last_used_at moves at most this often per device. */
const TOUCH_EVERY_MS = 60_000;

interface Row {
  id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface DevicesOptions {
  db: () => Database;
  events: Pick<HostEvents, 'emit'>;
  now?: () => Date;
}

const COLUMNS = 'id, name, created_at, last_used_at, revoked_at';
const digestHex = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

function toDevice(r: Row): Device {
  return {
    id: r.id,
    name: r.name,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at?.toISOString() ?? null,
    revokedAt: r.revoked_at?.toISOString() ?? null,
  };
}

export class Devices {
  private listening: DevicesListening | null = null;
  private pairing: { digest: Buffer; expiresAt: number } | null = null;
  private readonly touched = new Map<string, number>();
  private readonly revokeListeners = new Set<(deviceId: string) => void>();
  private readonly now: () => Date;

  constructor(private readonly opts: DevicesOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  private get db(): Database {
    return this.opts.db();
  }

  /** The server says where its LAN listener is (null: it has none, or it stopped). */
  setListening(listening: DevicesListening | null): void {
    this.listening = listening;
    if (!listening) this.pairing = null;
  }

  async list(): Promise<DevicesList> {
    const r = await this.db.query<Row>(`SELECT ${COLUMNS} FROM devices ORDER BY revoked_at IS NOT NULL, created_at DESC, id`);
    return { listening: this.listening, devices: r.rows.map(toDevice) };
  }

  /** A new one-time secret (the one shown before is void) and the address a phone opens with it. */
  pairingStart(): PairingStart {
    const listening = this.listening;
    if (!listening) {
      throw new ApiError('conflict', 'Anima is not listening on the local network. Start it with: anima serve --listen 0.0.0.0');
    }
    const secret = randomBytes(24).toString('base64url');
    const expiresAt = this.now().getTime() + PAIRING_SECRET_MS;
    this.pairing = { digest: createHash('sha256').update(secret).digest(), expiresAt };
    const fp = listening.fingerprint.replace(/:/g, '').toLowerCase();
    const host = lanAddress(listening);
    const url = `https://${host.includes(':') ? `[${host}]` : host}:${listening.port}/#pair=${secret}&fp=${fp}`;
    return { secret, url, fingerprint: listening.fingerprint, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** POST /api/pair: a good, unexpired secret is used up and the device gets its token. */
  async pair(secret: string, name: string): Promise<PairResult> {
    const pairing = this.pairing;
    const presented = createHash('sha256').update(secret).digest();
    if (!pairing || !timingSafeEqual(presented, pairing.digest) || pairing.expiresAt <= this.now().getTime()) {
      throw new ApiError('unauthorized', 'This pairing code is wrong, used or expired. Show a new one in Settings → Devices on the computer Anima runs on.');
    }
    this.pairing = null;
    const token = randomBytes(32).toString('base64url');
    const id = randomUUID();
    await this.db.query('INSERT INTO devices (id, name, token_digest, created_at) VALUES ($1, $2, $3, $4)', [id, name, digestHex(token), this.now()]);
    this.opts.events.emit('devices.changed', { deviceId: id });
    return { token, deviceId: id };
  }

  /** The device a token belongs to; null for an unknown or revoked one. Notes the use (at most once a minute). */
  async authenticate(token: string): Promise<string | null> {
    const r = await this.db.query<{ id: string; revoked_at: Date | null }>('SELECT id, revoked_at FROM devices WHERE token_digest = $1', [digestHex(token)]);
    const row = r.rows[0];
    if (!row || row.revoked_at) return null;
    const now = this.now();
    const last = this.touched.get(row.id) ?? 0;
    if (now.getTime() - last >= TOUCH_EVERY_MS) {
      this.touched.set(row.id, now.getTime());
      await this.db.query('UPDATE devices SET last_used_at = $2 WHERE id = $1', [row.id, now]);
      this.opts.events.emit('devices.changed', { deviceId: row.id });
    }
    return row.id;
  }

  async revoke(id: string): Promise<Device> {
    const r = await this.db.query<Row>(`UPDATE devices SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`, [id, this.now()]);
    const row = r.rows[0];
    if (!row) throw new ApiError('not_found', 'There is no such device.');
    for (const listener of this.revokeListeners) listener(id);
    this.opts.events.emit('devices.changed', { deviceId: id });
    return toDevice(row);
  }

  async rename(id: string, name: string): Promise<Device> {
    const r = await this.db.query<Row>(`UPDATE devices SET name = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, name]);
    const row = r.rows[0];
    if (!row) throw new ApiError('not_found', 'There is no such device.');
    this.opts.events.emit('devices.changed', { deviceId: id });
    return toDevice(row);
  }

  /** Before the data is swapped (a restore): which devices there are, and which are revoked. */
  async snapshot(): Promise<{ active: string[]; revoked: string[] }> {
    const r = await this.db.query<{ id: string; revoked: boolean }>('SELECT id, revoked_at IS NOT NULL AS revoked FROM devices');
    return { active: r.rows.filter((d) => !d.revoked).map((d) => d.id), revoked: r.rows.filter((d) => d.revoked).map((d) => d.id) };
  }

  /**
   * After a restore: a device revoked before it stays revoked (the copy may predate the revocation),
   * and a device the restored copy does not know (paired since) is refused from now on, its open
   * event streams cut like a revoked one's.
   */
  async afterRestore(before: { active: string[]; revoked: string[] }): Promise<void> {
    if (before.revoked.length) {
      await this.db.query('UPDATE devices SET revoked_at = $2 WHERE id = ANY($1::text[]) AND revoked_at IS NULL', [before.revoked, this.now()]);
    }
    const known = new Set((await this.db.query<{ id: string }>('SELECT id FROM devices WHERE revoked_at IS NULL')).rows.map((r) => r.id));
    for (const id of before.active) if (!known.has(id)) for (const listener of this.revokeListeners) listener(id);
    this.touched.clear();
    this.opts.events.emit('devices.changed', { deviceId: '' });
  }

  /** Called with a device's id the moment it is revoked. */
  onRevoke(listener: (deviceId: string) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }
}

/** The address a phone on the LAN reaches: the one --listen named, else the first LAN address (IPv4, then IPv6 for ::), else the host name. */
function lanAddress(listening: DevicesListening): string {
  if (listening.address !== '0.0.0.0' && listening.address !== '::') return listening.address;
  const ipv4 = listening.names.find((n) => /^\d+(\.\d+){3}$/.test(n) && !n.startsWith('127.'));
  const ipv6 = listening.names.find((n) => n.includes(':') && n !== '::1');
  return ipv4 ?? ipv6 ?? listening.names.find((n) => n.endsWith('.local')) ?? os.hostname();
}
