package sdktest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// FinishOption says what a task finished with FinishTask produced.
type FinishOption func(*finishOptions)

type finishOptions struct {
	result *sdk.Result
}

// finishing applies opts over the default: the result of an empty output.
func finishing(opts []FinishOption) finishOptions {
	fin := finishOptions{result: digest("")}
	for _, o := range opts {
		o(&fin)
	}
	return fin
}

// Stdout makes the task's Result the one the gateway's runner records for
// a process that wrote stdout: its SHA-256 and size, the text itself (up
// to 256 KiB), its JSON value when the whole output is one JSON document,
// and its last non-empty line as the Summary.
func Stdout(stdout string) FinishOption {
	return func(o *finishOptions) { o.result = digest(stdout) }
}

// Result makes the task's Result r as it is, for a test that needs a
// result no output would give.
func Result(r sdk.Result) FinishOption {
	return func(o *finishOptions) { o.result = &r }
}

// maxStdout is the most output the runner keeps in the record as text.
const maxStdout = 256 << 10

// maxSummary bounds the summary line, in runes.
const maxSummary = 200

// digest is the Result of a process whose stdout was out.
func digest(out string) *sdk.Result {
	sum := sha256.Sum256([]byte(out))
	r := &sdk.Result{StdoutSHA256: hex.EncodeToString(sum[:]), StdoutBytes: int64(len(out))}
	if out != "" && len(out) <= maxStdout {
		r.Stdout = out
		if b := bytes.TrimSpace([]byte(out)); json.Valid(b) {
			r.JSON = b
		}
	}
	lines := strings.Split(strings.TrimRight(out, "\n\r\t "), "\n")
	last := strings.ToValidUTF8(strings.TrimSpace(lines[len(lines)-1]), "?")
	if runes := []rune(last); len(runes) > maxSummary {
		last = string(runes[:maxSummary-1]) + "…"
	}
	r.Summary = last
	return r
}
