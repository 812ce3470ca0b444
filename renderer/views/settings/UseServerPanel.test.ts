// "Use my Anima server" in the desktop app, on the renderer's side: the store over window.animaDesktop
// and what the Settings panel and the banner show from it. The DesktopShell object below is written in
// this test and stands in for the Electron preload at the renderer's boundary (shared/bridge.ts): the
// preload and main cannot run here, so it answers as the contract says they do — where the window is,
// a reply per call, refusals as codes. Nothing of the renderer is mocked.
import i18next, { type i18n as I18n } from 'i18next';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BridgeReply, DesktopShell, DesktopWhere, RememberedServer } from '../../../shared/bridge.js';
import { ServerBannerView, serverHost } from '../../app/ServerBanner.js';
import en from '../../i18n/en.js';
import zhCN from '../../i18n/zh-CN.js';
import { OnServerPanelView, UseServerPanelView, type DesktopView } from './UseServerPanel.js';
import { desktopShell, setDesktopShell, useDesktop } from '../../stores/desktop.js';

const SERVER: RememberedServer = {
  origin: 'https://192.168.1.5:7431',
  fingerprint: Array.from({ length: 32 }, () => 'AB').join(':'),
  since: '2026-11-02T09:30:00.000Z',
};
const LINK = `https://192.168.1.5:7431/#pair=s3cr3t-Pairing_code&fp=${'ab'.repeat(32)}`;

interface TestShell extends DesktopShell {
  calls: string[];
  /** What the next useServer / reopenServer answers; a function may hold the answer back. */
  answer: BridgeReply | (() => Promise<BridgeReply>);
  whereNow: DesktopWhere;
}

function testShell(whereNow: DesktopWhere): TestShell {
  const shell: TestShell = {
    calls: [],
    answer: { ok: true, value: null },
    whereNow,
    async where() {
      shell.calls.push('where');
      return shell.whereNow;
    },
    async useServer(link) {
      shell.calls.push(`useServer ${link}`);
      return typeof shell.answer === 'function' ? shell.answer() : shell.answer;
    },
    async reopenServer() {
      shell.calls.push('reopenServer');
      return typeof shell.answer === 'function' ? shell.answer() : shell.answer;
    },
    async useThisComputer() {
      shell.calls.push('useThisComputer');
    },
    async forgetServer() {
      shell.calls.push('forgetServer');
      shell.whereNow = { kind: 'local', server: null };
    },
  };
  return shell;
}

/** A refusal as the preload relays it: the shell's codes are not the host's ErrorCode list. */
const refused = (code: string, message = `refused: ${code}`) => ({ ok: false, error: { code, message } }) as unknown as BridgeReply;

const i18n: Record<'en' | 'zh-CN', I18n> = { en: i18next.createInstance(), 'zh-CN': i18next.createInstance() };
beforeAll(async () => {
  // No DOM here (Node 20 has no navigator): the system language the time format reads, as a browser gives it.
  if (typeof navigator === 'undefined') vi.stubGlobal('navigator', { language: 'en-GB' });
  for (const [lng, translation] of [
    ['en', en],
    ['zh-CN', zhCN],
  ] as const) {
    await i18n[lng].use(initReactI18next).init({ resources: { [lng]: { translation } }, lng, interpolation: { escapeValue: false } });
  }
});

/** The store's state now, as the connected components hand it to the views they draw. */
function view(): DesktopView {
  const { where, busy, refusal, unreachableDismissed } = useDesktop.getState();
  return { where: desktopShell() ? where : null, busy, refusal, unreachableDismissed };
}

type Drawn = typeof ServerBannerView | typeof UseServerPanelView;
function html(component: Drawn, lng: 'en' | 'zh-CN' = 'en'): string {
  return renderToStaticMarkup(createElement(I18nextProvider, { i18n: i18n[lng] }, createElement(component, { state: view() })));
}
const onServer = (origin: string, lng: 'en' | 'zh-CN' = 'en') =>
  renderToStaticMarkup(createElement(I18nextProvider, { i18n: i18n[lng] }, createElement(OnServerPanelView, { origin, state: view() })));
const text = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();

beforeEach(() => {
  useDesktop.setState({ where: null, busy: null, refusal: null, unreachableDismissed: false, whereFailed: false });
});
afterEach(() => setDesktopShell(undefined));
afterAll(() => vi.unstubAllGlobals());

describe('without the desktop shell (a browser, a phone)', () => {
  it('asks nothing and shows nothing', async () => {
    setDesktopShell(null);
    await useDesktop.getState().load();
    await useDesktop.getState().connect(LINK);
    expect(useDesktop.getState()).toMatchObject({ where: null, busy: null, refusal: null });
    expect(html(ServerBannerView)).toBe('');
    expect(html(UseServerPanelView)).toBe('');
  });
});

describe('connecting with a pairing link', () => {
  it('hands the shell the trimmed link and stays busy while the window goes to the server', async () => {
    const shell = testShell({ kind: 'local', server: null });
    setDesktopShell(shell);
    await useDesktop.getState().load();
    expect(useDesktop.getState().where).toEqual({ kind: 'local', server: null });

    let release!: (reply: BridgeReply) => void;
    shell.answer = () => new Promise((resolve) => (release = resolve));
    const connecting = useDesktop.getState().connect(`  ${LINK}\n`);
    expect(useDesktop.getState().busy).toBe('connect');
    expect(text(html(UseServerPanelView))).toContain('Checking the server…');
    // Enter pressed again meanwhile: one call, not two.
    await useDesktop.getState().connect(LINK);
    await useDesktop.getState().reopen();
    release({ ok: true, value: null });
    await connecting;
    expect(shell.calls).toEqual(['where', `useServer ${LINK}`]);
    expect(useDesktop.getState()).toMatchObject({ busy: 'connect', refusal: null });
  });

  it('refuses an empty link itself, without asking the shell', async () => {
    const shell = testShell({ kind: 'local', server: null });
    setDesktopShell(shell);
    await useDesktop.getState().connect('   ');
    expect(shell.calls).toEqual([]);
    expect(useDesktop.getState().refusal).toEqual({ action: 'connect', code: 'invalid_link', message: '' });
  });

  it.each([
    ['invalid_link', 'That is not a pairing link.', 'it begins with https:// and carries #pair= and fp=', '这不是一个配对链接。'],
    ['server_unreachable', 'The server did not answer.', 'on the same network', '服务器没有响应。'],
    [
      'certificate_mismatch',
      'The server’s certificate is not the one the link names.',
      'Do not go on unless you have just made the server’s certificate anew',
      '服务器的证书与链接里指定的不一致。',
    ],
    ['tls_something_new', 'Could not connect to the server.', 'Try again in a moment', '没能连接到服务器。'],
  ])('says %s in words, in both languages, and leaves the window where it is', async (code, what, todo, zhWhat) => {
    const shell = testShell({ kind: 'local', server: null });
    setDesktopShell(shell);
    await useDesktop.getState().load();
    shell.answer = refused(code);
    await useDesktop.getState().connect(LINK);
    const state = useDesktop.getState();
    expect(state.busy).toBeNull();
    expect(state.refusal).toMatchObject({ action: 'connect', code: code === 'tls_something_new' ? 'other' : code });
    const panel = html(UseServerPanelView);
    expect(panel).toContain(`data-refusal-code="${state.refusal!.code}"`);
    expect(text(panel)).toContain(what);
    expect(text(panel)).toContain(todo);
    // The shell's own message is there for the curious, behind Details.
    expect(panel).toContain(`<code>refused: ${code}</code>`);
    expect(text(html(UseServerPanelView, 'zh-CN'))).toContain(zhWhat);
    // A connect refusal is the panel's; the banner does not repeat it.
    expect(html(ServerBannerView)).toBe('');
  });

  it('takes a shell that throws as a refusal in words, not a crash', async () => {
    const shell = testShell({ kind: 'local', server: null });
    shell.useServer = async () => {
      throw new Error('IPC channel closed');
    };
    setDesktopShell(shell);
    await useDesktop.getState().connect(LINK);
    expect(useDesktop.getState()).toMatchObject({ busy: null, refusal: { action: 'connect', code: 'other', message: 'IPC channel closed' } });
  });
});

describe('a remembered server', () => {
  it('shows its address and since when, opens it again, and forgets it', async () => {
    const shell = testShell({ kind: 'local', server: SERVER });
    setDesktopShell(shell);
    await useDesktop.getState().load();
    const panel = text(html(UseServerPanelView));
    expect(panel).toContain('Use my Anima server');
    expect(panel).toContain('Your server https://192.168.1.5:7431 first used');
    expect(panel).toContain('Open it again');
    expect(panel).toContain('Forget this server');
    // The link field is still there, for another server or a new code.
    expect(html(UseServerPanelView)).toContain('data-testid="use-server-link"');
    expect(panel).toContain('A link to another server replaces the one above');

    shell.answer = refused('server_unreachable');
    await useDesktop.getState().reopen();
    expect(useDesktop.getState().refusal).toMatchObject({ action: 'reopen', code: 'server_unreachable' });
    expect(text(html(UseServerPanelView))).toContain('The server did not answer.');

    await useDesktop.getState().forget();
    expect(shell.calls).toEqual(['where', 'reopenServer', 'forgetServer', 'where']);
    expect(useDesktop.getState()).toMatchObject({ where: { kind: 'local', server: null }, busy: null, refusal: null });
    expect(html(UseServerPanelView)).not.toContain('use-server-remembered');
  });
});

describe('the banner', () => {
  it('on the server: names it and offers this computer', async () => {
    const shell = testShell({ kind: 'server', server: SERVER });
    setDesktopShell(shell);
    await useDesktop.getState().load();
    expect(text(html(ServerBannerView))).toBe('Your Anima server · 192.168.1.5 Use this computer');
    expect(text(html(ServerBannerView, 'zh-CN'))).toBe('你的 Anima 服务器 · 192.168.1.5 改用这台电脑');
    // Settings → Devices there says where the window is, with the same way back.
    expect(text(onServer(SERVER.origin))).toContain('This window shows your server at https://192.168.1.5:7431.');
    expect(html(UseServerPanelView)).toBe('');
    await useDesktop.getState().backToThisComputer();
    expect(shell.calls).toEqual(['where', 'useThisComputer']);
    expect(useDesktop.getState().busy).toBe('thisComputer');
  });

  it('when the server did not answer at start: says so, tries again, and can be dismissed', async () => {
    const shell = testShell({ kind: 'local', server: SERVER, serverUnreachable: true });
    setDesktopShell(shell);
    await useDesktop.getState().load();
    expect(text(html(ServerBannerView))).toBe('Your server at 192.168.1.5 did not answer; this is this computer’s own data. Try again Dismiss');

    shell.answer = refused('certificate_mismatch');
    await useDesktop.getState().reopen('retry');
    expect(shell.calls).toEqual(['where', 'reopenServer']);
    const banner = text(html(ServerBannerView));
    expect(banner).toContain('The server’s certificate is not the one this computer remembered.');
    expect(banner).toContain('Do not go on unless you have just made the server’s certificate anew');
    // The panel below does not say it a second time.
    expect(text(html(UseServerPanelView))).not.toContain('certificate');

    useDesktop.getState().dismissUnreachable();
    expect(html(ServerBannerView)).toBe('');
  });

  it('names the host of the origin, or the origin if it is no URL', () => {
    expect(serverHost('https://192.168.1.5:7431')).toBe('192.168.1.5');
    expect(serverHost('https://nas.local:7431')).toBe('nas.local');
    expect(serverHost('not a url')).toBe('not a url');
  });
});
