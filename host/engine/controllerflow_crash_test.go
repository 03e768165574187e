package engine_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

const createCrashEnv = "FLOWGATE_CREATE_CRASH_WRITER"

// createCrashKeys is how many keys the writer cycles through: each round
// asks again for the keys earlier rounds created.
const createCrashKeys = 40

// TestCreateCrashWriter is the child of TestCreateFlowKeySurvivesAKill:
// it asks for controller flows under keys file-0, file-1, … in a loop,
// and prints "<key> <flow id>" for each answer, until it is killed.
func TestCreateCrashWriter(t *testing.T) {
	path := os.Getenv(createCrashEnv)
	if path == "" {
		t.Skip("helper process for TestCreateFlowKeySurvivesAKill")
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		key := fmt.Sprintf("file-%d", i%createCrashKeys)
		f, _, err := eng.CreateControllerFlow("inbox", sdk.FlowRequest{IdempotencyKey: key, Goal: "handle " + key, OwnerKey: "inbox"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintln(w, key, f.ID)
		w.Flush()
	}
}

// TestCreateFlowKeySurvivesAKill kills a process creating controller
// flows with SIGKILL at a random moment, 15 times, some kills falling
// between a commit and its answer: after every restart, asking again
// with a key returns the flow the key named before, so each key has
// exactly one flow, with one flow.started event, and the indexes agree.
func TestCreateFlowKeySurvivesAKill(t *testing.T) {
	if os.Getenv(createCrashEnv) != "" {
		t.Skip("in the helper process")
	}
	bboltOnly(t)
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	answered := map[string]string{} // key → the flow id every answer named
	for round := range 15 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCreateCrashWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), createCrashEnv+"="+path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		want, got := 1+rand.IntN(2*createCrashKeys), 0
		deadline := time.Now().Add(30 * time.Second)
		for sc.Scan() {
			key, id, _ := strings.Cut(sc.Text(), " ")
			if prev, ok := answered[key]; ok {
				require.Equal(t, prev, id, "round %d: key %s named another flow after a kill", round, key)
			}
			answered[key] = id
			if got++; got == want {
				require.NoError(t, cmd.Process.Kill())
			}
			require.True(t, time.Now().Before(deadline), "round %d: the writer answered only %d calls in 30s", round, got)
		}
		_ = cmd.Wait()
	}

	st, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	page, err := eng.ListFlows(engine.FlowFilter{ControllerID: "inbox"})
	require.NoError(t, err)
	byKey := map[string]string{}
	for _, f := range page.Flows {
		_, dup := byKey[f.IdempotencyKey]
		require.False(t, dup, "key %s has two flows", f.IdempotencyKey)
		byKey[f.IdempotencyKey] = f.ID
		evs, err := eng.Events(f.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1, "flow %s", f.ID)
		require.Equal(t, sdk.EventFlowStarted, evs[0].Type)
	}
	for key, id := range answered {
		require.Equal(t, id, byKey[key], "the flow key %s was answered with", key)
	}
	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)
}
