package gateway

import (
	"context"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/llmcall"
)

// LLMInvocation is what a pipeline's model stage resolved
// (llmcall.Invocation): the flowgate binary's hidden llm-invoke command,
// which the stage runs as its task, reads it from its flags.
type LLMInvocation = llmcall.Invocation

// InvokeLLM makes the model call of a stage's task over the stage's input
// items (stdin, a JSON array) and returns its output item
// (llmcall.Invoke); every call's usage is reported on the task's
// progress channel.
func InvokeLLM(ctx context.Context, inv LLMInvocation, stdin []byte) (*flows.Object, error) {
	return llmcall.Invoke(ctx, inv, stdin)
}

// TransientLLMError reports whether a failed model call may succeed when
// asked again later: the endpoint stayed busy (429) or broken (5xx)
// (llmcall.Transient).
func TransientLLMError(err error) bool { return llmcall.Transient(err) }
