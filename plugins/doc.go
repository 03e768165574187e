// Package plugins is the home of flowgate's first-party controllers, each
// a subpackage implementing sdk.Controller. Every gateway runs them in
// its own process (Controllers), which spares each host call a process
// hop; a gateway config entry with isolate: true has the flowgate binary
// serve one as a real go-plugin subprocess instead (flowgate plugin serve
// NAME). The first, plugins/pipeline, runs a workflow file as a managed
// flow.
package plugins
