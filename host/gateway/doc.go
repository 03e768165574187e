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
//   - the engine (host/engine), the only writer of records, whose change
//     notifications wake the runner (a task queued or asked to stop) and
//     event delivery (an event queued);
//   - the runner (host/runner), which runs queued tasks under shims;
//   - the plugin supervisor and event delivery (host/pluginhost), which keep
//     the controller plugins running and hand them their flows' events;
//   - the scheduler (host/scheduler), which fires cron jobs, with the jobs
//     the config file declares reconciled into the store before it starts;
//   - the maintenance sweep (host/maintenance), unless the config turns it
//     off;
//   - the API server (host/api) on the socket.
//
// # Start order
//
// Start refuses a home whose socket answers (another gateway runs there:
// ErrAlreadyRunning), waiting up to StartWait for one that holds the store
// but does not listen yet, compacts the store if a maintenance pass asked for it (only now does
// nothing hold the file), opens the store and reconciles the config's cron
// jobs. It then starts the long-running parts with lifecycle.StartAll, in
// this order:
//
//  1. runner: first, so that tasks a previous gateway left running are
//     reattached or settled before anything can queue new work;
//  2. plugin supervisor: the controllers must be launching before events
//     are delivered to them;
//  3. event delivery;
//  4. scheduler: it creates tasks and flows, which the parts above now
//     handle;
//  5. maintenance sweep: last, as it audits what the others keep.
//
// A part that cannot start stops the gateway from starting: the parts
// already started are stopped in reverse order, the store is closed, and
// Start returns an error naming the part ("start runner: …"). Only then
// does the API socket open, so a client that reaches a gateway finds every
// part running.
//
// # Stop order
//
// Stop is the reverse: it stops serving the API (waiting for requests in
// flight, bounded by its context), stops the parts from the sweep back to
// the runner, and closes the store. Tasks keep running under their shims
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
// without a token, TLS or not, so New fails before anything opens. The listener starts
// after the socket serves and stops before it; an address that cannot be
// bound fails Start, which then stops everything it started.
//
// Every gateway holds the store for a while before its socket answers.
// Dial is how a command reaches the home's gateway across that window: it
// waits, bounded, while the store is held and nothing answers, and says
// no gateway runs (api.ErrNoGateway) only when the store is free.
package gateway
