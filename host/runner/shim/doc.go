// Package shim runs one attempt of a task as a supervised process that
// outlives the gateway, and holds the helpers the gateway uses to start,
// find and signal it.
//
// The gateway writes the attempt's Spec into an attempt directory D and
// starts "flowgate shim D" with Launch: a new session, stdio on
// /dev/null, no parent-death signal, so the shim survives the gateway
// being SIGKILLed. The shim (Main) starts the command as its child, in a
// process group of its own inside the shim's session, enforces the
// attempt's limits, and records how it ended. Everything the two sides
// tell each other goes through files in D.
//
// # File protocol
//
// All JSON files are written atomically (WriteJSONAtomic: temp file in D,
// fsync, rename, fsync D), so a reader sees a file whole or not at all.
// Field names are snake_case; durations are Go duration strings ("1m30s").
//
//	spec.json    Spec. Written by the gateway (WriteSpec) before launch;
//	             read by the shim. Renaming it away before the shim
//	             claims the attempt withdraws it (see Claimed).
//	shim.json    ProcInfo of the shim (InfoFile), written by the shim
//	             before it starts the child. Present: the child may have
//	             started. Absent: it certainly has not (Claimed).
//	child.json   ProcInfo of the child, with its PGID (= its PID), written
//	             right after the child started.
//	stdout,      The child's fds 1 and 2 themselves, opened
//	stderr       O_WRONLY|O_CREATE|O_APPEND 0600. The shim never copies
//	             output, so its memory stays flat whatever the volume.
//	status.json  Status, written once, after the child and every process
//	             left in its group are gone. Its presence means the
//	             attempt is over.
//
// Read them with ReadSpec, ReadInfo and ReadStatus; a file not written yet
// gives an error matching fs.ErrNotExist.
//
// # Outcomes
//
// A child that exits has its exit code in Status.ExitCode; one killed by a
// signal has ExitCode ExitSignaled (-1) and the signal's name
// ("SIGKILL") in Status.Signal. Status.Reason says why the shim ended it:
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
// not executable, a missing cwd or stdin file, a missing or invalid
// spec.json. A deadline already past, or a cancel, before the child
// started keeps it from starting: ExitSignaled with that reason and no
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
// status.json present means the attempt ended; shim.json present and the
// shim Alive means it is still supervised; shim.json present, shim gone
// and no status means the shim died, and a child still Alive per
// child.json can be stopped with SignalGroup(child.PGID, ...).
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
// runner.BaseEnv) plus the values it holds for the task in memory (the
// caller's environment with --inherit-env, --secret-env values), so those
// values reach the child without ever being in spec.json.
package shim
