// A turn's tools by name. Unknown tools and thrown errors become text for the model, never a
// failed turn: the model can read "that tool does not exist" and carry on.
import type { ToolCall, ToolSpec } from '../../llm/types.js';
import type { ToolRegistry } from '../chat.js';

export interface Tool {
  spec: ToolSpec;
  run(args: Record<string, unknown>): Promise<string>;
}

export function toolRegistry(tools: Tool[]): ToolRegistry {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  return {
    specs: () => tools.map((t) => t.spec),
    async run(call: ToolCall) {
      const tool = byName.get(call.name);
      if (!tool) return `There is no tool called "${call.name}". Available: ${[...byName.keys()].join(', ')}.`;
      try {
        return await tool.run(call.arguments ?? {});
      } catch (err) {
        return `The ${call.name} tool failed: ${(err as Error).message}`;
      }
    },
  };
}
