// For tests: an active world memory, said by a tool on 2025-03-01, with its text made from its id;
// a test overrides only the fields it is about.
import type { Memory } from '../../../shared/api.js';

export function testMemory(over: Partial<Memory> & Pick<Memory, 'id'>): Memory {
  return {
    type: 'world',
    content: `memory ${over.id}`,
    status: 'active',
    supersededBy: null,
    validFrom: null,
    validTo: null,
    pinned: false,
    pinOrder: null,
    referenceCount: 0,
    injectedCount: 0,
    source: 'tool',
    sourceMessageIds: [],
    entityNames: [],
    createdAt: '2025-03-01T10:00:00.000Z',
    updatedAt: '2025-03-01T10:00:00.000Z',
    ...over,
  };
}
