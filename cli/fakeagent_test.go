package cli_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeAgentCmd makes the test binary act as an agent command-line tool:
// "fake-agent LEDGER STORE MODE".
const fakeAgentCmd = "fake-agent"

// agentCall is what the fake agent was asked, one line of its ledger.
type agentCall struct {
	Prompt  string `json:"prompt"`
	Session string `json:"session"` // FLOWGATE_SESSION_ID as given
	Resume  bool   `json:"resume"`  // FLOWGATE_RESUME=1
	// Reported is the session id it reported; PID its process.
	Reported string `json:"reported"`
	PID      int    `json:"pid"`
}

// fakeAgent behaves as an agent CLI that keeps sessions in STORE (one
// file per live session): it continues FLOWGATE_SESSION_ID when
// FLOWGATE_RESUME=1, else makes a new session; it reports the session id
// on the progress channel at once, then appends what it was asked to
// LEDGER. MODE "hang" then waits to be killed; "fail" exits 1; "done"
// exits 0.
func fakeAgent(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fake-agent LEDGER STORE hang|fail|done")
		return 2
	}
	ledger, store, mode := args[0], args[1], args[2]
	call := agentCall{Prompt: os.Getenv("FLOWGATE_PROMPT"), Session: os.Getenv("FLOWGATE_SESSION_ID"), Resume: os.Getenv("FLOWGATE_RESUME") == "1", PID: os.Getpid()}
	call.Reported = call.Session
	if !call.Resume {
		var b [6]byte
		_, _ = rand.Read(b[:])
		call.Reported = "sess-" + hex.EncodeToString(b[:])
	}
	if err := os.MkdirAll(store, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(store, call.Reported), nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lines := fmt.Sprintf("{\"session_id\":%q,\"context_tokens\":1200}\n{\"message\":\"thinking\"}\n", call.Reported)
	if err := appendFile(os.Getenv("FLOWGATE_PROGRESS"), lines); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(call)
	if err := appendFile(ledger, string(b)+"\n"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	switch mode {
	case "hang":
		select {}
	case "fail":
		return 1
	}
	return 0
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// agentCalls reads the fake agent's ledger.
func agentCalls(t *testing.T, ledger string) []agentCall {
	t.Helper()
	b, err := os.ReadFile(ledger)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var calls []agentCall
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c agentCall
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		calls = append(calls, c)
	}
	return calls
}
