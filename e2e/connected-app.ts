// For specs that chat: one fake model server for the whole file, and for each test a fresh app on
// a new data folder, connected to that server and past onboarding, stopped cleanly after the test.
import { callApi, newDataDir, startApp, test, type RunningApp } from './app.js';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';

export interface ConnectedApp {
  readonly fake: FakeLlm;
  readonly app: RunningApp;
}

export function useConnectedApp(): ConnectedApp {
  let fake: FakeLlm;
  let app: RunningApp;
  test.beforeAll(async () => {
    fake = await startFakeLlm();
  });
  test.afterAll(async () => {
    await fake.close();
  });
  test.beforeEach(async () => {
    app = await startApp(newDataDir());
    await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
    await callApi(app, 'settings.update', { onboarded: true });
  });
  test.afterEach(async () => {
    await app.stop('SIGTERM');
  });
  return {
    get fake() {
      return fake;
    },
    get app() {
      return app;
    },
  };
}
