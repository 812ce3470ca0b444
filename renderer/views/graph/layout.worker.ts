// The graph layout's worker: one request (start positions, sizes, edges), one answer (positions).
import { forceLayout } from './forceLayout.js';
import type { LayoutAnswer, LayoutRequest } from './layout.js';

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutAnswer, transfer: Transferable[]): void;
};

scope.onmessage = (e) => {
  const { input, options } = e.data;
  forceLayout(input, options);
  scope.postMessage({ x: input.x, y: input.y }, [input.x.buffer, input.y.buffer]);
};
