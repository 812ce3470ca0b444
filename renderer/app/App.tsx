import { useEffect, useState } from 'react';
import type { RendererClient } from '../api/index.js';
import { forgetToken } from '../api/token.js';
import { ApiError } from '../../shared/api.js';
import { connectEvents } from '../stores/events.js';
import { useApp } from '../stores/app.js';
import { Onboarding } from '../views/onboarding/Onboarding.js';
import { useAppearance } from './appearance.js';
import { BootFailed, Waking } from './BootStates.js';
import { NoToken } from './NoToken.js';
import { OverPage } from './ServerBanner.js';
import { Shell } from './Shell.js';

export function App({ client }: { client: RendererClient | null }) {
  useAppearance();
  const phase = useApp((s) => s.phase);
  const bootError = useApp((s) => s.bootError);
  const onboarded = useApp((s) => s.settings?.onboarded ?? false);
  const boot = useApp((s) => s.boot);
  const [expired, setExpired] = useState(false);

  useEffect(() => {
    if (!client) return;
    const off = connectEvents(client);
    void boot();
    return off;
  }, [client, boot]);

  useEffect(() => {
    // A token from an earlier run: the server restarted and printed a new link.
    if (client?.transport === 'http' && bootError instanceof ApiError && bootError.code === 'unauthorized') {
      forgetToken(window.sessionStorage);
      setExpired(true);
    }
  }, [client, bootError]);

  // Outside the shell too (the server's pair page, a revoked device, a start that failed), the desktop
  // window on a paired server keeps its way back to this computer.
  if (!client) return <OverPage page={<NoToken />} />;
  if (expired) return <OverPage page={<NoToken expired />} />;
  if (phase === 'booting') return <OverPage page={<Waking />} />;
  if (phase === 'failed') return <OverPage page={<BootFailed error={bootError} onRetry={() => void boot()} />} />;
  if (!onboarded) return <Onboarding />;
  return <Shell />;
}
