import type { DomainHandlers, HostServices } from './types.js';

export const modelsHandlers = (s: HostServices): DomainHandlers<'models'> => ({
  'models.list': () => s.localModels.list(),
  'models.download': (input) => s.localModels.download(input.id),
  'models.cancel': (input) => s.localModels.cancel(input.id),
  'models.delete': (input) => s.localModels.delete(input.id),
  'models.useForEmbeddings': (input) => s.localModels.useForEmbeddings(input.id),
  'models.embeddingStatus': async () => s.meaning.status(),
  'models.useServerForEmbeddings': (input) => s.meaning.chooseServer(input),
});
