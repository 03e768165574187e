// Package plugins is the home of flowgate's first-party controller
// plugins, each a subpackage that the flowgate binary can serve as a real
// go-plugin subprocess (flowgate plugin serve NAME). The first,
// plugins/pipeline, runs a workflow file as a managed flow; it arrives with
// the pipeline issue.
package plugins
