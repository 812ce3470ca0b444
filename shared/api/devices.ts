// Devices on the local network (`anima serve --listen ADDR`): pairing a phone or a laptop with a
// one-time secret, each paired device's own revocable token, and the devices.* methods. Only the
// owner — the window on this machine, with the folder's own link — may call them: a paired device
// is refused in words (OWNER_ONLY_METHODS, enforced by the HTTPS listener).
import { z } from 'zod';
import { empty, id } from './fields.js';

/** How long a pairing secret is good for, once shown. */
export const PAIRING_SECRET_MS = 10 * 60_000;
export const MAX_DEVICE_NAME_CHARS = 80;

export interface Device {
  id: string;
  name: string;
  createdAt: string;
  /** The last call or event stream it opened (updated at most once a minute); null: not used since pairing. */
  lastUsedAt: string | null;
  /** Revoked devices stay listed (greyed); their token is refused. */
  revokedAt: string | null;
}

/** Where the LAN listener is, when the server was started with --listen. */
export interface DevicesListening {
  /** What --listen named (0.0.0.0, ::, or one address; IPv6 without brackets, as browsers write it). */
  address: string;
  port: number;
  /** The LAN addresses and names the certificate carries, and the Host/Origin checks admit. */
  names: string[];
  /** The certificate's SHA-256 fingerprint, colon hex as browsers show it. */
  fingerprint: string;
}

export interface DevicesList {
  /** null: the server does not listen on the local network (start it with `anima serve --listen 0.0.0.0`). */
  listening: DevicesListening | null;
  devices: Device[];
}

export interface PairingStart {
  /** One-time: used up by the first device that pairs with it; a new start replaces it. */
  secret: string;
  /** https://<lan address>:<port>/#pair=<secret>&fp=<fingerprint hex without colons> */
  url: string;
  fingerprint: string;
  expiresAt: string;
}

/** What POST /api/pair answers a device that brought a good secret. */
export interface PairResult {
  token: string;
  deviceId: string;
}

const deviceName = z
  .string()
  .trim()
  .min(1, 'a device needs a name')
  .max(MAX_DEVICE_NAME_CHARS)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'a device name is one line of text');

export const devicesInputs = {
  'devices.list': empty,
  'devices.pairingStart': empty,
  'devices.revoke': z.object({ id }).strict(),
  'devices.rename': z.object({ id, name: deviceName }).strict(),
} as const;

export interface DevicesOutputs {
  'devices.list': DevicesList;
  'devices.pairingStart': PairingStart;
  'devices.revoke': Device;
  'devices.rename': Device;
}

/** The body of POST /api/pair. */
export const pairRequest = z.object({ secret: z.string().min(1).max(200), name: deviceName }).strict();

/** Methods a paired device may not call: managing devices, the folder's own browser link, where the data is kept (and testing servers from here). */
export const OWNER_ONLY_METHODS: ReadonlySet<string> = new Set([...Object.keys(devicesInputs), 'app.resetBrowserLink', 'storage.test', 'storage.choose']);
