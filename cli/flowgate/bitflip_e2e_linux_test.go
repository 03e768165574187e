package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/home"
)

// Bounds of the bit-flip test: how many damaged copies, how many bits
// each, and what one command may take. The address-space limit leaves
// room for the store's 1 GiB map and the Go runtime, and stops a runaway
// long before it takes the machine.
const (
	bitflipCopies  = 20
	bitflipBits    = 50
	bitflipTimeout = 20 * time.Second
	bitflipVMemKiB = 3 << 20
)

// TestDamagedStoresNeverCrash flips random bits in copies of a real store
// and runs check, tasks flow list, tasks run, backup and check --salvage
// on each, as real
// subprocesses under `ulimit -v` and a timeout. Each command must work or
// exit 1 with a message: no signal death, no Go panic or fatal-error
// trace, no runaway in time or memory. The seed is logged; set
// FLOWGATE_BITFLIP_SEED to replay a run.
func TestDamagedStoresNeverCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real flowgate binary")
	}
	bin := buildFlowgate(t)
	src := realStore(t, bin)
	data, err := os.ReadFile(filepath.Join(src, home.DBFile))
	require.NoError(t, err)

	seed := uint64(13)
	if s := os.Getenv("FLOWGATE_BITFLIP_SEED"); s != "" {
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "FLOWGATE_BITFLIP_SEED")
	}
	t.Logf("bit-flip seed %d (replay with FLOWGATE_BITFLIP_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range bitflipCopies {
		damaged := bytes.Clone(data)
		var flipped []int
		for range bitflipBits {
			bit := rng.IntN(len(damaged) * 8)
			damaged[bit/8] ^= 1 << (bit % 8)
			flipped = append(flipped, bit)
		}
		dir := shortHome(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, home.DBFile), damaged, 0o600))
		commands := [][]string{
			{"check"}, {"tasks", "flow", "list"}, {"tasks", "run", "--", "true"},
			{"backup", filepath.Join(dir, "backup.db")}, {"check", "--salvage", filepath.Join(dir, "salvaged.db")},
		}
		for _, args := range commands {
			code, stderr := runBounded(t, bin, dir, args...)
			t.Logf("copy %d %v: exit %d %s", i, args, code, firstLineOf(stderr))
			require.True(t, code == 0 || code == 1,
				"copy %d (bits %v): flowgate %v exited %d; want 0 or 1\nstderr:\n%s", i, flipped, args, code, stderr)
			for _, crash := range []string{"panic:", "fatal error:", "goroutine ", "SIGSEGV", "SIGBUS"} {
				require.NotContains(t, stderr, crash, "copy %d (bits %v): flowgate %v crashed", i, flipped, args)
			}
			if code == 1 {
				require.Contains(t, stderr, "flowgate: ", "copy %d: flowgate %v failed without a message", i, args)
			}
		}
	}
}

// realStore makes a home with a store written by real commands: tasks
// that succeed and fail, with their flows, indexes and history.
func realStore(t *testing.T, bin string) string {
	t.Helper()
	dir := shortHome(t)
	for i := range 12 {
		script := fmt.Sprintf("echo run %d; exit %d", i, i%3/2)
		cmd := exec.Command(bin, "--home", dir, "tasks", "run", "--label", fmt.Sprintf("job-%d", i), "--", "sh", "-c", script)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			require.NoError(t, err, "tasks run: %s", out)
		}
	}
	return dir
}

// shortHome makes a home directory with a short path (unix socket paths
// are limited), removed after the test.
func shortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fgflip")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runBounded runs flowgate on home dir under `ulimit -v` and a timeout,
// and returns its exit code (128+signal when a signal ended it) and
// stderr. Running past the timeout fails the test: a runaway.
func runBounded(t *testing.T, bin, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bitflipTimeout)
	defer cancel()
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, bitflipVMemKiB)
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, bin, "--home", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "flowgate %v ran past %s: a runaway\nstderr:\n%s", args, bitflipTimeout, stderr.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), stderr.String()
		}
		return exit.ExitCode(), stderr.String()
	}
	require.NoError(t, err)
	return 0, ""
}

// firstLineOf returns the first line of s.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
