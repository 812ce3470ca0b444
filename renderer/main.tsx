import './zod-jitless.js';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { startClient } from './api/index.js';
import { App } from './app/App.js';
import { i18n, initI18n } from './i18n/index.js';
import './styles/base.css';
import './styles/shell.css';
import './styles/chat/list.css';
import './styles/chat/conversation.css';
import './styles/chat/composer.css';
import './styles/chat/images.css';
import './styles/settings/layout.css';
import './styles/settings/models.css';
import './styles/settings/local-models.css';
import './styles/settings/sections.css';
import './styles/settings/import.css';
import './styles/pages.css';
import './styles/memory/in-chat.css';
import './styles/memory/memories.css';
import './styles/memory/memory-panel.css';
import './styles/memory/pins.css';
import './styles/memory/settings.css';
import './styles/sleep/shared.css';
import './styles/sleep/diary.css';
import './styles/sleep/dreams.css';
import './styles/sleep/night.css';
import './styles/sleep/digest-audit.css';
import './styles/night-status.css';
import './styles/graph/map.css';
import './styles/graph/panel.css';
// Last: the phone layout only overrides what comes before it.
import './styles/phone.css';

async function main() {
  await initI18n();
  const started = startClient();
  const root = createRoot(document.getElementById('root')!);
  root.render(
    <StrictMode>
      <I18nextProvider i18n={i18n}>
        <App client={started.ok ? started.client : null} />
      </I18nextProvider>
    </StrictMode>,
  );
}

void main();
