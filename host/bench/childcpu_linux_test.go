package bench

import (
	"os/exec"
	"testing"
	"time"
)

func TestParentOfReadsPastTheCommand(t *testing.T) {
	// A command may hold spaces and parentheses: the fields are counted
	// from the last closing one.
	line := []byte("4242 (odd) name (x)) S 17 4242 4242 0 -1 4194560 100 0 0 0 3 1 0 0 20 0 1 0 500 0 0")
	if got := parentOf(line); got != 17 {
		t.Fatalf("parentOf = %d, want 17", got)
	}
	for _, bad := range []string{"", "4242 (no end", "4242 (x) S"} {
		if got := parentOf([]byte(bad)); got != -1 {
			t.Errorf("parentOf(%q) = %d, want -1", bad, got)
		}
	}
}

func TestLiveChildrenCPUCountsARunningChild(t *testing.T) {
	if _, ok := liveChildrenCPU(); !ok {
		t.Fatal("liveChildrenCPU tells nothing on Linux")
	}
	// A child that burns CPU until killed: its time must show while it
	// runs, before anything waits for it (RUSAGE_CHILDREN counts it only
	// then).
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		live, _ := liveChildrenCPU()
		if live[cmd.Process.Pid] >= 50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a child spinning for 30 s shows %s of CPU", live[cmd.Process.Pid])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
