/** A scripted language model for the AI SDK (its own `MockLanguageModelV3`, from `ai/test`):
 * each step either calls one tool or answers with text. */
import { MockLanguageModelV3 } from "ai/test";

type Options = NonNullable<ConstructorParameters<typeof MockLanguageModelV3>[0]>;
type Generated = Extract<NonNullable<Options["doGenerate"]>, readonly unknown[]>[number];

export type Step = { tool: string; input: Record<string, unknown> } | { text: string };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function result(step: Step, n: number): Generated {
  if ("text" in step) {
    return {
      content: [{ type: "text", text: step.text }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    };
  }
  return {
    content: [{ type: "tool-call", toolCallId: `call-${n}`, toolName: step.tool, input: JSON.stringify(step.input) }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** A model that takes `steps` in order, one per call. */
export function scripted(...steps: Step[]): MockLanguageModelV3 {
  return new MockLanguageModelV3({ doGenerate: steps.map(result) });
}
