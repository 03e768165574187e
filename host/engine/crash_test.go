package engine_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

const crashEnv = "FLOWGATE_CRASH_WRITER"

// TestCrashWriter is the child of TestCrashKeepsAcknowledgedWrites: it
// makes guarded updates on the flows named in its environment, from one
// goroutine per flow, and prints "<flow> <revision>" for each update the
// store acknowledged, until it is killed.
func TestCrashWriter(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("helper process for TestCrashKeepsAcknowledgedWrites")
	}
	path, ids, _ := strings.Cut(spec, "|")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		os.Exit(2)
	}
	acks := make(chan string, 1024)
	for _, id := range strings.Split(ids, ",") {
		go func() {
			for {
				cur, err := eng.GetFlow(id)
				if err != nil {
					os.Exit(3)
				}
				next := []byte(strconv.FormatInt(cur.Revision+1, 10))
				up, err := eng.UpdateFlow(id, cur.Revision, engine.FlowPatch{State: next})
				if err != nil {
					os.Exit(4)
				}
				acks <- fmt.Sprintf("%s %d", id, up.Revision)
			}
		}()
	}
	w := bufio.NewWriter(os.Stdout)
	for a := range acks {
		fmt.Fprintln(w, a)
		w.Flush()
	}
}

// TestCrashKeepsAcknowledgedWrites kills a writing process with SIGKILL at
// a random moment, 20 times, and checks that the reopened store opens
// cleanly and holds every write that was acknowledged before the kill.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the helper process")
	}
	bboltOnly(t)
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	var ids []string
	func() {
		st, err := store.Open(path, store.Options{})
		require.NoError(t, err)
		defer st.Close()
		eng, err := engine.New(st, engine.Config{})
		require.NoError(t, err)
		// A new flow is at revision 1, so its state starts as "1": a flow
		// the writer never reached before a kill still has state ==
		// revision.
		for i := 0; i < 4; i++ {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "crash", ControllerID: "c", Goal: "g", State: json.RawMessage("1")})
			require.NoError(t, err)
			ids = append(ids, f.ID)
		}
	}()

	acked := map[string]int64{}
	for round := 0; round < 20; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path+"|"+strings.Join(ids, ","))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Let it acknowledge a random number of writes, then kill it
		// without warning; acknowledgements already in the pipe count.
		want := 1 + rand.IntN(300)
		got := 0
		deadline := time.After(30 * time.Second)
	read:
		for line := range lines {
			id, rev, _ := strings.Cut(line, " ")
			n, err := strconv.ParseInt(rev, 10, 64)
			require.NoError(t, err, line)
			acked[id] = max(acked[id], n)
			if got++; got == want {
				require.NoError(t, cmd.Process.Kill())
				break read
			}
			select {
			case <-deadline:
				t.Fatalf("round %d: writer acknowledged only %d writes in 30s", round, got)
			default:
			}
		}
		for line := range lines {
			id, rev, _ := strings.Cut(line, " ")
			n, _ := strconv.ParseInt(rev, 10, 64)
			acked[id] = max(acked[id], n)
		}
		_ = cmd.Wait()

		st, err := store.Open(path, store.Options{})
		require.NoError(t, err, "round %d: the store must reopen after SIGKILL", round)
		require.NoError(t, st.Check(), "round %d: page check", round)
		eng, err := engine.New(st, engine.Config{})
		require.NoError(t, err)
		for _, id := range ids {
			f, err := eng.GetFlow(id)
			require.NoError(t, err)
			require.GreaterOrEqual(t, f.Revision, acked[id], "round %d: flow %s lost an acknowledged write", round, id)
			require.Equal(t, strconv.FormatInt(f.Revision, 10), string(f.State), "state and revision moved together")
			require.Equal(t, sdk.FlowQueued, f.Status)
		}
		require.NoError(t, st.Close())
	}
	for _, id := range ids {
		require.Positive(t, acked[id], "every writer made progress")
	}
}
