// Package shim runs one attempt of a task as a supervised process that
// outlives the gateway, and holds the helpers the gateway uses to start,
// find and signal it.
//
// The gateway makes an attempt directory D and starts "flowgate-shim D"
// (or "flowgate shim D") with Launch: a new session, stdout and stderr on
// /dev/null, no parent-death signal, so the shim survives the gateway
// being SIGKILLed. The attempt's Spec reaches the shim on its stdin, a
// pipe. The shim (Main) starts the command as its child, in a process
// group of its own inside the shim's session, enforces the attempt's
// limits, and records how it ended.
//
// # Files
//
// An attempt costs one directory and three files:
//
//	record       Record: the shim's identity, then the child's, then
//	             the Status. The shim creates it exclusively, which
//	             claims the attempt, before the child starts; the gateway
//	             withdraws an attempt no shim claimed by creating it
//	             first (Withdraw), so exactly one of the two wins.
//	stdout,      The child's fds 1 and 2 themselves, opened
//	stderr       O_WRONLY|O_CREATE|O_APPEND 0600. The shim never copies
//	             output, so its memory stays flat whatever the volume.
//
// The task's progress file (Spec.ProgressPath, $FLOWGATE_PROGRESS) is
// shared by the task's attempts and is the task's to create: the shim
// only watches its size, a missing file counting as empty, and makes it
// 0600 once the child's group is gone, whatever umask the task made it
// with.
//
// The record is written in place: two checksummed slots of 4 KiB,
// written alternately, as bbolt writes its meta pages; a write torn by a
// crash leaves the slot before it. The status is synced with fdatasync,
// unless the gateway records it first (a warm shim's, see MainWarm).
// The claim is synced too, with the directory (except under the ext4
// driver, whose sync of a new file writes its entry too: see
// entrySyncedWithFile), unless the gateway recorded the attempt's start
// with the boot the shim runs in (Spec.Boot): after a crash of the
// machine, an attempt whose child may have run is never taken for one
// that did not, because the gateway takes an attempt of an earlier boot
// showing no claim for one that may have run. The child's identity is
// not synced: it outlives any process crash, and no process outlives
// the machine's.
// Read it with ReadRecord.
//
// Shims from before the record file wrote spec.json, shim.json,
// child.json and status.json instead, each atomically; ReadRecord,
// Claimed and Withdraw still read them, so a
// gateway upgraded while such shims run follows them to the end. A shim
// whose stdin is not a pipe reads D/spec.json (WriteSpec).
//
// A spec cut short on the pipe, because the gateway died handing it
// over, makes the shim exit at once without claiming the attempt. Status
// is the status once the child and every process left in its group are
// gone: its presence means the attempt is over.
//
// # Outcomes
//
// A child that exits has its exit code in Status.ExitCode; one killed by a
// signal has ExitCode 128 plus the signal's number (SignalExit: 137 for
// SIGKILL), as a shell reports it, and the signal's name ("SIGKILL") in
// Status.Signal. Status.Reason says why the shim ended it:
//
//	""                 the child ended on its own
//	"timeout"          Spec.Timeout passed since the child started
//	"budget-exceeded"  Spec.Deadline passed (the task's max budget)
//	"no-progress"      the progress file stopped growing for Spec.NoProgress
//	"cancelled"        the shim received SIGTERM or SIGINT
//	"start-failed"     the child could not start; Status.Error says why
//
// A start failure has exit code ExitNotFound (127) when the command does
// not exist and ExitCannotRun (126) for every other cause: a file that is
// not executable, a missing cwd or stdin file, an invalid spec. A deadline already past, or a cancel, before the child
// started keeps it from starting: ExitNotRun (-1) with that reason and no
// signal. Only the first reason counts.
//
// # Limits and cancel
//
// To end the child, the shim sends SIGTERM (and SIGCONT, for a stopped
// process) to the child's process group, then SIGKILL to the group after
// Spec.Grace (DefaultGrace when zero). The no-progress limit is armed
// only once the progress file grew during this attempt; a task that never
// reports progress is never stopped by it. The shim ignores SIGHUP and
// SIGPIPE, without passing that on to the child.
//
// When the child exits, the shim SIGKILLs whatever is left of its group
// and, on Linux where it is a child subreaper, reaps those processes
// before it writes status.json (on macOS launchd reaps them; the shim
// waits until the group is empty). It then exits 0 (see Main for the other exit codes).
//
// # Process identity
//
// A pid alone does not name a process: pids are reused. ProcInfo pairs it
// with the start time from /proc/<pid>/stat on Linux, from sysctl
// kern.proc.pid on macOS. Alive is true only for a
// live, non-zombie process with that start time, and Signal refuses to
// signal a pid that now belongs to someone else. After a gateway restart:
// a status in the record means the attempt ended; the shim's identity
// there and the shim Alive means it is still supervised; the shim gone
// and no status means the shim died, and a child still Alive per the
// record can be stopped with SignalGroup(child.PGID, ...).
//
// NotifyExit tells a gateway when a shim it reattached to (so not its
// child) exits, without polling: a pidfd on Linux, a kqueue
// EVFILT_PROC/NOTE_EXIT on macOS, waited on in the Go runtime's poller.
// The process is pinned or registered before its identity is checked,
// so a reused pid counts as exited at once.
//
// # Platforms
//
// What differs between Linux and macOS (reading the process table,
// pinning a process to signal it, learning of the child's exit without
// reaping it, adopting orphans) sits behind the interfaces of
// platform.go, implemented by hostOS in the _linux.go and _darwin.go
// files. The logic around them is written once; the macOS parts that
// need no macOS call (kinfo.go, exitkqueue.go) build everywhere, so
// their tests run on Linux with fakes.
//
// # Environment
//
// The child gets the shim's environment, then Spec.Env, then
// FLOWGATE_TASK_ID, FLOWGATE_FLOW_ID, FLOWGATE_ATTEMPT and, when the spec
// has a progress file, FLOWGATE_PROGRESS, each layer overriding the one
// before. The runner starts the shim with a minimal environment (see
// shell.BaseEnv) plus the values it holds for the task in memory (the
// caller's environment with --inherit-env, --secret-env values), so those
// values reach the child without ever being in a file.
package shim
