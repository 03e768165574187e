// Package gateway is the host: it opens the store and wires the engine to
// the parts that act on its records, starts and stops them together, and
// serves the local API on a socket in the flowgate home. `flowgate gateway`
// runs one in the foreground; commands that run work with no gateway
// running host one in-process for their own duration (see DESIGN.md).
//
// # What it wires
//
// A Gateway owns, for one home:
//
//   - the store (host/store, the bbolt file under the home, whose file
//     lock makes this gateway the home's only writer process);
//   - the engine (host/engine), the only writer of records, whose
//     committed changes go to its listeners, registered by name in start
//     in the order they hear each change: the runner (a task queued or
//     asked to stop), event delivery (an event queued or acknowledged),
//     finish notices (a notice queued) and the metrics (every change);
//   - the runner (host/runner), which runs queued tasks under shims;
//   - the plugin supervisor and event delivery (host/pluginhost), which keep
//     the controller plugins running and hand them their flows' events;
//   - the scheduler (host/scheduler), which fires cron jobs, with the jobs
//     the config file declares reconciled into the store before it starts;
//   - the maintenance sweep (host/maintenance), unless the config turns it
//     off;
//   - the TCP listener, when the config names an address;
//   - the API server (host/api) on the socket.
//
// # Start order
//
// Start refuses a home whose socket answers (another gateway runs there:
// ErrAlreadyRunning), waiting up to StartWait for one that holds the store
// but does not listen yet. It then starts the gateway's parts in one
// lifecycle.Group, in this order:
//
//  1. store: opened, compacted first if a maintenance pass asked for it
//     (only now does nothing hold the file); the engine and the parts
//     below are built over it, and the config's cron jobs reconciled
//     into it;
//  2. runner: first of the parts that work, so that tasks a previous
//     gateway left running are reattached or settled before anything can
//     queue new work;
//  3. plugin supervisor: the controllers must be launching before events
//     are delivered to them;
//  4. event delivery;
//  5. scheduler: it creates tasks and flows, which the parts above now
//     handle;
//  6. finish notices;
//  7. maintenance sweep: it audits what the others keep;
//  8. web listener, when the config names an address: before the socket,
//     so that the first status a client reads names its address;
//  9. socket: last, so a client that reaches a gateway finds every part
//     running.
//
// There is one way back. Whatever fails, a part that cannot start or one
// that cannot be built over the open store, every part started so far is
// stopped in reverse order, the store last (closed, so another process
// may open it at once), and Start returns an error naming what failed
// ("gateway: runner: start: …").
//
// # Stop order
//
// Stop is the reverse: it stops serving the API (waiting for requests in
// flight, bounded by its context, and removing the socket file), stops
// the TCP listener, the parts from the sweep back to the runner, and
// closes the store. Tasks keep running under their shims
// and undelivered events stay in the outbox; the next gateway on the home
// picks them up, exactly as after a crash. Stop reports every part that
// failed to stop in time, each by name. Start and Stop are idempotent.
//
// # Several gateways
//
// On etcd several gateways, each with a home of its own, serve one
// installation at once. Each joins as a member, follows the others
// (etcd.Roster), and delivers the events of the flows whose event
// streams it holds (engine.ClaimStreams); stopping, its event delivery
// releases them before it leaves, and the others, woken by the leave,
// take them at once. Cron and finish notices run on the cron leader. A
// running task is this gateway's when one of its home's gateways started
// it (home.MembersFile); the others' are left to them. Config.Solo keeps
// a command's gateway off an installation another gateway serves. A
// gateway whose lease ends while it runs stops its parts and starts again
// under a new member id once etcd answers, adopting its running tasks;
// one that cannot within RejoinTTLs lease TTLs stays stopped and says why
// on Lost.
//
// # Work with no gateway
//
// Commands reach the system only through host/api and this package, so
// what they do to a home without a running gateway lives here too, one
// file per kind of work: cluster status and drain (cluster.go), store
// migration (migrate.go), backups and the compaction after maintenance
// (offline.go), the home's layout (homelayout.go), a task's log files and
// the shim's entry (taskfiles.go), plugin checks and the plugin test
// harness (pluginscheck.go), service plans (service.go), notice
// destinations (notifydest.go) and a model stage's call (llminvoke.go).
// Most are thin: the work is in the package each names.
//
// # The socket
//
// The API is HTTP/JSON on the unix socket gateway.sock in the home
// (SocketPath), mode 0600 inside the home's 0700. A socket file left by a
// gateway that crashed is removed when the next one starts; one that still
// answers means a gateway runs, and a second one is refused. Client gives
// the same API in-process, without the socket.
//
// The socket also serves /metrics (host/metrics, in the Prometheus text
// format) for local scraping.
//
// # The TCP listener
//
// When FileConfig.HTTP names an address (`flowgate gateway --http`), a
// TCP listener serves /metrics, /healthz and /readyz there, over TLS when
// the config has a certificate and behind a bearer token when it has one
// (401 without it). HTTPConfig.Validate refuses a non-loopback address
// without a token, TLS or not, so New fails before anything opens. The
// listener starts before the socket serves and stops after it; an
// address that cannot be bound fails Start, which then stops everything
// it started.
//
// Every gateway holds the store for a while before its socket answers.
// Dial is how a command reaches the home's gateway across that window: it
// waits, bounded, while the store is held and nothing answers, and says
// no gateway runs (api.ErrNoGateway) only when the store is free.
package gateway
