package bench

import (
	"os/exec"
	"testing"
	"time"
)

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
