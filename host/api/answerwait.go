package api

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// AnswerWaitEnv names the environment variable that sets how long a
// command waits for the gateway to answer a request, as a duration (30s,
// 2m); DefaultAnswerWait when unset. A gateway that does not answer in
// that time (paused, or stuck) is treated as one that stopped before it
// answered: the call fails with ErrNoAnswer.
const AnswerWaitEnv = "FLOWGATE_ANSWER_WAIT"

// DefaultAnswerWait is how long a request waits for the gateway's answer
// when AnswerWaitEnv is unset. A request that waits at the gateway on
// purpose (WaitFlow) waits that long on top; one that reads the whole
// store (check, audit, maintenance) waits scanFactor times as long; a
// stream waits that long for its first answer and then as long as it
// flows.
const DefaultAnswerWait = 30 * time.Second

// scanFactor is how many answer waits a request that reads the whole
// store may take.
const scanFactor = 10

// answerWait reads AnswerWaitEnv. A value that is not a positive duration
// is refused with ErrInvalid, naming the variable.
func answerWait() (time.Duration, error) {
	v := os.Getenv(AnswerWaitEnv)
	if v == "" {
		return DefaultAnswerWait, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s=%q is not a positive duration; set it like 30s or 2m, or unset it to wait %s", sdk.ErrInvalid, AnswerWaitEnv, v, DefaultAnswerWait)
	}
	return d, nil
}

// lateError is the cause of a call's context when the gateway did not
// answer within the wait.
type lateError struct{ wait time.Duration }

func (e lateError) Error() string {
	return fmt.Sprintf("no answer within %s; %s sets how long to wait", e.wait, AnswerWaitEnv)
}

// within bounds ctx by wait for the gateway's answer.
func within(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, wait, lateError{wait})
}

// untilAnswered bounds ctx by wait until answered is called: a stream's
// first answer must come within wait, and then it flows as long as it
// does. stop releases the context.
func untilAnswered(ctx context.Context, wait time.Duration) (actx context.Context, answered func(), stop func()) {
	actx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(wait, func() { cancel(lateError{wait}) })
	return actx, func() { t.Stop() }, func() { t.Stop(); cancel(nil) }
}

// late returns err, or, when actx ran out of the answer wait, why (still
// marked errNotConnected when the connection was never made).
func late(actx context.Context, err error) error {
	var le lateError
	switch {
	case !errors.As(context.Cause(actx), &le):
		return err
	case errors.Is(err, errNotConnected):
		return fmt.Errorf("%w: %w", errNotConnected, le)
	}
	return le
}
