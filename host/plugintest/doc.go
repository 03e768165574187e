// Package plugintest is the conformance harness of controller plugins,
// behind `flowgate plugins test`. It runs one plugin, in any language,
// against a real embedded gateway (an engine on bbolt in a temporary
// directory, the plugin supervisor and event delivery) and drives it
// through scripted cases: start, a flow's events in order, a redelivered
// event, a write made stale by an operator, a cancel, a restart of the
// plugin process mid-flow, a CreateFlow whose answer is lost, and, for a
// plugin that declares Watch, its Watch called again after a restart. It
// plays the runner: every task the plugin creates is finished succeeded
// by the harness, printing "ok".
//
// # Running it
//
//	rep, err := plugintest.Run(ctx, plugintest.Config{Path: "./plugin"})
//
// err is the harness's own failure (no temporary directory); what the
// plugin did wrong is in the report, one Result per case, each saying what
// the plugin did. docs/protocol.md lists the cases.
package plugintest
